"""The way in: the page itself (whatever screen the annotator is at), its htmx refresh,
sign-in, and "start" after the guidelines."""

from __future__ import annotations

import functools
import logging
import secrets

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.tokens import SIGN_IN_REFUSED, sign_in_check, signed_in
from annotate.protocol.windows import ContinuedElsewhere
from annotate.text import terminal_safe
from annotate.web.limits import address_key, page_keys, wait_message
from annotate.web.page.crowd_screens import arrive_by_link
from annotate.web.page.forms import form_of
from annotate.web.page.guarded import guarded
from annotate.web.page.preamble import posted
from annotate.web.page.render import Screen, render
from annotate.web.page.screens import (
    current,
    index_screen,
    signin_screen,
    window_refused,
)
from annotate.web.page.sessions import open_session
from annotate.web.page.state import PageState, page_of

log = logging.getLogger("annotate.serve")


@guarded
async def index(request: Request) -> Response:
    """`/`: a platform link's arrival, sign-in, or where the annotator stands."""
    page = page_of(request)
    config = page.config

    def work() -> Screen | None:
        if (refused := arrive_by_link(page, request)) is not None:
            return refused
        if page.crowd and request.query_params:
            return None  # entered: reload without the ids in the address
        session = open_session(page, request)
        if session is None:
            if page.crowd:
                return Screen("link", {})
            one_person = config.annotator and not config.require_tokens
            if one_person and sign_in_check(
                config.engine, config.annotator, "", require_token=False
            ):
                request.session["who"] = config.annotator
                return index_screen(page, request)
            return signin_screen(page)
        return index_screen(page, request, session)

    shown = await page.run(work)
    if shown is None:
        return RedirectResponse("/", status_code=303)
    return render(request, shown)


def still_shown(shown: str | None, phase: Phase) -> bool:
    """Whether the poll of a screen that waits on the researcher's gate decision (`shown`: the
    phase it shows, "1" for the waiting screen) finds the annotator still there; the engine
    says which phases such a decision can move on (Phase.awaits_researcher)."""
    if not shown or not phase.awaits_researcher:
        return False
    return phase is Phase.WAITING if shown == "1" else phase.value == shown


@guarded
async def screen(request: Request) -> Response:
    """The current screen (htmx: the waiting screen's poll, "continue" after feedback)."""
    page = page_of(request)

    def work() -> Screen | None:
        # "Continue" after the feedback goes straight to the next item, whose read refuses a
        # window that was quit (AnnotatorSession.next_item): the read that would ask first is
        # saved, and asked only when the window is refused (a replayed cookie: sign-in).
        moving_on = bool(request.query_params.get("next") and request.session.get("started"))
        session = open_session(page, request, quit_checked=moving_on)
        if session is None:
            return signin_screen(page)
        if request.query_params.get("next"):
            request.session.pop("fb", None)  # the feedback has been read: move on
        if still_shown(request.query_params.get("waiting"), session.phase()):
            return None  # nothing new: the poll leaves the screen as it is
        try:
            shown = index_screen(page, request, session)
        except ContinuedElsewhere:
            if not moving_on:
                raise  # its window was checked as the session opened: another took over
            return window_refused(page, request)
        if shown.name == "held" and request.query_params.get("held") == shown.context["key"]:
            return None  # the same wait, as shown: the poll leaves the screen as it is
        return shown

    result = await page.run(work)
    if result is None:
        return Response(status_code=204)
    return render(request, result)


@guarded
async def sign_in(request: Request) -> Response:
    """A name and token, counted by the sign-in limiter; a crowd study takes links only."""
    page = page_of(request)
    config = page.config
    if page.crowd:  # workers enter by their platform link only
        return render(request, Screen("link", {}, 403))
    form = await form_of(request)
    if form is None:
        expired = signin_screen(page, "The page had expired; sign in again.", 400)
        return render(request, expired)
    name = (config.annotator or form.get("name", "")).strip()
    token = form.get("token", "")
    address = request.client.host if request.client else None
    if not name:
        return render(request, signin_screen(page, "Type your annotator name.", 400))
    # The address first, then the name at this address: wrong tries from elsewhere never
    # lock a name against its right token (limits.py). The address is the connection's, or
    # a proxy's X-Forwarded-For only from `serve --forwarded-allow-ips` (supervisor.py).
    keys = page_keys(name, address)
    wait = config.limiter.wait(keys)
    if wait > 0:
        config.limiter.refused([address_key(address)])  # hammering counts on the address
        return render(request, signin_screen(page, wait_message(wait), 429, typed=name))

    def admit() -> Screen | None:  # one store call (PageState.run) for the whole sign-in
        annotator = signed_in(config.engine, name, token, require_token=config.require_tokens)
        if annotator is None:
            return None
        page.annotators[name] = annotator
        csrf = request.session.get("csrf")
        request.session.clear()  # a new session for the new person (no fixation)
        request.session.update({"who": name, "csrf": csrf or secrets.token_urlsafe(24)})
        # This page is now the annotator's live window: an older page or terminal of
        # theirs stops taking answers (protocol/windows.py).
        session = open_session(page, request)
        assert session is not None
        request.session["visit"] = session.claim_window(client="page")
        return index_screen(page, request, session)

    admitted = await page.run(admit)
    if admitted is None:
        config.limiter.refused(keys)
        return render(request, signin_screen(page, SIGN_IN_REFUSED, 403, typed=name))
    config.limiter.admitted(name, address or "?")
    log.info("signed in: %s from %s", terminal_safe(name), address)
    return render(request, admitted)


@functools.partial(posted, quit_checked=True)
def start(
    page: PageState, request: Request, session: AnnotatorSession, form: dict[str, str]
) -> Screen:
    """The guidelines are read: the first item, whose read refuses a window that was quit (as
    "continue" after the feedback does, see `screen`). A crowd worker who has not agreed to
    the consent text is shown that first (preamble.posted)."""
    request.session["started"] = True
    try:
        return current(page, session)
    except ContinuedElsewhere:
        return window_refused(page, request)
