"""Render the benchmark's human row (`schema.BenchmarkReport`) as sections (title, headers,
rows) for the terminal table and Markdown; HTML and LaTeX have their own modules."""

from __future__ import annotations

from rich.console import Console

from annotate.report.cells import METRIC_NAMES, Section, interval, pct, quoted_bounds
from annotate.report.model.schema import (
    BenchmarkModelRow,
    BenchmarkReport,
    Datasheet,
    HeadlineInterval,
)
from annotate.report.render.markdown import _md_cell, _md_table
from annotate.report.render.table import _table
from annotate.terminal_text import SafeText as Text


def _metric_cell(scores: dict, metrics: list[str], quoted: HeadlineInterval | None) -> str:
    parts = []
    for m in metrics:
        e = scores[m]
        low, high = quoted_bounds(e, quoted if len(metrics) == 1 else None)
        parts.append(f"{METRIC_NAMES.get(m, m)} {pct(e.value)} {interval(low, high)}")
    return "; ".join(p.strip() for p in parts)


def benchmark_sections(r: BenchmarkReport) -> list[Section]:
    models = [m.name for m in r.models]
    headers = ["Task", "Study", "n", "Metrics (x100)", "Task score", "95% CI", *models]

    def task_line(t, name: str) -> list[str]:
        return [
            name,
            t.study,
            str(t.n_items),
            _metric_cell(t.scores, t.metrics, t.interval),
            pct(t.task_score.value),
            interval(*quoted_bounds(t.task_score, t.interval)),
            *(pct(t.models[m].value) if m in t.models else "–" for m in models),
        ]

    rows = [task_line(t, t.task) for t in r.tasks]
    a = r.average
    label = (
        f"Average ({r.n_groups_covered} of {r.n_groups} tasks{', partial' if r.partial else ''})"
    )
    rows.append(
        [
            label,
            "",
            "",
            "",
            pct(a.value),
            interval(a.ci_low, a.ci_high),
            *(pct(m.average.value) for m in r.models),
        ]
    )
    rows += [task_line(t, f"{t.task} (apart)") for t in r.diagnostics]
    out: list[Section] = [(f"Human row: {r.benchmark} (measured)", headers, rows)]
    if r.models:
        out.append(
            (
                "Models on the same items (x100)",
                ["Model", "Average", "95% CI", "Tasks covered"],
                [
                    [
                        m.name,
                        pct(m.average.value),
                        interval(m.average.ci_low, m.average.ci_high),
                        _covered(r, m),
                    ]
                    for m in r.models
                ],
            )
        )
    out.append(
        (
            "Coverage",
            ["", ""],
            [
                ["Missing tasks", _missing(r)],
                ["Scored apart (not in the average)", _apart(r)],
                [
                    "Bootstrap",
                    f"{r.bootstrap.replicates} replicates; {r.bootstrap.method}"
                    if r.bootstrap.replicates
                    else "off",
                ],
                ["Software", f"annotate {r.software_version}"],
            ],
        )
    )
    if r.published is not None:
        p = r.published
        prow = [
            [
                task,
                "; ".join(f"{METRIC_NAMES.get(m, m)} {v * 100:.1f}" for m, v in scores.items()),
            ]
            for task, scores in p.scores.items()
        ]
        prow.append(["Average", pct(p.average)])
        out.append(
            (f"Published human row, not measured here: {p.source}", ["Task", "Scores"], prow)
        )
    out.append(datasheet_overview(r))
    return out


def _covered(r: BenchmarkReport, m: BenchmarkModelRow) -> str:
    """The averaged tasks a model has a score on, then the ones scored apart (a diagnostic
    set): a model of AX alone read as a blank "(partial)"."""
    covered = ", ".join(m.tasks_covered) or "none of the averaged tasks"
    covered += " (partial)" if m.partial else ""
    apart = [
        t.task
        for t in r.diagnostics
        if t.models.get(m.name) is not None and t.models[m.name].value is not None
    ]
    return covered + (f"; apart: {', '.join(apart)}" if apart else "")


def _missing(r: BenchmarkReport) -> str:
    """The tasks the average lacks: with no study, or with a study that gives no score yet
    (test items without gold, no label yet), named so it does not read as never run."""
    unscored = {t.task: t.study for t in r.tasks if t.task_score.value is None}
    return (
        ", ".join(
            f"{task} (study {unscored[task]}: no score)" if task in unscored else task
            for task in r.missing
        )
        or "none"
    )


def _apart(r: BenchmarkReport) -> str:
    """The diagnostic sets, each with its study or none."""
    shown = {t.task: t.study for t in r.diagnostics}
    return ", ".join(
        f"{task} (study {shown[task]})" if task in shown else f"{task} (no study)"
        for task in r.excluded_tasks
    )


def datasheet_overview(r: BenchmarkReport) -> Section:
    """One line per task (the diagnostic sets' too): the datasheet's attrition, time on task
    and ties."""
    rows = []
    for t in [*r.tasks, *r.diagnostics]:
        d: Datasheet | None = t.datasheet
        if d is None:
            continue
        a, time = d.attrition, d.time_on_task
        rate = a.training_pass_rate.value
        rows.append(
            [
                t.task,
                f"{d.sample_size} (seed {d.seed})",
                f"{a.started_training}/{a.admitted}/{a.rejected}/{a.labelled_test}/{a.abandoned}",
                "–" if rate is None else f"{rate * 100:.0f}%",
                "–"
                if time.median_minutes_per_annotator is None
                else f"{time.median_minutes_per_annotator:.1f}",
                "–" if time.total_minutes is None else f"{time.total_minutes:.1f}",
                "–" if d.cost is None else f"{d.cost.estimated_cost:.2f}",
                f"{d.ties['n_tied']} ({d.ties['rule']})",
                str(len(d.flagged)),
                f"{d.first_label_at or '–'} … {d.last_label_at or '–'}",
            ]
        )
    headers = [
        "Task",
        "Sample",
        "Trained/admitted/rejected/finished/abandoned",
        "Pass rate",
        "Median min/annotator",
        "Total min",
        "Cost",
        "Ties",
        "Flags",
        "Labels from … to",
    ]
    return "Datasheet of the runs", headers, rows


def render_benchmark_table(report: BenchmarkReport, console: Console) -> None:
    console.print(Text(report.summary, style="bold"))
    console.print()
    for title, headers, rows in benchmark_sections(report):
        console.print(_table(title, headers, rows))
    for note in report.notes:
        console.print(Text(f"note: {note}"))


def render_benchmark_markdown(report: BenchmarkReport) -> str:
    lines = [f"# Human row: {_md_cell(report.benchmark)}", "", f"> {_md_cell(report.summary)}", ""]
    for title, headers, rows in benchmark_sections(report):
        lines += [f"## {_md_cell(title)}", "", *_md_table(headers, rows), ""]
    if report.notes:
        lines += ["## Notes", ""] + [f"- {_md_cell(n)}" for n in report.notes] + [""]
    return "\n".join(lines)
