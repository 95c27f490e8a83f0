"""Catch items during the test phase (issue 16): dev items with gold in the test stream, never
counted; drift warnings; `pause` sends the annotator to a refresher with feedback."""

from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import delete, func, select

from annotate.errors import SpecError
from annotate.protocol import catch
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.studies import TEST, TRAINING
from annotate.report.build import study_report
from annotate.report.render.markdown import render_markdown
from annotate.report.sections.catch import catch_report
from annotate.simulate import simulate
from annotate.specs import load_protocol
from annotate.store.models import Label
from tests.engine_helpers import catch_study


def _phases(engine) -> dict[str, int]:
    with engine.connect() as conn:
        return dict(conn.execute(select(Label.phase, func.count()).group_by(Label.phase)).all())


def test_catch_items_never_reach_scores_agreement_or_exports(cli, workspace, tmp_path):
    catch_study(workspace.engine, tmp_path)
    simulate(workspace.engine, "c", 5, 0.85, seed=2)
    phases = _phases(workspace.engine)
    assert phases[catch.CATCH] > 10 and phases[TEST] == 40 * 5
    report = study_report(workspace.engine, "c", bootstrap=200, seed=1).to_json()
    assert report["n_labels"] == 200
    assert sum(a["n"] for a in report["annotators"]) == 200
    # the same report with the catch answers deleted from the store: every number equal
    with workspace.engine.begin() as conn:
        conn.execute(delete(Label).where(Label.phase == catch.CATCH))
    again = study_report(workspace.engine, "c", bootstrap=200, seed=1).to_json()
    for key in (
        "scores",
        "task_score",
        "annotators",
        "agreement",
        "majority_of_k",
        "model_aggregation",
    ):
        assert again[key] == report[key], key
    assert cli("check").code == 0


def test_simulate_counts_catch_answers_apart_from_test_labels(cli, workspace, tmp_path):
    """`simulate` said "0 training and 53 test labels" where `status` said "50/50 test labels,
    complete": its count held the catch answers. It now gives them apart, as `status` does."""
    catch_study(workspace.engine, tmp_path)
    result = cli("simulate", "c", "--annotators", "5", "--accuracy", "0.9", "--format", "json")
    assert result.code == 0
    out = result.json()
    assert out["catch_answers"] == _phases(workspace.engine)[catch.CATCH] > 0
    status = cli("status", "c", "--format", "json").json()
    assert out["test_labels"] == status["test_labels"]["given"] == 40 * 5
    catch_study(workspace.engine, tmp_path / "d", name="d")
    text = cli("simulate", "d", "--annotators", "5", "--accuracy", "0.9").stdout
    assert re.search(
        r"5 simulated annotators: \d+ training and 200 test labels \(and \d+ catch", text
    )


def test_submission_files_hold_only_test_items(cli, workspace, tmp_path):
    catch_study(workspace.engine, tmp_path)
    simulate(workspace.engine, "c", 5, 0.85, seed=3)
    assert _phases(workspace.engine)[catch.CATCH] > 0
    assert cli("export", "c", "--to", tmp_path / "out", "--format", "superglue").code == 0
    rows = [json.loads(line) for line in (tmp_path / "out" / "RTE.jsonl").read_text().splitlines()]
    assert sorted(r["idx"] for r in rows) == list(range(1000, 1040))  # test ids; dev ids are 0..39
    assert cli("check").code == 0  # catch answers sit on the study's catch pool, not on test items


def _right(item) -> str:
    return "entailment" if int(item.source_id) % 2 == 0 else "not_entailment"


def test_a_catch_item_looks_like_a_test_item(workspace, tmp_path):
    catch_study(workspace.engine, tmp_path, catch_rate=0.5)
    session = AnnotatorSession.open(workspace.engine, "c", "ana", create_annotator=True)
    while session.phase() is Phase.TRAINING:
        item = session.next_item()
        session.submit(item, _right(item))
    seen = []
    for _ in range(16):
        item = session.next_item()
        seen.append(item)
        session.submit(item, "entailment")
    catches = [i for i in seen if int(i.source_id) < 1000]  # dev ids are 0..39, test 1000..
    tests = [i for i in seen if int(i.source_id) >= 1000]
    assert catches and tests
    # the screen gets the same phase and the same fields for both: nothing tells them apart
    assert {i.phase for i in seen} == {TEST}
    assert {tuple(sorted(i.fields)) for i in catches} == {tuple(sorted(i.fields)) for i in tests}
    assert session.progress().test_done == len(tests)
    # the item's number runs on through catch items, as the screen's count does
    assert [i.number for i in seen] == list(range(1, 17))
    assert session.progress().stream_done == 16


