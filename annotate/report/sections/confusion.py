"""The confusion matrix of the human answers against gold."""

from __future__ import annotations

from annotate.report.cells import (
    Section,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single


def _confusion_section(r: StudyReport) -> Section | None:
    cm = r.confusion_matrix
    if not cm:
        return None
    headers = ["gold \\ human", *cm.predicted]
    rows = [[g, *(str(v) for v in row)] for g, row in zip(cm.gold, cm.matrix, strict=True)]
    return f"Confusion matrix (per {cm.unit})", headers, rows


SECTION = ReportSection("confusion_matrix", single(_confusion_section))
