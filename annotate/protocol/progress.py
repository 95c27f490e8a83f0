"""Live progress of studies, for the researcher's console: what changed (a cheap check) and,
when something did, where each study and each annotator stands.

The console polls `change_stamp` about once a second and recomputes `study_progress` only when
the stamp moves. Both read in one short read-only transaction (in SQLite's WAL mode a reader
never blocks the annotators' writes), so an open console costs the annotators nothing but the
reads themselves (bench/bench_console.py measures it).
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, select
from sqlmodel import Session

from annotate.protocol import gate
from annotate.protocol.state import derived_state
from annotate.protocol.studies import TEST, TRAINING, StudyContext
from annotate.store.models import (
    Annotator,
    FlagAction,
    GateDecision,
    Label,
    LabelRevision,
    Study,
    StudyItem,
)

RECENT = timedelta(minutes=15)
"""The window of the "recent" labelling rate."""


def as_utc(moment: datetime) -> datetime:
    """Stores give back naive datetimes (UTC by convention): make them comparable with now."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# --- the change check ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ChangeStamp:
    """What moves whenever anything the console shows changes: a new, revised or deleted label,
    a gate decision, a flag resolved or an item excluded, a new study or a study's state."""

    last_label: int | None
    labels: int
    last_revision: int | None
    last_decision: int | None
    last_flag_action: int | None
    studies: tuple[tuple[int, str], ...]


def change_stamp(engine: Engine, study_id: int | None = None) -> ChangeStamp:
    """Max ids and a count, read from indexes in one short transaction (no table scan beyond
    the study's slice of the label index); `study_id` narrows the label counts to one study."""
    label_filter = [] if study_id is None else [Label.study_id == study_id]
    with engine.connect() as conn:
        last_label, labels = conn.execute(
            select(func.max(Label.id), func.count()).select_from(Label).where(*label_filter)
        ).one()
        last_revision = conn.scalar(select(func.max(LabelRevision.id)))
        last_decision = conn.scalar(select(func.max(GateDecision.id)))
        last_flag_action = conn.scalar(select(func.max(FlagAction.id)))
        studies = tuple(
            (int(i), str(s)) for i, s in conn.execute(select(Study.id, Study.state)).all()
        )
        conn.rollback()  # read only: end the snapshot at once
    return ChangeStamp(
        last_label, int(labels), last_revision, last_decision, last_flag_action, studies
    )


# --- one study ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AnnotatorProgress:
    name: str
    synthetic: bool
    phase: str
    """training, waiting (for the gate), test or rejected."""
    training_done: int
    training_quota: int
    training_accuracy: float | None
    gate: str
    """pending, admitted or rejected."""
    gate_reason: str | None
    test_done: int
    median_seconds: float | None
    """Median seconds from showing an item to the answer, over all the annotator's answers."""
    last_activity: datetime | None
    agreement: float | None
    """Share of the annotator's test answers equal to the item's current majority (items with
    a single top answer and at least two labels only); None when there is none yet."""
    flags: int


@dataclass(frozen=True)
class StudyProgress:
    study: str
    task: str
    state: str
    k: int
    n_sample: int
    """Test items in the sample."""
    items_complete: int
    labels_total: int
    """Test labels."""
    labels_needed: int
    """Test labels still missing for every item to have k."""
    histogram: dict[int, int]
    """Labels per item (0..k) -> number of test items."""
    rate_recent: float | None
    """Test labels per hour over the last 15 minutes (None before the first label)."""
    rate_overall: float | None
    """Test labels per hour from the first test label to now."""
    eta: timedelta | None
    """Time to the last missing label at the recent rate (the overall one when nothing came
    in recently); None when nothing is missing or nothing has come in at all."""
    last_activity: datetime | None
    annotators: list[AnnotatorProgress] = field(default_factory=list)
    computed_at: datetime | None = None

    @property
    def complete(self) -> bool:
        return self.n_sample > 0 and self.items_complete == self.n_sample


def _value_key(value: Any) -> str:
    """Answers are JSON (a label, a number, a list of spans): compare them as canonical text."""
    return json.dumps(value, sort_keys=True)


