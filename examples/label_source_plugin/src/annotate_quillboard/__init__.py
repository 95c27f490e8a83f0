"""Quillboard exports as an annotate label source.

A Quillboard export (Quillboard is a made-up review board) is a text file: a first line
`#quillboard v1`, then one card a reviewer answered per line, `card | reviewer | verdict |
answered at | seconds`. Lines starting with `#` are comments."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from annotate.formats.label_sources import (
    DataFileError,
    LabelFile,
    LabelSource,
    Peek,
    RawLabel,
    ReadOptions,
    parse_time,
    read_text,
    seconds,
)

MAGIC = "#quillboard"
FIELDS = ("card", "reviewer", "verdict", "answered at", "seconds")


class QuillboardSource(LabelSource):
    name = "quillboard"  # --format quillboard; the same as the entry point's name
    description = "Quillboard export"  # "collected outside annotate: Quillboard export, …"
    unit = "reviewer"  # what n_assignments counts

    def claims(self, peek: Peek) -> bool:
        return peek.first_line.startswith(MAGIC)

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        labels = []
        for number, line in enumerate(read_text(path).splitlines(), start=1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = [cell.strip() for cell in line.split("|")]
            if len(cells) != len(FIELDS):
                expected = " | ".join(FIELDS)
                raise DataFileError(path, number, f"expected {expected}, found {line!r}")
            card, reviewer, verdict, answered, spent = cells
            label = RawLabel(number, item=card, worker=reviewer, value=verdict)
            label.answered_at = parse_time(answered, path, number, "answered at")
            took = seconds(spent, path, number, "seconds") or 0.0
            label.shown_at = label.answered_at - timedelta(seconds=took)
            labels.append(label)
        if not labels:
            raise DataFileError(path, None, "no answered cards in the file")
        reviewers = {label.worker for label in labels}
        return LabelFile(path, self.name, labels, n_assignments=len(reviewers))
