"""Metrics come from one registry: a task spec names them, scoring computes them, the report
labels them and the benchmark row finds the papers' figures through it. Another package adds a
metric with one entry point in the `annotate.metrics` group: a task naming it validates and a
study's report scores with it; a broken plugin is one clear error, and a plugin cannot replace
a built-in metric."""

from __future__ import annotations

import csv
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

from annotate import specs
from annotate.errors import SpecError
from annotate.metric_registry import (
    BUILTIN,
    ENTRY_POINT_GROUP,
    MetricPluginError,
    all_metrics,
    find_metric,
    metric,
)
from annotate.metric_registry.plugins import plugin_metrics
from annotate.report.benchmark.published import PUBLISHED, published_row
from annotate.report.cells import METRIC_NAMES

# The names the report showed before the registry, kept as the contract.
HEADERS = {
    "accuracy": "Accuracy",
    "f1": "F1",
    "macro_f1": "Macro-F1",
    "mcc": "MCC",
    "r3": "R3",
    "pearson": "Pearson",
    "spearman": "Spearman",
    "f1a": "F1a",
    "em": "EM",
    "record_f1": "F1",
    "record_em": "EM",
    "gender_parity": "Gender parity",
}
INLINE = {
    **HEADERS,
    "accuracy": "accuracy",
    "macro_f1": "macro-F1",
    "gender_parity": "gender parity",
}

TOY = """
benchmark = "custom"
title = "Toy: is the headline about sport?"
kind = "classification"
layout = "single"
metrics = {metrics}
guidelines = "Say whether the headline is about sport."

[[fields]]
name = "text"
label = "Headline"

[[labels]]
value = "yes"
text = "Sport"
key = "1"

[[labels]]
value = "no"
text = "Not sport"
key = "2"

[source]
reader = "jsonl"
id = ["id"]
label = ["gold"]
"""

DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def docs_block(language: str) -> str:
    """The first fenced block of `language` on the Metrics page."""
    return re.search(rf"```{language}\n(.*?)```", DOCS.read_text(), flags=re.DOTALL).group(1)


# The plugin module is the one the docs show, so the example is one that works.
PLUGIN = docs_block("python")


def install_plugin(
    folder: Path, monkeypatch: pytest.MonkeyPatch, entries: dict[str, str], module: str = PLUGIN
) -> None:
    """Install a distribution `lab-metrics` into `folder` (a module and its dist-info with
    entry points, as pip would write them) and put it on sys.path."""
    (folder / "lab_metrics.py").write_text(module)
    info = folder / "lab_metrics-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lab-metrics\nVersion: 1.0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entries.items())
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    monkeypatch.syspath_prepend(str(folder))
    plugin_metrics.cache_clear()


@pytest.fixture(autouse=True)
def _fresh_plugins():
    """Each test discovers the plugins installed when it runs, and leaves none behind."""
    plugin_metrics.cache_clear()
    specs.clear_caches()
    sys.modules.pop("lab_metrics", None)
    yield
    plugin_metrics.cache_clear()
    specs.clear_caches()
    sys.modules.pop("lab_metrics", None)


def test_every_metric_of_every_task_is_one_registry_entry_with_its_names():
    names = [m.name for m in BUILTIN]
    assert len(names) == len(set(names))
    assert names == list(HEADERS)
    for name in names:
        entry = metric(name)
        assert callable(entry.load())
        assert METRIC_NAMES[name] == HEADERS[name]
        assert entry.inline_name == INLINE[name]
    for spec in specs.all_tasks():
        assert all(metric(m).task_kind == spec.kind for m in spec.metrics), spec.name
    # unknown names: the plain id in a table, a KeyError naming the known ones from `metric`
    assert METRIC_NAMES.get("nonesuch", "nonesuch") == "nonesuch"
    with pytest.raises(KeyError, match="known: .*accuracy"):
        metric("nonesuch")


def test_wilson_fits_accuracy_alone():
    """The per-metric fact the one interval rule reads: only accuracy is one proportion of
    independent items."""
    assert [m.name for m in BUILTIN if m.wilson] == ["accuracy"]


