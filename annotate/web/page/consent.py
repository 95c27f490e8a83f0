"""A crowd worker's consent and exit survey, and leaving (quit) for anyone."""

from __future__ import annotations

import functools

from starlette.requests import Request
from starlette.responses import Response

from annotate.errors import UserError
from annotate.protocol import crowd
from annotate.protocol.session import AnnotatorSession
from annotate.store.engine import is_full_disk
from annotate.text import terminal_safe
from annotate.web.page.crowd_screens import crowd_end, end_screen, exit_screen, left_screen
from annotate.web.page.forms import form_of
from annotate.web.page.guarded import guarded
from annotate.web.page.preamble import posted
from annotate.web.page.render import Screen, render
from annotate.web.page.screens import current, expired_screen, index_screen, signin_screen
from annotate.web.page.sessions import CONSENTED, open_session
from annotate.web.page.state import PageState, page_of


@functools.partial(posted, consent_first=False)
def consent(
    page: PageState, request: Request, session: AnnotatorSession, form: dict[str, str]
) -> Screen:
    """ "I agree" goes on to the guidelines; "I do not agree" ends with its exit. The first
    answer stands (crowd.record_consent): a later one shows where the worker is."""
    if not page.crowd:
        return signin_screen(page)
    agree, held = form.get("agree") == "yes", request.session.get(CONSENTED)
    if agree and held is not False:
        # Kept in the signed session and stored with the worker's first answer (sessions.py).
        request.session[CONSENTED] = True
        session.consent_given = True
        return index_screen(page, request, session)
    leaving = crowd.record_consent(
        page.config.engine,
        page.ctx,
        session.annotator,
        agree,
        visit_id=session.visit_id,
        held=held is True,
    )
    if leaving is None:
        return index_screen(page, request, session)
    request.session[CONSENTED] = False  # every screen of this window shows the exit now
    return exit_screen(leaving)


@posted
def survey(
    page: PageState, request: Request, session: AnnotatorSession, form: dict[str, str]
) -> Screen:
    """The exit survey's answers (`q:NAME` fields); a refused one shows the survey again."""
    if not page.crowd:
        return signin_screen(page)
    answers = {k[2:]: v for k, v in form.items() if k.startswith("q:")}
    engine, who, window = page.config.engine, session.annotator, session.visit_id
    try:
        questions, leaving = crowd.answer_survey(engine, page.ctx, who, answers, visit_id=window)
    except crowd.SurveyNotDue as exc:  # posted before the end: refused, and said
        early = current(page, session, terminal_safe(str(exc)))
        early.status = 409
        return early
    except UserError as exc:
        if is_full_disk(exc):
            raise  # the disk-full screen, which retries by itself (guarded.py)
        return crowd_end(page, session, terminal_safe(str(exc))) or current(page, session)
    return end_screen(questions, leaving) or current(page, session)


@guarded
async def quit_(request: Request) -> Response:
    """Leave: the item on the screen goes back at once and the browser is signed out."""
    page = page_of(request)
    if await form_of(request) is None:
        return render(request, expired_screen(page, request))

    def work() -> Screen:
        session = open_session(page, request)
        if session is not None:
            session.release()  # give the item back at once; nobody waits for the lease
        return left_screen(page, session)

    left = await page.run(work)
    csrf = request.session.get("csrf")
    request.session.clear()
    request.session["csrf"] = csrf
    return render(request, left)
