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
from annotate.cli.output import console, print_json
from annotate.text import terminal_safe


class ReportFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


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
    study: str = typer.Argument(..., help="Name of the study"),
    fmt: ReportFormat = typer.Option(
        ReportFormat.table, "--format", help="table, json or markdown"
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
        help="A model's predictions in the leaderboard submission format, scored on the same "
        "items (repeatable)",
    ),
) -> None:
    """The human ceiling of a study: aggregated score with intervals, individual annotators,
    agreement, ties, diagnostics per phenomenon and items whose gold looks wrong."""
    from annotate.report.build import study_report
    from annotate.report.render import render_markdown, render_table

    ws = options(ctx).workspace()
    result = study_report(ws.engine, study, bootstrap=bootstrap, seed=seed, model_files=model)
    if fmt is ReportFormat.json:
        print_json(result.to_json())
    elif fmt is ReportFormat.markdown:
        sys.stdout.write(terminal_safe(render_markdown(result)) + "\n")
    else:
        render_table(result, console())


@app.command()
def agreement(
    file: Path = typer.Argument(..., help="CSV, TSV or JSON lines with item, annotator, label"),
    level: Level = typer.Option(
        Level.nominal, "--level", help="nominal, ordinal, interval or ratio"
    ),
    fmt: AgreementFormat = typer.Option(AgreementFormat.table, "--format", help="table or json"),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", min=0, help="Bootstrap replicates for the intervals (0: none)"
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap"),
) -> None:
    """Agreement statistics (Krippendorff's α, Fleiss' κ, pairwise Cohen's κ, per-item
    histogram) of a long-format label file; no study needed, missing labels allowed."""
    from annotate.report.agreement_summary import agreement_report
    from annotate.report.longformat import read_long_labels
    from annotate.report.render import render_agreement_table

    labels = read_long_labels(file)
    result = agreement_report(labels, level.value, bootstrap=bootstrap, seed=seed)
    if fmt is AgreementFormat.json:
        print_json(result.to_json())
    else:
        render_agreement_table(result, console())
