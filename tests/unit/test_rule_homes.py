"""Each rule the report shares with the engine is decided in one function and asked for
everywhere else: who finished training (protocol/standing.py), the training quota
(`ProtocolSpec.training_quota`), whether an item is complete (`standing.item_complete`), which
accuracy gets Wilson's bounds (`scoring.intervals.accuracy_wilson`, computed before anything is
drawn) and which answers the median seconds per answer is over (protocol/timing.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from sqlmodel import Session

from annotate import specs
from annotate.protocol import standing
from annotate.protocol.progress import study_progress
from annotate.protocol.session import AnnotatorSession
from annotate.protocol.studies import load_study
from annotate.protocol.timing import MEDIAN_SECONDS_HEADER
from annotate.report import build
from annotate.report.render.figures import study_figures
from annotate.report.render.html import render_html
from annotate.report.render.markdown import render_markdown
from annotate.report.render.table import sections
from annotate.scoring.intervals import SCORE_METHOD, effective_units, wilson_interval
from annotate.tui.console.charts import annotators_title, report_charts
from tests.engine_helpers import rte_study
from tests.tui.console_support import StepClock, label_as
from tests.unit.test_report import add_study, report_json

E, NE = "entailment", "not_entailment"


@pytest.fixture(autouse=True)
def _no_model_aggregation(monkeypatch):
    # Dawid–Skene and MACE (seconds per report) decide none of these rules: left out.
    monkeypatch.setattr(build, "model_aggregation", lambda *args: None)


# --- who finished training ---------------------------------------------------------------------


def test_without_training_items_the_datasheet_counts_training_done_as_standing_does(
    cli, workspace, tmp_path
):
    """No training items: the gate admits at once (standing: training done, quota 0), and the
    datasheet counts the annotator as having completed training, not as never finishing it."""
    rte_study(
        workspace.engine,
        tmp_path,
        name="direct",
        test=6,
        training_items=0,
        annotators_per_item=1,
        gate_min_items=0,
        gate_threshold=0.5,
    )
    label_as(workspace.engine, "direct", "ana", test_items=6, clock=StepClock())
    attrition = report_json(cli, "direct", "--bootstrap", "0")["datasheet"]["attrition"]
    assert (attrition["started_training"], attrition["completed_training"]) == (0, 1)
    assert (attrition["admitted"], attrition["abandoned"]) == (1, 0)
    [row] = cli("status", "direct", "--format", "json").json()["annotators"]
    assert (row["phase"], row["training_quota"]) == ("done", 0)  # every test item labelled
    ctx = load_study(workspace.engine, "direct")
    with Session(workspace.engine) as session:
        [member] = standing.roster(session, ctx.id)
    assert (member.quota, member.training_done, member.finished_training) == (0, 0, True)


def test_an_imported_study_trained_no_one(cli, workspace):
    """Labels brought from a file: no training here, so no one completed it."""
    add_study(workspace.engine, "brought", "superglue/rte", [{"source_id": "0", "gold": E}], {})
    ctx = load_study(workspace.engine, "brought")
    member = standing.Member(1, "ana", False, None, 0, 0, 3, 0, imported=True)
    assert (member.phase, member.finished_training) == (standing.IMPORTED, False)
    assert standing.Member(1, "bo", False, None, 0, 0, 3, 0).finished_training
    assert ctx.protocol.training_quota(0) == 0


# --- the training quota ------------------------------------------------------------------------


def test_the_roster_status_gate_and_progress_take_the_specs_training_quota(
    cli, workspace, tmp_path, monkeypatch
):
    """The quota is `ProtocolSpec.training_quota`'s: a change there reaches the roster, `status`,
    `gate` and the console's progress alike (none keeps a copy of the rule)."""
    rte_study(workspace.engine, tmp_path, train=6, test=4, gate_threshold=0.5)
    label_as(workspace.engine, "pilot", "ana")
    monkeypatch.setattr(specs.ProtocolSpec, "training_quota", lambda self, drawn: min(drawn, 2))
    ctx = load_study(workspace.engine, "pilot")
    with Session(workspace.engine) as session:
        assert standing.training_quota(session, ctx.id) == 2
        [member] = standing.roster(session, ctx.id)
    assert member.quota == 2
    [row] = cli("status", "pilot", "--format", "json").json()["annotators"]
    assert row["training_quota"] == 2
    [trainee] = cli("gate", "pilot", "--format", "json").json()["trainees"]
    assert trainee["training_quota"] == 2
    [progress] = study_progress(workspace.engine, ctx).annotators
    assert progress.training_quota == 2


def test_the_cap_on_training_items_is_the_protocols(workspace, tmp_path):
    rte_study(workspace.engine, tmp_path, train=6, test=4, max_training_items_per_annotator=4)
    ctx = load_study(workspace.engine, "pilot")
    with Session(workspace.engine) as session:
        assert standing.training_quota(session, ctx.id) == ctx.protocol.training_quota(6) == 4


