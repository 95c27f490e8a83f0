"""The gate between training and test: every admission or refusal is a stored decision with the
rule, the threshold, the annotator's score and the cohort it was judged against."""

from __future__ import annotations

import shlex
import statistics
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, case, func, insert, select
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol import set_aside, standing
from annotate.protocol.assignment import release_leases
from annotate.protocol.studies import TEST, TRAINING, StudyContext, get_annotator
from annotate.specs import ProtocolSpec
from annotate.store.engine import lock_annotator, retry_transient, write_session
from annotate.store.models import (
    Annotator,
    GateClosure,
    GateDecision,
    Label,
    Study,
    utcnow,
)
from annotate.store.prepared import Prepared
from annotate.wording import count_of, fixed


@dataclass(frozen=True)
class Trainee:
    annotator_id: int
    name: str
    done: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.done if self.done else 0.0

    def as_cohort_entry(self) -> dict:
        return {"name": self.name, "done": self.done, "accuracy": round(self.accuracy, 6)}


@dataclass(frozen=True)
class Decision:
    name: str
    admitted: bool
    rule: str
    threshold: float | None
    score: float | None
    n_items: int
    decided_by: str
    decided_at: datetime
    reason: str | None = None
    set_aside: int = 0
    """Test labels of theirs this refusal set aside (protocol/set_aside.py)."""
    restored: int = 0
    """Set-aside labels this admission counted again."""
    kept_aside: int = 0
    """Set-aside labels this admission left aside: their items take no more labels."""
    imported: bool = False
    """The study's labels came from elsewhere (import-labels): nothing refills its items."""

    def labels_note(self) -> str | None:
        """What the decision did to the annotator's test labels, in words; None: nothing."""
        if self.set_aside:
            return f"{count_of(self.set_aside, 'test label')} set aside: {_aside(self.imported)}"
        if self.restored or self.kept_aside:
            kept = f", {self.kept_aside} kept aside (no room: the item full, or their batch)"
            kept = kept if self.kept_aside else ""
            return f"{count_of(self.restored, 'set-aside test label')} counted again{kept}"
        return None


@dataclass(frozen=True)
class Closure:
    """Who closed training and when; a forced close with the warnings it went past and why."""

    closed_by: str
    closed_at: datetime
    forced: bool
    reason: str
    warnings: list[str]

    def describe(self) -> str:
        return describe_closure(self.as_dict())

    def as_dict(self) -> dict:
        return {
            "closed_by": self.closed_by,
            "closed_at": self.closed_at.isoformat(timespec="seconds"),
            "forced": self.forced,
            "reason": self.reason,
            "warnings": list(self.warnings),
        }


def describe_closure(closure: dict) -> str:
    """One line for `gate`, the console and the report (from `Closure.as_dict()`)."""
    text = f"Training closed by {closure['closed_by']} at {closure['closed_at']}"
    if closure["forced"]:
        warnings = closure["warnings"]
        text += (
            f", forced past {count_of(len(warnings), 'warning')} ({'; '.join(warnings)}); "
            f"why: {closure['reason']}"
        )
    return text


def latest_closure(session: Session, study_id: int) -> Closure | None:
    """The study's last recorded close (None: open, or closed before schema 10)."""
    c = session.scalars(
        select(GateClosure)
        .where(GateClosure.study_id == study_id)
        .order_by(GateClosure.id.desc())  # type: ignore[union-attr]
        .limit(1)
    ).first()
    if c is None:
        return None
    return Closure(c.closed_by, c.closed_at, c.forced, c.reason, list(c.warnings))


@dataclass(frozen=True)
class GateOutcome:
    """One trainee in a gate plan: what closing would decide for them, and why."""

    annotator_id: int
    name: str
    admitted: bool
    reason: str
    n_items: int
    accuracy: float | None
    synthetic: bool = False


