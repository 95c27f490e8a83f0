"""Synthetic annotators that go through the real engine: training, gate, test.

Used by the demo, the tests and the benchmarks, and to plan a study (how many annotators of
what accuracy give what confidence interval). Each simulated annotator has an accuracy drawn
around the one asked for; on an item without gold (a real test file) they agree with a
pseudo-truth derived from the item id, so agreement still behaves like a real crowd's.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import Engine

from annotate.errors import UserError
from annotate.progress_hook import ProgressHook, silent
from annotate.protocol import gate
from annotate.protocol.session import AnnotatorSession, ItemTaken, ItemView, Phase
from annotate.protocol.status import study_status
from annotate.protocol.studies import AnnotatorExists, StudyContext, add_annotator, load_study
from annotate.specs import TaskSpec
from annotate.store.engine import until_reachable
from annotate.store.models import Annotator, Item
from annotate.wording import plural

ACCURACY_SPREAD = 0.05
"""Standard deviation of the annotators' accuracies around the requested one."""


@dataclass
class SimulatedAnnotator:
    name: str
    accuracy: float
    rng: random.Random
    session: AnnotatorSession | None = None
    seed: float = 0.0
    """Seeds each test answer from (annotator, item), so an annotator answers an item the same
    whatever the order items reach them (a study with and without an option compares)."""
    drift: tuple[int, float] | None = None
    """(after this many test answers, the accuracy from then on): an annotator who tires."""
    test_answers: int = 0

    def accuracy_now(self) -> float:
        if self.drift is not None and self.test_answers >= self.drift[0]:
            return self.drift[1]
        return self.accuracy


@dataclass
class SimulationResult:
    annotators: list[dict[str, Any]] = field(default_factory=list)
    training_labels: int = 0
    test_labels: int = 0
    catch_answers: int = 0
    """Answers to catch items (dev items with gold among the test items): not test labels."""
    gate_closed: bool = False
    early_stop: dict[str, Any] | None = None
    """stop_when_decided: the labels saved (annotate/protocol/status.py `early_stop_saving`)."""
    gate_note: str | None = None
    """Why a median gate was left open, or the warnings it was closed despite."""


