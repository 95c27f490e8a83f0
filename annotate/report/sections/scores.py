"""The human aggregate's score per metric, with its bootstrap interval and, where the report
gives them (scoring.intervals.accuracy_wilson: accuracy over independent items), Wilson's."""

from __future__ import annotations

from annotate.report.cells import (
    METRIC_NAMES,
    Section,
    interval,
    pct,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection


def _scores_section(r: StudyReport) -> Section:
    rows = []
    for metric in r.metrics:
        s = r.scores[metric]
        rows.append(
            [
                METRIC_NAMES.get(metric, metric),
                pct(s.value),
                interval(s.ci_low, s.ci_high),
                interval(s.wilson_low, s.wilson_high),
            ]
        )
    t = r.task_score
    rows.append(["Task score (mean)", pct(t.value), interval(t.ci_low, t.ci_high), ""])
    headers = ["Metric", "Value", "95% CI (bootstrap)", "95% CI (Wilson)"]
    if all(r.scores[m].wilson_low is None for m in r.metrics):
        headers, rows = headers[:3], [row[:3] for row in rows]
    return "Scores of the human aggregate (x100)", headers, rows


SECTION = ReportSection("scores", lambda r: [_scores_section(r)] if r.has_gold else [])