@dataclass(frozen=True)
class GatePlan:
    """What an action on the gate would do, before it is done: the console's confirmation and
    `gate --close` show this, and refuse without force while `warnings` is not empty."""

    rule: str
    threshold: float | None
    """The accuracy needed: the projected median (close) or None (manual)."""
    quota: int
    """Training items in the study."""
    min_items: int
    k: int
    admit: list[GateOutcome]
    reject: list[GateOutcome]
    admitted_before: int
    """Annotators admitted by earlier decisions (they count towards k)."""
    warnings: list[str]
    notes: list[str] = field(default_factory=list)
    """What else the action does, shown before it is confirmed (not warnings: no force)."""

    @property
    def admitted_after(self) -> int:
        return self.admitted_before + len(self.admit)

    @property
    def decides_nobody(self) -> bool:
        """Everyone has a decision already: the action would change no one."""
        return not self.admit and not self.reject


class GateRefused(UserError):
    """A gate action refused because of warnings; pass force to act anyway."""

    def __init__(self, plan: GatePlan, hint: str = "--force") -> None:
        self.plan = plan
        self.warnings = list(plan.warnings)
        super().__init__(
            "the gate was not changed: " + "; ".join(plan.warnings) + f" (use {hint} to go ahead)"
        )


_TRAINEES = (
    select(
        Annotator.id,
        Annotator.name,
        func.count(Label.id),
        func.sum(case((Label.correct.is_(True), 1), else_=0)),
    )
    .join(Label, Label.annotator_id == Annotator.id)
    .where(Label.phase == TRAINING)
    .group_by(Annotator.id, Annotator.name)
    .order_by(Annotator.name)
)


def trainees(session: Session, study_id: int) -> list[Trainee]:
    """Everyone with at least one training answer in the study, with count and correct count."""
    rows = session.execute(_TRAINEES.where(Label.study_id == study_id)).all()
    return [Trainee(aid, name, int(done), int(correct or 0)) for aid, name, done, correct in rows]


def trainee(session: Session, study_id: int, annotator_id: int) -> Trainee | None:
    """One annotator's training counts in the study (None before their first answer): what
    the threshold rule judges, read without reading everyone's."""
    query = _TRAINEES.where(Label.study_id == study_id, Label.annotator_id == annotator_id)
    row = session.execute(query).first()
    return None if row is None else Trainee(row[0], row[1], int(row[2]), int(row[3] or 0))


training_quota = standing.training_quota


def latest_decision(session: Session, study_id: int, annotator_id: int) -> GateDecision | None:
    return session.scalars(
        select(GateDecision)
        .where(GateDecision.study_id == study_id, GateDecision.annotator_id == annotator_id)
        .order_by(GateDecision.id.desc())
    ).first()


_LATEST_ADMITTED = (
    select(GateDecision.admitted)
    .where(
        GateDecision.study_id == bindparam("b_study"),
        GateDecision.annotator_id == bindparam("b_annotator"),
    )
    .order_by(GateDecision.id.desc())
    .limit(1)
)
"""Built once: the status line asks after every keypress (SQLAlchemy reuses its compiled form)."""
_RUN_LATEST_ADMITTED = Prepared(_LATEST_ADMITTED)
LATEST_ADMITTED = _LATEST_ADMITTED.scalar_subquery().label("admitted")
"""The same, as a column of a caller's own query (bound parameters b_study, b_annotator)."""


def latest_admission(conn: Connection | Session, study_id: int, annotator_id: int) -> bool | None:
    """What `latest_decision` decided (True admitted, False rejected, None: no decision yet),
    without loading the decision."""
    row = _RUN_LATEST_ADMITTED.run(conn, {"b_study": study_id, "b_annotator": annotator_id}).first()
    return None if row is None else bool(row[0])


