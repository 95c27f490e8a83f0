"""What the import tells a source besides the path: `--map`, the task's field names and
`--keep-rejected`, parsed once."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotate.errors import UserError

MAP_KEYS = ("item", "annotator", "label", "seconds", "answered_at", "shown_at", "comment", "gold")
"""`--map` keys every format understands; any other key names a task field (item creation)."""

ID_FIELDS = ("id", "idx", "item", "item_id", "itemid", "source_id")
"""Where an item's id is, when `--map item=…` does not say (MTurk Input.*, Label Studio data)."""


@dataclass(frozen=True)
class ReadOptions:
    """Everything a source's `read` may use besides the path. New options get defaults, so a
    third-party source written today keeps working."""

    mapping: dict[str, str] = field(default_factory=dict)
    """`--map KEY=COLUMN`: MAP_KEYS, or a task field's name."""
    field_names: list[str] = field(default_factory=list)
    """The task's item fields (premise, hypothesis, …): a file may carry the items' text."""
    keep_rejected: bool = False
    """MTurk's `--keep-rejected`: keep the assignments marked Rejected."""


def parse_map(text: list[str] | str | None) -> dict[str, str]:
    """`--map item=idx,annotator=worker` (repeatable, comma-separated) -> {key: column}."""
    parts: list[str] = []
    for chunk in [text] if isinstance(text, str) else list(text or []):
        parts += [p for p in chunk.split(",") if p.strip()]
    out: dict[str, str] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UserError(f"--map {part!r}: expected KEY=COLUMN, e.g. item=idx")
        out[key.strip()] = value.strip()
    return out
