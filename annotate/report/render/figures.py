"""The report's figures, drawn with matplotlib (the optional extra `report`): inline SVG for
the HTML report and separate PDF + SVG files for a paper (`--figures DIR`).

matplotlib is imported inside the functions (start-up stays fast, and the report works without
it: `figures_available()` says whether it can be drawn). Output is deterministic: the Agg
backend, a fixed SVG hash salt, no dates in the metadata, text kept as text.

File names are stable: `<name>.svg` and `<name>.pdf`, where name is one of
    STUDY-majority-of-k, STUDY-annotators, STUDY-confusion, STUDY-seconds-per-item,
    STUDY-diagnostics-r3 (diagnostic sets), BENCHMARK-human-row (--benchmark)
(STUDY is the study name with characters outside A-Z a-z 0-9 . _ - replaced by -).
"""

from __future__ import annotations

import io
import itertools
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotate import install_hint
from annotate.errors import UserError
from annotate.output_paths import output_folder
from annotate.report.model.schema import BenchmarkReport, BenchmarkTaskRow, StudyReport

EXTRA_HINT = f"{install_hint('report')} (in a checkout: pip install -e '.[report]')"
WIDTH, HEIGHT = 6.0, 3.6
HUMAN_COLOUR, MODEL_COLOURS, PUBLISHED_COLOUR = (
    "#1f4e79",
    ["#c55a11", "#548235", "#7030a0"],
    "#888888",
)


@dataclass
class FigureSpec:
    name: str
    """The file name without extension (stable)."""
    title: str
    draw: Callable[[Any], None]
    """Draws on a matplotlib Axes."""
    height: float = HEIGHT


def figures_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "study"


def _pct(v: float | None) -> float:
    return float("nan") if v is None else v * 100


# --- study figures ------------------------------------------------------------------------------


def study_figures(r: StudyReport) -> list[FigureSpec]:
    """The figures a study's report has data for, in report order."""
    s = slug(r.study)
    out = []
    if r.majority_of_k:
        out.append(
            FigureSpec(f"{s}-majority-of-k", "Majority-of-k curve", lambda ax: _curve(ax, r))
        )
    if r.has_gold and r.annotators:
        height = max(HEIGHT, 0.28 * len(r.annotators) + 1.2)
        out.append(
            FigureSpec(
                f"{s}-annotators",
                "Each annotator's accuracy with its interval",
                lambda ax: _annotators(ax, r),
                height,
            )
        )
    if r.confusion_matrix:
        out.append(FigureSpec(f"{s}-confusion", "Confusion matrix", lambda ax: _confusion(ax, r)))
    if r.datasheet and r.datasheet.time_on_task.seconds_per_item_histogram.get("counts"):
        out.append(
            FigureSpec(
                f"{s}-seconds-per-item",
                "Seconds per test item",
                lambda ax: _seconds(ax, r),
            )
        )
    if r.diagnostics:
        n = 1 + len(r.diagnostics.coarse) + sum(len(t) for t in r.diagnostics.fine.values())
        out.append(
            FigureSpec(
                f"{s}-diagnostics-r3",
                "R3 per phenomenon, humans and models",
                lambda ax: _diagnostics(ax, r),
                max(HEIGHT, 0.22 * n * (1 + len(r.models)) + 1.2),
            )
        )
    return out


def study_figure_titles(r: StudyReport) -> list[str]:
    return [f.title for f in study_figures(r)]


GOLD_FIGURES = ("the majority-of-k curve", "each annotator's accuracy", "the confusion matrix")
"""The study figures drawn only from scores against gold labels."""


def gold_figures_note(r: StudyReport | BenchmarkReport) -> str | None:
    """One line naming the figures a study without gold could not draw (None with gold)."""
    if isinstance(r, BenchmarkReport) or r.has_gold:
        return None
    return (
        f"note: the test items have no gold labels: {', '.join(GOLD_FIGURES[:-1])} and "
        f"{GOLD_FIGURES[-1]} need them and were not drawn"
    )


def _curve(ax: Any, r: StudyReport) -> None:
    ks = [c.k for c in r.majority_of_k]
    values = [_pct(c.task_score) for c in r.majority_of_k]
    errors = [0 if c.task_score_sd is None else c.task_score_sd * 100 for c in r.majority_of_k]
    ax.errorbar(ks, values, yerr=errors, marker="o", color=HUMAN_COLOUR, capsize=4, label="humans")
    for i, m in enumerate(r.models):
        if m.task_score is not None and m.task_score.value is not None:
            ax.axhline(
                m.task_score.value * 100,
                color=MODEL_COLOURS[i % len(MODEL_COLOURS)],
                linestyle="--",
                label=f"model {m.name}",
            )
    ax.set_xticks(ks)
    ax.set_xlabel("k (labels per item, drawn at random)")
    ax.set_ylabel("task score (x100)")
    ax.legend(loc="lower right", fontsize=8)


