"""The screens of a crowd study around the items (protocol/crowd.py decides; these show it):
entry by a platform link, consent, the exit survey, and the exit with its code and the way
back to the platform."""

from __future__ import annotations

import secrets

from starlette.requests import Request

from annotate.presentation.closing import goodbye
from annotate.protocol import crowd
from annotate.protocol.session import AnnotatorSession
from annotate.text import terminal_safe
from annotate.web.page.render import Screen
from annotate.web.page.sessions import CONSENTED
from annotate.web.page.state import COME_BACK, PageState


def crowd_end(
    page: PageState, session: AnnotatorSession, error: str | None = None
) -> Screen | None:
    """Once the engine says the worker is done: the exit survey's open questions, then
    the exit (its code, and how the platform takes the worker back)."""
    engine, who = page.config.engine, session.annotator
    questions, leaving = crowd.end_of(engine, page.ctx, who, visit_id=session.visit_id)
    return end_screen(questions, leaving, error)


def end_screen(
    questions: list[crowd.SurveyQuestion], leaving: crowd.Exit | None, error: str | None = None
) -> Screen | None:
    """The exit survey's open questions, else the exit; None: neither (something to do)."""
    if questions:
        return Screen("survey", {"questions": questions, "error": error})
    return exit_screen(leaving) if leaving is not None else None


ENTERED = "entered"
"""In the signed session cookie: the window of a new worker the engine let in at its arrival
(crowd.Arrival.goes_in). Until the worker starts, the screens of that window ask neither
whether they are turned away at arrival nor whether they consented before: a new worker has no
gate decision and no consent stored. (Should a researcher reject them meanwhile, the first
item's read finds it and shows the exit.)"""


def entered(request: Request, session: AnnotatorSession) -> bool:
    window = request.session.get(ENTERED)
    return window is not None and window == session.visit_id


def arrival_screen(page: PageState, request: Request, session: AnnotatorSession) -> Screen | None:
    """A worker who is to leave at once (protocol/crowd.py's arrival_exit): the exit with
    their code, before consent or guidelines."""
    if not page.crowd:
        return None
    if entered(request, session):
        return None  # the engine said so as this window arrived
    leaving = crowd.arrival_exit(session)
    return exit_screen(leaving) if leaving is not None else None


def left_screen(page: PageState, session: AnnotatorSession | None) -> Screen:
    """After Quit: a crowd worker leaves with their code where they have reached an exit,
    else with the way back (their platform link; they have no name to sign in with)."""
    if page.crowd and session is not None:
        engine, study, name = page.config.engine, page.ctx, session.annotator.name
        leaving = crowd.exit_for(engine, study, name, visit_id=session.visit_id)
        if leaving is not None:
            return exit_screen(leaving)
    if session is None or page.crowd:  # (a crowd worker's screen says its own way back)
        return Screen("left", {"crowd": page.crowd, "goodbye": goodbye(True, COME_BACK)})
    progress = session.progress()
    said = goodbye(session.more_to_come(progress), COME_BACK, progress)
    return Screen("left", {"crowd": page.crowd, "goodbye": said})


def exit_screen(leaving: crowd.Exit) -> Screen:
    # MTurk's externalSubmit is allowed by the study's policy on every response (guard.py):
    # a screen swapped in by htmx keeps the policy of the page it came into.
    return Screen(
        "exit",
        {
            "exit": leaving,
            "message": terminal_safe(leaving.message),
            "fields": {k: terminal_safe(v) for k, v in leaving.form_fields.items()},
        },
    )


def arrive_by_link(page: PageState, request: Request) -> Screen | None:
    """A platform link (its query): the worker enters as their pseudonymous annotator in
    a new window, or the page says why the link cannot enter. None: no link here."""
    query = dict(request.query_params)
    if not page.crowd or not query:
        return None
    try:
        entry = crowd.parse_link(page.ctx, query)
        if entry.preview:  # MTurk's preview: what the task is, nothing to answer yet
            return Screen(
                "preview", {"guidelines": page.help.guidelines, "crowd_text": crowd_words(page)}
            )
        arrival = crowd.enter_by_link(page.config.engine, page.ctx, entry, client="page")
    except crowd.CrowdRefusal as exc:
        return Screen("refused", {"message": terminal_safe(str(exc)), "code": exc.code}, 403)
    csrf = request.session.get("csrf")
    # Consent given in this browser and not yet stored (it is stored with the first answer)
    # still holds when the same worker opens the link again, in this tab or another.
    consented = request.session.get("who") == arrival.annotator and request.session.get(CONSENTED)
    request.session.clear()
    request.session.update(
        {
            "who": arrival.annotator,
            "visit": arrival.visit_id,
            "csrf": csrf or secrets.token_urlsafe(24),
        }
    )
    if consented:
        request.session[CONSENTED] = True
    if arrival.goes_in:  # the first screen after this link asks no arrival exit
        request.session[ENTERED] = arrival.visit_id
    if arrival.row is not None:  # a new worker: no read for their row, nor for a consent
        page.annotators[arrival.annotator] = arrival.row  # they cannot have given yet
        request.state.new_worker = True
    return None


def crowd_words(page: PageState) -> str | None:
    """The researcher's own words above the task's guidelines."""
    words = crowd.guidelines_text(page.ctx)
    return terminal_safe(words) if words else None


def consent_screen(page: PageState, request: Request, session: AnnotatorSession) -> Screen | None:
    """The consent text, while the worker has not answered it; once they declined, their
    exit, whatever screen they ask for."""
    if not page.crowd:
        return None
    if request.session.get(CONSENTED) is False:
        engine, name = page.config.engine, session.annotator.name
        leaving = crowd.exit_for(engine, page.ctx, name, visit_id=session.visit_id)
        return exit_screen(leaving) if leaving is not None else None
    if request.session.get(CONSENTED) or not crowd.consent_text(page.ctx):
        return None
    new_worker = getattr(request.state, "new_worker", False) or entered(request, session)
    if not new_worker and not crowd.needs_consent(page.config.engine, page.ctx, session.annotator):
        request.session[CONSENTED] = True
        return None
    text = terminal_safe(crowd.consent_text(page.ctx) or "")
    return Screen("consent", {"paragraphs": text.split("\n\n")})
