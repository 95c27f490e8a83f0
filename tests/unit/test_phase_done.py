"""An admitted annotator with no test item left is "done" (protocol/standing.py), as their own
screen says: their batch is full (`max_test_items_per_annotator`), or every test item that still
takes labels has theirs. The roster asks the engine's rule, so `status`, the console's tracker
and the annotator's screen agree; a catch pause with test items left is not done, and nobody
done is stalled."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from sqlmodel import Session

from annotate.protocol import standing
from annotate.protocol.progress import study_progress
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.status import study_status
from annotate.protocol.studies import load_study
from tests.engine_helpers import rte_study
from tests.tui.console_support import (
    NOW,
    StepClock,
    gold_answer,
    label_as,
    paused_without_refreshers,
)

STATUS_KEYS = {
    "name",
    "synthetic",
    "phase",
    "training_done",
    "training_quota",
    "training_accuracy",
    "gate",
    "test_done",
    "gate_reason",
    "flags",
    "last_activity",
}
"""An annotator's keys in `status --format json`: "done" is a new value, not a new key."""


def finished_on_their_screen(engine, study: str, name: str) -> bool:
    """What the annotator's own screen makes of it (tui/app.py, web/page/screens.py): no item
    to show, no catch pause, and nothing on another's screen that may come back to them."""
    session = AnnotatorSession.open(engine, study, name, clock=StepClock())
    try:
        if session.next_item() is not None:
            return False
        progress = session.progress()
        return (
            progress.phase is Phase.TEST
            and not progress.paused
            and session.held_elsewhere() is None
        )
    finally:
        session.release()


def two_of_three(engine, tmp_path) -> str:
    """k = 2, 6 items: ana labels all 6, ben 4, cy 1; item 6 still takes a label."""
    rte_study(engine, tmp_path, name="s", test=6, annotators_per_item=2, gate_threshold=0.5)
    for name, n in (("ana", 6), ("ben", 4), ("cy", 1)):
        label_as(engine, "s", name, test_items=n)
    return "s"


def capped(engine, tmp_path) -> str:
    """A batch of 3 of 10 items: zoe filled hers, yan has 2 of 3."""
    rte_study(
        engine,
        tmp_path,
        name="s",
        test=10,
        annotators_per_item=2,
        gate_threshold=0.5,
        max_test_items_per_annotator=3,
    )
    label_as(engine, "s", "zoe", test_items=3)
    label_as(engine, "s", "yan", test_items=2)
    return "s"


def decided_early(engine, tmp_path) -> str:
    """stop_when_decided, k = 3: ana and ben agree on every item, which decides it at 2 labels.
    cy, admitted with no test label, has nothing left either."""
    rte_study(
        engine,
        tmp_path,
        name="s",
        test=4,
        annotators_per_item=3,
        stop_when_decided=True,
        gate_threshold=0.5,
    )
    for name, n in (("ana", 4), ("ben", 4), ("cy", 0)):
        label_as(engine, "s", name, test_items=n)
    return "s"


def open_tie(engine, tmp_path) -> str:
    """extra-annotator, k = 2: ben disagrees with ana on the second item, whose tie wants a
    third label; cy (admitted, no label) can give it, ana and ben cannot."""
    rte_study(
        engine,
        tmp_path,
        name="s",
        test=2,
        annotators_per_item=2,
        tie_rule="extra-annotator",
        gate_threshold=0.5,
    )
    label_as(engine, "s", "ana", test_items=2)
    label_as(engine, "s", "ben", test_items=2, wrong_every=2)
    label_as(engine, "s", "cy", test_items=0)
    return "s"


def held_elsewhere(engine, tmp_path) -> str:
    """k = 2, 2 items: ana labelled both, ben the first and holds the second on his screen (a
    live lease, no label), cy is admitted with no label. Only ana is done: the held item may
    come back to cy if ben's hold runs out."""
    rte_study(engine, tmp_path, name="s", test=2, annotators_per_item=2, gate_threshold=0.5)
    label_as(engine, "s", "ana", test_items=2)
    label_as(engine, "s", "cy", test_items=0)
    ben = AnnotatorSession.open(engine, "s", "ben", create_annotator=True, clock=StepClock())
    while (item := ben.next_item()) is not None and item.phase == "training":
        ben.submit(item, gold_answer(item))
    assert item is not None and item.phase == "test"
    ben.submit(item, gold_answer(item))
    held = ben.next_item()  # on his screen: not answered, not given back
    assert held is not None and held.phase == "test"
    return "s"


def paused(engine, tmp_path) -> str:
    """k = 2 and a catch pause with no refresher item left: ana is served nothing though test
    items she has not labelled are left (not done); bo labels every item (done)."""
    paused_without_refreshers(engine, tmp_path, name="s", annotators_per_item=2)
    bo = AnnotatorSession.open(engine, "s", "bo", create_annotator=True, clock=StepClock())
    for _ in range(200):  # a bound, not a hang
        if (item := bo.next_item()) is None:
            break
        bo.submit(item, gold_answer(item))
    bo.release()
    return "s"