def _decision(
    ctx: StudyContext,
    trainee: Trainee | None,
    annotator_id: int,
    admitted: bool,
    threshold: float | None,
    cohort: list[Trainee],
    decided_by: str,
    reason: str | None = None,
) -> dict[str, Any]:
    """A decision's stored values, whether the ORM or a Core insert stores them."""
    return {
        "study_id": ctx.id,
        "annotator_id": annotator_id,
        "admitted": admitted,
        "rule": ctx.protocol.gate_rule if decided_by == "rule" else "manual",
        "threshold": threshold,
        "score": trainee.accuracy if trainee else None,
        "n_items": trainee.done if trainee else 0,
        "cohort": [t.as_cohort_entry() for t in cohort],
        "decided_by": decided_by,
        "decided_at": utcnow(),
        "reason": reason,
    }


def rule_threshold(protocol: ProtocolSpec) -> float | None:
    """The training accuracy the study's rule admits at by itself: the threshold rule's
    gate_threshold. None under the manual rule (the researcher decides; a protocol's
    gate_threshold is never applied) and the median rule (a projected median, at closing)."""
    return protocol.gate_threshold if protocol.gate_rule == "threshold" else None


def _record(session: Session, values: dict[str, Any]) -> GateDecision:
    """A decision (`_decision`'s values) added to the ORM session."""
    decision = GateDecision(**values)
    session.add(decision)
    return decision


def decide_threshold(
    conn: Connection, ctx: StudyContext, annotator_id: int, me: Trainee, quota: int
) -> bool | None:
    """Threshold rule, inside a training answer's transaction, which has read the trainee's
    counts (`me`) and found no decision recorded: decide as soon as they have done the
    minimum. Returns the new decision's word (admitted or not), or None when none was made.
    The decision is one Core insert: through the ORM (a session, a mapped object and its
    flush) it was two thirds of the CPU of the answer that makes it."""
    p = ctx.protocol
    if p.gate_rule != "threshold" or me.done < min(p.gate_min_items, quota):
        return None
    assert p.gate_threshold is not None
    admitted = me.accuracy >= p.gate_threshold
    reason = _accuracy_reason(me, admitted, p.gate_threshold, "threshold")
    # A fixed threshold judges the trainee alone: no cohort is recorded with the decision
    # (each one held every trainee's figures, a million entries for 1,000 crowd workers).
    values = _decision(ctx, me, annotator_id, admitted, p.gate_threshold, [], "rule", reason)
    conn.execute(insert(GateDecision), values)
    return admitted


NO_TRAINING_RULE = "no training items"


def admit_without_training(
    session: Session, ctx: StudyContext, annotator_id: int, at: datetime | None = None
) -> GateDecision | None:
    """A study with no training items admits under an automatic rule (threshold, median) as
    soon as the annotator starts: recorded like every other decision, so no test item is
    served without one. None when the study has training items, uses the manual gate or the
    annotator has a decision already."""
    if (
        ctx.protocol.gate_rule == "manual"
        or training_quota(session, ctx.id) > 0
        or latest_decision(session, ctx.id, annotator_id) is not None
    ):
        return None
    decision = GateDecision(
        study_id=ctx.id,
        annotator_id=annotator_id,
        admitted=True,
        rule=NO_TRAINING_RULE,
        threshold=None,
        score=None,
        n_items=0,
        cohort=[],
        decided_by="rule",
        decided_at=at or utcnow(),
        reason="the study has no training items",
    )
    session.add(decision)
    return decision


def decide_late(session: Session, ctx: StudyContext, annotator_id: int) -> GateDecision | None:
    """Median rule, after training was closed: a trainee who finishes later is judged against
    the median recorded when the cohort was closed (SuperGLUE admitted workers in batches)."""
    if ctx.protocol.gate_rule != "median" or latest_decision(session, ctx.id, annotator_id):
        return None
    closing = session.scalars(
        select(GateDecision)
        .where(GateDecision.study_id == ctx.id, GateDecision.rule == "median")
        .order_by(GateDecision.id)
    ).first()
    if closing is None or closing.threshold is None:
        return None
    me = next((t for t in trainees(session, ctx.id) if t.annotator_id == annotator_id), None)
    if me is None or not standing.finished_training(me.done, training_quota(session, ctx.id)):
        return None
    admitted, reason = _median_verdict(me, ctx.protocol.gate_min_items, closing.threshold)
    reason += " recorded when the gate closed" if reason.startswith("accuracy") else ""
    values = _decision(
        ctx, me, annotator_id, admitted, closing.threshold, closing_cohort(closing), "rule", reason
    )
    return _record(session, values)


