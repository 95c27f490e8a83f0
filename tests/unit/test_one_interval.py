"""One interval rule (scoring.intervals.quoted_interval): a 60-item study with every item right
reads the same interval in the headline, the LaTeX table, `compare` and `--benchmark`, Wilson's
[94.0, 100.0], where the percentile bootstrap collapses to [100.0, 100.0]."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from annotate.report import build
from annotate.scoring.intervals import (
    BOOTSTRAP_METHOD,
    SCORE_METHOD,
    WILSON_METHOD,
    Z_95,
    paired_difference_interval,
    quoted_interval,
    wilson_interval,
)
from tests.engine_helpers import rte_rows, rte_study
from tests.tui.console_support import StepClock, label_as

N = 60


@pytest.fixture
def perfect(workspace, tmp_path):
    """A k = 1 RTE study of 60 test items, every answer right, and a model file as right."""
    rte_study(workspace.engine, tmp_path, name="perfect", test=N, annotators_per_item=1)
    label_as(workspace.engine, "perfect", "ann", test_items=N, clock=StepClock())
    model = tmp_path / "RTE.jsonl"
    rows = rte_rows(N, 1000)
    model.write_text(
        "".join(json.dumps({"idx": r["idx"], "label": r["label"]}) + "\n" for r in rows)
    )
    return model


def test_the_same_interval_everywhere(cli, perfect, monkeypatch):
    # Dawid–Skene and MACE (seconds per report) quote their own rows: left out here.
    monkeypatch.setattr(build, "model_aggregation", lambda *args: None)
    low, high = wilson_interval(N, N)
    assert low is not None and high is not None
    words = f"[{low * 100:.1f}, {high * 100:.1f}]"
    assert words == "[94.0, 100.0]"
    report = cli("report", "perfect", "--format", "json", "--bootstrap", "200").json()
    # Every bootstrap resample is 100%: the row gives the score-type interval over the 60
    # items resampled (Wilson's), never a zero width, and a note says so.
    accuracy = report["scores"]["accuracy"]
    assert (accuracy["ci_low"], accuracy["ci_high"]) == (low, high)
    assert any("Every bootstrap resample gave the same" in n for n in report["notes"])
    text = cli("report", "perfect", "--bootstrap", "200").stdout
    assert "[100.0, 100.0]" not in text and text.count(words) >= 2
    head = report["headline_interval"]
    assert (head["low"], head["high"], head["method"]) == (low, high, WILSON_METHOD)
    assert words in report["summary"]
    latex = cli("report", "perfect", "--format", "latex", "--bootstrap", "200").stdout
    assert f"100.0 {words}" in latex and "[100.0, 100.0]" not in latex
    pm = cli("report", "perfect", "--format", "latex", "--intervals", "pm", "--bootstrap", "200")
    pm = pm.stdout
    assert f"100.0 $\\pm$ {(high - low) * 50:.1f}" in pm and "$\\pm$ 0.0" not in pm
    compared = cli("compare", "perfect", "--model", perfect, "--format", "json").json()
    for side in ("human", "model_scores"):
        quoted = compared[side]["task_score"]["interval"]
        assert (quoted["low"], quoted["high"], quoted["method"]) == (low, high, WILSON_METHOD)
    table = cli("compare", "perfect", "--model", perfect).stdout
    assert words in table
    bench = cli("report", "--benchmark", "superglue", "--format", "json", "--bootstrap", "200")
    [row] = bench.json()["tasks"]
    assert (row["interval"]["low"], row["interval"]["high"]) == (low, high)
    # The average over the one task: its bootstrap collapses too; the task's own bounds.
    average = bench.json()["average"]
    assert (average["ci_low"], average["ci_high"]) == (low, high)
    bench_text = cli("report", "--benchmark", "superglue", "--bootstrap", "200").stdout
    assert words in bench_text and "[100.0, 100.0]" not in bench_text
    bench_latex = cli(
        "report", "--benchmark", "superglue", "--format", "latex", "--bootstrap", "200"
    )
    bench_latex = bench_latex.stdout
    assert f"100.0 {words}" in bench_latex


def test_the_rule_keeps_the_bootstrap_only_for_correlations():
    # A correlation (MCC): the bootstrap's interval, as drawn.
    mcc = quoted_interval(["mcc"], "classification", False, 0.6, 50, 0.4, 0.75)
    assert mcc is not None and (mcc.low, mcc.high, mcc.method) == (0.4, 0.75, BOOTSTRAP_METHOD)
    assert quoted_interval(["accuracy"], "classification", False, 0.9, 0, None, None) is None


def test_paired_and_clustered_scores_get_the_score_interval_at_their_units():
    """AX-g's minimal pairs, MultiRC's questions, two metrics: Wilson's interval at the
    effective number of resampling units, the bootstrap's variance against a binomial's
    (Korn & Graubard), computed here from the percentile interval given."""
    value, ci_low, ci_high = 0.9, 0.84, 0.95
    se = (ci_high - ci_low) / (2 * Z_95)
    n_eff = value * (1 - value) / se**2
    expected = wilson_interval(value * n_eff, n_eff)
    for metrics, kind, paired in (
        (["gender_parity", "accuracy"], "classification", True),
        (["accuracy"], "classification", True),
        (["f1a", "em"], "multi_answer", False),
        (["accuracy", "f1"], "classification", False),
    ):
        quoted = quoted_interval(metrics, kind, paired, value, 60, ci_low, ci_high, n_obs=400)
        assert quoted is not None and quoted.method.startswith(SCORE_METHOD)
        assert (quoted.low, quoted.high) == pytest.approx(expected)
    # At most every scored answer independent: n_eff is capped at n_obs.
    capped = quoted_interval(["f1a", "em"], "multi_answer", False, value, 60, ci_low, ci_high)
    assert capped is not None
    assert (capped.low, capped.high) == pytest.approx(wilson_interval(value * 60, 60))


def test_a_paired_design_at_100_percent_gets_no_zero_width_interval():
    """The paired bootstrap collapses when every pair is right (every resample 100%): the
    interval is Wilson's over the pairs (the unit of resampling), never [100.0, 100.0]."""
    quoted = quoted_interval(
        ["gender_parity", "accuracy"], "classification", True, 1.0, 60, 1.0, 1.0, n_units=30
    )
    assert quoted is not None
    assert (quoted.low, quoted.high) == pytest.approx(wilson_interval(30, 30))
    assert quoted.high - quoted.low > 0
    # A correlation whose resamples are all alike: on its scale from -1 to 1.
    mcc = quoted_interval(["mcc"], "classification", False, 1.0, 40, 1.0, 1.0)
    share_low, _ = wilson_interval(40, 40)
    assert mcc is not None and mcc.low == pytest.approx(2 * share_low - 1) and mcc.high == 1.0


