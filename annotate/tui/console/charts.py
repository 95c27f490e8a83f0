"""The report's figures for the terminal: first the numbers each chart plots (`report_charts`,
no widgets), then drawing them with plotext (`draw_*`, given a textual-plotext `plt`).

Every label that reaches a chart (annotator, model, class and tag names) goes through the
sanitiser: plotext's output is read back as ANSI text, so a control character in a name would
otherwise reach the terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotate.report.model.schema import PhenomenonScore, StudyReport
from annotate.terminal_text import SafeText as Text
from annotate.text import terminal_safe

HUMANS = "humans"


@dataclass(frozen=True)
class AnnotatorPoint:
    name: str
    n: int
    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class ReportCharts:
    metric: str
    """What the annotator chart shows: accuracy when the task has it, else the task score."""
    curve: list[tuple[int, float]]
    """(committee size k, task score) of the majority-of-k curve."""
    annotators: list[AnnotatorPoint]
    confusion: tuple[list[str], list[str], list[list[int]]] | None
    """(gold classes, predicted classes, counts[gold][predicted])."""
    r3_metric: str | None
    r3_categories: list[str] = field(default_factory=list)
    r3_series: dict[str, list[float]] = field(default_factory=dict)
    """"humans" and each model -> its score per coarse category (diagnostic sets)."""
    r3_undefined: list[str] = field(default_factory=list)
    """Categories left out of the chart, their score undefined for everyone: "Logic:
    undefined (n=3, one class)". A bar of 0 would read as chance."""


def report_charts(report: StudyReport) -> ReportCharts:
    has_accuracy = "accuracy" in report.metrics
    points = []
    for row in report.annotators:
        value = row.scores.get("accuracy") if has_accuracy else row.task_score
        # The report's bounds (scoring.intervals.accuracy_wilson: Wilson's over independent
        # items, none over AX-g's minimal pairs); nothing is computed here.
        low, high = (row.wilson_low, row.wilson_high) if has_accuracy else (None, None)
        points.append(AnnotatorPoint(terminal_safe(row.name), row.n, value, low, high))
    curve = [(c.k, c.task_score) for c in report.majority_of_k if c.task_score is not None]
    confusion = None
    if report.confusion_matrix is not None:
        m = report.confusion_matrix
        confusion = (
            [terminal_safe(g) for g in m.gold],
            [terminal_safe(p) for p in m.predicted],
            m.matrix,
        )
    categories: list[str] = []
    series: dict[str, list[float]] = {}
    r3_metric = None
    undefined: list[str] = []
    if report.diagnostics is not None:
        d = report.diagnostics
        r3_metric = d.metric
        shown = {}
        for category, e in d.coarse.items():
            if e.value is None and all(_model_value(e, m.name) is None for m in report.models):
                undefined.append(f"{terminal_safe(category)}: {e.text()}")
            else:
                shown[category] = e
        categories = [terminal_safe(c) for c in shown]
        series[HUMANS] = [_value(e.value) for e in shown.values()]
        for model in report.models:
            series[terminal_safe(model.name)] = [
                _value(_model_value(e, model.name)) for e in shown.values()
            ]
    return ReportCharts(
        metric="accuracy" if has_accuracy else "task score",
        curve=curve,
        annotators=points,
        confusion=confusion,
        r3_metric=r3_metric,
        r3_categories=categories,
        r3_series=series,
        r3_undefined=undefined,
    )


def _value(value: float | None) -> float:
    return 0.0 if value is None else value


def _model_value(entry: PhenomenonScore, model: str) -> float | None:
    score = (entry.models or {}).get(model)
    return None if score is None else score.value


# --- drawing --------------------------------------------------------------------------------
def draw_curve(plt: Any, charts: ReportCharts) -> None:
    plt.clear_figure()
    plt.title("Majority of k: task score by committee size")
    if not charts.curve:
        plt.title("Majority of k: no gold labels or no complete items yet")
        return
    ks = [k for k, _ in charts.curve]
    plt.plot(ks, [100 * v for _, v in charts.curve], marker="dot")
    plt.xticks(ks)
    plt.xlabel("annotators per item (k)")
    plt.ylim(0, 100)


def draw_annotators(plt: Any, charts: ReportCharts) -> None:
    """Each annotator's score as a point on a vertical line from its interval's ends."""
    plt.clear_figure()
    plt.title(annotators_title(charts))
    shown = [p for p in charts.annotators if p.value is not None]
    if not shown:
        return
    xs = list(range(1, len(shown) + 1))
    for x, p in zip(xs, shown, strict=True):
        if p.low is not None and p.high is not None:
            plt.plot([x, x], [100 * p.low, 100 * p.high], marker="braille", color="cyan")
    plt.scatter(xs, [100 * (p.value or 0.0) for p in shown], marker="●", color="yellow")
    plt.xticks(xs, [p.name for p in shown])
    plt.xlim(0.5, len(shown) + 0.5)
    plt.ylim(0, 100)


def annotators_title(charts: ReportCharts) -> str:
    """The annotator chart's title says what it draws: Wilson intervals only where there are
    some (accuracy); on R3/F1/correlation tasks, the points alone; with no score to draw
    (no gold labels), why the chart is empty, as the majority-of-k chart says."""
    if all(p.value is None for p in charts.annotators):
        return f"Each annotator's {charts.metric}: no gold labels or no scored answers yet"
    if any(p.low is not None for p in charts.annotators):
        return f"Each annotator's {charts.metric} with its 95% Wilson interval"
    return f"Each annotator's {charts.metric} (no interval drawn)"


def draw_r3(plt: Any, charts: ReportCharts) -> None:
    """Per-category R3 of the humans, and of each model beside them."""
    plt.clear_figure()
    plt.title(f"Diagnostics: {charts.r3_metric} per category (humans and models)")
    if charts.r3_undefined:
        plt.xlabel("no bar for " + "; ".join(charts.r3_undefined))
    if not charts.r3_categories:
        return
    names = list(charts.r3_series)
    values = [[100 * v for v in charts.r3_series[n]] for n in names]
    if len(names) == 1:
        plt.bar(charts.r3_categories, values[0], label=names[0])
    else:
        plt.multiple_bar(charts.r3_categories, values, labels=names)


def confusion_text(charts: ReportCharts) -> Text:
    """The confusion matrix as aligned text: rows gold, columns the majority's answer."""
    assert charts.confusion is not None
    gold, predicted, matrix = charts.confusion
    width = max(6, *(len(p) for p in predicted), *(len(str(c)) for r in matrix for c in r))
    left = max(4, *(len(g) for g in gold))
    text = Text("Confusion matrix (rows: gold, columns: majority answer)\n", style="bold")
    text.append(" " * (left + 1) + " ".join(f"{p:>{width}}" for p in predicted) + "\n", "bold")
    for g, row in zip(gold, matrix, strict=True):
        text.append(f"{g:<{left}} ", style="bold")
        for i, count in enumerate(row):
            right = i < len(predicted) and predicted[i] == g
            text.append(f"{count:>{width}}", style="green" if right else ("red" if count else ""))
            text.append(" ")
        text.append("\n")
    return text
