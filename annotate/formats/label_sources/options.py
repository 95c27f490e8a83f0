"""What the import tells a source besides the path: `--map`, the task's field names and
`--keep-rejected`, parsed once."""

from __future__ import annotations

from dataclasses import dataclass, field

from annotate.errors import UserError

MAP_KEYS = (
    "item",
    "annotator",
    "label",
    "seconds",
    "answered_at",
    "shown_at",
    "comment",
    "gold",
    "flag",
)
"""`--map` keys of the import; any other key names a task field (item creation). Each source
says which of them it reads (`LabelSource.map_keys`); a key it cannot use is refused by name."""

FALSE_CELLS = {"false", "0", "off", "no", "unchecked"}
"""Cells of a --skip-when or flag column that mean "not ticked" (besides the missing ones)."""

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
    side_columns: tuple[str, ...] = ()
    """Columns read beside each answer into `RawLabel.side` (`--skip-when`, `--map flag=`):
    for MTurk the Answer name (`na` for Answer.na0, Answer.na1, ...), for a long file a column.
    Only sources with `reads_side_columns` fill them."""


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
        key = key.strip()
        if key in out:
            raise UserError(
                f"--map {key} is given twice ({key}={out[key]} and {key}={value.strip()}): keep one"
            )
        out[key] = value.strip()
    return out


def check_map_keys(
    mapping: dict[str, str], fmt: str, allowed: tuple[str, ...] | None, fields: list[str]
) -> None:
    """Refuse a --map key the format cannot use, by name (never ignored). `allowed` None: the
    source reads any key (a third party's that does not say)."""
    if allowed is None:
        return
    usable = [*allowed, *fields]
    for key in mapping:
        if key not in usable:
            why = (
                f"the {fmt} format cannot use {key}"
                if key in MAP_KEYS
                else f"{key!r} is neither a --map key nor a field of the task"
            )
            raise UserError(
                f"--map {key}={mapping[key]}: {why}; it reads {', '.join(usable) or 'no keys'}"
            )


def parse_skip_when(texts: list[str] | None) -> list[tuple[str, str | None]]:
    """`--skip-when COLUMN[=VALUE]` (repeatable) -> [(column, value or None)]."""
    out: list[tuple[str, str | None]] = []
    for text in texts or []:
        column, sep, value = (part.strip() for part in text.partition("="))
        if not column or (sep and not value):
            raise UserError(f"--skip-when {text!r}: expected COLUMN or COLUMN=VALUE, e.g. na")
        if any(c == column for c, _ in out):
            raise UserError(f"--skip-when {column} is given twice: keep one")
        out.append((column, value if sep else None))
    return out


def skipped(side: dict[str, str | None], skip_when: list[tuple[str, str | None]]) -> bool:
    """Whether --skip-when leaves out an answer with these side cells."""
    return any(ticked(side.get(column), value) for column, value in skip_when)


def ticked(cell: str | None, wanted: str | None = None) -> bool:
    """Whether a --skip-when / flag cell is set: equal to `wanted` (case-insensitive) when
    given, else present and not a "no" (false, 0, off, no)."""
    if cell is None:
        return False
    if wanted is not None:
        return cell.strip().lower() == wanted.lower()
    return cell.strip().lower() not in FALSE_CELLS