def _annotators(ax: Any, r: StudyReport) -> None:
    """Accuracy where the task has accuracy, else the task score, each with the interval the
    report gives it (Wilson's, where scoring.intervals.accuracy_wilson applies: not on AX-g's
    minimal pairs; an F1 or correlation on one annotator's items has none). Nothing is computed
    here: the bounds are the report's."""
    accuracy = "accuracy" in r.metrics
    names, values, lows, highs = [], [], [], []
    drawn = False
    for a in r.annotators:
        value = a.scores.get("accuracy") if accuracy else a.task_score
        if value is None:
            continue
        low = high = value
        if accuracy and a.wilson_low is not None and a.wilson_high is not None:
            low, high, drawn = a.wilson_low, a.wilson_high, True
        names.append(a.name)
        values.append(value * 100)
        # Wilson's bound at 100% can land a rounding error below the value: never negative.
        lows.append(max(value - low, 0.0) * 100)
        highs.append(max(high - value, 0.0) * 100)
    y = list(range(len(names)))
    ax.errorbar(values, y, xerr=[lows, highs], fmt="o", color=HUMAN_COLOUR, capsize=3)
    majority = r.scores["accuracy"] if accuracy else r.task_score
    if majority.value is not None:
        ax.axvline(majority.value * 100, color="black", linestyle=":", label="majority")
        ax.legend(loc="lower left", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"{annotators_axis(r, drawn)} (x100, own items)")


def annotators_axis(r: StudyReport, drawn: bool) -> str:
    """What the annotator figure plots, and which interval, if any."""
    if "accuracy" not in r.metrics:
        return "task score"
    return "accuracy, 95% Wilson interval" if drawn else "accuracy, no interval"


def _confusion(ax: Any, r: StudyReport) -> None:
    cm = r.confusion_matrix
    assert cm is not None
    ax.imshow(cm.matrix, cmap="Blues")
    top = max((max(row) for row in cm.matrix), default=0)
    for i, row in enumerate(cm.matrix):
        for j, v in enumerate(row):
            colour = "white" if top and v > top / 2 else "black"
            ax.text(j, i, str(v), ha="center", va="center", color=colour, fontsize=9)
    ax.set_xticks(range(len(cm.predicted)))
    ax.set_xticklabels(cm.predicted, fontsize=8, rotation=20)
    ax.set_yticks(range(len(cm.gold)))
    ax.set_yticklabels(cm.gold, fontsize=8)
    ax.set_xlabel("human answer")
    ax.set_ylabel("gold")


def _seconds(ax: Any, r: StudyReport) -> None:
    assert r.datasheet is not None
    h = r.datasheet.time_on_task.seconds_per_item_histogram
    edges, counts = h["edges"], h["counts"]
    widths = [b - a for a, b in itertools.pairwise(edges)]
    ax.bar(edges[:-1], counts, width=widths, align="edge", color=HUMAN_COLOUR, edgecolor="white")
    ax.set_xlabel("seconds per test answer")
    ax.set_ylabel("answers")


def _diagnostics(ax: Any, r: StudyReport) -> None:
    d = r.diagnostics
    assert d is not None
    rows = [("All tagged", d.all_tagged)]
    for cat, e in d.coarse.items():
        rows.append((cat, e))
        rows += [(f"  {tag}", f) for tag, f in d.fine.get(cat, {}).items()]
    models = [m.name for m in r.models]
    series = [("humans", HUMAN_COLOUR, [e.value for _, e in rows])]
    for i, m in enumerate(models):
        values = [(e.models or {}).get(m) for _, e in rows]
        series.append(
            (
                f"model {m}",
                MODEL_COLOURS[i % len(MODEL_COLOURS)],
                [v.value if v else None for v in values],
            )
        )
    height = 0.8 / len(series)
    for s, (label, colour, values) in enumerate(series):
        drawn = [(i + s * height, v) for i, v in enumerate(values) if v is not None]
        ax.barh(
            [y for y, _ in drawn], [v for _, v in drawn], height=height, color=colour, label=label
        )
    for i, (_, e) in enumerate(rows):
        if e.undefined is not None:  # no bar: a 0 would read as chance
            ax.text(0.02, i, e.text(), fontsize=6, va="center", color="dimgray")
    ax.set_yticks([i + height * (len(series) - 1) / 2 for i in range(len(rows))])
    ax.set_yticklabels([name for name, _ in rows], fontsize=7)
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.5)
    ax.set_xlabel(f"{d.metric.upper()} (Matthews correlation)")
    ax.legend(loc="lower right", fontsize=8)


# --- benchmark figure --------------------------------------------------------------------------


def benchmark_figures(r: BenchmarkReport) -> list[FigureSpec]:
    if not r.tasks:
        return []
    return [
        FigureSpec(
            f"{slug(r.benchmark)}-human-row",
            "Task scores with intervals, the average, models and the published row",
            lambda ax: _benchmark(ax, r),
            max(HEIGHT, 0.4 * (len(r.tasks) + len(r.diagnostics) + 1) + 1.2),
        )
    ]


