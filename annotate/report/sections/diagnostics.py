"""Diagnostics by phenomenon (GLUE's AX): the human and model scores per tag."""

from __future__ import annotations

from annotate.report.cells import (
    METRIC_NAMES,
    Section,
    interval,
)
from annotate.report.model.schema import (
    PhenomenonScore,
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single


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
            e.text(2),
            interval(e.ci_low, e.ci_high, 1, 2),
            *(per_model[m].text(2) for m in models),
        ]

    rows = [row("All tagged items", "", d.all_tagged)]
    for cat, e in d.coarse.items():
        rows.append(row(cat, "(any)", e))
        for tag, f in d.fine.get(cat, {}).items():
            rows.append(row("", tag, f))
    return f"Diagnostics by phenomenon ({metric}). {d.note}", headers, rows


SECTION = ReportSection("diagnostics", single(_diagnostics_section))
