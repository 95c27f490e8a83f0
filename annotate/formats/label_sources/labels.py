"""What a source reads a file into: one `RawLabel` per (item, worker) answer, with the line it
came from, in a `LabelFile` that says how the labels were collected.

Nothing here touches the store: `annotate.formats.label_import` checks every label and writes
the study, all or nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any


@dataclass(slots=True)
class RawLabel:
    line: int
    item: str
    """The item's id as the file writes it (matched to Item.source_id)."""
    worker: str
    """The platform's worker id (WorkerId, ResponseId or PROLIFIC_PID, Potato user, LS user)."""
    value: Any
    """The answer as the file writes it (text or number); `--values` maps it."""
    fields: dict[str, Any] = field(default_factory=dict)
    """What the file says about the item (MTurk Input.*, LS data, long-file columns)."""
    shown_at: datetime | None = None
    answered_at: datetime | None = None
    comment: str | None = None
    gold: Any = None
    source: Path | None = None
    """The file the line is in, when the import read a folder (Potato: one file per user)."""
    side: dict[str, str | None] = field(default_factory=dict)
    """`ReadOptions.side_columns`' cells for this answer (None: empty)."""
    flag: bool = False
    """The worker said something about the item (`--map flag=COLUMN`): stored as a flag."""


@dataclass
class LabelFile:
    path: Path
    format: str
    """The name of the source that read it (`--format`); the registry sets it."""
    labels: list[RawLabel]
    n_assignments: int
    """Assignments (MTurk), responses (Qualtrics), annotations (Label Studio), files' users
    (Potato) or distinct (worker, file) in a long file: what the labels came in."""
    n_excluded: dict[str, int] = field(default_factory=dict)
    """Why answers were left out, and how many: rejected assignments, empty slots, …"""
    max_assignments: dict[str, int] = field(default_factory=dict)
    """MTurk: HITId -> MaxAssignments (checked against k by the import)."""
    hit_of_item: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    has_times: bool = True
    dates: bool = True
    """False when the file gives durations only: the labels are laid end to end per worker
    from 1970-01-01, so only their seconds mean anything."""
    platform: str = ""
    """Whose ids the worker ids are: mturk, prolific (a survey's PROLIFIC_PID), or the tool
    (qualtrics, potato, labelstudio, long): a worker keeps one pseudonym per platform. Empty:
    the source's platform (by default its name)."""
    description: str = ""
    """What the file is, for "collected outside annotate: MTurk batch, …". Empty: the source's."""
    unit: str = ""
    """What `n_assignments` counts (assignment, response, annotator). Empty: the source's."""
    time_note: str | None = None
    """What the datasheet says about how times per answer were made, when the file has dates."""

    def where(self, label: RawLabel) -> Path:
        """The file a label's line number belongs to."""
        return label.source or self.path
