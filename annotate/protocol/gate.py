"""The gate between training and test: every admission or refusal is a stored decision with the
rule, the threshold, the annotator's score and the cohort it was judged against."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, case, func, select
from sqlmodel import Session

from annotate.errors import UserError
from annotate.protocol.studies import TEST, TRAINING, StudyContext, get_annotator
from annotate.store.engine import write_session
from annotate.store.models import Annotator, GateDecision, Label, Study, StudyItem, utcnow


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


def trainees(session: Session, study_id: int) -> list[Trainee]:
    """Everyone with at least one training answer in the study, with count and correct count."""
    rows = session.execute(
        select(
            Annotator.id,
            Annotator.name,
            func.count(Label.id),
            func.sum(case((Label.correct.is_(True), 1), else_=0)),
        )
        .join(Label, Label.annotator_id == Annotator.id)
        .where(Label.study_id == study_id, Label.phase == TRAINING)
        .group_by(Annotator.id, Annotator.name)
        .order_by(Annotator.name)
    ).all()
    return [Trainee(aid, name, int(done), int(correct or 0)) for aid, name, done, correct in rows]


def training_quota(session: Session, study_id: int) -> int:
    return int(
        session.scalar(
            select(func.count()).where(StudyItem.study_id == study_id, StudyItem.phase == TRAINING)
        )
        or 0
    )


def latest_decision(session: Session, study_id: int, annotator_id: int) -> GateDecision | None:
    return session.scalars(
        select(GateDecision)
        .where(GateDecision.study_id == study_id, GateDecision.annotator_id == annotator_id)
        .order_by(GateDecision.id.desc())
    ).first()


def _record(
    session: Session,
    ctx: StudyContext,
    trainee: Trainee | None,
    annotator_id: int,
    admitted: bool,
    threshold: float | None,
    cohort: list[Trainee],
    decided_by: str,
) -> GateDecision:
    decision = GateDecision(
        study_id=ctx.id,
        annotator_id=annotator_id,
        admitted=admitted,
        rule=ctx.protocol.gate_rule if decided_by == "rule" else "manual",
        threshold=threshold,
        score=trainee.accuracy if trainee else None,
        n_items=trainee.done if trainee else 0,
        cohort=[t.as_cohort_entry() for t in cohort],
        decided_by=decided_by,
        decided_at=utcnow(),
    )
    session.add(decision)
    return decision


def decide_threshold(session: Session, ctx: StudyContext, annotator_id: int) -> GateDecision | None:
    """Threshold rule: decide as soon as the annotator has done the minimum (called after each
    training answer, inside its transaction). Returns the new decision, if one was made."""
    p = ctx.protocol
    if p.gate_rule != "threshold" or latest_decision(session, ctx.id, annotator_id) is not None:
        return None
    everyone = trainees(session, ctx.id)
    me = next((t for t in everyone if t.annotator_id == annotator_id), None)
    needed = min(p.gate_min_items, training_quota(session, ctx.id))
    if me is None or me.done < needed:
        return None
    assert p.gate_threshold is not None
    admitted = me.accuracy >= p.gate_threshold
    return _record(session, ctx, me, annotator_id, admitted, p.gate_threshold, everyone, "rule")


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
    if me is None or me.done < training_quota(session, ctx.id):
        return None
    admitted = me.done >= ctx.protocol.gate_min_items and me.accuracy >= closing.threshold
    return _record(
        session, ctx, me, annotator_id, admitted, closing.threshold, closing_cohort(closing), "rule"
    )


def closing_cohort(closing: GateDecision) -> list[Trainee]:
    return [
        Trainee(0, c["name"], c["done"], round(c["accuracy"] * c["done"])) for c in closing.cohort
    ]


def close_training(engine: Engine, ctx: StudyContext) -> list[Decision]:
    """Median rule, in one batch: admit trainees with at least the minimum number of items and
    accuracy at or above the median of all trainees; refuse the others. Opens the test phase."""
    if ctx.protocol.gate_rule != "median":
        raise UserError(
            f"study {ctx.study.name!r} uses the {ctx.protocol.gate_rule} gate, not median"
        )
    with write_session(engine) as session:
        everyone = trainees(session, ctx.id)
        if not everyone:
            raise UserError("nobody has done any training yet; there is no cohort to close")
        median = statistics.median(t.accuracy for t in everyone)
        made = []
        for t in everyone:
            if latest_decision(session, ctx.id, t.annotator_id) is not None:
                continue
            admitted = t.done >= ctx.protocol.gate_min_items and t.accuracy >= median
            made.append(
                _record(session, ctx, t, t.annotator_id, admitted, median, everyone, "rule")
            )
        study = session.get(Study, ctx.id)
        assert study is not None
        study.state = TEST
        session.flush()
        names = {t.annotator_id: t.name for t in everyone}
        return [_as_decision(d, names[d.annotator_id]) for d in made]


def decide_manually(engine: Engine, ctx: StudyContext, name: str, admit: bool) -> Decision:
    annotator = get_annotator(engine, name)
    assert annotator.id is not None
    with write_session(engine) as session:
        everyone = trainees(session, ctx.id)
        me = next((t for t in everyone if t.annotator_id == annotator.id), None)
        decision = _record(session, ctx, me, annotator.id, admit, None, everyone, "researcher")
        session.flush()
        return _as_decision(decision, name)


def _as_decision(d: GateDecision, name: str) -> Decision:
    return Decision(
        name, d.admitted, d.rule, d.threshold, d.score, d.n_items, d.decided_by, d.decided_at
    )


def gate_overview(engine: Engine, ctx: StudyContext) -> list[dict]:
    """Each trainee's count, accuracy and decision (for `annotate gate STUDY`)."""
    with Session(engine) as session:
        quota = training_quota(session, ctx.id)
        rows = []
        for t in trainees(session, ctx.id):
            d = latest_decision(session, ctx.id, t.annotator_id)
            rows.append(
                {
                    "name": t.name,
                    "training_done": t.done,
                    "training_quota": quota,
                    "training_accuracy": round(t.accuracy, 4),
                    "gate": "pending" if d is None else ("admitted" if d.admitted else "rejected"),
                    "rule": d.rule if d else ctx.protocol.gate_rule,
                    "threshold": d.threshold if d else ctx.protocol.gate_threshold,
                    "decided_at": d.decided_at.isoformat(timespec="seconds") if d else None,
                }
            )
        return rows
