"""Individual annotators: each one's scores on their own items, and the spread."""

from __future__ import annotations

from annotate.protocol.timing import MEDIAN_SECONDS_HEADER
from annotate.report.cells import (
    METRIC_NAMES,
    Section,
    pct,
    seconds,
    share,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single


def _annotator_section(r: StudyReport) -> Section:
    metrics = r.metrics
    headers = ["Annotator", "n", *(METRIC_NAMES.get(m, m) for m in metrics)]
    if len(metrics) > 1:
        headers.append("Task score")
    votes = r.kind != "regression"  # ratings are averaged, not voted on
    headers += ["Agrees with majority"] * votes + [MEDIAN_SECONDS_HEADER]
    rows = []
    for a in r.annotators:
        name = a.name + (" (synthetic)" if a.synthetic else "")
        row = [name, str(a.n), *(pct(a.scores.get(m)) for m in metrics)]
        if len(metrics) > 1:
            row.append(pct(a.task_score))
        row += [share(a.agrees_with_majority)] * votes + [seconds(a.seconds_per_item)]
        rows.append(row)
    spread = r.individual.task_score
    for label in ("mean", "median", "sd", "min", "max"):
        row = [label, "", *(pct(getattr(r.individual.metrics[m], label)) for m in metrics)]
        if len(metrics) > 1:
            row.append(pct(getattr(spread, label)))
        row += [""] * votes + [""]
        rows.append(row)
    return "Individual annotators (x100; own items)", headers, rows


SECTION = ReportSection("annotators", single(_annotator_section))
