"""The one preamble of every form a signed-in annotator posts (start, answer, consent,
survey, "continue here"): the arrival stamped, an expired form refused, the session opened
with the form's store work (one PageState.run), sign-in again for someone with no session,
and a crowd worker's consent asked before anything else."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import Response

from annotate.protocol.session import AnnotatorSession
from annotate.store.models import utcnow
from annotate.web.page.crowd_screens import consent_screen
from annotate.web.page.forms import form_of
from annotate.web.page.guarded import Endpoint, guarded
from annotate.web.page.render import Screen, render
from annotate.web.page.screens import expired_screen, signin_screen
from annotate.web.page.sessions import open_session
from annotate.web.page.state import PageState, page_of

Work = Callable[[PageState, Request, AnnotatorSession, dict[str, str]], Screen]
"""What a form does once the preamble has passed: runs as the page makes its store calls
(PageState.run), may call the engine, returns the screen to show."""


def posted(work: Work, *, quit_checked: bool = False, consent_first: bool = True) -> Endpoint:
    """`work` as an endpoint behind the preamble. The arrival's time is
    `request.state.received` (the answer's time, before any store work). `quit_checked`:
    `work` itself refuses a window that was quit (sessions.open_session). `consent_first`: a
    crowd worker who has not agreed to the consent text (or declined it) is shown that (or
    their exit) instead: no form is a way round it (an answer with a made-up ticket would be
    given an item). Free once they agreed: the signed session says so."""

    @guarded
    async def endpoint(request: Request) -> Response:
        request.state.received = utcnow()
        form = await form_of(request)
        page = page_of(request)
        if form is None:
            return render(request, expired_screen(page, request))

        def call() -> Screen:
            session = open_session(page, request, quit_checked=quit_checked)
            if session is None:
                return signin_screen(page)
            if consent_first and (asking := consent_screen(page, request, session)) is not None:
                return asking
            return work(page, request, session, form)

        return render(request, await page.run(call))

    endpoint.__name__ = endpoint.__qualname__ = work.__name__
    endpoint.__doc__ = work.__doc__
    return endpoint