def _benchmark(ax: Any, r: BenchmarkReport) -> None:
    # The diagnostic sets below the average, apart, as the table shows them: a model scored
    # on them alone has its marks there (and none on the average it does not have).
    apart = list(r.diagnostics)
    labels = [
        *(t.task.split("/")[-1] for t in r.tasks),
        "average",
        *(f"{t.task.split('/')[-1]} (apart)" for t in apart),
    ]
    # Each task's interval is the one its report quotes (the one rule: Wilson's for an
    # accuracy-only task), as the table gives it; the average's is the bootstrap's.
    points = [(t.task_score.value, *_quoted_bounds(t)) for t in r.tasks]
    points.append((r.average.value, r.average.ci_low, r.average.ci_high))
    points += [(t.task_score.value, *_quoted_bounds(t)) for t in apart]
    y = list(range(len(labels)))
    values = [_pct(value) for value, _, _ in points]
    low = [0 if lo is None or v is None else max(v - lo, 0.0) * 100 for v, lo, _ in points]
    high = [0 if hi is None or v is None else max(hi - v, 0.0) * 100 for v, _, hi in points]
    ax.errorbar(
        values,
        y,
        xerr=[low, high],
        fmt="o",
        color=HUMAN_COLOUR,
        capsize=3,
        label="humans (measured)",
    )
    for i, m in enumerate(r.models):
        xs = [_model_pct(t, m.name) for t in r.tasks]
        xs.append(_pct(m.average.value))
        xs += [_model_pct(t, m.name) for t in apart]
        ax.plot(xs, y, "s", color=MODEL_COLOURS[i % len(MODEL_COLOURS)], label=f"model {m.name}")
    if r.published is not None:
        published = r.published

        def quoted(t: BenchmarkTaskRow) -> float:
            scores = published.scores.get(t.task)
            return sum(scores.values()) / len(scores) * 100 if scores else float("nan")

        xs = [quoted(t) for t in r.tasks]
        xs.append(_pct(published.average))
        xs += [quoted(t) for t in apart]
        ax.plot(
            xs,
            y,
            "D",
            markerfacecolor="none",
            color=PUBLISHED_COLOUR,
            label="published (not measured)",
        )
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("score (x100)")
    ax.legend(loc="best", fontsize=7)  # a fixed corner can cover the last row's marks


def _model_pct(t: BenchmarkTaskRow, name: str) -> float:
    return _pct(t.models[name].value) if name in t.models else float("nan")


def _quoted_bounds(t: BenchmarkTaskRow) -> tuple[float | None, float | None]:
    if t.interval is not None:
        return t.interval.low, t.interval.high
    return t.task_score.ci_low, t.task_score.ci_high


# --- output ------------------------------------------------------------------------------------


def figure_specs(report: StudyReport | BenchmarkReport) -> list[FigureSpec]:
    if isinstance(report, BenchmarkReport):
        return benchmark_figures(report)
    return study_figures(report)


def _render(spec: FigureSpec, fmt: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    # A name with a character the font lacks (an emoji, a placeholder) makes matplotlib warn
    # per glyph on stderr, between the report's lines: the figure is drawn all the same.
    # Names and titles are text, never markup: matplotlib would typeset `$…$` as mathematics
    # (and stop at one it cannot parse).
    settings = {
        "svg.hashsalt": "annotate",
        "svg.fonttype": "none",
        "pdf.fonttype": 42,
        "text.parse_math": False,
        "text.usetex": False,
    }
    with warnings.catch_warnings(), matplotlib.rc_context(settings):
        warnings.simplefilter("ignore")
        fig = Figure(figsize=(WIDTH, spec.height))
        ax = fig.add_subplot()
        spec.draw(ax)
        ax.set_title(spec.title, fontsize=10)
        fig.tight_layout()
        out = io.BytesIO()
        metadata: dict[str, Any] = (
            {"Date": None, "Creator": None}
            if fmt == "svg"
            else {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}
        )
        fig.savefig(out, format=fmt, metadata=metadata)
    return out.getvalue()


def inline_svgs(report: StudyReport | BenchmarkReport) -> dict[str, str] | None:
    """Figure title -> SVG markup to place in HTML (no XML prolog, no namespaces or metadata:
    nothing that names an outside address); None without matplotlib."""
    if not figures_available():
        return None
    out = {}
    for spec in figure_specs(report):
        svg = _render(spec, "svg").decode("utf-8")
        svg = svg[svg.index("<svg") :]
        svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
        svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
        out[spec.title] = svg
    return out


def write_figures(report: StudyReport | BenchmarkReport, folder: Path) -> list[Path]:
    """Each figure as `<name>.pdf` and `<name>.svg` in `folder` (created); the paths written."""
    if not figures_available():
        raise UserError(f"--figures needs matplotlib: {EXTRA_HINT}")
    folder = output_folder(Path(folder), "--figures")
    written = []
    for spec in figure_specs(report):
        for fmt in ("pdf", "svg"):
            path = folder / f"{spec.name}.{fmt}"
            path.write_bytes(_render(spec, fmt))
            written.append(path)
    return written
