"""The majority-of-k curve: the score of committees of k annotators drawn at random."""

from __future__ import annotations

from annotate.report.cells import (
    Section,
    pct,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single


def _curve_section(r: StudyReport) -> Section | None:
    if not r.majority_of_k:
        return None
    rows = [
        [
            str(c.k),
            str(c.n_items),
            str(c.draws),
            pct(c.task_score),
            "" if c.task_score_sd is None else f"± {c.task_score_sd * 100:.1f}",
        ]
        for c in r.majority_of_k
    ]
    return (
        "Majority of k (labels of each item drawn at random)",
        ["k", "Items", "Draws", "Score", "SD over draws"],
        rows,
    )


SECTION = ReportSection("majority_of_k", single(_curve_section))
