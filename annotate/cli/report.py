"""Commands that report: `annotate report STUDY` (the human ceiling of a study) and
`annotate agreement FILE` (agreement statistics of any long-format label file).

Scoring and the report (pandas, scipy, statsmodels) are imported inside the commands:
`annotate --help` stays fast."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path

import typer

from annotate.cli.context import app, options
from annotate.cli.output import console, print_json, warn
from annotate.text import terminal_safe


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"
    latex = "latex"
    html = "html"


class IntervalStyle(StrEnum):
    brackets = "brackets"
    pm = "pm"


class AgreementFormat(StrEnum):
    table = "table"
    json = "json"


class Level(StrEnum):
    nominal = "nominal"
    ordinal = "ordinal"
    interval = "interval"
    ratio = "ratio"


@app.command()
def report(
    ctx: typer.Context,
    study: str | None = typer.Argument(None, help="Name of the study (or use --benchmark)"),
    fmt: ReportFormat = typer.Option(
        ReportFormat.table, "--format", help="table, json, markdown, latex or html"
    ),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=0, help="Bootstrap replicates for the intervals (0: none)"
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Seed of the bootstrap (default: the study's seed)"
    ),
    model: list[Path] = typer.Option(
        [],
        "--model",
        help="A model's predictions, scored on the same items (repeatable): a leaderboard "
        "submission file, an lm-evaluation-harness sample log or results folder, or a table of "
        "id,prediction; with --benchmark, a folder of submission files",
    ),
    benchmark: str | None = typer.Option(
        None, "--benchmark", help="glue or superglue: the human row over one study per task"
    ),
    studies: list[str] = typer.Option(
        [], "--study", help="With --benchmark: the study of a task that has several (repeatable)"
    ),
    figures: Path | None = typer.Option(
        None, "--figures", help="Also write each figure as PDF and SVG into this folder"
    ),
    settings: list[str] = typer.Option(
        [], "--set", help="KEY=VALUE: hourly_rate=23.75 estimates the cost in the datasheet"
    ),
    intervals: IntervalStyle = typer.Option(
        IntervalStyle.brackets, "--intervals", help="LaTeX: brackets [low, high] or pm (±)"
    ),
    indent: int | None = typer.Option(
        None, "--indent", min=0, help="JSON: indent by this many spaces (default: compact)"
    ),
    schema: bool = typer.Option(
        False, "--schema", help="Print the JSON Schema of --format json and exit (no store needed)"
    ),
) -> None:
    """The human ceiling of a study: aggregated score with intervals, individual annotators,
    agreement, ties, diagnostics per phenomenon, items whose gold looks wrong and the datasheet
    of the run. With --benchmark: the benchmark's human row over its studies."""
    from annotate.errors import UserError

    if schema:
        from annotate.report.model.schema import report_schema

        print_json(report_schema(), indent=2 if indent is None else indent)
        return
    if indent is not None and fmt is not ReportFormat.json:
        raise UserError(f"--indent indents --format json (and --schema), not {fmt.value}")
    if intervals is not IntervalStyle.brackets and fmt is not ReportFormat.latex:
        raise UserError(
            f"--intervals {intervals.value} writes the LaTeX table: --format latex, not {fmt.value}"
        )
    hourly_rate = _hourly_rate(settings)
    if (study is None) == (benchmark is None):
        raise UserError("name a study, or pass --benchmark glue|superglue (not both)")
    if studies and benchmark is None:
        raise UserError("--study chooses a task's study for --benchmark")
    ws = options(ctx).workspace()
    if benchmark is not None:
        from annotate.report.benchmark.row import benchmark_report

        result = benchmark_report(
            ws.engine,
            benchmark.lower(),
            studies=studies,
            model_dirs=model,
            bootstrap=bootstrap,
            seed=seed,
            hourly_rate=hourly_rate,
        )
    else:
        from annotate.cli.progress import progress_bars
        from annotate.report.build import study_report

        assert study is not None
        with progress_bars() as progress:  # on stderr, and only on a terminal
            result = study_report(
                ws.engine,
                study,
                bootstrap=bootstrap,
                seed=seed,
                model_files=model,
                hourly_rate=hourly_rate,
                progress=progress,
            )
    if figures is not None:
        from annotate.report.render.figures import gold_figures_note, write_figures

        for path in write_figures(result, figures):
            warn(f"figure: {path}")
        if note := gold_figures_note(result):
            warn(note)
    _render(result, fmt, intervals.value, indent)


def _hourly_rate(settings: list[str]) -> float | None:
    import math

    from annotate.errors import UserError

    rate = None
    for setting in settings:
        key, _, value = setting.partition("=")
        if key.strip() != "hourly_rate" or not value.strip():
            raise UserError(f"--set {setting}: the one setting is hourly_rate=NUMBER")
        try:
            rate = float(value)
        except ValueError:
            raise UserError(f"--set {setting}: hourly_rate must be a number") from None
        if not math.isfinite(rate):  # float() reads nan and inf: a cost of nan or inf
            raise UserError(f"--set {setting}: hourly_rate must be a finite number")
        if rate < 0:
            raise UserError(f"--set {setting}: hourly_rate must not be negative")
    return rate