def decision_reason(decision: GateDecision) -> str:
    """Why the gate decided as it did: the stored reason (schema 7), else one rebuilt from the
    evidence stored with an older decision."""
    if decision.reason:
        return decision.reason
    if decision.decided_by != "rule":
        return f"decided by {decision.decided_by}"
    score = "no training answers" if decision.score is None else f"accuracy {decision.score:.2f}"
    if decision.threshold is None:
        return f"{decision.rule} rule, {score}"
    relation = ">=" if decision.admitted else "<"
    if (
        not decision.admitted
        and decision.score is not None
        and decision.score >= decision.threshold
    ):
        return f"{decision.n_items} training items, too few for the {decision.rule} rule"
    return f"{score} {relation} {decision.rule} {decision.threshold:.2f}"


def _rate(times: list[datetime], since: datetime, now: datetime) -> float | None:
    """Labels per hour among `times` from `since` to `now`."""
    hours = (now - since).total_seconds() / 3600
    if hours <= 0:
        return None
    return sum(1 for t in times if t >= since) / hours


def study_progress(engine: Engine, ctx: StudyContext, now: datetime | None = None) -> StudyProgress:
    """Where `ctx`'s study stands at `now` (default: the clock), read in one transaction."""
    now = as_utc(now or datetime.now(UTC))
    with Session(engine) as session:
        stored = session.scalar(select(Study.state).where(Study.id == ctx.id)) or ctx.study.state
        state = derived_state(session, ctx.id, ctx.k, stored)
        quota = gate.training_quota(session, ctx.id)
        counts = list(
            session.scalars(
                select(StudyItem.n_labels).where(
                    StudyItem.study_id == ctx.id, StudyItem.phase == TEST
                )
            )
        )
        rows = session.execute(
            select(
                Label.annotator_id,
                Label.item_id,
                Label.phase,
                Label.value,
                Label.correct,
                Label.shown_at,
                Label.answered_at,
                Label.flag,
            ).where(Label.study_id == ctx.id)
        ).all()
        decisions: dict[int, GateDecision] = {}
        for d in session.scalars(
            select(GateDecision).where(GateDecision.study_id == ctx.id).order_by(GateDecision.id)
        ):
            decisions[d.annotator_id] = d  # the latest one counts
        ids = {r.annotator_id for r in rows} | set(decisions)
        people = {
            a.id: (a.name, a.synthetic)
            for a in session.execute(
                select(Annotator.id, Annotator.name, Annotator.synthetic).where(
                    Annotator.id.in_(ids)
                )
            ).all()
        }
    histogram = Counter(min(n, ctx.k) for n in counts)
    test_rows = [r for r in rows if r.phase == TEST]
    test_times = [as_utc(r.answered_at) for r in test_rows]
    first = min(test_times, default=None)
    rate_recent = _rate(test_times, now - RECENT, now) if first else None
    rate_overall = _rate(test_times, first, now) if first else None
    needed = sum(max(0, ctx.k - n) for n in counts)
    rate_for_eta = rate_recent or rate_overall
    eta = timedelta(hours=needed / rate_for_eta) if needed and rate_for_eta else None
    majority = _majorities(test_rows)
    return StudyProgress(
        study=ctx.study.name,
        task=ctx.spec.name,
        state=state,
        k=ctx.k,
        n_sample=len(counts),
        items_complete=sum(1 for n in counts if n >= ctx.k),
        labels_total=len(test_rows),
        labels_needed=needed,
        histogram={n: histogram.get(n, 0) for n in range(ctx.k + 1)},
        rate_recent=rate_recent,
        rate_overall=rate_overall,
        eta=eta,
        last_activity=max((as_utc(r.answered_at) for r in rows), default=None),
        annotators=sorted(
            (
                _annotator(aid, people[aid], rows, decisions.get(aid), quota, majority)
                for aid in ids
            ),
            key=lambda a: a.name,
        ),
        computed_at=now,
    )