def test_every_published_figure_belongs_to_a_metric_and_the_row_is_unchanged():
    keys = {m.published_key for m in all_metrics().values()}
    for row in PUBLISHED.values():
        for figures in row.scores.values():
            assert set(figures) <= keys
    cb = published_row("superglue")
    assert cb is not None
    assert cb.scores["superglue/cb"] == {"macro_f1": 0.958, "accuracy": 0.989}
    assert list(cb.scores["superglue/axg"]) == ["gender_parity", "accuracy"]


def test_a_task_naming_an_unknown_metric_or_one_of_another_kind_is_refused(tmp_path: Path):
    path = tmp_path / "toy.toml"
    path.write_text(TOY.format(metrics='["accuracy", "balanced_accuracy"]'))
    with pytest.raises(SpecError, match=r"unknown metric\(s\) \['balanced_accuracy'\]; known"):
        specs.load_task_file(path)
    path.write_text(TOY.format(metrics='["pearson"]'))
    with pytest.raises(SpecError, match="metric 'pearson' scores regression tasks, not "):
        specs.load_task_file(path)


def _rows(n: int, start: int) -> str:
    return "".join(
        json.dumps({"id": f"h{i}", "title": f"Headline {i}", "gold": "yes" if i % 3 else "no"})
        + "\n"
        for i in range(start, start + n)
    )


def test_a_plugin_metric_validates_in_a_task_and_scores_a_study(
    cli, workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    install_plugin(tmp_path, monkeypatch, {"balanced_accuracy": "lab_metrics:METRIC"})
    assert find_metric("balanced_accuracy") is not None
    assert "balanced_accuracy" in all_metrics()
    assert METRIC_NAMES["balanced_accuracy"] == "Balanced acc."
    toml = tmp_path / "toy.toml"
    toml.write_text(TOY.format(metrics='["accuracy", "balanced_accuracy"]'))
    assert specs.load_task_file(toml).metrics == ["accuracy", "balanced_accuracy"]
    (tmp_path / "dev.jsonl").write_text(_rows(6, 0))
    (tmp_path / "test.jsonl").write_text(_rows(24, 100))
    for split in ("dev", "test"):
        result = cli("import", toml, tmp_path / f"{split}.jsonl", "--split", split,
                     "--map", "text=title")  # fmt: skip
        assert result.code == 0, result.stderr
    result = cli("study", "create", "toy", "--task", toml, "--protocol", "quick",
                 "--set", "annotators_per_item=3")  # fmt: skip
    assert result.code == 0, result.stderr
    assert cli("simulate", "toy", "--annotators", "4", "--accuracy", "0.7", "--seed", "3").code == 0

    report = cli("report", "toy", "--format", "json", "--bootstrap", "200")
    assert report.code == 0, report.stderr
    scores = report.json()["scores"]
    assert list(scores) == ["accuracy", "balanced_accuracy"]
    # independently: the majority of the exported labels against the gold of the file
    assert cli("export", "toy", "--to", tmp_path / "out", "--format", "labels").code == 0
    votes: dict[str, Counter[str]] = {}
    with (tmp_path / "out" / "toy-labels.csv").open() as f:
        for row in csv.DictReader(f):
            votes.setdefault(row["item_id"], Counter())[row["value"]] += 1
    items = sorted(votes)
    gold = {f"h{i}": "yes" if i % 3 else "no" for i in range(100, 124)}
    majority = [votes[i].most_common(1)[0][0] for i in items]
    expected = balanced_accuracy_score([gold[i] for i in items], majority)
    balanced = scores["balanced_accuracy"]
    assert balanced["value"] == pytest.approx(expected)
    assert balanced["ci_low"] <= balanced["value"] <= balanced["ci_high"]
    # the report's table and summary line name it as the entry says
    table = cli("--width", "200", "report", "toy", "--bootstrap", "0")
    assert table.code == 0, table.stderr
    assert "Balanced acc." in table.stdout and "balanced accuracy" in table.stdout


def test_a_broken_plugin_is_one_clear_error_and_only_when_needed(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    install_plugin(
        tmp_path,
        monkeypatch,
        {"fancy": "lab_metrics:METRIC"},
        module="raise ImportError('needs the fancy-stats package')\n",
    )
    # Built-in metrics never load the plugins: every built-in task still validates.
    assert specs.load_task("superglue/rte").metrics == ["accuracy"]
    assert find_metric("accuracy") is not None
    toml = tmp_path / "toy.toml"
    toml.write_text(TOY.format(metrics='["fancy"]'))
    with pytest.raises(MetricPluginError) as caught:
        specs.load_task_file(toml)
    message = str(caught.value)
    assert "metric plugin 'fancy' (package lab-metrics 1.0, entry point lab_metrics:METRIC)" in (
        message
    )
    assert "ImportError: needs the fancy-stats package" in message
    # at the command line: one line, no traceback
    (tmp_path / "test.jsonl").write_text(_rows(3, 0))
    result = cli("import", toml, tmp_path / "test.jsonl", "--split", "test", "--map", "text=title")
    assert result.code == 1
    assert "error: metric plugin 'fancy'" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("entries", "module", "reason"),
    [
        ({"accuracy": "lab_metrics:METRIC"}, PLUGIN, "'accuracy' is a built-in metric and cannot"),
        ({"balanced": "lab_metrics:METRIC"}, PLUGIN, "holds the metric 'balanced_accuracy'"),
        ({"balanced_accuracy": "lab_metrics:np"}, PLUGIN, "is a module, not an annotate Metric"),
    ],
    ids=["overrides a built-in", "misnamed", "not a metric"],
)
def test_a_plugin_cannot_replace_a_built_in_nor_register_something_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries, module, reason
):
    install_plugin(tmp_path, monkeypatch, entries, module)
    # the built-in stays what it is, whatever is installed
    assert find_metric("accuracy") is next(m for m in BUILTIN if m.name == "accuracy")
    with pytest.raises(MetricPluginError, match=reason):
        all_metrics()