def _from_a_platform(path: Path | None) -> bool:
    """Whether a label source other than the long reader claims the file (an MTurk batch)."""
    from annotate.formats.label_sources import registry

    return (
        path is not None
        and path.exists()
        and registry.detect(path).entry.name != (registry.FALLBACK)
    )


def _render(result, fmt: ReportFormat, intervals: str, indent: int | None = None) -> None:
    """Write a StudyReport or BenchmarkReport in `fmt` (JSON compact unless `indent`)."""
    from annotate.report.model.schema import BenchmarkReport

    if fmt is ReportFormat.json:
        print_json(result.to_json(), indent=indent)
    elif fmt is ReportFormat.html:
        from annotate.report.render.html import render_html

        sys.stdout.write(terminal_safe(render_html(result)))
    elif fmt is ReportFormat.latex:
        from annotate.report.render.latex import render_latex

        sys.stdout.write(terminal_safe(render_latex(result, intervals=intervals)))
    elif isinstance(result, BenchmarkReport):
        from annotate.report.render.benchmark import (
            render_benchmark_markdown,
            render_benchmark_table,
        )

        if fmt is ReportFormat.markdown:
            sys.stdout.write(terminal_safe(render_benchmark_markdown(result)) + "\n")
        else:
            render_benchmark_table(result, console())
    else:
        from annotate.report.render.markdown import render_markdown
        from annotate.report.render.table import render_table

        if fmt is ReportFormat.markdown:
            sys.stdout.write(terminal_safe(render_markdown(result)) + "\n")
        else:
            render_table(result, console())


@app.command()
def agreement(
    ctx: typer.Context,
    file: Path | None = typer.Argument(
        None,
        help="CSV, TSV or JSON lines with item, annotator, label, or any file import-labels "
        "reads (an MTurk batch, a Qualtrics export, Potato, Label Studio)",
    ),
    level: Level = typer.Option(
        Level.nominal, "--level", help="nominal, ordinal, interval or ratio"
    ),
    fmt: AgreementFormat = typer.Option(AgreementFormat.table, "--format", help="table or json"),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=0, help="Bootstrap replicates for the intervals (0: none)"
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Seed of the bootstrap (default: the study's seed with --study, as its report; "
        "else 0)",
    ),
    label_format: str | None = typer.Option(
        None,
        "--label-format",
        help="The file's format, as import-labels --format (default: detect)",
    ),
    mapping: list[str] = typer.Option(
        [], "--map", help="KEY=COLUMN, as import-labels --map (item, label, annotator, ...)"
    ),
    skip_when: list[str] = typer.Option(
        [], "--skip-when", help="COLUMN[=VALUE]: leave those answers out, as import-labels does"
    ),
    study: str | None = typer.Option(
        None, "--study", help="Instead of FILE: a study's test labels (see --raw)"
    ),
    raw: bool = typer.Option(
        False,
        "--raw",
        help="With --study: the answers as the imported file gave them (a slider's number, "
        "for --level interval), not the labels they were mapped to",
    ),
) -> None:
    """Agreement statistics (Krippendorff's α, Fleiss' κ, pairwise Cohen's κ, per-item
    histogram) of a label file, no study needed, missing labels allowed: a long file, or any
    file import-labels reads, on the answers as the file gives them. With --study: a study's
    test labels (--raw: an imported study's answers as given, e.g. interval α on a slider)."""
    from annotate.errors import UserError
    from annotate.formats.label_sources.options import parse_map, parse_skip_when
    from annotate.report.data.longformat import read_label_source, read_long_labels
    from annotate.report.render.table import render_agreement_table
    from annotate.report.stats.agreement_summary import agreement_report, study_agreement_report

    if (file is None) == (study is None):
        raise UserError("give a label FILE or --study NAME (one of them)")
    if raw and study is None:
        raise UserError("--raw reads a study's answers as imported: pass --study NAME")
    if file is not None and not file.exists() and not file.suffix and len(file.parts) == 1:
        # `agreement rte-2026`: a study's name where a file goes, said "no such file" alone
        raise UserError(f"{file}: no such file; a study's labels are read with --study {file}")
    if study is not None:
        # The engine draws as the study's report does (its units, its seed by default).
        engine = options(ctx).workspace().engine
        result = study_agreement_report(
            engine, study, level.value, bootstrap=bootstrap, seed=seed, raw=raw
        )
    else:
        if label_format or mapping or skip_when or _from_a_platform(file):
            labels = read_label_source(
                file, label_format, parse_map(mapping), parse_skip_when(skip_when)
            )
        else:
            labels = read_long_labels(file)
        result = agreement_report(labels, level.value, bootstrap=bootstrap, seed=seed)
    if fmt is AgreementFormat.json:
        print_json(result.to_json())
    else:
        render_agreement_table(result, console())
