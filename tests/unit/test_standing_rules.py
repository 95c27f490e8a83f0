"""The rules protocol/standing.py and its neighbours answer once: the recent labelling rate over
the time actually elapsed, the no-training admission recorded by the gate, the study's one
drift threshold (`catch_min_accuracy`), and a `pause` that runs out of refresher items."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlmodel import Session

from annotate.protocol import catch, gate, standing
from annotate.protocol.progress import ProgressTracker, study_progress
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.status import study_status
from annotate.protocol.studies import load_study
from annotate.store.models import GateDecision
from tests.engine_helpers import rte_study
from tests.tui.console_support import NOW, busy_study, paused_without_refreshers


def test_the_recent_rate_is_over_the_time_elapsed_since_the_first_test_label(workspace, tmp_path):
    ctx = busy_study(workspace.engine, tmp_path)
    tracker = ProgressTracker(ctx)
    tracker.refresh(workspace.engine, NOW)
    first = tracker.test_times[0]
    two_minutes_in = study_progress(workspace.engine, ctx, now=NOW).computed_at
    assert two_minutes_in is not None
    at = two_minutes_in.fromtimestamp(first, two_minutes_in.tzinfo) + timedelta(minutes=2)
    p = study_progress(workspace.engine, ctx, now=at)
    so_far = sum(1 for t in tracker.test_times if t <= at.timestamp())
    # Two minutes in, two minutes' labels: not the count over a 15-minute window.
    assert p.recent_window == timedelta(minutes=2)
    assert p.rate_recent == so_far * 30
    assert p.eta == timedelta(hours=p.labels_needed / p.rate_recent)
    later = study_progress(workspace.engine, ctx, now=at + timedelta(hours=1))
    assert later.recent_window == timedelta(minutes=15)


def test_a_study_without_training_items_admits_through_the_gate(workspace, tmp_path):
    rte_study(
        workspace.engine,
        tmp_path,
        name="direct",
        training_items=0,
        gate_min_items=0,
        gate_threshold=0.5,
    )
    ctx = load_study(workspace.engine, "direct")
    session = AnnotatorSession.open(workspace.engine, "direct", "ana", create_annotator=True)
    assert session.phase() is Phase.TEST
    with Session(workspace.engine) as s:
        [decision] = s.scalars(select(GateDecision)).all()
        assert (decision.rule, decision.reason, decision.admitted) == (
            gate.NO_TRAINING_RULE,
            "the study has no training items",
            True,
        )
        [member] = standing.roster(s, ctx.id)
    assert (member.name, member.phase, member.gate) == ("ana", "test", "admitted")
    assert session.phase() is Phase.TEST  # decided once: asking again records nothing more
    with Session(workspace.engine) as s:
        assert len(s.scalars(select(GateDecision)).all()) == 1
    # A manual gate waits for the researcher, training items or not.
    rte_study(
        workspace.engine,
        tmp_path / "m",
        name="by hand",
        training_items=0,
        gate_min_items=0,
        gate_rule="manual",
        gate_threshold=None,
    )
    waiting = AnnotatorSession.open(workspace.engine, "by hand", "ana")
    assert waiting.phase() is Phase.WAITING and waiting.next_item() is None


def test_one_drift_threshold_per_study(workspace, tmp_path):
    cases = {
        "set": ({"catch_min_accuracy": 0.9, "gate_threshold": 0.5}, (0.9, "catch_min_accuracy")),
        "threshold": ({"gate_threshold": 0.6}, (0.6, "gate threshold")),
        "manual": ({"gate_rule": "manual", "gate_threshold": None}, (0.7, "default")),
        "median": ({"gate_rule": "median", "gate_threshold": None}, (0.7, "default")),
    }
    for name, (overrides, expected) in cases.items():
        ctx = rte_study(workspace.engine, tmp_path / name, name=name, catch_rate=0.2, **overrides)
        with workspace.engine.connect() as conn:
            found = catch.catch_threshold(conn, ctx)
        assert (found.value, found.source) == expected, name


def test_a_pause_without_refresher_items_left_stops_test_items_and_warns(cli, workspace, tmp_path):
    """Two training items only (of 12 dev items: 10 catch items): the first refresher round
    uses both, so the next drift finds no refresher item left. The annotator is then served
    no test item, their progress says paused, and `status` warns the researcher."""
    session = paused_without_refreshers(workspace.engine, tmp_path)
    ctx = load_study(workspace.engine, "p")
    progress = session.progress()
    assert progress.phase is Phase.TEST and progress.paused
    assert progress.test_done < 40  # stopped before the test items ran out
    with workspace.engine.connect() as conn:
        assert catch.refresher_exhausted(conn, ctx, session.annotator_id)
    [warning] = [w for w in study_status(workspace.engine, ctx)["warnings"] if "paused" in w]
    assert warning.startswith(
        "ana is paused: recent catch accuracy is below 0.90 (catch_min_accuracy) and no "
        "refresher item is left"
    )
    shown = cli("study", "show", "p", "--format", "json").json()["protocol"]
    assert (shown["catch_min_accuracy"], shown["catch_min_accuracy_from"]) == (
        0.9,
        "catch_min_accuracy",
    )
