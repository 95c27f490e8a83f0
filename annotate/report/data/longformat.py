"""Read labels in long format, one (item, annotator, label) per row, from CSV, TSV or JSON lines:
the input of `annotate agreement`, which needs no study.

Columns (case-insensitive): `item` or `item_id`; `annotator` (or `annotator_id`, `coder`,
`rater`); `label` or `value`. An empty label (or `.`, `NA`, `null`) is a missing label and is
skipped; a row shorter than the header has its last cells empty (MTurk leaves them out). A
bad file is a DataFileError naming the file, the line and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annotate.errors import DataFileError
from annotate.formats.label_sources.records import read_records

ITEM_COLUMNS = ("item", "item_id")
ANNOTATOR_COLUMNS = ("annotator", "annotator_id", "coder", "rater")
LABEL_COLUMNS = ("label", "value")
MISSING = {"", ".", "na", "n/a", "nan", "null", "none"}


@dataclass
class LongLabels:
    path: str
    item: np.ndarray
    """Item names (text), one per label."""
    annotator: np.ndarray
    label: np.ndarray
    """Labels as text."""
    line: np.ndarray
    """1-based line of each label in the file."""
    n_missing: int = 0


def _pick(columns: list[str], wanted: tuple[str, ...], path: Path, what: str) -> str:
    lowered = {c.strip().lower(): c for c in columns}
    for name in wanted:
        if name in lowered:
            return lowered[name]
    raise DataFileError(
        path,
        1,
        f"no {what} column: expected one of {', '.join(wanted)}; "
        f"found {', '.join(columns) or 'none'}",
    )


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def read_long_labels(path: str | Path) -> LongLabels:
    path = Path(path)
    if not path.is_file():
        raise DataFileError(path, None, "no such file")
    columns, rows = read_records(path)
    if not rows:
        raise DataFileError(path, None, "no labels in the file")
    item_col = _pick(columns, ITEM_COLUMNS, path, "item")
    annotator_col = _pick(columns, ANNOTATOR_COLUMNS, path, "annotator")
    label_col = _pick(columns, LABEL_COLUMNS, path, "label")
    items, annotators, labels, lines = [], [], [], []
    seen: dict[tuple[str, str], int] = {}
    missing = 0
    for number, row in rows:
        item = _text(row.get(item_col))
        annotator = _text(row.get(annotator_col))
        if not item:
            raise DataFileError(path, number, f"missing {item_col}")
        if not annotator:
            raise DataFileError(path, number, f"missing {annotator_col}")
        label = _text(row.get(label_col))
        if label is None or label.lower() in MISSING:
            missing += 1
            continue
        key = (item, annotator)
        if key in seen:
            raise DataFileError(
                path,
                number,
                f"annotator {annotator!r} labels item {item!r} twice (first on line {seen[key]})",
            )
        seen[key] = number
        items.append(item)
        annotators.append(annotator)
        labels.append(label)
        lines.append(number)
    if not labels:
        raise DataFileError(path, None, "every label in the file is missing")
    return LongLabels(
        path=str(path),
        item=np.asarray(items, dtype=object),
        annotator=np.asarray(annotators, dtype=object),
        label=np.asarray(labels, dtype=object),
        line=np.asarray(lines, dtype=np.int64),
        n_missing=missing,
    )


def numeric_labels(labels: LongLabels) -> np.ndarray:
    """The labels as numbers, or a DataFileError at the first one that is not."""
    numbers = pd.to_numeric(pd.Series(labels.label, dtype=object), errors="coerce").to_numpy(
        dtype=float
    )
    bad = np.flatnonzero(~np.isfinite(numbers))
    if len(bad):
        first = bad[0]
        raise DataFileError(
            labels.path,
            int(labels.line[first]),
            f"label {labels.label[first]!r} is not a number "
            "(ordinal, interval and ratio levels need numbers)",
        )
    return numbers
