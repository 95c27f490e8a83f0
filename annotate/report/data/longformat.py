"""Read labels in long format, one (item, annotator, label) per row, from CSV, TSV or JSON lines:
the input of `annotate agreement`, which needs no study.

Columns (case-insensitive): `item` or `item_id`; `annotator` (or `annotator_id`, `coder`,
`rater`); `label` or `value`. An empty label (or `.`, `NA`, `null`) is a missing label and is
skipped; a row shorter than the header has its last cells empty (MTurk leaves them out). A
bad file is a DataFileError naming the file, the line and the reason. A file's annotators may
be platform ids (PROLIFIC_PID), personal data: they are read as pseudonyms (`pseudonymous`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from annotate.errors import DataFileError, UserError
from annotate.formats.label_sources.records import read_records

ITEM_COLUMNS = ("item", "item_id")
ANNOTATOR_COLUMNS = ("annotator", "annotator_id", "coder", "rater")
LABEL_COLUMNS = ("label", "value")
PHASE_COLUMN = "phase"
"""Written by `annotate export --format labels`: training and test labels in one file."""
MISSING = {"", ".", "na", "n/a", "nan", "null", "none"}

PSEUDONYMS = "w01, w02, … in the order the file first names them"
"""How a file's annotators are named in what `annotate agreement FILE` prints (its legend)."""


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
    pseudonymous: bool = False
    """The annotators are the file's as pseudonyms (PSEUDONYMS), not as the file names them."""


def pseudonyms(annotators: list[str]) -> np.ndarray:
    """Each annotator as a pseudonym, w01, w02, ... in the order the list first names them
    (as a first import-labels of the file names them): a file's ids may be platform ids."""
    order = list(dict.fromkeys(annotators))
    width = max(2, len(str(len(order))))
    pseudonym = {who: f"w{n:0{width}d}" for n, who in enumerate(order, 1)}
    return np.asarray([pseudonym[who] for who in annotators], dtype=object)


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


def _phases_hint(column: str | None, first: str | None, this: str | None) -> str:
    """Why one id is labelled twice in `annotate export --phase all`'s file: a training item
    and a test item of different datasets may share an id, and the file holds both phases."""
    if column is None or not first or not this or first == this:
        return ""
    other = this if first == "test" else first  # keep the test labels where there are some
    return (
        f": the file holds {first} and {this} labels (its {column} column); read one phase "
        f"with --skip-when {column}={other}, or export --phase test"
    )


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
    phase_col = next((c for c in columns if c.strip().lower() == PHASE_COLUMN), None)
    items, annotators, labels, lines = [], [], [], []
    seen: dict[tuple[str, str], tuple[int, str | None]] = {}
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
        phase = _text(row.get(phase_col)) if phase_col else None
        if key in seen:
            first, first_phase = seen[key]
            raise DataFileError(
                path,
                number,
                # The line names the annotator: a platform id never goes in a message.
                f"the annotator of this line labels item {item!r} twice "
                f"(first on line {first}){_phases_hint(phase_col, first_phase, phase)}",
            )
        seen[key] = (number, phase)
        items.append(item)
        annotators.append(annotator)
        labels.append(label)
        lines.append(number)
    if not labels:
        raise DataFileError(path, None, "every label in the file is missing")
    return LongLabels(
        path=str(path),
        item=np.asarray(items, dtype=object),
        annotator=pseudonyms(annotators),
        label=np.asarray(labels, dtype=object),
        line=np.asarray(lines, dtype=np.int64),
        n_missing=missing,
        pseudonymous=True,
    )


