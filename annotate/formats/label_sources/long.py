"""A long CSV/TSV or JSON-lines file: one label per row. The source of any file no other
source claims."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from annotate.errors import DataFileError
from annotate.formats.label_sources.cells import cell_text, need, number_text, pick
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import MAP_KEYS, ReadOptions
from annotate.formats.label_sources.records import read_records
from annotate.formats.label_sources.source import LabelSource, Peek
from annotate.formats.label_sources.times import (
    SECONDS_ONLY,
    lay_end_to_end,
    parse_time,
    seconds,
)

ITEM = ("item", "item_id", "idx", "id")
ANNOTATOR = ("annotator", "annotator_id", "worker", "worker_id", "workerid", "coder", "rater")
LABEL = ("label", "value", "answer")
OPTIONAL = ("seconds", "answered_at", "shown_at", "comment", "gold")


class LongSource(LabelSource):
    name = "long"
    description = "long-format file"
    unit = "annotator"
    map_keys = MAP_KEYS
    reads_side_columns = True

    def claims(self, peek: Peek) -> bool:
        return False  # the registry's fallback: it reads what no other source claims

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        return read_long(path, options.mapping, options.field_names, options.side_columns)


def looks_long(path: Path, mapping: dict[str, str]) -> bool:
    """Whether a file that no source claimed is meant as a long file: `--map` names its item,
    annotator or label column, or a column is named as a long file's are (the long reader's
    error then says what is missing), or it cannot be read as a table (its error names the
    line). Otherwise it is of no known format, and the long reader's "no item column" would
    mislead."""
    if any(key in mapping for key in ("item", "annotator", "label")):
        return True
    try:
        columns, _ = read_records(path)
    except DataFileError:
        return True
    return not columns or pick(columns, ITEM + ANNOTATOR + LABEL) is not None


def read_long(
    path: Path,
    mapping: dict[str, str],
    field_names: list[str],
    side_columns: tuple[str, ...] = (),
) -> LabelFile:
    """One row per label: item, annotator, label; optional seconds, answered_at, shown_at,
    comment, gold and the item's fields (`--map field=column`, else the field's own name)."""
    columns, rows = read_records(path)
    if not rows:
        raise DataFileError(path, None, "no labels in the file")
    item_col = need(path, 1, columns, mapping.get("item"), ITEM, "item")
    ann_col = need(path, 1, columns, mapping.get("annotator"), ANNOTATOR, "annotator")
    label_col = need(path, 1, columns, mapping.get("label"), LABEL, "label")
    optional = {key: mapping.get(key) or pick(columns, (key,)) for key in OPTIONAL}
    for key, column in optional.items():
        if column is not None and column not in columns:
            raise DataFileError(path, 1, f"--map {key}={column}: no such column")
    for column in side_columns:
        if column not in columns:
            raise DataFileError(
                path,
                1,
                f"no {column} column (--skip-when, --map flag=); found {', '.join(columns)}",
            )
    fields = {
        name: mapping.get(name, name) for name in field_names if mapping.get(name, name) in columns
    }
    labels: list[RawLabel] = []
    skipped = 0
    has_times = optional["answered_at"] is not None or optional["seconds"] is not None
    for number, row in rows:
        item, worker = cell_text(row.get(item_col)), cell_text(row.get(ann_col))
        if not item:
            raise DataFileError(path, number, f"missing {item_col}")
        if not worker:
            raise DataFileError(path, number, f"missing {ann_col}")
        value = cell_text(row.get(label_col))
        if value is None:
            skipped += 1
            continue
        label = RawLabel(
            line=number,
            item=item,
            worker=worker,
            value=value,
            fields={f: row.get(c) for f, c in fields.items()},
            comment=cell_text(row.get(optional["comment"])) if optional["comment"] else None,
            gold=cell_text(row.get(optional["gold"])) if optional["gold"] else None,
            side={column: cell_text(row.get(column)) for column in side_columns},
        )
        answered = cell_text(row.get(optional["answered_at"])) if optional["answered_at"] else None
        shown = cell_text(row.get(optional["shown_at"])) if optional["shown_at"] else None
        secs = (
            seconds(number_text(row.get(optional["seconds"])), path, number, "seconds")
            if optional["seconds"]
            else None
        )
        label.answered_at = parse_time(answered, path, number, "answered_at") if answered else None
        label.shown_at = parse_time(shown, path, number, "shown_at") if shown else None
        if label.answered_at is not None and label.shown_at is None and secs is not None:
            label.shown_at = label.answered_at - timedelta(seconds=secs)
        elif label.answered_at is None and label.shown_at is not None and secs is not None:
            label.answered_at = label.shown_at + timedelta(seconds=secs)
        elif label.answered_at is None and secs is not None:
            label.shown_at, label.answered_at = None, None
            label.fields[SECONDS_ONLY] = secs
        labels.append(label)
    if not labels:
        raise DataFileError(path, None, "every label in the file is missing")
    dates = lay_end_to_end(labels, path)
    return LabelFile(
        path=path,
        format="long",
        dates=dates,
        labels=labels,
        n_assignments=len({lab.worker for lab in labels}),
        n_excluded={"empty answers": skipped} if skipped else {},
        has_times=has_times,
    )
