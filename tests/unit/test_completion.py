"""When an item is complete: extra-annotator ties get their extra label, stop_when_decided stops
an item once its majority is decided, and the engine, `status`, the report and `check` agree
(one definition: annotate/completion.py). Engine tests, no screen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate import completion
from annotate.errors import UserError
from annotate.protocol.status import study_status
from annotate.protocol.studies import create_study, load_study
from annotate.report.build import study_report
from annotate.simulate import simulate
from annotate.store.check import check_store
from annotate.store.models import StudyItem
from tests.engine_helpers import rte_study

K2 = completion.Rule(k=2, tie_rule="extra-annotator")
K5_EARLY = completion.Rule(k=5, stop_when_decided=True)


def test_the_rule_on_votes():
    assert completion.labels_wanted([[1]], 1, K2) == 1  # below k: k - n
    assert completion.labels_wanted([[1, 1]], 2, K2) == 1  # tied at k: one more
    assert completion.labels_wanted([[2, 1]], 3, K2) == 0  # the extra label broke it
    assert completion.labels_wanted([[2, 2]], 4, K2) == 1  # still tied: again
    # 2 classes, k = 5: three agreeing labels decide; 2-1 does not (2 more could make 2-3).
    assert completion.labels_wanted([[3]], 3, K5_EARLY) == 0
    assert completion.labels_wanted([[2, 1]], 3, K5_EARLY) == 2
    assert completion.labels_wanted([[3, 1]], 4, K5_EARLY) == 0
    # A possible tie at k is undecided: 3-1 of k = 6 could end 3-3.
    assert completion.labels_wanted([[3, 1]], 4, completion.Rule(6, stop_when_decided=True)) == 2
    # 3 classes: 3-0-0 of 5 is decided, 2-0-0 is not.
    assert completion.decided([3, 0, 0], 3, 5) and not completion.decided([2, 0, 0], 2, 5)


def agreeing_views(engine, study: str) -> tuple[dict, object]:
    """status and the report of one study, asserting they and check agree."""
    status = study_status(engine, load_study(engine, study))
    report = study_report(engine, study, bootstrap=0)
    assert check_store(engine).ok, check_store(engine).violations
    assert report.sample.n_items_complete == status["items_complete"]
    assert report.ties.open_counted_wrong == status["items_open_ties"]
    return status, report


def test_extra_annotator_ties_get_their_extra_label_and_end_with_no_open_tie(
    workspace, tmp_path: Path
):
    rte_study(workspace.engine, tmp_path, name="xa", test=20, annotators_per_item=2,
              tie_rule="extra-annotator")  # fmt: skip
    simulate(workspace.engine, "xa", annotators=4, accuracy=0.7, seed=5)
    status, report = agreeing_views(workspace.engine, "xa")
    # Some 2-label votes tied and got a third label, which broke them (2 classes).
    assert report.ties.units_with_more_than_k_labels > 0 and report.ties.n_tied == 0
    assert status["items_open_ties"] == 0 and report.ties.open_counted_wrong == 0
    assert status["items_complete"] == status["items_total"] == 20


def test_a_tie_stays_open_without_another_annotator_and_all_three_say_so(workspace, tmp_path: Path):
    rte_study(workspace.engine, tmp_path, name="xb", test=20, annotators_per_item=2,
              tie_rule="extra-annotator", gate_threshold=0.0)  # fmt: skip
    simulate(workspace.engine, "xb", annotators=2, accuracy=0.6, seed=1)
    status, _ = agreeing_views(workspace.engine, "xb")
    assert status["items_open_ties"] > 0
    assert status["items_complete"] == 20 - status["items_open_ties"]
    # A third annotator arrives: the open ties (1-1) get their label, and nothing else does.
    open_before = status["items_open_ties"]
    simulate(workspace.engine, "xb", annotators=1, accuracy=0.9, seed=2, prefix="late")
    status, _ = agreeing_views(workspace.engine, "xb")
    assert status["items_open_ties"] == 0 and status["items_complete"] == 20
    assert status["labels_total"] == 40 + open_before


def test_check_flags_a_counter_that_does_not_follow_the_rule(workspace, tmp_path: Path):
    rte_study(workspace.engine, tmp_path, name="xc", test=6, annotators_per_item=2,
              tie_rule="extra-annotator")  # fmt: skip
    simulate(workspace.engine, "xc", annotators=3, accuracy=0.8, seed=4)
    with Session(workspace.engine) as s:
        row = s.exec(select(StudyItem).where(StudyItem.phase == "test")).first()
        assert row is not None
        row.remaining = 3
        s.add(row)
        s.commit()
    assert [v.check for v in check_store(workspace.engine).violations] == ["labels_remaining"]


def majorities(engine, study: str) -> dict[str, str | None]:
    report = study_report(engine, study, bootstrap=0)
    assert report.kind == "classification"
    from annotate.report.aggregation.study import final_aggregate
    from annotate.report.data.loading import load_study_data

    coded, final = final_aggregate(load_study_data(engine, study))
    return {
        str(coded.unit_name[u]): (coded.classes[c] if c >= 0 else None)
        for u, c in enumerate(final.pred.tolist())
    }


def test_stop_when_decided_keeps_every_majority_with_fewer_labels(workspace, tmp_path: Path):
    """The acceptance case: 5 annotators at accuracy 0.85 on a 2-class task, k = 5, a fixed
    seed; the same study with and without the option."""
    full = rte_study(workspace.engine, tmp_path, name="full", test=100, annotators_per_item=5)
    create_study(
        workspace.engine,
        "early",
        "superglue/rte",
        "quick",
        train_dataset_id=full.study.train_dataset_id,
        test_dataset_id=full.study.test_dataset_id,
        overrides={"training_items": 6, "gate_min_items": 6, "test_sample": 100,
                   "annotators_per_item": 5, "stop_when_decided": True},
    )  # fmt: skip
    a = simulate(workspace.engine, "full", annotators=5, accuracy=0.85, seed=11)
    b = simulate(workspace.engine, "early", annotators=5, accuracy=0.85, seed=11)
    assert majorities(workspace.engine, "early") == majorities(workspace.engine, "full")
    assert b.test_labels < a.test_labels == 500
    saving = b.early_stop
    assert saving is not None and saving["labels_saved"] == a.test_labels - b.test_labels
    print(f"\nstop_when_decided saved {saving['labels_saved']} of 500 labels "
          f"({saving['saved_share']:.1%}), {saving['items_decided_early']} items early")  # fmt: skip
    status, report = agreeing_views(workspace.engine, "early")
    assert status["items_complete"] == 100 and status["items_decided_early"] > 0
    e = report.early_stop
    assert e is not None and e.labels_saved == saving["labels_saved"]
    assert e.majority_equals_full_k
    assert report.agreement.fleiss_kappa.value is None  # κ needs complete items
    assert "missing values" in (report.agreement.krippendorff_alpha.note or "")
    assert report.agreement.krippendorff_alpha.value is not None
    assert study_report(workspace.engine, "full", bootstrap=0).early_stop is None


def test_stop_when_decided_needs_a_classification_task(workspace):
    with pytest.raises(UserError, match="stop_when_decided needs a classification task"):
        create_study(workspace.engine, "x", "glue/stsb", "quick",
                     overrides={"stop_when_decided": True})  # fmt: skip


def test_migration_0006_fills_the_counters_and_the_task_specs(tmp_path: Path):
    """A 0.1.0 store: every test item gets k - n labels still to take (ties were never served
    there: no study of it uses extra-annotator), every study its built-in task spec, and
    `check` finds the counters right."""
    import sqlite3

    from annotate.store.check import check_store as check
    from annotate.workspace import open_workspace
    from tests.unit.test_migrations import old_store_copy, run

    path = old_store_copy(tmp_path)
    assert run(f"sqlite:///{path}", "migrate")[0] == 0
    with sqlite3.connect(path) as con:
        ks = {
            sid: json.loads(p)["annotators_per_item"]
            for sid, p in con.execute("SELECT id, protocol FROM study")
        }
        specs_kept = con.execute("SELECT task, task_spec FROM study").fetchall()
        rows = con.execute(
            "SELECT study_id, n_labels, remaining FROM studyitem WHERE phase = 'test'"
        ).fetchall()
    assert specs_kept and all(json.loads(s)["name"] == task for task, s in specs_kept)
    assert rows and all(left == max(ks[sid] - n, 0) for sid, n, left in rows)
    assert check(open_workspace(f"sqlite:///{path}").engine).ok


def test_simulate_and_the_report_state_the_saving(cli, workspace, tmp_path: Path):
    rte_study(workspace.engine, tmp_path, name="es", test=30, stop_when_decided=True)
    result = cli("simulate", "es", "--annotators", "5", "--accuracy", "0.85", "--seed", "3")
    assert result.code == 0, result.stderr
    assert "stop_when_decided saved" in result.stdout and "items decided before k" in result.stdout
    md = cli("report", "es", "--format", "markdown", "--bootstrap", "0").stdout
    assert "Early stop (stop_when_decided)" in md and "Labels saved" in md
    assert "equals what full k would give" in md and "accepts missing values" in md
    data = cli("report", "es", "--format", "json", "--bootstrap", "0").json()
    assert data["protocol"]["stop_when_decided"] is True
    assert data["early_stop"]["labels_saved"] > 0
    status = cli("status", "es", "--format", "json").json()
    assert status["early_stop"]["labels_saved"] == data["early_stop"]["labels_saved"]


def test_stop_when_decided_is_a_validated_protocol_option():
    from annotate import specs
    from annotate.errors import SpecError

    quick = specs.load_protocol("quick")
    assert quick.stop_when_decided is False
    assert quick.effective(None, {"stop_when_decided": True}).stop_when_decided is True
    with pytest.raises(SpecError, match="stop_when_decided"):
        quick.effective(None, {"stop_when_decided": "sometimes"})


def test_the_console_draws_the_extra_annotators_as_status_counts_them(workspace, tmp_path: Path):
    """Issue 39, item 6: "Labels per item" shows items past k (ties given an extra label)
    as `status` and the report count them, not folded into k."""
    from annotate.protocol.progress import study_progress
    from annotate.protocol.studies import load_study
    from annotate.tui.console.screens.study import histogram_text

    rte_study(workspace.engine, tmp_path, name="xd", test=20, annotators_per_item=2,
              tie_rule="extra-annotator")  # fmt: skip
    simulate(workspace.engine, "xd", annotators=4, accuracy=0.7, seed=5)
    status, _ = agreeing_views(workspace.engine, "xd")
    progress = study_progress(workspace.engine, load_study(workspace.engine, "xd"))
    drawn = {n: c for n, c in progress.histogram.items() if c}
    assert {str(n): c for n, c in drawn.items()} == status["labels_per_item"]
    assert max(drawn) > 2  # some ties took a third label
    text = histogram_text(progress).plain
    assert "3 labels " in text and "(extra annotators: ties)" in text