def read_label_source(
    path: str | Path,
    fmt: str | None,
    mapping: dict[str, str],
    skip_when: list[tuple[str, str | None]],
    keep_rejected: bool = False,
) -> LongLabels:
    """The answers of any file `import-labels` reads (an MTurk batch, a Qualtrics export, …),
    as the file wrote them (a slider's number, the answer's text), one per worker and item;
    `--skip-when` leaves answers out as the import does; the workers are pseudonyms (w01, …).
    A worker answering an item twice is a DataFileError naming both lines."""
    from annotate.formats.label_sources import registry
    from annotate.formats.label_sources.options import ReadOptions, check_map_keys, skipped

    path = Path(path)
    if not path.exists():
        raise DataFileError(path, None, "no such file")
    source = registry.choose(path, fmt)
    check_map_keys(mapping, source.source.name, source.source.map_keys, [])
    side = tuple(c for c, _ in skip_when)
    if side and not source.source.reads_side_columns:
        raise UserError(
            f"--skip-when: the {source.source.name} format has no column beside each answer"
        )
    file = source.read(path, ReadOptions(dict(mapping), [], keep_rejected, side))
    items, workers, labels, lines = [], [], [], []
    seen: dict[tuple[str, str], int] = {}
    left_out = 0
    for label in file.labels:
        if skipped(label.side, skip_when):
            left_out += 1
            continue
        key = (label.item, label.worker)
        if key in seen:
            raise DataFileError(
                file.where(label),
                label.line,
                # The line names the worker: their platform id never goes in a message.
                f"the worker of this line answers item {label.item!r} twice "
                f"(first on line {seen[key]})",
            )
        seen[key] = label.line
        items.append(label.item)
        workers.append(label.worker)
        labels.append(str(label.value))
        lines.append(label.line)
    if not labels:
        raise DataFileError(path, None, "no answers left in the file")
    # The file's worker ids are platform ids (WorkerId, PROLIFIC_PID), which no report names.
    return LongLabels(
        path=str(path),
        item=np.asarray(items, dtype=object),
        annotator=pseudonyms(workers),
        label=np.asarray(labels, dtype=object),
        line=np.asarray(lines, dtype=np.int64),
        n_missing=left_out,
        pseudonymous=True,
    )


def study_long_labels(engine: Any, study: str, *, raw: bool = False) -> LongLabels:
    """A study's test labels, one per (item, annotator): the stored labels, or with `raw` the
    answers as an imported file gave them (label.raw; a study run here has none). MultiRC's
    answers are one unit each (`question/answer`, as the export names them), each judged true
    or false, as the report's agreement takes them."""
    from sqlalchemy import select

    from annotate.store.models import Annotator, Item, Label
    from annotate.store.queries import find_study

    found = find_study(engine, study)
    column = Label.raw if raw else Label.value
    with engine.connect() as conn:
        rows = conn.execute(
            select(Item.source_id, Annotator.name, column, Label.id)
            .join(Item, Item.id == Label.item_id)
            .join(Annotator, Annotator.id == Label.annotator_id)
            .where(Label.study_id == found.id, Label.phase == "test")
            .order_by(Label.id)
        ).all()
    kept = []
    for source_id, name, value, label_id in rows:
        if isinstance(value, dict):  # MultiRC: each candidate answer is judged, a unit of its own
            kept += [(f"{source_id}/{a}", name, v, label_id) for a, v in value.items()]
        elif value is not None and not isinstance(value, list):
            kept.append((source_id, name, value, label_id))
    if not kept:
        why = (
            "no answers as imported (--raw reads studies made by import-labels)"
            if raw
            else ("no test labels")
        )
        raise UserError(f"study {study!r} has {why}")
    return LongLabels(
        path=f"study {study}" + (" (answers as imported)" if raw else ""),
        item=np.asarray([str(r[0]) for r in kept], dtype=object),
        annotator=np.asarray([str(r[1]) for r in kept], dtype=object),
        label=np.asarray([str(_text(r[2])) for r in kept], dtype=object),
        line=np.asarray([int(r[3]) for r in kept], dtype=np.int64),
        n_missing=sum(1 for r in rows if r[2] is None or isinstance(r[2], list)),
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
