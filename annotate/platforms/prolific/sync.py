"""Every submission of the Prolific studies, reconciled with annotate's visits.

- RETURNED, TIMED-OUT: the worker's visit ends now and their leases go back to the pool at
  once (no waiting for the leases to expire).
- AWAITING REVIEW: approved when annotate agrees (a visit for the submission, an outcome the
  study pays for, the code Prolific received is that outcome's, labels for a completion);
  anything else is listed with the reason for the researcher, never rejected silently. A
  rejection is asked for by name, with a reason, which is stored.
- APPROVED, REJECTED after a crash: the pending request key is settled, no second call.

Each approval or rejection is one call under a request key stored before it: a sync killed
between the two is rerun safely (Prolific's transition is idempotent, and a submission
already moved on is not asked again).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotate.errors import UserError
from annotate.platforms.prolific import ledger
from annotate.platforms.prolific.client import Prolific, participant_of
from annotate.platforms.prolific.studies import (
    APPROVED_OUTCOMES,
    count_statuses,
    prolific_config,
    pseudonyms,
    record_counts,
    require_studies,
)
from annotate.protocol import assignment, windows
from annotate.protocol.set_aside import SET_ASIDE
from annotate.protocol.studies import TEST, StudyContext
from annotate.store.engine import lock_annotator, write_connection
from annotate.store.models import Annotator, Label, Visit, utcnow
from annotate.wording import count_of

MIN_REASON = 100
"""Prolific asks for a rejection message of at least 100 characters."""
REJECTION_CATEGORY = "OTHER"


@dataclass(frozen=True)
class Finding:
    role: str
    submission: str
    worker: str
    """The pseudonym (w07), or `?` for a participant annotate never saw."""
    prolific_status: str
    outcome: str | None
    action: str
    """approved, rejected, freed, settled, in progress, done, listed."""
    reason: str = ""


def check_reason(reason: str | None) -> str:
    text = " ".join((reason or "").split())
    if len(text) < MIN_REASON:
        raise UserError(
            f"a rejection needs --reason of at least {MIN_REASON} characters (Prolific sends it "
            f"to the participant); this one has {len(text)}"
        )
    return text


def _visit_of(
    session: Session,
    ctx: StudyContext,
    prolific_id: str,
    submission: str,
    participant: str,
    *,
    decided: bool = False,
) -> tuple[Visit, Annotator] | None:
    """The visit this submission made: by its SESSION_ID, else the participant's latest on
    this Prolific study. `decided`: the latest that has an outcome, before any without one (a
    worker who took their code, then opened their link again and closed it before the end,
    still took that code)."""
    order = (Visit.outcome.is_(None), Visit.id.desc()) if decided else (Visit.id.desc(),)
    row = session.execute(
        select(Visit, Annotator)
        .join(Annotator, Annotator.id == Visit.annotator_id)
        .where(Visit.study_id == ctx.id, Visit.platform_session_id == submission)
        .order_by(*order)
    ).first()
    if row is None:
        row = session.execute(
            select(Visit, Annotator)
            .join(Annotator, Annotator.id == Visit.annotator_id)
            .where(
                Visit.study_id == ctx.id,
                Visit.platform_study_id == prolific_id,
                Annotator.platform == "prolific",
                Annotator.platform_id == participant,
            )
            .order_by(*order)
        ).first()
    if row is None:
        return None
    visit, who = row
    session.expunge(visit)
    session.expunge(who)
    return visit, who


def _free(engine: Engine, ctx: StudyContext, visit: Visit, now: datetime) -> bool:
    """End a returned or timed-out visit now and give its leases back; False if it had ended."""
    if visit.outcome is not None or visit.departed_at is not None:
        return False
    with write_connection(engine) as conn:
        lock_annotator(conn, ctx.id, visit.annotator_id)  # after any hand-out of theirs
        windows.depart(conn, visit.id or 0, now)
        if windows.is_live(conn, ctx.id, visit.annotator_id, visit.id or 0):
            assignment.release_leases(conn, ctx, visit.annotator_id)
    return True


def _why_not(
    engine: Engine, ctx: StudyContext, visit: Visit | None, code: str | None, codes: Mapping
) -> str | None:
    """Why annotate does not approve this submission (None: it does)."""
    if visit is None:
        return "annotate has no visit for this submission (the participant never reached the page)"
    if visit.outcome is None:
        return "annotate has no outcome for this visit: the worker left before the end"
    if visit.outcome not in APPROVED_OUTCOMES:
        return f"{visit.outcome}: ask the participant to return the submission"
    expected = codes[visit.outcome]
    if code and code != expected:
        return f"the code Prolific received ({code[:20]!r}) is not the {visit.outcome} code"
    if visit.outcome in ("completed", "screened_out"):
        with Session(engine) as session:
            n = dict(
                session.execute(
                    select(Label.phase, func.count())
                    .where(
                        Label.study_id == ctx.id,
                        Label.annotator_id == visit.annotator_id,
                        Label.phase.in_([TEST, SET_ASIDE]),
                    )
                    .group_by(Label.phase)
                ).all()
            )
        if not n.get(TEST) and n.get(SET_ASIDE):
            # Refused after answering test items, whether before (screened_out) or after they
            # took their code: the page promised them no pay, so the researcher decides.
            then = "completed, then refused" if visit.outcome == "completed" else "refused"
            return (
                f"{then} at the gate after answering test items "
                f"({count_of(n[SET_ASIDE], 'test label')} set aside): approve it on Prolific, "
                "or reject it with --reject and --reason"
            )
        if visit.outcome == "completed" and not n.get(TEST):
            return "completed, but annotate holds no test label of this worker"
    return None


AWAITING = "AWAITING REVIEW"

_STATE_WORDS = {
    "APPROVED": "approved",
    "REJECTED": "rejected",
    "RETURNED": "returned by the participant",
    "TIMED-OUT": "timed out",
    "ACTIVE": "still active (not submitted yet)",
    "RESERVED": "still reserved (not started yet)",
}
_SETTLED = {"APPROVED", "REJECTED", "RETURNED", "TIMED-OUT"}


def _not_awaiting(key: str, found: list[tuple[str, str]], by_id: bool) -> str:
    """Why `--reject KEY` names no submission awaiting review: none by that name or id, or
    the state each of its submissions is in (an approval cannot be taken back by a sync)."""
    if not found:
        return f"{key}: no submission awaiting review by that name or id"
    statuses = list(dict.fromkeys(status for _, status in found))
    words = [_STATE_WORDS.get(s, s.lower()) for s in statuses]
    if len(statuses) == 1:
        state = ("already " if statuses[0] in _SETTLED else "") + words[0]
    else:  # which Prolific study each is on
        state = " and ".join(
            f"{word} ({', '.join(r for r, s in found if s == status)})"
            for status, word in zip(statuses, words, strict=True)
        )
    if by_id:
        whose = "that submission is"
    else:
        whose = f"{key}'s submissions are" if len(found) > 1 else f"{key}'s submission is"
    return f"{key}: {whose} {state}, not awaiting review"


def sync(
    engine: Engine,
    ctx: StudyContext,
    client: Prolific,
    *,
    reject: Mapping[str, str] | None = None,
    clock: Callable[[], datetime] = utcnow,
) -> list[Finding]:
    """Read every submission and act on it (see the module docstring); what was done to each.
    `reject`: pseudonym or submission id -> the reason (checked by check_reason)."""
    config = prolific_config(ctx)
    names = pseudonyms(engine)
    findings: list[Finding] = []
    rows = require_studies(engine, ctx)
    read = [(row, list(client.submissions(row.prolific_id))) for row in rows]
    # Every --reject names a submission awaiting review, checked before anything is done: an
    # approval cannot be taken back, and a name mistyped would approve the one meant.
    given = {k.casefold(): k for k in reject or {}}
    reject = {k.casefold(): check_reason(v) for k, v in (reject or {}).items()}
    states: dict[str, list[tuple[str, str]]] = {}  # name or id -> (role, status) of each
    ids = {str(sub["id"]).casefold() for _, listed in read for sub in listed}
    for row, listed in read:
        for sub in listed:
            status = str(sub.get("status") or "")
            for key in {str(sub["id"]), names.get(participant_of(sub), "")} - {""}:
                states.setdefault(key.casefold(), []).append((row.role, status))
    awaiting = {k for k, found in states.items() if any(s == AWAITING for _, s in found)}
    unknown = sorted(set(reject) - awaiting)
    if unknown:
        why = "; ".join(_not_awaiting(given[k], states.get(k, []), k in ids) for k in unknown)
        raise UserError(f"--reject {why} (nothing was approved or rejected)")
    for row, listed in read:
        now_status = {str(s["id"]): dict(s) for s in listed}
        for sub in listed:
            sid = str(sub["id"])
            participant = participant_of(sub)
            status = str(sub.get("status") or "")
            code = sub.get("study_code") or sub.get("entered_code")
            with Session(engine) as session:
                # A submission awaiting review is judged by the outcome its worker took; a
                # returned one frees the visit that may still hold items (the latest).
                found = _visit_of(
                    session, ctx, row.prolific_id, sid, participant, decided=status == AWAITING
                )
            visit = found[0] if found else None
            worker = names.get(participant, "?")
            outcome = visit.outcome if visit else None

            def note(
                action: str,
                reason: str = "",
                *,
                _f=(row.role, sid, worker, status, outcome),
            ) -> None:
                findings.append(Finding(*_f, action, reason))

            if status in ("RETURNED", "TIMED-OUT"):
                freed = visit is not None and _free(engine, ctx, visit, clock())
                note("freed" if freed else "done", "leases given back" if freed else "")
                continue
            if status in ("APPROVED", "REJECTED"):
                verb = "approve" if status == "APPROVED" else "reject"
                left = ledger.get(engine, f"{verb}:{sid}")
                if left is not None and left.state == ledger.PENDING:
                    ledger.finish(engine, left.key, {"confirmed": status})
                    note("settled", f"{status.lower()} before an interrupted sync recorded it")
                else:
                    note("done")
                continue
            if status != AWAITING:
                note("in progress" if status in ("ACTIVE", "RESERVED") else "listed", status)
                continue
            wanted = reject.get(worker.casefold()) or reject.get(sid.casefold())
            if wanted is not None:
                reason = check_reason(wanted)
                key = f"reject:{sid}"
                ledger.begin(
                    engine, ctx, key, "reject", sid,
                    {"worker": worker, "reason": reason, "study": row.prolific_id},
                )  # fmt: skip
                with ledger.asking(engine, key):
                    client.transition_submission(
                        sid,
                        {
                            "action": "REJECT",
                            "message": reason,
                            "rejection_category": REJECTION_CATEGORY,
                        },
                    )
                ledger.finish(engine, key)
                now_status[sid]["status"] = "REJECTED"
                note("rejected", reason)
                continue
            why = _why_not(engine, ctx, visit, code, config.codes)
            if why is not None:
                note("listed", why)
                continue
            key = f"approve:{sid}"
            ledger.begin(engine, ctx, key, "approve", sid, {"worker": worker, "outcome": outcome})
            with ledger.asking(engine, key):
                client.transition_submission(sid, {"action": "APPROVE"})
            ledger.finish(engine, key)
            now_status[sid]["status"] = "APPROVED"
            note("approved")
        # What Prolific holds now (as read, with this run's transitions), for `annotate status`.
        record_counts(engine, row.id or 0, count_statuses(list(now_status.values())), None)
    return findings