def test_an_axg_study_with_every_pair_right_prints_no_zero_width_interval():
    """AX-g (60 items in 30 minimal pairs, 5 answers each, all right): the headline is
    Wilson's interval over the 30 pairs, the unit of resampling; no score, in the JSON or in
    the text report, has an interval of width zero; the humans interval contains the
    headline's."""
    from rich.console import Console

    from annotate.report.build import build_report
    from annotate.report.render.table import render_table
    from tests.engine_helpers import rte_answers_study

    items, pairs = 60, 30
    gold = np.repeat(["entailment", "not_entailment"] * (pairs // 2), 2)  # a pair shares gold
    who = np.tile(np.arange(5), (items, 1))
    data = rte_answers_study(
        gold,
        np.ones((items, 5), dtype=bool),
        who,
        task="superglue/axg",
        pair_id=[str(i // 2) for i in range(items)],
    )
    report = build_report(data, bootstrap=300, aggregation_models=False)
    assert report.task_score.value == 1.0
    low, high = wilson_interval(pairs, pairs)
    head = report.headline_interval
    assert head is not None and (head.low, head.high) == pytest.approx((low, high))
    assert f"100.0 [{low * 100:.1f}, {high * 100:.1f}]" in report.summary
    for estimate in [*report.scores.values(), report.task_score]:
        assert estimate.ci_low is not None and estimate.ci_high is not None
        assert estimate.ci_high - estimate.ci_low > 0
    humans = report.humans_interval
    assert humans is not None and humans.low <= head.low and humans.high >= head.high
    console = Console(width=200, record=True)
    render_table(report, console)
    assert "[100.0, 100.0]" not in console.export_text()


def test_a_diagnostic_tag_answered_all_right_gets_no_zero_width_interval():
    """R3 per phenomenon: a tag whose 12 items are all right has every bootstrap resample at
    1.00; its interval is the score-type one over those 12 items, on R3's scale from -1 to 1."""
    from annotate.scoring.diagnostics import diagnostics

    gold = np.array([0, 1, 2] * 4)
    tags = [{"Logic": ["Negation"]}] * len(gold)
    table = diagnostics(tags, gold, gold.copy(), {}, 3, replicates=200, seed=1)
    assert table is not None
    row = table["coarse"]["Logic"]
    share_low, _ = wilson_interval(12, 12)
    assert row["value"] == 1.0
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((2 * share_low - 1, 1.0))


def test_a_correlation_whose_resamples_are_all_alike_quotes_the_score_interval():
    """CoLA (MCC) with every item right: every resample's MCC is 1, so the headline is the
    score-type interval over the 40 items on MCC's scale from -1 to 1, and its method says
    so (not "bootstrap")."""
    from annotate.report.build import build_report
    from tests.engine_helpers import rte_answers_study

    items = 40
    gold = np.array(["1", "0"] * (items // 2))
    who = np.tile(np.arange(3), (items, 1))
    data = rte_answers_study(gold, np.ones((items, 3), dtype=bool), who, task="glue/cola")
    report = build_report(data, bootstrap=200, aggregation_models=False)
    share_low, _ = wilson_interval(items, items)
    head = report.headline_interval
    assert report.task_score.value == 1.0 and head is not None
    assert head.method.startswith(SCORE_METHOD)
    assert (head.low, head.high) == pytest.approx((2 * share_low - 1, 1.0))
    assert (report.scores["mcc"].ci_low, report.scores["mcc"].ci_high) == (head.low, head.high)


def test_the_majority_row_of_the_models_quotes_the_headlines_interval(cli, workspace, tmp_path):
    """The model-aggregation table's majority vote is the headline's score: its bootstrap is
    the headline's draws, so the same score has the same interval on both lines (the models'
    rows share those draws and differ from it by their answers only)."""
    from annotate.simulate import simulate

    rte_study(workspace.engine, tmp_path, name="sim", test=40, annotators_per_item=5)
    simulate(workspace.engine, "sim", 5, 0.75, seed=3)
    report = cli("report", "sim", "--format", "json", "--bootstrap", "300").json()
    majority = next(
        e for e in report["model_aggregation"]["estimators"] if e["method"] == "majority"
    )
    assert majority["task_score"] == report["task_score"]
    assert majority["scores"] == report["scores"]
    assert report["task_score"]["ci_low"] < report["task_score"]["ci_high"]


def wrong_on_every_tenth(folder: Path) -> Path:
    """`folder/RTE.jsonl`: a model wrong on every tenth of the N items (54 of 60 right)."""
    wrong = {"entailment": "not_entailment", "not_entailment": "entailment"}
    folder.mkdir()
    model = folder / "RTE.jsonl"
    model.write_text(
        "".join(
            json.dumps({"idx": r["idx"], "label": wrong[r["label"]] if i % 10 == 0 else r["label"]})
            + "\n"
            for i, r in enumerate(rte_rows(N, 1000))
        )
    )
    return model


def test_a_models_interval_in_the_reports_table_is_the_one_compare_quotes(
    cli, perfect, tmp_path, monkeypatch
):
    """A model right on 54 of the 60 items: the report's "Models on the same items" table, its
    JSON and `compare` quote one interval (Wilson's, for accuracy), not the table the
    bootstrap's and `compare` Wilson's."""
    monkeypatch.setattr(build, "model_aggregation", lambda *args: None)
    model = wrong_on_every_tenth(tmp_path / "errs")
    low, high = wilson_interval(54, N)
    words = f"[{low * 100:.1f}, {high * 100:.1f}]"
    compared = cli("compare", "perfect", "--model", model, "--format", "json").json()
    quoted = compared["model_scores"]["task_score"]["interval"]
    assert (quoted["low"], quoted["high"]) == pytest.approx((low, high))
    report = cli("report", "perfect", "--model", model, "--format", "json").json()
    (row,) = report["models"]
    assert (row["interval"]["low"], row["interval"]["high"]) == pytest.approx((low, high))
    table = cli("report", "perfect", "--model", model).stdout
    line = next(x for x in table.splitlines() if x.lstrip("│ ").startswith("errs"))
    assert words in line, line


def test_compare_quotes_the_reports_bootstrap_intervals(cli, workspace, tmp_path, monkeypatch):
    """CoLA (MCC: the bootstrap's percentile interval is quoted): `compare` draws the report's
    own resamples, so the human majority has the headline's interval and a model answering
    every item the interval of its row in the report."""
    from tests.unit.test_report import add_study

    monkeypatch.setattr(build, "model_aggregation", lambda *args: None)
    golds = [str(i % 2) for i in range(40)]
    items = [{"source_id": str(i), "gold": g} for i, g in enumerate(golds)]
    flip = {"0": "1", "1": "0"}
    labels = {
        str(i): [g, g, flip[g] if i % 3 == 0 else g] if i % 7 else [flip[g]] * 3
        for i, g in enumerate(golds)
    }
    add_study(workspace.engine, "cola", "glue/cola", items, labels)
    model = tmp_path / "m" / "CoLA.tsv"
    model.parent.mkdir()
    model.write_text(
        "index\tprediction\n"
        + "".join(f"{i}\t{flip[g] if i % 5 == 0 else g}\n" for i, g in enumerate(golds))
    )
    report = cli("report", "cola", "--model", model, "--format", "json").json()
    compared = cli("compare", "cola", "--model", model, "--format", "json").json()
    human = compared["human"]["task_score"]["interval"]
    assert report["headline_interval"]["method"] == human["method"] == BOOTSTRAP_METHOD
    assert (human["low"], human["high"]) == (
        report["headline_interval"]["low"],
        report["headline_interval"]["high"],
    )
    (row,) = report["models"]
    quoted = compared["model_scores"]["task_score"]["interval"]
    assert (quoted["low"], quoted["high"]) == (row["interval"]["low"], row["interval"]["high"])


def test_a_models_interval_in_the_benchmarks_latex_is_the_one_its_report_quotes(
    cli, perfect, tmp_path, monkeypatch
):
    """A model folder right on 54 of the 60 items: `report --benchmark --model DIR` quotes the
    model's RTE score with the interval its study's report and `compare` quote (Wilson's, for
    accuracy), not the percentile bootstrap's."""
    monkeypatch.setattr(build, "model_aggregation", lambda *args: None)
    folder = wrong_on_every_tenth(tmp_path / "errs").parent
    low, high = wilson_interval(54, N)
    words = f"[{low * 100:.1f}, {high * 100:.1f}]"
    report = cli("report", "perfect", "--model", folder / "RTE.jsonl", "--format", "json").json()
    (row,) = report["models"]
    assert (row["interval"]["low"], row["interval"]["high"]) == pytest.approx((low, high))
    args = ("report", "--benchmark", "superglue", "--model", folder, "--bootstrap", "200")
    latex = cli(*args, "--format", "latex").stdout
    line = next(x for x in latex.splitlines() if x.startswith("errs"))
    assert f"90.0 {words}" in line, line
    [task] = cli(*args, "--format", "json").json()["tasks"]
    quoted = task["model_intervals"]["errs"]
    assert (quoted["low"], quoted["high"]) == pytest.approx((low, high))


def test_a_paired_difference_of_accuracies_has_newcombes_interval():
    """Newcombe's hybrid score interval for paired proportions (1998, method 10): the values of
    Fagerland, Lydersen and Laake's worked example (Cavo et al., 2012: 59 both, 6 and 16
    discordant, 80 neither), and never zero-wide where the two agree on every item."""
    low, high = paired_difference_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    # Both right on all 20: each accuracy's Wilson interval reaches 83.9, and so does the
    # difference either way (no discordant item says which way it would go).
    wilson_low, _ = wilson_interval(20, 20)
    assert paired_difference_interval(20, 0, 0, 0) == pytest.approx(
        (wilson_low - 1, 1 - wilson_low)
    )
    assert paired_difference_interval(0, 0, 0, 0) == (None, None)
    low, high = paired_difference_interval(0, 20, 0, 0)  # the first right on all, the other none
    assert low > 0.6 and high == 1.0
