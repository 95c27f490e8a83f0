"""Diagnostics by phenomenon (GLUE's AX): the human and model scores per tag."""

from __future__ import annotations

from annotate.report.cells import (
    METRIC_NAMES,
    Section,
    interval,
)
from annotate.report.model.schema import (
    Diagnostics,
    PhenomenonScore,
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single

ALL_TAGGED = "All tagged items"
"""The first row's category: the score over every tagged item."""
ANY_TAG = "(any)"
"""A category's own row, in the phenomenon column: any of its tags."""
DIGITS = 2
"""Decimals of a per-phenomenon score and its interval, in the report and in `annotate score`."""


def phenomenon_rows(d: Diagnostics) -> list[tuple[str, str, PhenomenonScore]]:
    """(category, phenomenon, score) in the order every table of them shows: all tagged items,
    then each category followed by its tags."""
    rows = [(ALL_TAGGED, "", d.all_tagged)]
    for cat, e in d.coarse.items():
        rows.append((cat, ANY_TAG, e))
        rows += [("", tag, f) for tag, f in d.fine.get(cat, {}).items()]
    return rows


def phenomenon_cells(e: PhenomenonScore) -> tuple[str, str]:
    """A phenomenon's score and its 95% interval as every table of them writes them."""
    return e.text(DIGITS), interval(e.ci_low, e.ci_high, 1, DIGITS)


def _diagnostics_section(r: StudyReport) -> Section | None:
    d = r.diagnostics
    if not d:
        return None
    models = [m.name for m in r.models]
    metric = METRIC_NAMES.get(d.metric, d.metric)
    headers = ["Category", "Phenomenon", "n", f"Human {metric}", "95% CI", *models]

    def row(cat: str, tag: str, e: PhenomenonScore) -> list[str]:
        per_model = e.models or {}
        return [
            cat,
            tag,
            str(e.n),
            *phenomenon_cells(e),
            *(per_model[m].text(DIGITS) for m in models),
        ]

    rows = [row(cat, tag, e) for cat, tag, e in phenomenon_rows(d)]
    return f"Diagnostics by phenomenon ({metric}). {d.note}", headers, rows


SECTION = ReportSection("diagnostics", single(_diagnostics_section))