def _accuracy_reason(me: Trainee, admitted: bool, needed: float, what: str) -> str:
    """The figures as `gate`'s table and the report's show them (three decimals): a median of
    0.825 read "0.82" there."""
    sign = ">=" if admitted else "<"
    return f"accuracy {fixed(me.accuracy)} {sign} {what} {fixed(needed)} ({me.done} items)"


def _median_verdict(me: Trainee, min_items: int, median: float) -> tuple[bool, str]:
    """The median rule for one trainee: admitted, and why in words."""
    if me.done < min_items:
        return False, f"{me.done} of {min_items} required training items"
    admitted = me.accuracy >= median
    return admitted, _accuracy_reason(me, admitted, median, "median")


def closing_cohort(closing: GateDecision) -> list[Trainee]:
    return [
        Trainee(0, c["name"], c["done"], round(c["accuracy"] * c["done"])) for c in closing.cohort
    ]


def _synthetic(session: Session, ids: list[int]) -> set[int]:
    if not ids:
        return set()
    return set(
        session.scalars(select(Annotator.id).where(Annotator.id.in_(ids), Annotator.synthetic))
    )


def latest_admissions(session: Session, study_id: int) -> dict[int, bool]:
    """Annotator id -> whether their latest gate decision in the study admitted them, for
    everyone decided: one query, not one per trainee, and without loading the decisions (each
    carries its cohort, some hundred names in a big study)."""
    latest = (
        select(func.max(GateDecision.id))
        .where(GateDecision.study_id == study_id)
        .group_by(GateDecision.annotator_id)
    )
    rows = session.execute(
        select(GateDecision.annotator_id, GateDecision.admitted).where(GateDecision.id.in_(latest))
    )
    return {annotator_id: bool(admitted) for annotator_id, admitted in rows}


def _admitted_count(session: Session, study_id: int, annotator_ids: list[int]) -> int:
    admissions = latest_admissions(session, study_id)
    return sum(1 for aid in annotator_ids if admissions.get(aid))


NOTHING_TO_CLOSE = "every trainee has a gate decision already: closing changes nobody"
"""The close plan's note when nobody is left to decide (the console's dialog and `gate`)."""


def _plan_close(session: Session, ctx: StudyContext) -> GatePlan:
    p = ctx.protocol
    everyone = trainees(session, ctx.id)
    if not everyone:
        raise UserError("nobody has done any training yet; there is no cohort to close")
    quota = training_quota(session, ctx.id)
    median = statistics.median(t.accuracy for t in everyone)
    synthetic = _synthetic(session, [t.annotator_id for t in everyone])
    admit: list[GateOutcome] = []
    reject: list[GateOutcome] = []
    warnings: list[str] = []
    admissions = latest_admissions(session, ctx.id)
    decided = {t.annotator_id for t in everyone if t.annotator_id in admissions}
    for t in everyone:
        if t.annotator_id in decided:
            continue
        admitted, reason = _median_verdict(t, p.gate_min_items, median)
        outcome = GateOutcome(
            t.annotator_id,
            t.name,
            admitted,
            reason,
            t.done,
            t.accuracy,
            t.annotator_id in synthetic,
        )
        (admit if admitted else reject).append(outcome)
        if not standing.finished_training(t.done, quota):
            warnings.append(
                f"{t.name} is still mid-training ({t.done} of {quota} items) and would be "
                + ("admitted" if admitted else "rejected")
            )
        if t.done < p.gate_min_items:
            warnings.append(
                f"{t.name} has {t.done} of the minimum {p.gate_min_items} training items "
                "and would be rejected"
            )
    before = sum(1 for aid in decided if admissions[aid])
    # Nobody left to decide: closing changes no one, so there is nothing to warn about.
    if (admit or reject) and before + len(admit) < ctx.k:
        warnings.insert(
            0,
            f"only {count_of(before + len(admit), 'annotator')} would be admitted but each "
            f"item needs {ctx.k}: the study cannot complete",
        )
    notes = [] if admit or reject else [NOTHING_TO_CLOSE]
    return GatePlan(
        "median", median, quota, p.gate_min_items, ctx.k, admit, reject, before, warnings, notes
    )