@pytest.mark.parametrize(
    ("build", "done"),
    [
        (two_of_three, {"ana"}),
        (capped, {"zoe"}),
        (decided_early, {"ana", "ben", "cy"}),
        (open_tie, {"ana", "ben"}),
        (held_elsewhere, {"ana"}),
        (paused, {"bo"}),
    ],
)
def test_done_is_what_the_annotators_screen_says(
    workspace, tmp_path, build: Callable, done: set[str]
):
    engine = workspace.engine
    study = build(engine, tmp_path)
    ctx = load_study(engine, study)
    with Session(engine) as session:
        members = standing.roster(session, ctx.id)
    phases = {m.name: m.phase for m in members if m.gate == standing.ADMITTED}
    assert {n for n, p in phases.items() if p == "done"} == done
    assert set(phases.values()) <= {"test", "done"}
    # `status` and the console's tracker say what the roster says.
    status = study_status(engine, ctx, now=NOW)
    assert {a["name"]: a["phase"] for a in status["annotators"]} == {
        m.name: m.phase for m in members
    }
    assert all(set(a) == STATUS_KEYS for a in status["annotators"])
    progress = study_progress(engine, ctx, now=NOW)
    assert {a.name: a.phase for a in progress.annotators} == {m.name: m.phase for m in members}
    # And the annotator's own screen: finished exactly when done (asked after the roster: a
    # session leases what it is given).
    for name, phase in phases.items():
        assert finished_on_their_screen(engine, study, name) is (phase == "done"), name


def test_a_paused_annotator_with_test_items_left_is_in_test_and_warned(workspace, tmp_path):
    """The catch pause serves ana nothing, yet test items are left for her: "test", with the
    pause's warning, never "done"; bo, who labelled every item, is done."""
    engine = workspace.engine
    paused(engine, tmp_path)
    ctx = load_study(engine, "s")
    status = study_status(engine, ctx, now=NOW)
    rows = {a["name"]: a for a in status["annotators"]}
    assert (rows["ana"]["phase"], rows["ana"]["gate"]) == ("test", "admitted")
    assert rows["ana"]["test_done"] < 40
    assert (rows["bo"]["phase"], rows["bo"]["test_done"]) == ("done", 40)
    assert any(w.startswith("ana is paused") for w in status["warnings"])


def test_nobody_done_is_stalled(workspace, tmp_path):
    """An hour after the last label: yan, with an item of her batch left, has stalled; zoe,
    whose batch is full, has not (she is short of the study's items, and it is not complete)."""
    engine = workspace.engine
    capped(engine, tmp_path)
    ctx = load_study(engine, "s")
    warnings = study_status(engine, ctx, now=NOW + timedelta(hours=1))["warnings"]
    stalled = [w for w in warnings if "has stalled" in w]
    assert len(stalled) == 1 and stalled[0].startswith("yan has stalled")


def test_nothing_left_answers_for_many_at_once(workspace, tmp_path):
    """standing.nothing_left over given counts: a full batch settles it without a read; else
    only someone with as many test labels as items still taking labels can be done, and their
    labels on those items decide."""
    engine = workspace.engine
    two_of_three(engine, tmp_path)
    ctx = load_study(engine, "s")
    ids = {m.name: m.annotator_id for m in _roster(engine, ctx.id)}
    ana, ben, cy = ids["ana"], ids["ben"], ids["cy"]
    with Session(engine) as session:
        assert standing.nothing_left(session, ctx.id, None, {}) == set()
        assert standing.nothing_left(session, ctx.id, None, {ana: 6, ben: 4, cy: 1}) == {ana}
        assert standing.nothing_left(session, ctx.id, 1, {ana: 6, ben: 4, cy: 1}) == {ana, ben, cy}
        # One item still takes a label; ben's 4 labels are not on it.
        assert standing.nothing_left(session, ctx.id, None, {ben: 4}) == set()


def _roster(engine, study_id: int) -> list[standing.Member]:
    with Session(engine) as session:
        return standing.roster(session, study_id)


def test_the_status_command_says_done_in_json(cli, workspace, tmp_path):
    """`annotate status --format json`: zoe's full batch is "done" (the same keys as before),
    yan with one item of hers left is "test"; only yan, long since her last label, has
    stalled."""
    capped(workspace.engine, tmp_path)
    result = cli("status", "s", "--format", "json")
    assert result.code == 0, result.stderr
    status = result.json()
    rows = {a["name"]: a for a in status["annotators"]}
    assert {n: (a["phase"], a["gate"], a["test_done"]) for n, a in rows.items()} == {
        "zoe": ("done", "admitted", 3),
        "yan": ("test", "admitted", 2),
    }
    assert all(set(a) == STATUS_KEYS for a in rows.values())
    # The labels were given on the test clock, months before the command's own clock.
    stalled = [w.split(" has stalled")[0] for w in status["warnings"] if "has stalled" in w]
    assert stalled == ["yan"]
    table = cli("status", "s")
    assert table.code == 0
    [zoe] = [line for line in table.stdout.splitlines() if "zoe" in line]
    assert "done" in zoe