# --- completeness --------------------------------------------------------------------------------


def test_the_report_counts_complete_items_with_standings_rule(
    cli, workspace, tmp_path, monkeypatch
):
    """`standing.item_complete` is the one rule: the report's count follows it as `status` does."""
    rte_study(workspace.engine, tmp_path, train=2, test=6, annotators_per_item=1)
    label_as(workspace.engine, "pilot", "ana", test_items=4, clock=StepClock())
    before = report_json(cli, "pilot", "--bootstrap", "0")["sample"]["n_items_complete"]
    assert before == cli("status", "pilot", "--format", "json").json()["items_complete"] == 4
    # A stricter rule in its home (complete at two labels or more) reaches every reader.
    monkeypatch.setattr(
        standing, "item_complete", lambda n, left: (np.asarray(n) >= 2) & (np.asarray(left) == 0)
    )
    assert cli("status", "pilot", "--format", "json").json()["items_complete"] == 0
    assert report_json(cli, "pilot", "--bootstrap", "0")["sample"]["n_items_complete"] == 0


def test_item_complete_answers_for_one_item_and_for_many():
    assert standing.item_complete(3, 0) and not standing.item_complete(0, 0)
    assert not standing.item_complete(5, 1)
    many = standing.item_complete(np.array([0, 3, 5, 2]), np.array([0, 0, 1, 0]))
    assert many.tolist() == [False, True, False, True]


# --- which interval ------------------------------------------------------------------------------

PAIRS = 30
"""Made-up minimal pairs (as AX-g: rows 2k and 2k+1 share their hypothesis)."""


