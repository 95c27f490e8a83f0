"""Crowd studies: workers arrive by a platform link, pass through the phases, leave with a code.

The engine decides everything here; the front ends (the terminal app, `annotate serve`) show it.

    entry = parse_link(ctx, request.query_params)      # LinkEntry, or raises CrowdRefusal
    if entry.preview:                                   # MTurk preview: the guidelines only
        ...
    arrival = enter_by_link(engine, "rte-crowd", entry) # Arrival(annotator="w07", visit_id=12)
    session = open_session(engine, "rte-crowd", arrival) # this tab: the worker's live window
    session.heartbeat()                                  # now and then while a page waits
    consent_text(ctx) / needs_consent(...) / record_consent(..., agree=False)
    ... items (session.next_item / submit) until next_item() returns None ...
    questions = survey_due(engine, "rte-crowd", "w07")  # then record_survey(...), or
    due, leave = answer_survey(engine, "rte-crowd", "w07", answers)  # store, then go on
    leave = exit_for(engine, "rte-crowd", "w07")        # Exit | None (None: not finished)
    leave.code, leave.redirect_url (Prolific), leave.form_action + leave.form_fields (MTurk)

The contract:

- `parse_link(ctx_or_config, query) -> LinkEntry`: the platform's query parameters checked
  (Prolific `PROLIFIC_PID`, `STUDY_ID`, `SESSION_ID`; MTurk `workerId`, `assignmentId`, `hitId`,
  `turkSubmitTo`; generic `id` and optional `study`). A malformed id, a platform study the study
  does not accept, or an MTurk submit address that is not MTurk's raises CrowdRefusal (a
  UserError with a sentence for the page). MTurk's preview (`assignmentId=
  ASSIGNMENT_ID_NOT_AVAILABLE`) gives `preview=True` and no platform id.
- `enter_by_link(engine, study, entry) -> Arrival`: creates or resumes the worker's annotator
  (pseudonym `w01`, `w02`, ..., numbered by the database: arrivals at the same moment never
  compete for one; the platform id is stored beside it), safe when two tabs
  arrive at once, and records the arrival as a new visit, the worker's live window.
- `exit_for(engine, study, annotator, visit_id=None) -> Exit | None`: the worker's outcome
  once they are finished (completed, screened_out, study_full, no_consent, training_done,
  not_admitted; crowd_config.OUTCOMES), its completion code and how to leave; recorded with
  its time on the visit (idempotent: asking again returns the same exit). None while the
  worker still has something to do. `peek_exit` says the same without recording it.
- Consent, guidelines and the exit survey come from the study's stored crowd settings
  (crowd_config.CrowdConfig).

What the link trusts: the platform is the identity. Anyone who can type a well-formed id into
the link is that worker; Prolific and MTurk send only their own workers to it, which is why
no token is asked. Studies without crowd settings keep token sign-in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode, urlsplit

from sqlalchemy import Connection, Engine, bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import make_transient_to_detached
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol import assignment, gate, set_aside, windows
from annotate.protocol.crowd_config import (
    MTURK_ID,
    OUTCOMES,
    PROLIFIC_ID,
    CrowdConfig,
    SurveyQuestion,
    stored,
)
from annotate.protocol.studies import TEST, TRAINING, StudyContext, get_annotator, load_study
from annotate.store.engine import (
    lock_annotator,
    read_connection,
    read_session,
    write_connection,
    write_session,
)
from annotate.store.models import (
    Annotator,
    CrowdNumber,
    Label,
    StudyItem,
    SurveyAnswer,
    Visit,
    utcnow,
)
from annotate.store.prepared import Prepared
from annotate.wording import count_of, shell_word

if TYPE_CHECKING:
    from annotate.protocol.session import AnnotatorSession

PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
MTURK_WORKER = re.compile(r"^A[A-Z0-9]{5,31}$")
LINK_ID = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
LINK_ID_TEXT = "an id is 1-64 of A-Z, a-z, 0-9, . _ @ or - (no spaces, no accented letters)"
MTURK_SUBMIT_HOSTS = ("www.mturk.com", "workersandbox.mturk.com")
"""Where an MTurk worker's form may be posted: MTurk's own addresses, never any other."""
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete?cc={code}"

SURVEY_OUTCOMES = ("completed", "screened_out", "training_done")
"""Outcomes after which the exit survey (if the study has one) is asked (see survey_at)."""


def survey_at(outcome: str | None, admitted: bool) -> bool:
    """Whether the exit survey is asked at this outcome: once, at the end of the worker's run.
    A worker admitted as they finish the training study goes on to the test study, so their
    run ends there; one still waiting on the gate may never be back, so is asked now."""
    return outcome in SURVEY_OUTCOMES and not (outcome == "training_done" and admitted)


OUTCOME_TEXT = {
    "completed": "You have finished your items. Thank you!",
    "screened_out": "Thank you for your training answers: this study will not need you for "
    "its test items. You will be paid for your time.",
    "study_full": "The study has no item left for you: enough people have taken part already. "
    "You will be paid for your time.",
    "no_consent": "You did not agree to take part, so the study ends here. Thank you.",
    "training_done": "You have finished training. Thank you! Whether you are invited to the "
    "test part is decided once everyone has trained.",
    "not_admitted": "This part of the study is open only to workers admitted after training; "
    "you are not among them.",
}
"""What the final screen says for each outcome (then the code)."""
SET_ASIDE_TEXT = (
    "Thank you for your answers: the researcher has ended your part in this study, and the "
    "answers you gave in it will not be used."
)
"""What the final screen says instead of screened_out's words to a worker refused after they
had answered test items (their answers set aside: protocol/set_aside.py). It promises no pay:
the researcher reviews such a submission on the platform (prolific sync leaves it to them)."""
ADMITTED_TEXT = (
    "You have finished training, and you are admitted to the test part: you will be invited to "
    "it. Thank you!"
)
"""What the final screen says instead of training_done's words to a worker the gate has
already admitted (a threshold rule decides each trainee as they finish; a closed median gate
decides a late one at once): "decided once everyone has trained" is not so for them."""


class CrowdRefusal(UserError):
    """A link that cannot enter the study: the sentence is for the refusal page. `code` is set
    where the worker should still be sent back with one (the test link of a worker not
    admitted)."""

    def __init__(self, message: str, *, outcome: str | None = None, code: str | None = None):
        super().__init__(message)
        self.outcome = outcome
        self.code = code


@dataclass(frozen=True)
class LinkEntry:
    platform: str
    """prolific, mturk or link."""
    platform_id: str | None
    """PROLIFIC_PID, workerId or id; None in MTurk preview."""
    preview: bool = False
    """MTurk preview (assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE): show the guidelines only."""
    role: str = "all"
    """Which link: all (every phase), training or test (the two-study median gate)."""
    study_id: str | None = None
    session_id: str | None = None
    assignment_id: str | None = None
    hit_id: str | None = None
    turk_submit_to: str | None = None

    @property
    def extras(self) -> dict[str, str]:
        """The platform's fields, as stored on the visit. None is the worker's platform id
        (PROLIFIC_PID, workerId, the link's id: on the annotator row alone, where payment
        reads it), and each is kept for a reason:
        - assignment_id: MTurk's exit form posts it to externalSubmit (`_exit`), and a bonus
          (SendBonus, `pay.plan_pay`) names it; without it the work cannot be submitted or paid.
        - turk_submit_to: where that form posts (MTurk's live site or its sandbox).
        - session_id: Prolific's id of this submission (not of the participant), by which its
          API approves or rejects it (submissions/{id}/transition/; `prolific sync` finds the
          visit by it, in the visit's platform_session_id, which holds the same id).
        - study_id, hit_id: the platform study or HIT: the same for every worker who takes it."""
        names = ("study_id", "session_id", "assignment_id", "hit_id", "turk_submit_to")
        return {n: v for n in names if (v := getattr(self, n)) is not None}


@dataclass(frozen=True)
class Arrival:
    annotator: str
    """The worker's pseudonym (w07): what reports, status and the console show."""
    visit_id: int
    """This window's visit: pass it to AnnotatorSession.attach_window and exit_for."""
    new: bool
    """First arrival of this worker (a new annotator)."""
    row: Annotator | None = field(default=None, compare=False, repr=False)
    """The worker's annotator row, as stored (detached): a page keeps it for its requests."""
    goes_in: bool = False
    """Known at entry to have no arrival exit (arrival_exit would say None without a read): a
    new worker has no gate decision, so only a two-study gate's test link, or a study whose
    test items have every label they take (study_full), turns them away."""


@dataclass(frozen=True)
class Exit:
    outcome: str
    code: str
    message: str
    platform: str
    redirect_url: str | None = None
    """Prolific (and a generic link with completion_url): send the browser here."""
    form_action: str | None = None
    form_fields: dict[str, str] = field(default_factory=dict)
    """MTurk: POST these fields to form_action (turkSubmitTo/mturk/externalSubmit)."""
    at: datetime | None = None


# --- the study's crowd settings --------------------------------------------------------------


def config_of(ctx: StudyContext) -> CrowdConfig | None:
    """The study's crowd settings, validated once per loaded study (load_study loads the
    study afresh when its settings change)."""
    if "crowd" not in ctx.fixed:
        ctx.fixed["crowd"] = stored(ctx.study.crowd, f"study {ctx.study.name!r}")
    return ctx.fixed["crowd"]


def refuse_other_platform(
    ctx: StudyContext, platform: str, option: str, choices: tuple[str, ...]
) -> None:
    """A crowd study's workers are all on its own platform: a file for another (`pay
    --format`, `gate --export`) would be empty, and read as "nobody". UserError naming the
    study's own platform when `option` takes it (one of `choices`); a study with no crowd
    settings (imported labels) takes any."""
    config = config_of(ctx)
    if config is not None and config.platform in choices and config.platform != platform:
        raise UserError(
            f"study {ctx.study.name!r} runs on {config.platform}: its file is "
            f"{option} {config.platform}, not {platform}"
        )


def require_config(ctx: StudyContext) -> CrowdConfig:
    config = config_of(ctx)
    if config is None:
        raise UserError(
            f"study {ctx.study.name!r} is not a crowd study: `annotate study crowd "
            f"{shell_word(ctx.study.name)} --crowd prolific` (or mturk, or link) makes it one"
        )
    return config


def consent_text(ctx: StudyContext) -> str | None:
    config = config_of(ctx)
    return config.consent if config else None


def guidelines_text(ctx: StudyContext) -> str | None:
    """The researcher's words shown above the task's guidelines (None: none)."""
    config = config_of(ctx)
    return config.guidelines if config else None


def set_config(engine: Engine, study: str, config: CrowdConfig | None) -> None:
    """Store (or, with None, remove) a study's crowd settings."""
    from annotate.store.models import Study

    with write_session(engine) as session:
        row = session.scalars(select(Study).where(Study.name == study)).one()
        row.crowd = None if config is None else config.model_dump(mode="json")


# --- entry -----------------------------------------------------------------------------------


def _one(query: Mapping[str, str], name: str) -> str | None:
    value = query.get(name)
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def _refuse(what: str, value: str | None, expected: str) -> CrowdRefusal:
    shown = "missing" if value is None else f"{value[:40]!r}"
    return CrowdRefusal(f"This link cannot be used: its {what} is {shown}; {expected}.")


def _role(config: CrowdConfig, platform_study: str | None, *, any_when_none: bool) -> str:
    accepted = config.accepted
    if not accepted and any_when_none:
        return "all"
    if platform_study is None or platform_study not in accepted:
        known = "no platform study yet" if not accepted else count_of(len(accepted), "other")
        raise CrowdRefusal(
            f"This link's study ({(platform_study or 'none')[:40]!r}) is not one this study "
            f"accepts ({known}). Please return to the platform and check the link."
        )
    return accepted[platform_study]


def parse_link(study: StudyContext | CrowdConfig, query: Mapping[str, str]) -> LinkEntry:
    """The arrival a platform link describes (see the module docstring), or CrowdRefusal."""
    config = study if isinstance(study, CrowdConfig) else require_config(study)
    if config.platform == "prolific":
        pid, study_id = _one(query, "PROLIFIC_PID"), _one(query, "STUDY_ID")
        session_id = _one(query, "SESSION_ID")
        if pid is None or not PROLIFIC_ID.match(pid.lower()):
            raise _refuse("PROLIFIC_PID", pid, "a Prolific id is 24 hexadecimal characters")
        if study_id is None or not PROLIFIC_ID.match(study_id.lower()):
            raise _refuse("STUDY_ID", study_id, "a Prolific study id is 24 hex characters")
        if session_id is not None and not PROLIFIC_ID.match(session_id.lower()):
            raise _refuse("SESSION_ID", session_id, "a Prolific session id is 24 hex characters")
        study_id = study_id.lower()
        role = _role(config, study_id, any_when_none=False)
        return LinkEntry(
            "prolific",
            pid.lower(),
            role=role,
            study_id=study_id,
            session_id=session_id.lower() if session_id else None,
        )
    if config.platform == "mturk":
        assignment_id, hit_id = _one(query, "assignmentId"), _one(query, "hitId")
        if hit_id is not None and not MTURK_ID.match(hit_id):
            raise _refuse("hitId", hit_id, "an MTurk HIT id is 10 to 40 capitals and digits")
        role = _role(config, hit_id, any_when_none=True)
        if assignment_id == PREVIEW_ASSIGNMENT:
            return LinkEntry("mturk", None, preview=True, role=role, hit_id=hit_id)
        worker = _one(query, "workerId")
        if worker is None or not MTURK_WORKER.match(worker):
            raise _refuse(
                "workerId", worker, "an MTurk worker id is A then 5 to 31 capitals and digits"
            )
        if assignment_id is None or not MTURK_ID.match(assignment_id):
            raise _refuse(
                "assignmentId",
                assignment_id,
                "an MTurk assignment id is 10 to 40 capitals and digits",
            )
        submit_to = _one(query, "turkSubmitTo")
        not_mturk = _refuse("turkSubmitTo", submit_to, "it must be MTurk's own https address")
        try:
            parts = urlsplit(submit_to or "")
        except ValueError:  # not a URL at all ("https://[")
            raise not_mturk from None
        # The address itself, no user, port or path: the exit's form posts there.
        mturk_own = parts.scheme == "https" and parts.netloc.lower() in MTURK_SUBMIT_HOSTS
        if not mturk_own or parts.path not in ("", "/") or parts.query:
            raise not_mturk
        return LinkEntry(
            "mturk",
            worker,
            role=role,
            assignment_id=assignment_id,
            hit_id=hit_id,
            turk_submit_to=f"https://{parts.hostname}",
        )
    worker = _one(query, "id")
    if worker is None or not LINK_ID.match(worker):
        raise _refuse("id", worker, LINK_ID_TEXT)
    link_study = _one(query, "study")
    role = _role(config, link_study, any_when_none=True)
    return LinkEntry("link", worker, role=role, study_id=link_study)


def pseudonym(n: int) -> str:
    return f"w{n:02d}"


def _next_pseudonym(conn: Connection) -> str:
    """A new worker's pseudonym: the next number the database hands out (CrowdNumber), so two
    arrivals never get the same one; numbers whose name someone took by hand are passed over."""
    while True:
        number = conn.execute(_NEXT_NUMBER).inserted_primary_key[0]
        name = pseudonym(int(number))
        if _NAME_TAKEN.run(conn, {"b_name": name}).first() is None:
            return name


# Built once (SQLAlchemy builds a statement and its cache key on every call otherwise). An
# arrival reads and writes the worker's row without the ORM: its unit of work and identity
# map were half of an arrival's engine time, for one row.
_NEXT_NUMBER = insert(CrowdNumber.__table__)  # type: ignore[arg-type]
_NAME_TAKEN = Prepared(select(Annotator.id).where(Annotator.name == bindparam("b_name")))
_WORKER = Prepared(
    select(*Annotator.__table__.columns).where(  # type: ignore[attr-defined]
        Annotator.platform == bindparam("b_platform"), Annotator.platform_id == bindparam("b_id")
    )
)
_NEW_WORKER = insert(Annotator.__table__)  # type: ignore[arg-type]


def _new_worker(conn: Connection, platform: str, platform_id: str) -> Annotator:
    """Insert the worker's annotator under a new pseudonym, in the caller's transaction.
    Raises IntegrityError when another arrival of the same worker inserted first."""
    row = {
        "name": _next_pseudonym(conn),
        "token_hash": None,
        "failed_logins": 0,
        "created_at": utcnow(),
        "synthetic": False,
        "platform": platform,
        "platform_id": platform_id,
    }
    row["id"] = conn.execute(_NEW_WORKER, row).inserted_primary_key[0]
    return _detached(row)


def _detached(row: Mapping[str, Any]) -> Annotator:
    """The annotator row as the ORM would have loaded it and let go (detached): what a page
    keeps for its requests."""
    annotator = Annotator(**row)
    make_transient_to_detached(annotator)
    return annotator


def _find_worker(engine: Engine, platform: str, platform_id: str) -> Annotator | None:
    with read_connection(engine) as conn:
        found = _WORKER.run(conn, {"b_platform": platform, "b_id": platform_id}).first()
    return None if found is None else _detached(found._asdict())


def enter_by_link(
    engine: Engine,
    study: str | StudyContext,
    entry: LinkEntry,
    *,
    client: str = "link",
    clock: Callable[[], datetime] = utcnow,
) -> Arrival:
    """Create or resume the worker's annotator and record this arrival as their live window:
    one write transaction (a new worker's annotator, under a pseudonym numbered by the database
    so simultaneous arrivals never compete for a name, is inserted with the window).
    Two tabs of one worker arriving at once: the unique (platform, platform_id) lets one
    insert win; the other finds the worker and claims its own window. `study`: its name, or
    the context a server loaded once."""
    if entry.preview or entry.platform_id is None:
        raise CrowdRefusal("This is a preview: accept the task to start working.")
    ctx = _context(engine, study)
    config = require_config(ctx)
    if entry.platform != config.platform:
        raise CrowdRefusal(f"This study takes {config.platform} links, not {entry.platform}.")
    platform, platform_id = entry.platform, entry.platform_id
    for _ in range(3):
        found = _find_worker(engine, platform, platform_id)
        try:
            with write_connection(engine) as conn:
                annotator = found or _new_worker(conn, platform, platform_id)
                assert annotator.id is not None
                visit_id = windows.claim(
                    conn,
                    ctx.id,
                    annotator.id,
                    clock(),
                    client=client,
                    link_role=entry.role,
                    platform_study_id=entry.study_id or entry.hit_id,
                    platform_session_id=entry.session_id or entry.assignment_id,
                    extras=entry.extras,
                )
                new = found is None
                # As arrival_exit decides it: a new worker has no gate decision, so only a
                # two-study gate's test link, or a study with no test label left to give,
                # turns them away.
                goes_in = new and entry.role != "test" and _slots_open(conn, ctx)
                return Arrival(annotator.name, visit_id, new, annotator, goes_in)
        except IntegrityError:
            continue  # the same worker's other tab inserted first: look again
    raise UserError("could not register the worker (too many arrivals at once); try again")


def open_session(
    engine: Engine, study: str, arrival: Arrival, *, clock: Callable[[], datetime] = utcnow
):
    """The worker's AnnotatorSession on this arrival's window (what a page then drives)."""
    from annotate.protocol.session import AnnotatorSession

    session = AnnotatorSession.open(engine, study, arrival.annotator, clock=clock)
    session.attach_window(arrival.visit_id)
    return session


# --- consent ---------------------------------------------------------------------------------


def _context(engine: Engine, study: str | StudyContext) -> StudyContext:
    """The study: its name (loaded), or the context a server loaded once and passes along."""
    return study if isinstance(study, StudyContext) else load_study(engine, study)


def _who(engine: Engine, annotator: str | Annotator) -> Annotator:
    """The annotator's row: read by name, or the one the caller has already (a page keeps
    it for the whole request)."""
    return annotator if isinstance(annotator, Annotator) else get_annotator(engine, annotator)


# The statements of a worker's screens, built once: SQLAlchemy builds a statement and its
# cache key on every call otherwise (a fifth of an arrival's CPU went to that).
_THEIR_VISITS = select(Visit).where(
    Visit.study_id == bindparam("b_study"), Visit.annotator_id == bindparam("b_annotator")
)
_LATEST_VISIT = _THEIR_VISITS.order_by(Visit.id.desc()).limit(1)
_THAT_VISIT = _THEIR_VISITS.where(Visit.id == bindparam("b_visit"))
_AGREED = select(func.count()).where(
    Visit.study_id == bindparam("b_study"),
    Visit.annotator_id == bindparam("b_annotator"),
    Visit.consent.is_(True),
)
_SURVEY_ANSWERED = select(SurveyAnswer.question).where(
    SurveyAnswer.study_id == bindparam("b_study"),
    SurveyAnswer.annotator_id == bindparam("b_annotator"),
)
_VISIT_EXTRAS = select(Visit.extras).where(
    Visit.study_id == bindparam("b_study"), Visit.annotator_id == bindparam("b_annotator")
)
_AN_OPEN_SLOT = (
    select(StudyItem.item_id)
    .where(
        StudyItem.study_id == bindparam("b_study"),
        StudyItem.phase == TEST,
        StudyItem.remaining > 0,
    )
    .limit(1)
)
"""A test item that still takes a label: the first the next-item index seeks to, read on
every arrival (not a sum over the study's items)."""


def _slots_open(conn: Connection, ctx: StudyContext) -> bool:
    """Whether a test item still takes a label (else a worker yet to train leaves with
    study_full, as _outcome says)."""
    return conn.execute(_AN_OPEN_SLOT, {"b_study": ctx.id}).first() is not None


_LABELS_BY_PHASE = (
    select(Label.phase, func.count())
    .where(Label.study_id == bindparam("b_study"), Label.annotator_id == bindparam("b_annotator"))
    .group_by(Label.phase)
)
_LINK_ROLE = select(Visit.link_role).where(Visit.id == bindparam("b_visit"))
_OUTCOME_OF_VISIT = select(Visit.outcome, Visit.outcome_at).where(Visit.id == bindparam("b_visit"))
_EXTRAS_OF_VISIT = select(Visit.extras).where(Visit.id == bindparam("b_visit"))
_INSERT_SURVEY_ANSWER = insert(SurveyAnswer.__table__)  # type: ignore[arg-type]
_RECORD_OUTCOME = (
    update(Visit.__table__)  # type: ignore[arg-type]
    .where(Visit.id == bindparam("b_visit"), Visit.outcome.is_(None))
    .values(outcome=bindparam("b_outcome"), outcome_at=bindparam("b_now"))
)


def _theirs(ctx: StudyContext, annotator_id: int | None) -> dict[str, Any]:
    """The bound parameters of a statement above about one worker in the study."""
    return {"b_study": ctx.id, "b_annotator": annotator_id or 0}


def _visit(session: Session, ctx: StudyContext, annotator_id: int, visit_id: int | None) -> Visit:
    params = _theirs(ctx, annotator_id)
    if visit_id is None:
        found = session.scalars(_LATEST_VISIT, params).first()
    else:
        found = session.scalars(_THAT_VISIT, {**params, "b_visit": visit_id}).first()
    if found is None:
        raise UserError("this annotator has not entered the study yet (no visit recorded)")
    return found


def needs_consent(engine: Engine, study: str | StudyContext, annotator: str | Annotator) -> bool:
    """Whether the consent text is still to be shown (a study with one, not yet agreed to)."""
    ctx = _context(engine, study)
    if not consent_text(ctx):
        return False
    who = _who(engine, annotator)
    with read_connection(engine) as conn:
        agreed = conn.execute(_AGREED, _theirs(ctx, who.id)).scalar()
    return not agreed


def record_consent(
    engine: Engine,
    study: str | StudyContext,
    annotator: str | Annotator,
    agree: bool,
    *,
    visit_id: int | None = None,
    held: bool = False,
    clock: Callable[[], datetime] = utcnow,
) -> Exit | None:
    """Store the answer to the consent text on the visit; "I do not agree" exits at once with
    the no-consent code (returned).

    The first answer stands: a later one (a form left open in another tab, the back button)
    changes nothing. So a worker who declined is not taken back in, and keeps the code they
    were given; one who agreed and works on is not turned away by a stale "I do not agree"
    (they leave with Quit, which gives back their item). `held`: the worker's "I agree" that
    the page holds and has not stored yet (stored with their first answer): it came first.
    Returns the exit of the answer that stands: None when it is "I agree"."""
    ctx = _context(engine, study)
    who = _who(engine, annotator)
    assert who.id is not None
    with write_session(engine) as session:
        visit = _visit(session, ctx, who.id, visit_id)
        if visit.consent is None:
            visit.consent = agree or held
        visit.last_seen_at = clock()
        chosen, stands = visit.id, visit.consent
    if stands:
        return None
    return exit_for(engine, study, annotator, visit_id=chosen, clock=clock)


# --- exit survey -----------------------------------------------------------------------------


def _survey_passed(conn: Connection, ctx: StudyContext, annotator_id: int) -> set[str]:
    """Questions the worker answered or skipped (skips are kept on their visits)."""
    params = _theirs(ctx, annotator_id)
    answered = set(conn.execute(_SURVEY_ANSWERED, params).scalars())
    for extras in conn.execute(_VISIT_EXTRAS, params).scalars():
        answered.update(extras.get("survey_skipped", []))
    return answered


def survey_due(
    engine: Engine, study: str | StudyContext, annotator: str | Annotator
) -> list[SurveyQuestion]:
    """The exit survey's questions not yet answered or skipped, when the worker's outcome asks
    for the survey (survey_at); [] otherwise."""
    ctx = _context(engine, study)
    config = config_of(ctx)
    if config is None or not config.survey:
        return []
    return list(_reached(engine, ctx, annotator, None, utcnow(), survey=True).survey_due)


class SurveyNotDue(UserError):
    """An exit-survey answer before the exit (or at an exit with no survey): not stored."""

    def __init__(self) -> None:
        super().__init__(
            "the exit survey is answered at the end of the task only: these answers were not stored"
        )


def record_survey(
    engine: Engine,
    study: str | StudyContext,
    annotator: str | Annotator,
    answers: Mapping[str, str],
    *,
    clock: Callable[[], datetime] = utcnow,
) -> None:
    """Store exit-survey answers; a blank answer skips its question (refused if required). A
    choice must be one of its choices, free text at most its max_length. A second answer to
    the same question keeps the first. Taken only once the worker has reached an exit that
    asks for it (SurveyNotDue before: a page posted early stores nothing)."""
    _store_survey(engine, _reached(engine, study, annotator, None, clock()), answers, end=False)


def answer_survey(
    engine: Engine,
    study: str | StudyContext,
    annotator: str | Annotator,
    answers: Mapping[str, str],
    *,
    visit_id: int | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> tuple[list[SurveyQuestion], Exit | None]:
    """Store exit-survey answers as record_survey does, then say where the worker goes, as
    end_of does: the questions still open, else their exit, recorded in the same write as
    these answers. The outcome is worked out once: a page's survey answer is one read and one
    write (it was two of each, the outcome worked out twice)."""
    at = _reached(engine, study, annotator, visit_id, clock())
    return _store_survey(engine, at, answers, end=True)


def _checked_answers(
    config: CrowdConfig, answers: Mapping[str, str]
) -> tuple[list[tuple[str, str]], list[str]]:
    """The answers to store (name, text) and the questions skipped (sent blank); UserError
    for an unknown question, a choice not offered, a text too long or a required one blank."""
    questions = {q.name: q for q in config.survey}
    rows = []
    for name, raw in answers.items():
        question = questions.get(name)
        if question is None:
            raise UserError(f"the survey has no question {name[:40]!r}")
        value = str(raw).strip()
        # Said to the worker, who reads the questions, never their keys (`name`).
        asked = f"“{question.prompt}”"
        if question.kind == "choice" and value and value not in question.choices:
            raise UserError(f"{asked}: choose one of {', '.join(question.choices)}")
        if len(value) > question.max_length:
            raise UserError(f"{asked}: at most {question.max_length} characters")
        if value:
            rows.append((name, value))
    given = {name for name, _ in rows}
    # A page may send one question at a time: only a required question sent blank is refused.
    missing = [
        f"“{questions[n].prompt}”" for n in answers if questions[n].required and n not in given
    ]
    if missing:
        raise UserError(f"please answer {' and '.join(missing)}")
    return rows, [name for name in answers if name not in given]


def _store_survey(
    engine: Engine, at: _Reached, answers: Mapping[str, str], *, end: bool
) -> tuple[list[SurveyQuestion], Exit | None]:
    """The survey's answers stored in one write; with `end`, the questions still open, or
    else the exit, recorded in that write."""
    if not survey_at(at.outcome, at.admitted):
        raise SurveyNotDue()
    rows, skipped = _checked_answers(at.config, answers)
    ctx, who_id, visit_id, now = at.ctx, at.who.id or 0, at.visit.id or 0, at.now
    with write_connection(engine) as conn:
        if end:  # the worker's own hand-out, in another request, is over before the exit
            lock_annotator(conn, ctx.id, who_id)
        passed = _survey_passed(conn, ctx, who_id)
        new = [
            {
                "study_id": ctx.id,
                "annotator_id": who_id,
                "question": name,
                "answer": value,
                "answered_at": now,
            }
            for name, value in rows
            if name not in passed
        ]
        if new:
            conn.execute(_INSERT_SURVEY_ANSWER, new)
        seen = {"last_seen_at": now}
        if skipped:
            extras = conn.execute(_EXTRAS_OF_VISIT, {"b_visit": visit_id}).scalar() or {}
            kept = sorted({*extras.get("survey_skipped", []), *skipped})
            seen["extras"] = {**extras, "survey_skipped": kept}
        conn.execute(update(Visit.__table__).where(Visit.id == visit_id).values(**seen))  # type: ignore[arg-type]
        if not end:
            return [], None
        passed |= {name for name, _ in rows} | set(skipped)
        due = [q for q in at.config.survey if q.name not in passed]
        if due:
            return due, None
        return [], _mark_exit(conn, at, at.outcome)


# --- exit ------------------------------------------------------------------------------------


def _test_left(conn: Connection, ctx: StudyContext, annotator_id: int, mine: int, now) -> bool:
    """Whether a test item is there for the annotator (their batch of which they have `mine`
    labels not done, an item held or free), without taking a lease."""
    if assignment.batch_done(conn, ctx, annotator_id, mine):
        return False
    params = assignment.keys(ctx, annotator_id, now)
    if conn.execute(assignment.HELD, params).first() is not None:
        return True
    return conn.execute(assignment.NEXT_ITEM, params).first() is not None


class _DecisionDue:
    """_outcome's word for a worker waiting on the gate: a decision that needs no researcher
    may be due (AnnotatorSession._decide_now, a write), which the outcome waits for."""


_DECISION_DUE = _DecisionDue()


def _outcome(
    conn: Connection, worker: AnnotatorSession, visit: Visit, now, *, decided: bool
) -> str | _DecisionDue | None:
    """The worker's outcome in this visit, or None while there is something left to do, read on
    `conn`; _DECISION_DUE for a worker waiting on the gate, unless `decided` (the caller has
    let any decision due be made since)."""
    from annotate.protocol.session import Phase

    if visit.outcome is not None:
        return visit.outcome
    if visit.consent is False:
        return "no_consent"
    ctx, who_id = worker.ctx, worker.annotator_id
    phase = worker.phase_on(conn)
    if phase is Phase.WAITING and not decided:
        return _DECISION_DUE
    counts = dict(conn.execute(_LABELS_BY_PHASE, _theirs(ctx, who_id)).all())
    test_done = int(counts.get(TEST, 0))
    if visit.link_role == "test":
        if phase is not Phase.TEST:
            return "not_admitted"
    elif phase is Phase.REJECTED:
        return "screened_out"
    elif phase is Phase.TRAINING:
        if not counts.get(TRAINING) and not _slots_open(conn, ctx):
            return "study_full"  # every test item has its labels: no point training
        return None
    elif visit.link_role == "training":
        return "training_done"
    elif phase is Phase.WAITING:
        return None  # one link, a gate still to decide: the waiting screen
    if _test_left(conn, ctx, who_id, test_done, now):
        return None
    if not test_done or _completed_elsewhere(conn, ctx, who_id, visit):
        return "study_full"
    return "completed"


_COMPLETED_IN_ANOTHER_SESSION = select(func.max(Visit.outcome_at)).where(
    Visit.study_id == bindparam("b_study"),
    Visit.annotator_id == bindparam("b_annotator"),
    Visit.outcome == "completed",
    Visit.platform_session_id != bindparam("b_session"),
)
_TEST_ANSWER_SINCE = (
    select(Label.id)
    .where(
        Label.study_id == bindparam("b_study"),
        Label.annotator_id == bindparam("b_annotator"),
        Label.phase == TEST,
        Label.answered_at > bindparam("b_since"),
    )
    .limit(1)
)


def _completed_elsewhere(
    conn: Connection, ctx: StudyContext, annotator_id: int, visit: Visit
) -> bool:
    """Whether the worker's work was already completed on another platform session (another
    MTurk assignment, another Prolific submission) and nothing was answered since: this
    session has no work of its own to be paid for ("completed" twice would pay one batch
    twice). The same session opened again shows its code again."""
    if visit.platform_session_id is None:
        return False
    params = {**_theirs(ctx, annotator_id), "b_session": visit.platform_session_id}
    completed = conn.execute(_COMPLETED_IN_ANOTHER_SESSION, params).scalar()
    if completed is None:
        return False
    since = conn.execute(_TEST_ANSWER_SINCE, {**params, "b_since": completed}).first()
    return since is None


def _exit(
    config: CrowdConfig,
    outcome: str,
    visit: Visit,
    at: datetime | None,
    aside: bool = False,
    admitted: bool = False,
) -> Exit:
    """The exit an outcome gives; `aside`: the worker's test answers were set aside by a
    refusal (the code is screened_out's, the words say that their answers are not used);
    `admitted`: the gate has admitted the worker (training_done's words say so)."""
    code = config.code(outcome)
    message = OUTCOME_TEXT[outcome]
    if aside and outcome == "screened_out":
        message = SET_ASIDE_TEXT
    elif admitted and outcome == "training_done":
        message = ADMITTED_TEXT
    if config.platform == "prolific":
        return Exit(
            outcome, code, message, "prolific", PROLIFIC_COMPLETE.format(code=quote(code)), at=at
        )
    if config.platform == "mturk":
        submit_to = visit.extras.get("turk_submit_to")
        fields = {
            "assignmentId": str(visit.extras.get("assignment_id", "")),
            "outcome": outcome,
            "code": code,
        }
        action = f"{submit_to}/mturk/externalSubmit" if submit_to else None
        return Exit(outcome, code, message, "mturk", form_action=action, form_fields=fields, at=at)
    url = None
    if config.completion_url:
        url = config.completion_url.replace("{code}", quote(code))
    return Exit(outcome, code, message, "link", url, at=at)


@dataclass(frozen=True)
class _Reached:
    """A crowd worker's visit and the outcome it has reached (None: something left to do)."""

    ctx: StudyContext
    config: CrowdConfig
    who: Annotator
    visit: Visit
    outcome: str | None
    now: datetime
    """When the outcome was worked out: the time an exit is recorded with."""
    aside: bool = False
    """The worker, refused, has test answers set aside (screened_out says so: SET_ASIDE_TEXT)."""
    admitted: bool = False
    """The worker, done with training, is admitted already (training_done says so)."""
    survey_due: tuple[SurveyQuestion, ...] = ()
    """The exit survey's questions still open (asked for with `survey`, where the outcome
    takes the survey)."""


def _reached(
    engine: Engine,
    study: str | StudyContext,
    annotator: str | Annotator,
    visit_id: int | None,
    now: datetime,
    *,
    survey: bool = False,
) -> _Reached:
    """A crowd study, its settings, the worker, their visit (the latest, or `visit_id`) and
    the outcome it has reached at `now`; with `survey`, the survey's questions still open.
    Worked out in one read (one snapshot on SQLite): a batch's last answer ends here, and six
    reads of their own cost it three times a test answer's CPU (issue 38)."""
    from annotate.protocol.session import AnnotatorSession, Phase

    ctx = _context(engine, study)
    config = require_config(ctx)
    who = _who(engine, annotator)
    worker = AnnotatorSession(engine, ctx, who, clock=lambda: now)
    for decided in (False, True):
        with read_session(engine) as session:
            visit = _visit(session, ctx, who.id or 0, visit_id)
            session.expunge(visit)
            conn = session.connection()
            outcome = _outcome(conn, worker, visit, now, decided=decided)
            if not isinstance(outcome, _DecisionDue):
                aside = False
                if "screened_out" in (outcome, visit.outcome):  # a refusal: rare
                    aside = bool(set_aside.counts(conn, ctx.id).get(who.id or 0))
                admitted = "training_done" in (outcome, visit.outcome) and (
                    worker.phase_on(conn) is Phase.TEST
                )
                due: tuple[SurveyQuestion, ...] = ()
                if survey and config.survey and survey_at(outcome, admitted):
                    passed = _survey_passed(conn, ctx, who.id or 0)
                    due = tuple(q for q in config.survey if q.name not in passed)
                return _Reached(ctx, config, who, visit, outcome, now, aside, admitted, due)
        worker.phase()  # waiting on the gate: any decision due is made (a write), then read
    raise AssertionError("a decided worker's outcome is never _DECISION_DUE")


def peek_exit(
    engine: Engine,
    study: str | StudyContext,
    annotator: str | Annotator,
    *,
    visit_id: int | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> Exit | None:
    """The exit the worker has reached, without recording it (None: not finished)."""
    at = _reached(engine, study, annotator, visit_id, clock())
    if at.outcome is None:
        return None
    return _exit_at(at, at.outcome, at.visit.outcome_at)


def arrival_exit(
    session: AnnotatorSession, *, clock: Callable[[], datetime] = utcnow
) -> Exit | None:
    """The exit a worker takes as soon as they arrive, before consent or guidelines: on the
    test link of a two-study gate anyone the gate has not admitted (not_admitted), on any
    link a worker the gate rejected (screened_out; not_admitted on the test link), and a
    worker yet to start training when every test item has the labels it takes (study_full:
    no point training). Recorded as exit_for does. None: the worker goes in. `session`: the
    worker's AnnotatorSession on this arrival's window (its phase and visit are all this
    reads). A worker of the test phase leaves at once only when back after their end
    (_back_after_the_end)."""
    from annotate.protocol.session import Phase

    phase = session.phase()
    if phase is not Phase.REJECTED:
        if phase is Phase.TEST:
            return _back_after_the_end(session, clock)
        with read_connection(session.engine) as conn:
            role = conn.execute(_LINK_ROLE, {"b_visit": session.visit_id}).scalar()
            full = phase is Phase.TRAINING and not _slots_open(conn, session.ctx)
        if role != "test" and not full:
            return None
    engine, name = session.engine, session.annotator.name
    return exit_for(engine, session.ctx, name, visit_id=session.visit_id, clock=clock)


def _back_after_the_end(session: AnnotatorSession, clock: Callable[[], datetime]) -> Exit | None:
    """The exit of a test-phase worker who opens their link again after their end (their
    batch answered, or no item left for them) and owes no survey answer: their code at once.
    Such a worker (often back only for the code, in a new window) was shown the guidelines
    and a Start, as if the study began anew, before the same exit."""
    name = session.annotator.name
    at = _reached(session.engine, session.ctx, name, session.visit_id, clock(), survey=True)
    if at.outcome is None or at.survey_due:
        return None  # items left, or the survey first: through the guidelines, as before
    return _record_exit(session.engine, at, at.outcome)


def exit_for(
    engine: Engine,
    study: str | StudyContext,
    annotator: str | Annotator,
    *,
    visit_id: int | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> Exit | None:
    """The worker's exit (see the module docstring), recorded on the visit with its time: the
    outcome, and the visit's departure (time on task ends here). Idempotent."""
    at = _reached(engine, study, annotator, visit_id, clock())
    return None if at.outcome is None else _record_exit(engine, at, at.outcome)


def end_of(
    engine: Engine,
    study: str | StudyContext,
    annotator: str | Annotator,
    *,
    visit_id: int | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> tuple[list[SurveyQuestion], Exit | None]:
    """Where a worker goes once the engine has no item for them, their outcome worked out
    once: the exit survey's open questions first (survey_due), else their exit, recorded as
    exit_for records it. ([], None): they have something left to do."""
    at = _reached(engine, study, annotator, visit_id, clock(), survey=True)
    if at.outcome is None:
        return [], None
    if at.survey_due:
        return list(at.survey_due), None
    return [], _record_exit(engine, at, at.outcome)


def _exit_at(at: _Reached, outcome: str, when: datetime | None) -> Exit:
    """The exit `outcome` (reached at `when`) gives the worker of `at`, in the words their
    standing calls for."""
    return _exit(at.config, outcome, at.visit, when, at.aside, at.admitted)


def _record_exit(engine: Engine, at: _Reached, outcome: str) -> Exit:
    """The outcome and the departure recorded on the visit (once), and the exit they give."""
    if at.visit.outcome is not None:
        return _exit_at(at, at.visit.outcome, at.visit.outcome_at)
    with write_connection(engine) as conn:
        # The worker's own hand-out, in another request, is over before their leases go.
        lock_annotator(conn, at.ctx.id, at.who.id or 0)
        return _mark_exit(conn, at, outcome)


def _mark_exit(conn: Connection, at: _Reached, outcome: str) -> Exit:
    """_record_exit in the caller's write, the annotator locked (lock_annotator)."""
    ctx, who_id, visit = at.ctx, at.who.id or 0, at.visit
    if visit.outcome is None:
        params = {"b_visit": visit.id, "b_outcome": outcome, "b_now": at.now}
        conn.execute(_RECORD_OUTCOME, params)
        windows.depart(conn, visit.id or 0, at.now)
        if windows.is_live(conn, ctx.id, who_id, visit.id or 0):
            assignment.release_leases(conn, ctx, who_id)
        # What is recorded: this outcome, or one another request recorded first.
        recorded = conn.execute(_OUTCOME_OF_VISIT, {"b_visit": visit.id}).one()
        return _exit_at(at, recorded.outcome, recorded.outcome_at)
    return _exit_at(at, visit.outcome, visit.outcome_at)


# --- the researcher's side -------------------------------------------------------------------


def outcome_counts(session: Session, study_id: int) -> dict[str, int]:
    """Workers per latest outcome (status): each annotator counted once, by their last exit."""
    latest = (
        select(Visit.annotator_id, func.max(Visit.id).label("last"))
        .where(Visit.study_id == study_id, Visit.outcome.is_not(None))
        .group_by(Visit.annotator_id)
        .subquery()
    )
    rows = session.execute(
        select(Visit.outcome, func.count())
        .join(latest, Visit.id == latest.c.last)
        .group_by(Visit.outcome)
    ).all()
    found = {str(o): int(n) for o, n in rows}
    return {o: found.get(o, 0) for o in OUTCOMES}


def abandoned_visits(session: Session, ctx: StudyContext, now: datetime | None = None) -> int:
    """Visits that ended without an outcome (a closed tab, a lost connection, Quit, a
    submission returned on Prolific that `prolific sync` ended) and saw nothing for longer
    than a lease lasts: their leases went back to the pool."""
    quiet_since = (now or utcnow()) - timedelta(minutes=ctx.protocol.lease_minutes)
    return int(
        session.scalar(
            select(func.count()).where(
                Visit.study_id == ctx.id,
                Visit.superseded_at.is_(None),
                Visit.outcome.is_(None),
                Visit.last_seen_at < quiet_since,
            )
        )
        or 0
    )


def admitted_workers(engine: Engine, ctx: StudyContext, platform: str) -> dict[int, str]:
    """The workers the gate admitted (latest decision): annotator id -> platform id."""
    with Session(engine) as session:
        people = session.execute(
            select(Annotator.id, Annotator.platform_id).where(Annotator.platform == platform)
        ).all()
        admitted = {}
        for annotator_id, platform_id in people:
            decision = gate.latest_decision(session, ctx.id, annotator_id)
            if decision is not None and decision.admitted and platform_id:
                admitted[int(annotator_id)] = str(platform_id)
    return admitted


def admitted_ids(engine: Engine, ctx: StudyContext, platform: str) -> list[str]:
    """The platform ids of the workers the gate admitted (latest decision), for the platform's
    allow-list of the test study; sorted."""
    return sorted(admitted_workers(engine, ctx, platform).values())


def study_link(page_url: str, config: CrowdConfig, role: str = "all") -> str:
    """The URL to paste into the platform: the study's page (`annotate serve`) with the
    platform's placeholders; `role` picks the training or test link of a two-study gate."""
    base = page_url.rstrip("?")
    joiner = "&" if "?" in base else "?"
    if config.platform == "prolific":
        params = "&".join(f"{n}={{{{%{n}%}}}}" for n in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
        return f"{base}{joiner}{params}"
    if config.platform == "mturk":
        return base  # MTurk's ExternalQuestion adds workerId, assignmentId, hitId, turkSubmitTo
    query: dict[str, Any] = {"id": "WORKER_ID"}
    platform_study = {r: s for s, r in config.accepted.items()}.get(role)
    if platform_study is not None and role != "all":
        query["study"] = platform_study
    return f"{base}{joiner}{urlencode(query)}"


__all__ = [
    "OUTCOMES",
    "Arrival",
    "CrowdRefusal",
    "Exit",
    "LinkEntry",
    "SurveyNotDue",
    "abandoned_visits",
    "admitted_ids",
    "admitted_workers",
    "answer_survey",
    "arrival_exit",
    "consent_text",
    "enter_by_link",
    "exit_for",
    "guidelines_text",
    "needs_consent",
    "open_session",
    "outcome_counts",
    "parse_link",
    "peek_exit",
    "record_consent",
    "record_survey",
    "study_link",
    "survey_due",
]
