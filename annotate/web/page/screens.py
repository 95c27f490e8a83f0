"""The screens the engine's answers make: sign-in, guidelines, the item, training feedback,
and what comes when there is no item (waiting, rejected, finished, a crowd study's end)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from annotate.errors import UserError
from annotate.presentation.closing import refusal_lines
from annotate.presentation.feedback import previous_answer
from annotate.presentation.guidelines import where_you_are
from annotate.protocol.session import AnnotatorSession, Feedback, ItemView, Phase, Progress
from annotate.protocol.studies import TEST, TRAINING
from annotate.protocol.windows import ContinuedElsewhere
from annotate.store.engine import is_full_disk
from annotate.text import terminal_safe
from annotate.web.page import views
from annotate.web.page.crowd_screens import (
    arrival_screen,
    consent_screen,
    crowd_end,
    crowd_words,
)
from annotate.web.page.render import Screen
from annotate.web.page.sessions import open_session
from annotate.web.page.state import PageState
from annotate.web.page.tickets import from_ticket, ticket


def expired_screen(page: PageState, request: Request) -> Screen:
    """A form this browser's session did not issue: nothing of it is taken. A crowd worker
    whose session is gone (their cookie cleared, or signed by a server since restarted
    without ANNOTATE_WEB_SECRET) gets back in only by their link, not by the reload the
    expired page offers: that page said "Reload to continue where you were", and the
    reload said to open the link. The link's page says so at once."""
    if page.crowd and not request.session.get("who"):
        return Screen("link", {"expired": True}, 400)
    return Screen("expired", {}, 400)


def signin_screen(
    page: PageState, error: str | None = None, status: int = 200, *, typed: str = ""
) -> Screen:
    """The sign-in form; on a crowd study, where workers enter by their link only, the page
    that says to open that link (a form nobody could sign in with would be a dead end).
    `typed`: the name a refused sign-in gave, kept in its field (the focus goes to the token;
    with the name gone, Enter after the token stopped at the empty name)."""
    if page.crowd:
        return Screen("link", {}, status)
    return Screen(
        "signin",
        {
            "error": error,
            "typed": terminal_safe(typed),
            "fixed": terminal_safe(page.config.annotator or ""),
            # served with tokens required, every annotator has one: no "if you have one"
            "token_required": page.config.require_tokens,
        },
        status,
    )


def signed_out(page: PageState, request: Request) -> Screen | None:
    """Sign-in, when the cookie's window was quit (a copy of the cookie replayed)."""
    if open_session(page, request) is None:
        return signin_screen(page)
    return None


def window_refused(page: PageState, request: Request) -> Screen:
    """What a screen whose read or write refused its window (ContinuedElsewhere) shows instead:
    sign-in when the window was quit (its cookie is a copy, replayed); otherwise the refusal
    stands, as a newer window of the annotator took over, and the page says so (guarded.py).
    Asked only after a refusal, so a screen that passes pays no read for it."""
    if (out := signed_out(page, request)) is not None:
        return out
    raise ContinuedElsewhere()


def guidelines_screen(page: PageState, session: AnnotatorSession) -> Screen:
    progress = session.progress()
    if progress.phase is Phase.REJECTED:
        return rejected_screen(page, progress)
    return Screen(
        "guidelines",
        {
            "guidelines": page.help.guidelines,
            "keys": page.help.keys,
            "where": terminal_safe(where_you_are(progress, session.ctx.protocol)),
            "crowd_text": crowd_words(page),
        },
    )


def with_help(page: PageState, context: dict[str, Any], screen: str) -> dict[str, Any]:
    """A screen's context with its help (the keys of that kind of `screen`, HELP_SCREENS, and
    the guidelines, behind `?` and its button), which the terminal app offers on every screen,
    the end screens included."""
    return {**context, "keys": page.help.keys, "help_dialog": page.help_dialogs[screen]}


def rejected_screen(page: PageState, progress: Progress, notice: str | None = None) -> Screen:
    """The thank-you screen of a refused annotator, in the terminal app's words."""
    said = refusal_lines(progress)
    return Screen(
        "rejected",
        with_help(page, {"progress": progress, "notice": notice, "said": said}, "none"),
    )