def _require_median(ctx: StudyContext) -> None:
    if ctx.protocol.gate_rule != "median":
        raise UserError(
            f"study {ctx.study.name!r} uses the {ctx.protocol.gate_rule} gate, not median"
        )


def preview_close(engine: Engine, ctx: StudyContext) -> GatePlan:
    """What closing training now would do (median rule): who is admitted, who rejected, each
    with the reason, and the warnings that make `close_training` refuse without force."""
    _require_median(ctx)
    with Session(engine) as session:
        return _plan_close(session, ctx)


def close_training(
    engine: Engine,
    ctx: StudyContext,
    *,
    force: bool = False,
    by: str = "researcher",
    reason: str = "",
) -> list[Decision]:
    """Median rule, in one batch: admit trainees with at least the minimum number of items and
    accuracy at or above the median of all trainees; refuse the others. Opens the test phase.
    Refuses (GateRefused, nothing written) when the plan has warnings, unless `force`; the plan
    is computed again inside the write transaction, so it is exactly what gets decided. Who
    closed it is stored; a close forced past warnings needs `reason`, stored with them."""
    _require_median(ctx)
    with write_session(engine) as session:
        plan = _plan_close(session, ctx)
        if plan.warnings and not force:
            raise GateRefused(plan)
        forced = bool(plan.warnings)
        if forced and not reason.strip():
            raise UserError(
                f"closing the gate past {count_of(len(plan.warnings), 'warning')} needs a reason "
                "(--reason '...'): it is stored with who forced it"
            )
        # A close that decides nobody, after one that did, leaves the record of that one (who,
        # when, forced past which warnings and why): it changes nothing to record.
        if plan.admit or plan.reject or latest_closure(session, ctx.id) is None:
            session.add(
                GateClosure(
                    study_id=ctx.id,
                    closed_by=by.strip() or "researcher",
                    forced=forced,
                    reason=reason.strip(),
                    warnings=list(plan.warnings),
                )
            )
        everyone = trainees(session, ctx.id)
        by_id = {t.annotator_id: t for t in everyone}
        made = []
        for o in plan.admit + plan.reject:
            t = by_id[o.annotator_id]
            made.append(
                _record(
                    session,
                    _decision(
                        ctx,
                        t,
                        t.annotator_id,
                        o.admitted,
                        plan.threshold,
                        everyone,
                        "rule",
                        o.reason,
                    ),
                )
            )
        study = session.get(Study, ctx.id)
        assert study is not None
        study.state = TEST
        session.flush()
        names = {t.annotator_id: t.name for t in everyone}
        return [_as_decision(d, names[d.annotator_id]) for d in made]


def _aside(imported: bool) -> str:
    """What setting an annotator's test labels aside does, in words: their items take labels
    again, except in a study of imported labels, where nothing collects more."""
    effect = (
        "their items stay short of them (the labels were imported: nothing here collects more)"
        if imported
        else "the items take a label again"
    )
    return f"left out of every score, vote and export of the test phase; {effect}"