def _stable_index(text: str, n: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % n


def _truth(spec: TaskSpec, item: ItemView, gold: Any) -> Any:
    if gold is not None:
        return gold
    key = f"{spec.name}/{item.source_id}"
    if spec.kind == "classification":
        return spec.label_values()[_stable_index(key, len(spec.labels))]
    if spec.kind == "regression":
        assert spec.scale is not None
        return spec.scale.min + _stable_index(key, spec.scale.max - spec.scale.min + 1)
    if spec.kind == "multi_answer":
        return {a["idx"]: str(_stable_index(key + a["idx"], 2)) for a in item.fields["answers"]}
    entities = item.fields.get("entities") or [""]
    return [entities[_stable_index(key, len(entities))]]


def simulated_answer(
    spec: TaskSpec, item: ItemView, gold: Any, accuracy: float, rng: random.Random
) -> Any:
    """An answer that is right with probability `accuracy` (per judgement for MultiRC)."""
    truth = _truth(spec, item, gold)
    right = rng.random() < accuracy
    if spec.kind == "classification":
        label = truth if right else rng.choice([v for v in spec.label_values() if v != truth])
        if spec.answer_scale:  # answer on the scale, at a point that collapses to the label
            return rng.choice([o.value for o in spec.answer_scale if o.collapses_to == label])
        return label
    if spec.kind == "regression":
        assert spec.scale is not None
        noise = rng.gauss(0.0, 0.4 if right else 1.5)
        return float(min(spec.scale.max, max(spec.scale.min, round(float(truth) + noise))))
    if spec.kind == "multi_answer":
        values = spec.label_values()
        return {
            k: v if rng.random() < accuracy else rng.choice([x for x in values if x != v])
            for k, v in truth.items()
        }
    entities = item.fields.get("entities") or []
    wrong = [e for e in entities if e not in truth]
    return truth[0] if right or not wrong else rng.choice(wrong)


def _gold_of(engine: Engine, item_id: int) -> Any:
    from sqlmodel import Session

    with Session(engine) as session:
        item = session.get(Item, item_id)
        return item.gold if item else None


def _answer(engine: Engine, a: SimulatedAnnotator, item: ItemView) -> Any:
    assert a.session is not None
    spec = a.session.spec
    # Test answers are seeded per (annotator, item): the same whatever order items come in
    # (stop_when_decided changes the order). Training, always in one order, draws in turn.
    rng = random.Random(f"{a.seed}/{item.item_id}") if item.phase == "test" else a.rng
    value = simulated_answer(spec, item, _gold_of(engine, item.item_id), a.accuracy_now(), rng)
    seconds = max(1.5, a.rng.lognormvariate(math.log(8.0), 0.5))
    answered_at = item.shown_at + timedelta(seconds=seconds)
    try:
        until_reachable(engine, lambda: a.session.submit(item, value, answered_at=answered_at))
        return value
    except ItemTaken:
        return None


def claim_synthetic_names(engine: Engine, names: list[str]) -> None:
    """Make sure every name is a synthetic annotator: create the missing ones (marked
    synthetic), and refuse, before anything is written, a name a real annotator holds: a
    simulation must never write labels in a person's name."""
    from sqlmodel import Session, select

    with Session(engine) as session:
        found = {
            a.name: a.synthetic
            for a in session.exec(select(Annotator).where(Annotator.name.in_(names)))  # type: ignore[attr-defined]
        }
    real = [name for name in names if found.get(name) is False]
    if real:
        who = "is a real annotator" if len(real) == 1 else "are real annotators"
        raise UserError(
            f"{', '.join(map(repr, real))} {who}; simulate writes only as annotators it "
            "created (marked synthetic): choose another --prefix"
        )
    for name in names:
        if name not in found:
            try:
                add_annotator(engine, name, synthetic=True)
            except AnnotatorExists:  # a concurrent simulate made it a moment ago
                claim_synthetic_names(engine, [name])


def _close_median_gate(
    engine: Engine, ctx: StudyContext, close_gate: bool, result: SimulationResult
) -> str | None:
    """Close the median gate for the simulated trainees, if allowed; say why not, or which
    warnings it was closed despite (asking for it is the researcher's go-ahead)."""
    if not close_gate:
        return "the median gate is left open (pass --close-gate to close it)"
    plan = gate.preview_close(engine, ctx)
    real = [o.name for o in plan.admit + plan.reject if not o.synthetic]
    if real:
        return (
            f"the median gate is left open: real {plural(len(real), 'trainee')} {', '.join(real)} "
            f"{plural(len(real), 'is')} undecided and "
            "would be judged on the simulated cohort's median; decide them with `annotate gate`"
        )
    gate.close_training(
        engine,
        ctx,
        force=True,
        by="annotate simulate",
        reason="--close-gate on a simulated cohort",
    )
    result.gate_closed = True
    return ("closed despite: " + "; ".join(plan.warnings)) if plan.warnings else None


def _labels_wanted(engine: Engine, ctx: StudyContext) -> int:
    """Test labels the study still needs for k per item (a progress bar's total)."""
    status = study_status(engine, ctx)
    return max(0, status["items_total"] * status["annotators_per_item"] - status["labels_total"])


def simulate(
    engine: Engine,
    study: str,
    annotators: int,
    accuracy: float,
    *,
    seed: int = 0,
    prefix: str = "sim",
    on_progress: Callable[[str], None] | None = None,
    close_gate: bool = True,
    accuracies: Sequence[float] | None = None,
    drift: Mapping[int, tuple[int, float]] | None = None,
    progress: ProgressHook | None = None,
) -> SimulationResult:
    """Run `annotators` synthetic annotators through training, the gate and the test phase.
    `accuracies` gives each annotator's exact accuracy instead (a spammer at 0.5 beside good
    ones); `drift` maps an annotator's index to (test answers, accuracy from then on).

    A median gate is closed only when `close_gate` (the command asks for `--close-gate`) and
    never while a real (non-synthetic) trainee is undecided: closing would decide that person
    on the simulated cohort's median. Then the simulated annotators are left waiting.
    `progress` is told the annotators through training, then the test labels written (of
    those the study still needs)."""
    tell = progress or silent
    ctx = load_study(engine, study)
    rng = random.Random(seed)
    crowd = []
    for i in range(annotators):
        drawn = min(1.0, max(0.05, rng.gauss(accuracy, ACCURACY_SPREAD)))
        own = rng.random()
        crowd.append(
            SimulatedAnnotator(
                f"{prefix}{i + 1}",
                drawn,
                random.Random(own),
                seed=own,
                drift=(drift or {}).get(i),
            )
        )
    for a, exact in zip(crowd, accuracies or [], strict=False):
        a.accuracy = exact
    claim_synthetic_names(engine, [a.name for a in crowd])
    result = SimulationResult()
    # A server that goes away for a while (a PostgreSQL restart) is waited for, within bounds.
    for trained, a in enumerate(crowd):
        tell("simulate: training", trained, len(crowd))
        a.session = until_reachable(
            engine, lambda a=a: AnnotatorSession.open(engine, study, a.name)
        )
        while until_reachable(engine, a.session.phase) is Phase.TRAINING:
            item = until_reachable(engine, a.session.next_item)
            if item is None:
                break
            _answer(engine, a, item)
            result.training_labels += 1
    waiting = [a for a in crowd if a.session and a.session.phase() is Phase.WAITING]
    if waiting and ctx.protocol.gate_rule == "median":
        result.gate_note = _close_median_gate(engine, ctx, close_gate, result)
    if on_progress:
        on_progress(f"training done for {len(crowd)} simulated annotators")
    # Test: round-robin, one item per annotator per turn, as a crowd working at once would.
    tell("simulate: training", len(crowd), len(crowd))
    active = [a for a in crowd if a.session and a.session.phase() is Phase.TEST]
    wanted = _labels_wanted(engine, ctx) if progress is not None and active else 0
    while active:
        tell("simulate: test labels", result.test_labels, max(wanted, result.test_labels))
        for a in list(active):
            assert a.session is not None
            item = until_reachable(engine, a.session.next_item)
            if item is None:
                active.remove(a)
                continue
            is_catch = item.item_id in a.session.catch_items
            if _answer(engine, a, item) is not None:
                a.test_answers += 1
                if is_catch:  # stored apart: `status` and the report count no such label
                    result.catch_answers += 1
                else:
                    result.test_labels += 1
    for a in crowd:
        assert a.session is not None
        p = a.session.progress()
        result.annotators.append(
            {
                "name": a.name,
                "accuracy_drawn": round(a.accuracy, 3),
                "phase": str(p.phase),
                "training_done": p.training_done,
                "training_accuracy": round(p.training_accuracy, 3),
                "test_done": p.test_done,
            }
        )
    if ctx.protocol.stop_when_decided:
        result.early_stop = study_status(engine, ctx).get("early_stop")
    return result
