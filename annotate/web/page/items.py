"""Items: an answer, a revision of the last test answer, and "continue here" (this page takes
the answers again after another window of the annotator's did)."""

from __future__ import annotations

import functools
from datetime import datetime

from sqlalchemy.exc import DBAPIError
from starlette.requests import Request
from starlette.responses import Response

from annotate.errors import UserError
from annotate.presentation.feedback import revised_answer
from annotate.protocol.answers import AnsweredDifferently
from annotate.protocol.session import NOTHING_TO_REVISE, AnnotatorSession, ItemTaken
from annotate.protocol.studies import TEST
from annotate.protocol.windows import ContinuedElsewhere
from annotate.store.engine import is_disconnect, is_held
from annotate.text import terminal_safe
from annotate.web.page.answers import parse_answer, previous_of
from annotate.web.page.crowd_screens import consent_screen
from annotate.web.page.guarded import guarded
from annotate.web.page.preamble import posted
from annotate.web.page.render import Screen, render
from annotate.web.page.screens import (
    current,
    feedback_screen,
    index_screen,
    item_screen,
    signed_out,
    signin_screen,
    window_refused,
)
from annotate.web.page.sessions import open_session
from annotate.web.page.state import PageState, page_of
from annotate.web.page.tickets import from_ticket

UNREACHABLE = "The store is unreachable: your answer is not saved yet. Answer again in a moment."


@functools.partial(posted, quit_checked=True)
def answer(
    page: PageState, request: Request, session: AnnotatorSession, form: dict[str, str]
) -> Screen:
    """The answer to the item its ticket names; the next screen the engine gives. The answer's
    write refuses a window that was quit (windows.TOUCH): only a path that stores nothing
    asks first whether it was (the read every other form makes)."""
    received: datetime = request.state.received
    request.session.pop("fb", None)
    served = from_ticket(
        page, session, form.get("ticket", ""), shown_after=form.get("shown_after_ms"), by=received
    )
    if served is None:
        return signed_out(page, request) or current(
            page, session, "That answer was for another page; here is your item."
        )
    item, kind = served
    flag = form.get("flag") == "1"
    comment = form.get("comment") or None
    try:
        value = parse_answer(session, item, form)
    except UserError as exc:
        if (out := signed_out(page, request)) is not None:
            return out
        return item_screen(
            page,
            session,
            item,
            notice=terminal_safe(str(exc)),
            revising=previous_of(session, item) if kind == "revise" else None,
            flag=flag,
            comment=comment or "",
        )
    try:
        if kind == "revise":
            session.revise(item, value)
            return current(page, session, terminal_safe(revised_answer(session.spec, value)))
        if item.phase == TEST and kind != "refresher":
            upcoming = session.submit_and_next(
                item, value, answered_at=received, flag=flag, comment=comment
            )
            return current(page, session, item=upcoming, asked=True)
        feedback = session.submit(item, value, answered_at=received, flag=flag, comment=comment)
    except ItemTaken as exc:
        return current(page, session, terminal_safe(str(exc)))
    except AnsweredDifferently as exc:  # another tab answered it first: said, as for two
        refused = current(page, session, terminal_safe(str(exc)))  # windows (409)
        refused.status = 409
        return refused
    except ContinuedElsewhere:
        return window_refused(page, request)
    except DBAPIError as exc:
        if not is_disconnect(exc):
            raise
        return item_screen(
            page, session, item, notice=UNREACHABLE, flag=flag, comment=comment or ""
        )
    except UserError as exc:
        if is_held(exc):
            raise  # the disk-full or unreachable screen, which retries by itself (guarded.py)
        return current(page, session, terminal_safe(str(exc)))
    if feedback is not None and session.ctx.protocol.training_feedback:
        # A reload shows this feedback again (a refresher's: not kept), unless the next item
        # came with it: the page may show that item with no request, and a reload must then
        # show the item, not the feedback before it.
        if not kind and feedback.upcoming is None:
            request.session["fb"] = {"t": form.get("ticket", ""), "v": value}
        return feedback_screen(page, session, item, value, feedback)
    return current(page, session)


@guarded
async def revise(request: Request) -> Response:
    """The last test answer's item again, its answer marked, to change it."""
    page = page_of(request)

    def work() -> Screen:
        session = open_session(page, request)
        if session is None:
            return signin_screen(page)
        if (asking := consent_screen(page, request, session)) is not None:
            return asking
        try:
            last = session.last_answer()
        except UserError as exc:  # the answers stand (the worker took their code)
            return current(page, session, terminal_safe(str(exc)))
        if last is None:
            return current(page, session, NOTHING_TO_REVISE)
        item, value = last
        return item_screen(page, session, item, revising=value)

    return render(request, await page.run(work))


@posted
def reclaim(
    page: PageState, request: Request, session: AnnotatorSession, form: dict[str, str]
) -> Screen:
    """ "Continue here": this page becomes the annotator's live window again."""
    request.session["visit"] = session.claim_window(client="page")
    return index_screen(page, request, session)