def _plan_manual(
    session: Session, ctx: StudyContext, annotator: Annotator, admit: bool, reason: str
) -> GatePlan:
    assert annotator.id is not None
    p = ctx.protocol
    everyone = trainees(session, ctx.id)
    quota = training_quota(session, ctx.id)
    me = next((t for t in everyone if t.annotator_id == annotator.id), None)
    done = me.done if me else 0
    outcome = GateOutcome(
        annotator.id,
        annotator.name,
        admit,
        reason,
        done,
        me.accuracy if me else None,
        bool(annotator.synthetic),
    )
    others = sorted({t.annotator_id for t in everyone} - {annotator.id})
    before = _admitted_count(session, ctx.id, others)
    warnings: list[str] = []
    if admit and not standing.finished_training(done, quota):
        warnings.append(
            f"{annotator.name} is still mid-training ({done} of {quota} items) and would be "
            "admitted"
        )
    if admit and done < p.gate_min_items:
        warnings.append(
            f"{annotator.name} has {done} of the minimum {p.gate_min_items} training items"
        )
    notes: list[str] = []
    labelled = _test_labels(session, ctx.id, annotator.id)
    if not admit and labelled:
        imported = standing.labels_imported(session, ctx.id)
        notes.append(
            f"{annotator.name}'s {count_of(labelled, 'test label')} will be set aside: "
            + _aside(imported)
        )
    aside = set_aside.counts(session.connection(), ctx.id).get(annotator.id, 0)
    if admit and aside:
        where = (
            "as imported"
            if standing.labels_imported(session, ctx.id)
            else "where the item still takes a label"
        )
        notes.append(
            f"{annotator.name}'s {count_of(aside, 'set-aside test label')} will count again "
            + where
        )
    return GatePlan(
        "manual",
        None,
        quota,
        p.gate_min_items,
        ctx.k,
        [outcome] if admit else [],
        [] if admit else [outcome],
        before,
        warnings,
        notes,
    )


def _test_labels(session: Session, study_id: int, annotator_id: int) -> int:
    """The annotator's test labels in the study (counted ones, not set aside)."""
    return session.execute(
        select(func.count()).where(
            Label.study_id == study_id, Label.annotator_id == annotator_id, Label.phase == TEST
        )
    ).scalar_one()


def _named(engine: Engine, ctx: StudyContext, name: str, admit: bool) -> Annotator:
    """The annotator a manual decision names. An unknown name (a mistyped pseudonym) is
    refused naming the study's trainees, not with advice to add an annotator of that name;
    trainees' names joined by commas, with the fix (a name may hold a comma, so only a name
    no one has is read as a list)."""
    try:
        return get_annotator(engine, name)
    except UserError:
        with Session(engine) as session:
            names = sorted(t.name for t in trainees(session, ctx.id))
        parts = [part.strip() for part in name.split(",")]
        if len(parts) > 1 and set(parts) <= set(names):
            option = "--admit" if admit else "--reject"
            each = " ".join(f"{option} {shlex.quote(part)}" for part in parts)
            raise UserError(
                f"no annotator named {name!r}: give {option} once per name: {each}; "
                "the gate was not changed"
            ) from None
        if not names:
            known = f"{ctx.study.name} has no trainee yet"
        else:
            shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
            known = f"the trainees of {ctx.study.name}: {shown}"
        raise UserError(
            f"no annotator named {name!r} ({known}); the gate was not changed"
        ) from None


def preview_manual(engine: Engine, ctx: StudyContext, name: str, admit: bool) -> GatePlan:
    """What admitting (or refusing) `name` by hand would do, with its warnings."""
    annotator = _named(engine, ctx, name, admit)
    with Session(engine) as session:
        return _plan_manual(session, ctx, annotator, admit, "")


def check_manual(
    engine: Engine, ctx: StudyContext, decisions: list[tuple[str, bool]], *, force: bool = False
) -> None:
    """Refuse several manual decisions (name, admit) before any of them is written: a name both
    admitted and refused, an unknown name (UserError), or any one's warnings without `force`
    (GateRefused). `gate --admit A --admit B` decides all of them or none: a typo in the second
    name, or a warning on it, left the first decided under "the gate was not changed"."""
    admitted = {name for name, admit in decisions if admit}
    both = sorted(admitted & {name for name, admit in decisions if not admit})
    if both:
        raise UserError(f"{', '.join(both)}: both admitted and refused; decide each annotator once")
    plans = [preview_manual(engine, ctx, name, admit) for name, admit in decisions]
    warnings = [w for plan in plans for w in plan.warnings]
    if warnings and not force:
        raise GateRefused(replace(plans[0], warnings=warnings))


