"""The human row as a LaTeX table for a paper (`--format latex`), in the layout of the GLUE and
SuperGLUE papers' results tables: systems as rows, tasks (and their metrics) as columns, the
average last; booktabs rules (`\\usepackage{booktabs}`). Intervals follow the values, as
`[low, high]` or as `± half-width` (`--intervals pm`: half the width of the 95% interval).
A second table gives the datasheet of the run.

The tables are made by pandas' `Styler.to_latex` (needs jinja2, in the `report` extra); names
from people or data (models, studies, annotators) are LaTeX-escaped."""

from __future__ import annotations

from typing import Any

from annotate.errors import UserError
from annotate.report.benchmark.published import published_row
from annotate.report.cells import METRIC_NAMES, interval, pct, quoted_bounds
from annotate.report.model.schema import (
    BenchmarkReport,
    Datasheet,
    Estimate,
    HeadlineInterval,
    StudyReport,
)
from annotate.report.render.figures import EXTRA_HINT
from annotate.report.sections.datasheet import datasheet_sections
from annotate.text import terminal_safe

SHORT_NAMES = {
    "superglue/boolq": "BoolQ",
    "superglue/cb": "CB",
    "superglue/copa": "COPA",
    "superglue/multirc": "MultiRC",
    "superglue/record": "ReCoRD",
    "superglue/rte": "RTE",
    "superglue/wic": "WiC",
    "superglue/wsc": "WSC",
    "superglue/axb": "AX-b",
    "superglue/axg": "AX-g",
    "glue/cola": "CoLA",
    "glue/sst2": "SST-2",
    "glue/mrpc": "MRPC",
    "glue/stsb": "STS-B",
    "glue/qqp": "QQP",
    "glue/mnli-m": "MNLI-m",
    "glue/mnli-mm": "MNLI-mm",
    "glue/qnli": "QNLI",
    "glue/rte": "RTE",
    "glue/wnli": "WNLI",
    "glue/ax": "AX",
}
AVERAGE = ("Avg", "")
LATEX_MISSING = "--"


def _pandas_styler() -> None:
    try:
        import jinja2  # noqa: F401
    except ImportError:
        raise UserError(f"--format latex needs jinja2 (pandas' Styler): {EXTRA_HINT}") from None


def _cell(e: Estimate | None, intervals: str, quoted: HeadlineInterval | None = None) -> str:
    """A score with its interval: `quoted` (the task score's, by the one rule) when given."""
    if e is None or e.value is None:
        return LATEX_MISSING
    text = pct(e.value)
    low, high = quoted_bounds(e, quoted)
    if low is None or high is None:
        return text
    if intervals == "pm":
        return f"{text} $\\pm$ {pct((high - low) / 2)}"
    return f"{text} {interval(low, high)}"


def _sole(metrics: list[str], quoted: HeadlineInterval | None) -> HeadlineInterval | None:
    """The task score's interval for a metric cell when that metric is the task's score."""
    return quoted if len(metrics) == 1 else None


def _pct_or_dashes(value: float | None) -> str:
    return pct(value, LATEX_MISSING)


def _task_columns(task: str, metrics: list[str]) -> list[tuple[str, str]]:
    name = SHORT_NAMES.get(task, task)
    return [(name, METRIC_NAMES.get(m, m)) for m in metrics]


def _escape(text: str) -> str:
    from pandas.io.formats.style_render import _escape_latex

    return _escape_latex(text)


def _styled(frame: Any, caption: str, label: str, escape_cells: bool) -> str:
    styler = frame.style.format_index(escape="latex", axis=0).format_index(escape="latex", axis=1)
    if escape_cells:
        styler = styler.format(escape="latex")
    return styler.to_latex(
        hrules=True,
        caption=caption,
        label=label,
        position_float="centering",
        multicol_align="c",
        column_format="l" + "r" * frame.shape[1],
    )


