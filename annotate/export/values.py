"""Label values as a task's data files write them, and the order ids are listed in: plain
Python, so the streamed label export imports no numerical library."""

from __future__ import annotations

from typing import Any

from annotate.specs import TaskSpec


def source_value(spec: TaskSpec, value: Any) -> Any:
    """A label value as the task's data files write it: JSON booleans for BoolQ/WiC/WSC and
    ints for COPA/MultiRC in the SuperGLUE JSON files, text in TSV/CSV files, floats for
    ratings, entity text for ReCoRD."""
    if value is None:
        return None
    if spec.kind == "regression":
        return float(value)
    if spec.kind == "entity_choice":
        return value if isinstance(value, str) else [str(v) for v in value]
    text = str(value)
    if spec.source.reader in {"jsonl", "multirc"}:
        values = set(spec.label_values())
        if values <= {"true", "false"}:
            return text == "true"
        if all(v.isdigit() for v in values) and text.isdigit():
            return int(text)
    return text


def numeric_key(text: str) -> tuple[int, int, str]:
    """Sorts ids numerically where they are whole numbers ("2" before "10"), others after."""
    return (0, int(text), "") if text.lstrip("-").isdigit() else (1, 0, text)
