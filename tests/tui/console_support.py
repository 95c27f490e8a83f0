"""Studies for the console's tests: annotators who label through the real engine, on a clock
that ticks a fixed step per reading, so every stored moment (and every picture) is the same on
every run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine

from annotate.protocol.session import AnnotatorSession
from annotate.protocol.studies import StudyContext
from tests.engine_helpers import rte_study

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
"""The console's frozen "now" in the pictures: half an hour after the first label."""


class StepClock:
    """Each reading is `step` later than the one before (shown_at, answered_at, …)."""

    def __init__(self, start: datetime = START, step: timedelta = timedelta(seconds=4)) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


def gold_answer(item) -> str:  # type: ignore[no-untyped-def]
    """RTE test rows of engine_helpers alternate their gold by idx."""
    idx = int(item.source_id)
    return "entailment" if idx % 2 == 0 else "not_entailment"


def label_as(
    engine: Engine,
    study: str,
    name: str,
    *,
    training: Callable[[int], str] | None = None,
    test_items: int = 0,
    wrong_every: int = 0,
    flag: dict[int, str] | None = None,
    clock: StepClock | None = None,
) -> AnnotatorSession:
    """`name` does all the training (answer i: `training(i)`, default right) and then
    `test_items` test items (every `wrong_every`-th one wrong); `flag` maps a test answer's
    number to the comment flagged with it."""
    clock = clock or StepClock()
    session = AnnotatorSession.open(engine, study, name, create_annotator=True, clock=clock)
    n = 0
    while (item := session.next_item()) is not None and item.phase == "training":
        right = gold_answer(item)
        answer = training(n) if training else right
        session.submit(item, answer, answered_at=clock())
        n += 1
    done = 0
    while item is not None and done < test_items:
        answer = gold_answer(item)
        if wrong_every and (done + 1) % wrong_every == 0:
            answer = "entailment" if answer == "not_entailment" else "not_entailment"
        comment = (flag or {}).get(done)
        session.submit(item, answer, answered_at=clock(), flag=comment is not None, comment=comment)
        done += 1
        if done < test_items:
            item = session.next_item()
    session.release()
    return session


def busy_study(engine: Engine, tmp_path: Path, name: str = "rte [pilot]") -> StudyContext:
    """A k=3 threshold-gated RTE study mid-way: three admitted annotators at different
    paces (one flagged an item with a markup look-alike comment), one rejected, one still in
    training."""
    ctx = rte_study(
        engine,
        tmp_path,
        name=name,
        train=4,
        test=8,
        annotators_per_item=3,
        gate_threshold=0.75,
    )
    clock = StepClock()
    label_as(
        engine,
        name,
        "[b]ana[/b]",
        test_items=8,
        clock=clock,
        flag={2: "the premise is cut off [/i]"},
    )
    label_as(engine, name, "ben", test_items=6, wrong_every=3, clock=clock)
    label_as(engine, name, "chloé", test_items=3, clock=clock)
    label_as(engine, name, "dev", training=lambda i: "entailment", clock=clock)
    session = AnnotatorSession.open(engine, name, "eve", create_annotator=True, clock=clock)
    item = session.next_item()
    assert item is not None
    session.submit(item, "entailment", answered_at=clock())
    return ctx


WRONG = {"entailment": "not_entailment", "not_entailment": "entailment"}
"""The other RTE answer."""


def paused_without_refreshers(
    engine: Engine, tmp_path: Path, name: str = "p", annotators_per_item: int = 1
) -> AnnotatorSession:
    """A `pause` study of two training items (of 12 dev items: 10 catch items) where "ana"
    answers every catch item wrong, labelled until she is served nothing more: the first
    refresher round uses both training items, so the next drift finds none left and she is
    paused before the 40 test items run out. Returns her (released) session."""
    rte_study(
        engine,
        tmp_path,
        name=name,
        train=12,
        training_items=2,
        gate_min_items=2,
        test=40,
        annotators_per_item=annotators_per_item,
        gate_threshold=0.5,
        catch_rate=0.5,
        catch_action="pause",
        catch_min_accuracy=0.9,
    )
    clock = StepClock()
    session = AnnotatorSession.open(engine, name, "ana", create_annotator=True, clock=clock)
    for _ in range(200):  # a bound: a pause that never comes fails here, not by hanging
        if (item := session.next_item()) is None:
            break
        answer = gold_answer(item)
        if item.item_id in session.catch_items:
            answer = WRONG[answer]  # every catch answer wrong: drifting from the fifth on
        session.submit(item, answer, answered_at=clock())
    else:
        raise AssertionError("ana was still served items after 200 answers")
    session.release()
    return session
