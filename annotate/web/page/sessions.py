"""The signed-in annotator's engine session, opened afresh for each request."""

from __future__ import annotations

from starlette.requests import Request

from annotate.errors import UserError
from annotate.protocol.session import AnnotatorSession
from annotate.protocol.studies import get_annotator
from annotate.web.page.state import PageState

CONSENTED = "consented"
"""In the signed session cookie: this browser's worker agreed to the consent text. Read from
the store once per session, not on every screen (a new arrival by link starts a new session);
an agreement given on this page is stored with the worker's next write (AnnotatorSession.
consent_given), so agreeing costs no commit of its own."""


def open_session(
    page: PageState, request: Request, visit: int | None = None, *, quit_checked: bool = False
) -> AnnotatorSession | None:
    """The signed-in annotator's session, attached to this page's window (`visit`: the
    one the answered page was served in; else the cookie's, the newest of this browser).
    None when nobody is signed in, or the cookie's window was quit (a copy replayed).
    `quit_checked`: the caller's work is a write, whose own check of the window refuses a
    quit one (windows.TOUCH), so the read that would look first is saved (an answer's)."""
    name = request.session.get("who")
    if not name:
        return None
    annotator = page.annotators.get(name)
    if annotator is None:
        try:
            annotator = page.annotators[name] = get_annotator(page.config.engine, name)
        except UserError:
            request.session.clear()  # the annotator is gone from the store: sign in again
            return None
    session = AnnotatorSession(page.config.engine, page.ctx, annotator)
    session.consent_given = bool(request.session.get(CONSENTED))
    signed_in = request.session.get("visit")  # the window this browser signed in with
    if signed_in:
        session.attach_window(int(signed_in))
        if not quit_checked and session.was_quit():  # Quit ended it: a replayed copy of
            request.session.clear()  # the cookie signs nobody in
            return None
    if visit:
        session.attach_window(int(visit))
    return session
