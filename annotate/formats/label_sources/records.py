"""Rows of a CSV/TSV or JSON-lines table with their line numbers: the long files of
`import-labels` and the input of `annotate agreement`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.formats.label_sources.cells import csv_rows, json_value, padded, read_text

JSON_SUFFIXES = {".jsonl", ".ndjson", ".json"}


def read_records(path: Path) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    """Column names and (line, row) pairs of a CSV/TSV or JSON-lines file."""
    text = read_text(path)
    if path.suffix.lower() in JSON_SUFFIXES:
        rows, columns = [], []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            obj = json_value(line, path, number)
            if not isinstance(obj, dict):
                raise DataFileError(path, number, "expected a JSON object per line")
            columns += [k for k in obj if k not in columns]
            rows.append((number, obj))
        return columns, rows
    first_line = text.split("\n", 1)[0]
    if not first_line.strip():
        return [], []
    suffix = path.suffix.lower()
    tab = suffix == ".tsv" or (suffix != ".csv" and "\t" in first_line)
    table = csv_rows(path, text, "\t" if tab else ",")
    header = [c.strip() for c in table[0][1]]
    rows = [
        (number, dict(zip(header, padded(path, number, cells, len(header)), strict=True)))
        for number, cells in table[1:]
    ]
    return header, rows