def paired_study(workspace, name: str = "pairs") -> None:
    """An AX-g study of 30 minimal pairs, 3 annotators, the majority wrong on one item."""
    items, labels = [], {}
    for i in range(2 * PAIRS):
        gold = E if (i // 2) % 2 else NE
        items.append(
            {
                "source_id": str(i),
                "gold": gold,
                "fields": {"pair_id": i, "hypothesis": f"h{i // 2}"},
            }
        )
        wrong = NE if gold == E else E
        labels[str(i)] = [wrong, wrong, gold] if i == 3 else [gold, gold, wrong if i % 7 else gold]
    add_study(workspace.engine, name, "superglue/axg", items, labels, overrides={"seed": 3})


def test_a_paired_design_quotes_no_wilson_interval_anywhere(cli, workspace):
    paired_study(workspace)
    report = report_json(cli, "pairs", "--bootstrap", "200")
    accuracy = report["scores"]["accuracy"]
    assert accuracy["value"] == pytest.approx(59 / 60)
    assert accuracy["ci_low"] is not None  # the bootstrap's, over whole pairs
    assert "wilson_low" not in accuracy and "wilson_high" not in accuracy
    assert all("wilson_low" not in a for a in report["annotators"])
    # Not Wilson over the 60 items as if independent: the score-type interval over the
    # effective number of the 30 pairs resampled, with no "Wilson" column.
    head = report["headline_interval"]
    assert head["method"].startswith(SCORE_METHOD) and "of 30 resampling units" in head["method"]
    total = report["task_score"]
    n_eff = effective_units(total["value"], 30, 60, total["ci_low"], total["ci_high"])
    assert (head["low"], head["high"]) == pytest.approx(
        wilson_interval(total["value"] * n_eff, n_eff)
    )
    table = cli("report", "pairs", "--bootstrap", "200").stdout
    assert "95% CI (bootstrap)" in table and "95% CI (Wilson)" not in table
    markdown = cli("report", "pairs", "--bootstrap", "200", "--format", "markdown").stdout
    assert "95% CI (Wilson)" not in markdown


def test_independent_items_keep_wilsons_bounds_for_the_study_and_each_annotator(cli, workspace):
    from statsmodels.stats.proportion import proportion_confint

    items = [{"source_id": str(i), "gold": E if i % 2 else NE} for i in range(20)]
    labels = {str(i): [it["gold"], it["gold"], E] for i, it in enumerate(items)}
    add_study(workspace.engine, "single", "superglue/rte", items, labels)
    report = report_json(cli, "single", "--bootstrap", "0")
    accuracy = report["scores"]["accuracy"]
    assert (accuracy["wilson_low"], accuracy["wilson_high"]) == pytest.approx(
        proportion_confint(20, 20, method="wilson")
    )
    third = next(a for a in report["annotators"] if a["name"] == "a3")
    assert third["scores"]["accuracy"] == 0.5
    assert (third["wilson_low"], third["wilson_high"]) == pytest.approx(
        proportion_confint(10, 20, method="wilson")
    )
    assert "95% CI (Wilson)" in cli("report", "single", "--bootstrap", "0").stdout


def _annotator_figure(report) -> Any:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    [spec] = [s for s in study_figures(report) if s.name.endswith("-annotators")]
    ax = Figure().add_subplot()
    spec.draw(ax)
    return ax


def _error_bars(ax) -> list[tuple[float, float]]:
    """The (left, right) ends of each horizontal error bar drawn."""
    [bars] = [c for c in ax.collections if len(c.get_segments())]
    return [(float(s[0][0]), float(s[1][0])) for s in bars.get_segments()]


def test_the_annotator_figure_draws_the_reports_bounds(workspace):
    """The figure computes no statistic: it draws the bounds the typed report carries."""
    items = [{"source_id": str(i), "gold": E} for i in range(10)]
    add_study(workspace.engine, "fig", "superglue/rte", items, {str(i): [E, E] for i in range(10)})
    report = build.study_report(workspace.engine, "fig", bootstrap=0)
    assert all(a.wilson_low is not None for a in report.annotators)
    for a in report.annotators:
        a.wilson_low, a.wilson_high = 0.25, 1.0
    ax = _annotator_figure(report)
    assert _error_bars(ax) == [pytest.approx((25.0, 100.0))] * 2
    assert ax.get_xlabel() == "accuracy, 95% Wilson interval (x100, own items)"
    paired_study(workspace, "pairs")
    paired = build.study_report(workspace.engine, "pairs", bootstrap=0)
    ax = _annotator_figure(paired)
    assert all(left == right for left, right in _error_bars(ax))
    assert ax.get_xlabel() == "accuracy, no interval (x100, own items)"
    # The console's chart draws the same bounds, and none on minimal pairs.
    charts = report_charts(report)
    assert [(p.low, p.high) for p in charts.annotators] == [(0.25, 1.0)] * 2
    assert annotators_title(charts) == "Each annotator's accuracy with its 95% Wilson interval"
    paired_charts = report_charts(paired)
    assert all(p.low is None and p.high is None for p in paired_charts.annotators)
    assert annotators_title(paired_charts) == "Each annotator's accuracy (no interval drawn)"


# --- median seconds per answer -------------------------------------------------------------------


def test_one_median_seconds_per_test_answer_under_headers_that_say_so(cli, workspace, tmp_path):
    """Training answers are slower here (12 s against 5 s): the annotator table and the
    datasheet give the same median, over test answers, and every header names it."""
    rte_study(workspace.engine, tmp_path, train=6, test=8, annotators_per_item=1)
    clock = StepClock(step=timedelta(seconds=12))  # from one answer to the next
    label_as(workspace.engine, "pilot", "ana", test_items=0, clock=clock)
    clock.step = timedelta(seconds=5)
    session = AnnotatorSession.open(workspace.engine, "pilot", "ana", clock=clock)
    while (item := session.next_item()) is not None:
        session.submit(item, "entailment", answered_at=clock())
    session.release()
    report = report_json(cli, "pilot", "--bootstrap", "0")
    [row] = report["annotators"]
    [time] = report["datasheet"]["time_on_task"]["annotators"]
    assert row["seconds_per_item"] == time["median_seconds"] == pytest.approx(5.0, abs=0.01)
    assert time["n_labels"] == 14  # answers and minutes: both phases
    assert time["total_minutes"] > 14 * 5 / 60
    typed = build.study_report(workspace.engine, "pilot", bootstrap=0)
    headers = [h for _, heads, _ in sections(typed) for h in heads]
    assert headers.count(MEDIAN_SECONDS_HEADER) == 2
    assert {
        "Answers (training and test, set-aside ones left out)",
        "Total minutes (training and test, set-aside ones left out)",
    } <= set(headers)
    for out in (render_markdown(typed), render_html(typed)):
        assert out.count(MEDIAN_SECONDS_HEADER) == 2, out
        assert "s/item" not in out and "Median s/answer" not in out


def test_the_benchmark_figure_draws_each_tasks_quoted_interval(workspace):
    """Every answer right on 60 RTE items: the bootstrap would collapse to [100, 100]; the task
    score and the quoted interval (the one rule) are Wilson's [94.0, 100.0]; the figure draws
    what the table quotes."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from annotate.report.benchmark.row import benchmark_report
    from annotate.report.render.figures import benchmark_figures

    items = [{"source_id": str(i), "gold": E if i % 2 else NE} for i in range(60)]
    add_study(
        workspace.engine,
        "perfect",
        "superglue/rte",
        items,
        {it["source_id"]: [it["gold"]] for it in items},
    )
    report = benchmark_report(workspace.engine, "superglue", bootstrap=200)
    [task] = report.tasks
    assert task.interval is not None
    assert (task.task_score.ci_low, task.task_score.ci_high) == wilson_interval(60, 60)
    ax = Figure().add_subplot()
    benchmark_figures(report)[0].draw(ax)
    rte = _error_bars(ax)[0]
    assert rte == pytest.approx((task.interval.low * 100, 100.0))
    assert round(rte[0], 1) == 94.0