def _majorities(test_rows: list[Any]) -> dict[int, str]:
    """Item -> the key of its single most frequent answer (items with two labels or more)."""
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for r in test_rows:
        votes[r.item_id][_value_key(r.value)] += 1
    out = {}
    for item, counter in votes.items():
        top = counter.most_common(2)
        if sum(counter.values()) >= 2 and (len(top) == 1 or top[0][1] > top[1][1]):
            out[item] = top[0][0]
    return out


def _annotator(
    annotator_id: int,
    person: tuple[str, bool],
    rows: list[Any],
    decision: GateDecision | None,
    quota: int,
    majority: dict[int, str],
) -> AnnotatorProgress:
    mine = [r for r in rows if r.annotator_id == annotator_id]
    training = [r for r in mine if r.phase == TRAINING]
    test = [r for r in mine if r.phase == TEST]
    if decision is None:
        verdict, phase = "pending", ("waiting" if quota and len(training) >= quota else "training")
    elif decision.admitted:
        verdict, phase = "admitted", "test"
    else:
        verdict, phase = "rejected", "rejected"
    judged = [r for r in test if r.item_id in majority]
    seconds = [
        (as_utc(r.answered_at) - as_utc(r.shown_at)).total_seconds() for r in mine if r.shown_at
    ]
    return AnnotatorProgress(
        name=person[0],
        synthetic=person[1],
        phase=phase,
        training_done=len(training),
        training_quota=quota,
        training_accuracy=(
            sum(1 for r in training if r.correct) / len(training) if training else None
        ),
        gate=verdict,
        gate_reason=None if decision is None else decision_reason(decision),
        test_done=len(test),
        median_seconds=statistics.median(seconds) if seconds else None,
        last_activity=max((as_utc(r.answered_at) for r in mine), default=None),
        agreement=(
            sum(1 for r in judged if _value_key(r.value) == majority[r.item_id]) / len(judged)
            if judged
            else None
        ),
        flags=sum(1 for r in mine if r.flag),
    )


# --- every study --------------------------------------------------------------------------------
@dataclass(frozen=True)
class StudyOverview:
    name: str
    task: str
    state: str
    k: int
    n_sample: int
    items_complete: int
    labels_total: int
    last_activity: datetime | None

    @property
    def share_done(self) -> float:
        """Test labels given out of the k x sample the study needs."""
        wanted = self.k * self.n_sample
        return min(1.0, self.labels_total / wanted) if wanted else 0.0


def studies_overview(engine: Engine) -> list[StudyOverview]:
    """Every study in the store with its progress and last activity (grouped queries only)."""
    with Session(engine) as session:
        studies = session.execute(
            select(Study.id, Study.name, Study.task, Study.state, Study.protocol).order_by(Study.id)
        ).all()
        items: dict[int, list[int]] = defaultdict(list)
        for study_id, n in session.execute(
            select(StudyItem.study_id, StudyItem.n_labels).where(StudyItem.phase == TEST)
        ).all():
            items[study_id].append(n)
        last = dict(
            session.execute(
                select(Label.study_id, func.max(Label.answered_at)).group_by(Label.study_id)
            ).all()
        )
        admitted = set(
            session.scalars(
                select(GateDecision.study_id).where(GateDecision.admitted.is_(True)).distinct()
            )
        )
    out = []
    for study_id, name, task, stored, protocol in studies:
        k = int(protocol.get("annotators_per_item", 1))
        counts = items.get(study_id, [])
        state = _state_of(counts, k, stored, study_id in admitted)
        out.append(
            StudyOverview(
                name=name,
                task=task,
                state=state,
                k=k,
                n_sample=len(counts),
                items_complete=sum(1 for n in counts if n >= k),
                labels_total=sum(counts),
                last_activity=as_utc(last[study_id]) if study_id in last else None,
            )
        )
    return out


def _state_of(counts: list[int], k: int, stored: str, anyone_admitted: bool) -> str:
    """`state.derived_state` from counts already read (one grouped query for every study)."""
    if counts and all(n >= k for n in counts):
        return "complete"
    return "test" if stored == TEST or anyone_admitted else TRAINING