def _frame(rows: dict[str, dict[tuple[str, str], str]], columns: list[tuple[str, str]]) -> Any:
    import pandas as pd

    index = pd.MultiIndex.from_tuples(columns)
    data = [[cells.get(c, "--") for c in columns] for cells in rows.values()]
    return pd.DataFrame(data, index=list(rows), columns=index)


def study_latex(r: StudyReport, intervals: str = "brackets") -> str:
    columns = _task_columns(r.task, r.metrics)
    if len(r.metrics) > 1:
        columns.append(AVERAGE)
    from annotate.report.build import committee, unfinished_prefix

    # the committee the headline names: the data's while unfinished, "mean of k" for ratings
    human = f"Human, {committee(r)} (n={r.sample.n_items_scored})"
    rows: dict[str, dict[tuple[str, str], str]] = {human: {}}
    for col, m in zip(columns, r.metrics, strict=False):
        rows[human][col] = _cell(r.scores.get(m), intervals, _sole(r.metrics, r.headline_interval))
    if len(r.metrics) > 1:
        rows[human][AVERAGE] = _cell(r.task_score, intervals, r.headline_interval)
    single = r.individual
    name = f"Human, mean single annotator ({single.task_score.n})"
    rows[name] = {
        c: _pct_or_dashes(single.metrics[m].mean) for c, m in zip(columns, r.metrics, strict=False)
    }
    if len(r.metrics) > 1:
        rows[name][AVERAGE] = _pct_or_dashes(single.task_score.mean)
    for model in r.models:
        cells = {
            c: _cell((model.scores or {}).get(m), intervals, _sole(r.metrics, model.interval))
            for c, m in zip(columns, r.metrics, strict=False)
        }
        if len(r.metrics) > 1:
            cells[AVERAGE] = _cell(model.task_score, intervals, model.interval)
        rows[f"{model.name} (n={model.n})"] = cells
    published = published_row(r.task.split("/")[0])
    if published is not None and r.task in published.scores:
        scores = published.scores[r.task]
        cells = {c: _pct_or_dashes(scores.get(m)) for c, m in zip(columns, r.metrics, strict=False)}
        if len(r.metrics) > 1 and all(m in scores for m in r.metrics):
            cells[AVERAGE] = _pct_or_dashes(sum(scores[m] for m in r.metrics) / len(r.metrics))
        rows["Human, published (not measured here)"] = cells
    how = (
        "$\\pm$ half the width of the 95\\% interval"
        if intervals == "pm"
        else ("95\\% intervals in brackets")
    )
    if r.headline_interval is not None:
        how += f"; the task score's: {_escape(r.headline_interval.method)}"
    unfinished = unfinished_prefix(r.sample) if r.n_items else None  # as the headline
    caption = (
        ("" if unfinished is None else f"{_escape(unfinished)}. ")
        + f"Human performance on {_escape(SHORT_NAMES.get(r.task, r.task))} "
        f"(study {_escape(r.study)}; x100; {how})."
    )
    table = _styled(_frame(rows, columns), caption, f"tab:human-{_label(r.study)}", False)
    return table + "\n" + _datasheet_table(r.datasheet, r.study)


