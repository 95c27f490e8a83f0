"""The report's first table: the study, task, protocol, sample, labels and bootstrap."""

from __future__ import annotations

from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection
from annotate.wording import count_of


def _sample_rows(r: StudyReport) -> list[list[str]]:
    s = r.sample
    per = ", ".join(f"{n} labels: {c}" for n, c in s.labels_per_item.items())
    b = r.bootstrap
    return [
        ["Study", f"{r.study} ({r.state})"],
        ["Task", f"{r.task}: {r.task_title}"],
        [
            "Protocol",
            f"{r.protocol.get('name', '')}; tie rule {r.protocol.get('tie_rule')}; "
            f"k = {s.annotators_per_item}; seed {r.protocol.get('seed')}",
        ],
        [
            "Sample",
            f"{count_of(s.n_sample, 'test item')}; {s.n_items_labelled} labelled, "
            f"{s.n_items_complete} complete, {s.n_items_scored} scored",
        ],
        ["Labels", f"{s.n_labels} from {count_of(r.n_annotators, 'annotator')} ({per})"],
        ["Bootstrap", f"{b.replicates} replicates, seed {b.seed}" if b.replicates else "off"],
    ]


SECTION = ReportSection("study", lambda r: [("Study", ["", ""], _sample_rows(r))])