def item_screen(
    page: PageState,
    session: AnnotatorSession,
    item: ItemView,
    *,
    notice: str | None = None,
    revising: Any = None,
    flag: bool = False,
    comment: str = "",
    ready: bool = False,
    progress: Progress | None = None,
) -> Screen:
    """`ready`: the item is sent with the feedback before it, to be shown when "continue" is
    pressed; its form says how long after the feedback that was (tickets.from_ticket).
    `progress`: the annotator's figures when the caller has just read them (the feedback's)."""
    kind = "revise" if revising is not None else ""
    if item.item_id in session.catch_items:
        kind = kind or "catch"
    if item.refresher or item.item_id in session.refresher_items:
        kind = kind or "refresher"
    page.keep_item(item.item_id, item.fields)
    if progress is None:
        progress = session.progress()
    status, done, total = views.status_line(item, progress)
    return Screen(
        "item",
        {
            "item": views.item_page(session.spec, item.fields, revising),
            "ticket": ticket(page, session, item, kind, ready=ready),
            "ready": ready,
            "status": status,
            "done": done,
            "total": max(total, 1),
            "training": item.phase == TRAINING,
            "revising": (
                terminal_safe(previous_answer(session.spec, revising))
                if revising is not None
                else None
            ),
            "previous": revising,
            "notice": notice,
            "flag": flag,
            "comment": terminal_safe(comment),
            **with_help(page, {}, "item"),
            "announce_test": item.phase == TEST and progress.stream_done == 0,
        },
    )


def current(
    page: PageState,
    session: AnnotatorSession,
    notice: str | None = None,
    item: ItemView | None = None,
    *,
    asked: bool = False,
) -> Screen:
    """What the engine says comes next (`item` when the caller already has it; `asked`: the
    engine has just said, with `item`, and None means no item now: it is not asked again)."""
    if item is None and not asked:
        item = session.next_item()
    if item is not None:
        return item_screen(page, session, item, notice=notice)
    if page.crowd and (leaving := crowd_end(page, session)) is not None:
        return leaving
    progress = session.progress()
    lines = {"progress": progress, "notice": notice}
    if progress.phase in (Phase.WAITING, Phase.TRAINING):
        return Screen("waiting", with_help(page, lines, "waiting"))
    if progress.phase is Phase.REJECTED:
        return rejected_screen(page, progress, notice)
    if not progress.paused and (held := session.held_elsewhere()) is not None:
        # Not done: an item may come back. The poll sends `key` back: the same, nothing new.
        key = f"{held.items}.{held.minutes}"
        return Screen("held", with_help(page, {**lines, "held": held, "key": key}, "waiting"))
    return Screen("finished", with_help(page, lines, "revise" if progress.stream_done else "none"))


def feedback_screen(
    page: PageState, session: AnnotatorSession, item: ItemView, value: Any, feedback: Feedback
) -> Screen:
    """The feedback, and with it the item that comes next when the engine has it ready
    (Feedback.upcoming): "continue" then shows it at once, without a request (page.js);
    without the script, "continue" asks for it."""
    progress = session.progress()
    status, done, total = views.status_line(item, progress)
    upcoming = feedback.upcoming
    return Screen(
        "feedback",
        {
            "item": views.item_page(session.spec, item.fields),
            "feedback": views.feedback_page(session.spec, item, value, feedback),
            "status": status,
            "done": done,
            "total": max(total, 1),
            # Nothing is stored between the two: the feedback's figures are the item's.
            "upcoming": upcoming
            and item_screen(page, session, upcoming, ready=True, progress=progress),
            **with_help(page, {}, "feedback"),
        },
    )


def feedback_again(
    page: PageState, session: AnnotatorSession, pending: dict[str, Any]
) -> Screen | None:
    """The feedback of the training answer just given. Submitting a training answer
    again is the engine's idempotent retry: it stores nothing new and gives its feedback."""
    served = from_ticket(page, session, str(pending.get("t", "")))
    if served is None or served[1] or served[0].phase != TRAINING:
        return None
    item, _ = served
    try:
        feedback = session.submit(item, pending.get("v"))
    except UserError as exc:
        if is_full_disk(exc):
            raise  # kept for the retry: the disk-full screen, then this feedback again
        return None
    return feedback_screen(page, session, item, pending.get("v"), feedback)


def index_screen(
    page: PageState, request: Request, session: AnnotatorSession | None = None
) -> Screen:
    """Where a signed-in annotator stands: consent, guidelines, the feedback being read, or
    what comes next."""
    session = session or open_session(page, request)
    assert session is not None
    if not request.session.get("started") and (gone := arrival_screen(page, request, session)):
        return gone  # turned away at arrival, with the code of their link
    if (asking := consent_screen(page, request, session)) is not None:
        return asking
    if not request.session.get("started"):
        return guidelines_screen(page, session)
    if (pending := request.session.get("fb")) and (again := feedback_again(page, session, pending)):
        return again  # a reload on the feedback shows it again, until "continue"
    request.session.pop("fb", None)
    return current(page, session)