def benchmark_latex(r: BenchmarkReport, intervals: str = "brackets") -> str:
    # The diagnostic sets' columns come after the average, as the leaderboard shows them.
    shown = [*r.tasks, *r.diagnostics]
    columns: list[tuple[str, str]] = []
    for t in r.tasks:
        columns += _task_columns(t.task, t.metrics)
    columns.append(AVERAGE)
    for t in r.diagnostics:
        columns += _task_columns(t.task, t.metrics)
    human = "Human (this study)"
    rows: dict[str, dict[tuple[str, str], str]] = {human: {}}
    for t in shown:
        for c, m in zip(_task_columns(t.task, t.metrics), t.metrics, strict=True):
            rows[human][c] = _cell(t.scores.get(m), intervals, _sole(t.metrics, t.interval))
    rows[human][AVERAGE] = _cell(r.average, intervals)
    for model in r.models:
        cells: dict[tuple[str, str], str] = {}
        for t in shown:
            score = t.models.get(model.name)
            quoted = t.model_intervals.get(model.name)  # the task score's, as the report's
            if score is not None and len(t.metrics) == 1:
                cells[_task_columns(t.task, t.metrics)[0]] = _cell(score, intervals, quoted)
            elif score is not None:  # several metrics: the model's task score under the last
                cells[_task_columns(t.task, t.metrics)[-1]] = _cell(score, intervals, quoted) + "*"
        cells[AVERAGE] = _cell(model.average, intervals)
        rows[model.name] = cells
    if r.published is not None:
        cells = {}
        for t in shown:
            scores = r.published.scores.get(t.task, {})
            for c, m in zip(_task_columns(t.task, t.metrics), t.metrics, strict=True):
                cells[c] = _pct_or_dashes(scores.get(m))
        cells[AVERAGE] = _pct_or_dashes(r.published.average)
        rows["Human (published, not measured here)"] = cells
    name = {"glue": "GLUE", "superglue": "SuperGLUE"}.get(r.benchmark, r.benchmark)
    how = (
        "$\\pm$ half the width of the 95\\% interval"
        if intervals == "pm"
        else ("95\\% intervals in brackets")
    )
    how += (
        "; a task's score (its only metric, or a model's mean of its metrics, marked *): by "
        "accuracy alone, Wilson's; other shares (pairs, questions, several metrics), Wilson's "
        "at the effective number of units; correlations, the bootstrap's; each metric of a "
        "task with several: the bootstrap's"
    )
    cover = f"{r.n_groups_covered} of {r.n_groups} tasks"
    if r.missing:
        cover += "; missing: " + ", ".join(SHORT_NAMES.get(m, m) for m in r.missing)
    caption = (
        f"{name} human row (x100; {how}; {_escape(cover)}). The published row is the paper's, "
        "on other items, by other annotators; the average over its tasks, not ours."
    )
    table = _styled(_frame(rows, columns), caption, f"tab:human-{r.benchmark}", False)
    sheets = [_datasheet_table(t.datasheet, t.study) for t in shown]
    return table + "\n" + "\n".join(s for s in sheets if s)


def _label(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)


def _datasheet_table(d: Datasheet | None, study: str) -> str:
    """The datasheet's rows, headerless as HTML shows them: a top and a bottom rule, no mid
    rule under an empty header row."""
    if d is None:
        return ""
    import pandas as pd

    title, _, rows = datasheet_sections(d)[0]
    frame = pd.DataFrame([[v] for _, v in rows], index=[k for k, _ in rows], columns=["Value"])
    rules = [{"selector": rule, "props": f":{rule};"} for rule in ("toprule", "bottomrule")]
    styler = (
        frame.style.format(escape="latex")
        .format_index(escape="latex", axis=0)
        .hide(axis="columns")
        .set_table_styles(rules, overwrite=False)
    )
    return styler.to_latex(
        hrules=False,
        caption=f"{_escape(title)}: study {_escape(study)}.",
        label=f"tab:datasheet-{_label(study)}",
        position_float="centering",
        column_format="lp{0.6\\linewidth}",
    )


_CONTROL_PICTURES = {0x2400 + c: f"[U+{c:04X}]" for c in range(0x20)} | {0x2421: "[U+007F]"}
_PLACEHOLDERS = {**_CONTROL_PICTURES, ord("⟨"): "[", ord("⟩"): "]"}


def latex_safe(text: str) -> str:
    """LaTeX that pdflatex compiles: control characters (made visible by the terminal
    sanitiser, as ␛ or ⟨RLO⟩) become ASCII, [U+001B] and [RLO]; pdflatex has no glyph for
    the placeholders themselves."""
    return terminal_safe(text).translate(_PLACEHOLDERS)


def render_latex(report: StudyReport | BenchmarkReport, intervals: str = "brackets") -> str:
    _pandas_styler()
    if isinstance(report, BenchmarkReport):
        return latex_safe(benchmark_latex(report, intervals))
    return latex_safe(study_latex(report, intervals))
