"""What `import-labels` checks and keeps of each answer before it writes: the import's options
(the key that tells a repeat of an import from another way of reading the file), text that a
store cannot hold (a NUL, a lone surrogate), `--skip-when` and `--map flag=`, and the answer as
the file gave it."""

from __future__ import annotations

import re
from typing import Any

from annotate import specs
from annotate.errors import DataFileError
from annotate.formats.label_sources.labels import LabelFile
from annotate.formats.label_sources.options import skipped as left_out
from annotate.formats.label_sources.options import ticked


def import_options(
    source: str,
    task: str | None,
    dataset_id: int | None,
    mapping: dict[str, str],
    values: str | None,
    k: int | None,
    keep_rejected: bool,
    tie_rule: str | None,
    skip_when: list[tuple[str, str | None]],
) -> dict[str, Any]:
    """What makes two imports of one file the same study (JSON, kept in the record)."""
    return {
        "format": source,
        "task": specs.load_task(task).name if task else None,
        "dataset": dataset_id,
        "map": dict(sorted(mapping.items())),
        "values": values,
        "k": k,
        "keep_rejected": keep_rejected,
        "tie_rule": tie_rule,
        "skip_when": [[c, v] for c, v in skip_when],
    }


NUMBER = re.compile(r"-?\d{1,15}(\.\d{1,15})?")


def as_given(value: Any) -> Any:
    """The answer as the file gave it, kept beside its label: a number when it is written as
    one (a slider's 67), else its text."""
    if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
        text = value.strip()
        return float(text) if "." in text else int(text)
    return value


def bad_text(value: Any) -> str | None:
    """Why a text the file gives cannot be stored: a NUL, or a lone surrogate (not Unicode)."""
    if isinstance(value, str):
        if "\x00" in value:
            return "a NUL character"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate (not valid Unicode)"
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next((why for v in value if (why := bad_text(v)) is not None), None)
    return None


def check_text(file: LabelFile) -> None:
    """Every text the import stores is storable: a DataFileError names the first that is not."""
    for label in file.labels:
        for what, value in (
            ("worker id", label.worker),
            ("item id", label.item),
            ("answer", label.value),
            ("comment", label.comment),
            ("gold", label.gold),
            ("item's fields", label.fields),
            ("answer's columns", label.side),
        ):
            why = bad_text(value)
            if why is not None:
                raise DataFileError(file.where(label), label.line, f"the {what} has {why}")


def skip_and_flag(
    file: LabelFile, skip_when: list[tuple[str, str | None]], flag: str | None
) -> tuple[int, int]:
    """Leave out the answers --skip-when names and flag those --map flag= names (the column's
    value becomes the comment): (left out, flagged)."""
    kept, skipped, flagged = [], 0, 0
    for label in file.labels:
        if left_out(label.side, skip_when):
            skipped += 1
            continue
        cell = label.side.get(flag) if flag else None
        if flag and ticked(cell):
            label.flag = True
            label.comment = cell if not label.comment else f"{cell}; {label.comment}"
            flagged += 1
        kept.append(label)
    if not kept:
        raise DataFileError(file.path, None, "--skip-when leaves no answers")
    file.labels = kept
    return skipped, flagged


def skip_text(skip_when: list[tuple[str, str | None]]) -> str:
    return ", ".join(c if v is None else f"{c}={v}" for c, v in skip_when)
