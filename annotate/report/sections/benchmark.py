"""The benchmark score over the store's studies (shown from two tasks on)."""

from __future__ import annotations

from annotate.report.cells import (
    Section,
    pct,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single


def _benchmark_section(r: StudyReport) -> Section | None:
    b = r.benchmark
    if not b or b.n_tasks_covered < 2:
        return None
    rows = [
        [t.task, t.study, "this study: " + pct(t.task_score) if t.study == r.study else ""]
        for t in b.tasks
    ]
    label = "partial" if b.partial else "complete"
    rows.append([f"{b.benchmark}: {label}, {b.n_tasks_covered} of {b.n_tasks} tasks", "", ""])
    if b.note:
        rows.append([b.note, "", ""])
    return f"Benchmark: {b.benchmark}", ["Task", "Study", "Task score"], rows


SECTION = ReportSection("benchmark", single(_benchmark_section))