def decide_manually(
    engine: Engine,
    ctx: StudyContext,
    name: str,
    admit: bool,
    *,
    reason: str,
    force: bool = False,
    decided_by: str = "researcher",
) -> Decision:
    """Admit or refuse one annotator by hand, with the researcher's reason (required). Refuses
    (GateRefused, nothing written) on warnings, unless `force`."""
    if not reason.strip():
        raise UserError("a manual gate decision needs a reason (--reason)")
    annotator = _named(engine, ctx, name, admit)
    assert annotator.id is not None
    annotator_id = annotator.id

    def decide() -> Decision:
        with write_session(engine) as session:
            conn = session.connection()
            # Their answers in flight end first, and the next ones read this decision: none
            # is counted while their labels are being set aside (PostgreSQL; SQLite's writers
            # take turns anyway).
            lock_annotator(conn, ctx.id, annotator_id)
            plan = _plan_manual(session, ctx, annotator, admit, reason.strip())
            if plan.warnings and not force:
                raise GateRefused(plan)
            everyone = trainees(session, ctx.id)
            me = next((t for t in everyone if t.annotator_id == annotator_id), None)
            values = _decision(
                ctx, me, annotator_id, admit, None, everyone, decided_by, reason.strip()
            )
            decision = _record(session, values)
            session.flush()  # (the labels' rules below read the latest decision)
            imported = standing.labels_imported(session, ctx.id)
            moved: dict[str, int] = {}
            if not admit:
                # The item on their screen can take no answer of theirs now (NOT_ADMITTED):
                # give it back with the refusal, or it waits for its lease to run out
                # (lease_minutes) before anyone else may label it.
                release_leases(conn, ctx, annotator_id)
                moved["set_aside"] = set_aside.set_aside(conn, ctx, annotator_id)
            else:
                moved["restored"], moved["kept_aside"] = set_aside.restore(
                    conn, ctx, annotator_id, imported=imported
                )
            return replace(_as_decision(decision, name), imported=imported, **moved)

    # Items locked in another order by others' answers can make PostgreSQL roll this back as a
    # deadlock's victim: it is run again, as an answer would be.
    return retry_transient(decide)


def _as_decision(d: GateDecision, name: str) -> Decision:
    return Decision(
        name,
        d.admitted,
        d.rule,
        d.threshold,
        d.score,
        d.n_items,
        d.decided_by,
        d.decided_at,
        d.reason,
    )


def closure_of(engine: Engine, ctx: StudyContext) -> Closure | None:
    with Session(engine) as session:
        return latest_closure(session, ctx.id)


def gate_overview(engine: Engine, ctx: StudyContext) -> list[dict]:
    """Each member of the study's roster (standing.roster: a trainee, or someone with a
    decision and no training answers) with their count, accuracy, phase and decision, and
    their test labels set aside by a refusal (for `annotate gate STUDY` and the console's gate
    screen)."""
    with Session(engine) as session:
        rows = []
        aside = set_aside.counts(session.connection(), ctx.id)
        for m in standing.roster(session, ctx.id):
            d = m.decision
            rows.append(
                {
                    "name": m.name,
                    "training_done": m.training_done,
                    "training_quota": m.quota,
                    # None: no training item answered (admitted by hand), not an accuracy of 0.
                    "training_accuracy": None
                    if m.training_accuracy is None
                    else round(m.training_accuracy, 4),
                    "phase": m.phase,
                    "gate": m.gate,
                    "rule": d.rule if d else ctx.protocol.gate_rule,
                    "threshold": d.threshold if d else rule_threshold(ctx.protocol),
                    "decided_at": d.decided_at.isoformat(timespec="seconds") if d else None,
                    "reason": (d.reason or "not recorded") if d else None,
                    "test_labels_set_aside": aside.get(m.annotator_id, 0),
                }
            )
        return rows