def test_a_plugin_function_is_called_with_its_family_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Classification metrics get confusion matrices (gold rows, predicted columns, the last
    column for units left undecided), one per bootstrap replicate."""
    from annotate.scoring.metrics import classification_scorer

    install_plugin(tmp_path, monkeypatch, {"balanced_accuracy": "lab_metrics:METRIC"})
    gold = np.array([0, 0, 0, 1])
    pred = np.array([0, 0, -2, 1])  # one tie left undecided: wrong
    scorer = classification_scorer(["accuracy", "balanced_accuracy"], 2, gold, pred)
    point = scorer.point()
    assert point["accuracy"] == pytest.approx(0.75)
    assert point["balanced_accuracy"] == pytest.approx((2 / 3 + 1) / 2)
    replicates = scorer.replicates(50, np.random.default_rng(0))
    assert replicates["balanced_accuracy"].shape == (50,)


def test_scoring_the_builtin_way_matches_the_reference_scorers():
    """The registry's functions are the official ones: sklearn's, on a 3-class confusion."""
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

    from annotate.scoring.metrics import classification_scorer

    rng = np.random.default_rng(7)
    gold = rng.integers(0, 3, 60)
    pred = np.where(rng.random(60) < 0.7, gold, rng.integers(0, 3, 60))
    point = classification_scorer(["accuracy", "macro_f1", "r3"], 3, gold, pred).point()
    assert point["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    assert point["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))
    assert point["r3"] == pytest.approx(matthews_corrcoef(gold, pred))


def test_the_docs_list_every_builtin_metric_and_the_entry_point_the_test_installs():
    page = DOCS.read_text()
    for entry in BUILTIN:
        assert f"| `{entry.name}` | {entry.header} |" in page
    assert docs_block("toml") == (
        f'[project.entry-points."{ENTRY_POINT_GROUP}"]\nbalanced_accuracy = "lab_metrics:METRIC"\n'
    )