def test_an_annotator_who_tires_triggers_the_drift_warning(workspace, tmp_path):
    catch_study(workspace.engine, tmp_path, catch_rate=0.3)
    # five careful annotators; sim3 answers at random after 12 test-stream answers
    simulate(workspace.engine, "c", 5, 0.95, seed=4, accuracies=[0.97] * 5, drift={2: (12, 0.1)})
    summary = catch_report(workspace.engine, "c")
    assert summary is not None
    by_name = {a.name: a for a in summary.annotators}
    assert by_name["sim3"].first_drift_at is not None and by_name["sim3"].drifting
    assert [w.split(":")[0] for w in summary.warnings] == ["sim3"]
    early = by_name["sim3"].timeline[0]
    assert early.recent_accuracy == 1.0 or early.n == 1
    assert by_name["sim3"].refresher_items == 0  # catch_action warn: no refresher
    text = render_markdown(study_report(workspace.engine, "c", bootstrap=0))
    assert "## Drift warnings" in text and "sim3: recent catch accuracy fell below" in text


def test_pause_sends_the_annotator_to_a_refresher_with_feedback(workspace, tmp_path):
    catch_study(workspace.engine, tmp_path, catch_rate=0.4, catch_action="pause")
    session = AnnotatorSession.open(workspace.engine, "c", "ana", create_annotator=True)
    while session.phase() is Phase.TRAINING:
        item = session.next_item()
        session.submit(item, _right(item))
    refresher = None
    for _ in range(40):  # answer every catch item wrong, test items anyhow
        item = session.next_item()
        if item.phase == TRAINING:
            refresher = item
            break
        session.submit(item, "entailment" if _right(item) != "entailment" else "not_entailment")
    assert refresher is not None, "five wrong catch answers must send ana to a refresher"
    feedback = session.submit(refresher, "entailment")
    assert feedback is not None and feedback.gold_text  # the refresher shows the gold label
    for _ in range(catch.REFRESHER_ITEMS - 1):
        item = session.next_item()
        assert item.phase == TRAINING
        session.submit(item, "entailment")
    assert session.next_item().phase == TEST  # back to the test stream
    phases = _phases(workspace.engine)
    assert phases[catch.REFRESHER] == catch.REFRESHER_ITEMS
    assert phases[TRAINING] == 40  # the gate's training answers are untouched


@pytest.mark.parametrize(
    "setting, message",
    [({"catch_rate": 0.9}, "catch_rate"), ({"catch_action": "stop"}, "catch_action")],
)
def test_catch_settings_are_validated(setting, message):
    with pytest.raises(SpecError, match=message):
        load_protocol("quick").effective("superglue/rte", setting)


def test_revising_right_after_a_catch_item_goes_back_to_that_item(workspace, tmp_path):
    # `u` goes back to the item just answered: after a catch item that is the catch item (it
    # looked like a test item), not the test answer before it; the revision is re-marked.
    catch_study(workspace.engine, tmp_path, catch_rate=0.5)
    session = AnnotatorSession.open(workspace.engine, "c", "ana", create_annotator=True)
    while session.phase() is Phase.TRAINING:
        item = session.next_item()
        session.submit(item, _right(item))
    while True:
        item = session.next_item()
        is_catch = int(item.source_id) < 1000  # dev ids are 0..39, test 1000..
        wrong = "not_entailment" if _right(item) == "entailment" else "entailment"
        session.submit(item, wrong)
        if is_catch:
            break
    back, value = session.last_answer()
    assert back.item_id == item.item_id and value == wrong
    session.revise(back, _right(item))
    with workspace.engine.connect() as conn:
        row = conn.execute(
            select(Label.phase, Label.value, Label.correct, Label.revisions).where(
                Label.item_id == item.item_id, Label.phase != TRAINING
            )
        ).one()
    assert tuple(row) == ("catch", _right(item), True, 1)
