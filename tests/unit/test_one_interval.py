"""One interval rule (scoring.intervals.quoted_interval): a 60-item study with every item right
reads the same interval in the headline, the LaTeX table, `compare` and `--benchmark`, Wilson's
[94.0, 100.0], where the percentile bootstrap collapses to [100.0, 100.0]."""

from __future__ import annotations

import json

import pytest

from annotate.report import build
from annotate.scoring.intervals import WILSON_METHOD, quoted_interval, wilson_interval
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
    assert report["scores"]["accuracy"]["ci_low"] == 1.0  # the bootstrap: zero width
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
    assert words in cli("report", "--benchmark", "superglue", "--bootstrap", "200").stdout
    bench_latex = cli(
        "report", "--benchmark", "superglue", "--format", "latex", "--bootstrap", "200"
    )
    bench_latex = bench_latex.stdout
    assert f"100.0 {words}" in bench_latex


def test_the_rule_keeps_the_bootstrap_where_wilson_does_not_apply():
    # Two metrics, or answers grouped (MultiRC, AX-g pairs): the bootstrap's interval.
    assert quoted_interval(["accuracy", "f1"], "classification", False, 0.9, 50, 0.8, 0.95) == (
        quoted_interval(["f1a", "em"], "multi_answer", False, 0.9, 50, 0.8, 0.95)
    )
    grouped = quoted_interval(["accuracy"], "classification", True, 0.9, 50, 0.8, 0.95)
    assert grouped is not None and (grouped.low, grouped.high) == (0.8, 0.95)
    assert quoted_interval(["accuracy"], "classification", False, 0.9, 0, None, None) is None
