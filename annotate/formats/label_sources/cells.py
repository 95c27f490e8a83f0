"""Reading a label file's text and its cells: the pieces every source shares.

A file that cannot be read, a CSV syntax error or a column `--map` names that is not there is a
DataFileError naming file and line, as everywhere in annotate."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError, undecodable_at

csv.field_size_limit(1 << 30)

MISSING = {"", ".", "na", "n/a", "nan", "null", "none"}
"""Cells that mean "no answer" (compared lower-cased, stripped)."""


def read_text(path: Path) -> str:
    """The file's text (UTF-8, a byte-order mark dropped)."""
    if not path.is_file():
        raise DataFileError(path, None, "no such file")
    try:
        data = path.read_bytes()
        return data.decode("utf-8-sig")
    except OSError as exc:
        raise DataFileError(path, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        line, byte = undecodable_at(data, exc)
        raise DataFileError(path, line, f"not valid UTF-8 (byte {byte} of the line)") from None


def csv_rows(path: Path, text: str, delimiter: str | None = None) -> list[tuple[int, list[str]]]:
    """(line, cells) of each non-empty row; line numbers from the reader (quoted line breaks)."""
    delimiter = delimiter or ("\t" if path.suffix.lower() == ".tsv" else ",")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows = []
    number = 1
    try:
        for cells in reader:
            row_line, number = number, reader.line_num + 1
            if any(c.strip() for c in cells):
                rows.append((row_line, cells))
    except csv.Error as exc:
        raise DataFileError(path, reader.line_num, f"CSV syntax error: {exc}") from None
    return rows


def padded(path: Path, line: int, cells: list[str], width: int) -> list[str]:
    """A row's cells to the header's width: a short row's last cells are empty (MTurk writes
    rows without the cells of its trailing Approve/Reject columns); a long row is an error."""
    if len(cells) > width:
        raise DataFileError(path, line, f"row has {len(cells)} fields, expected {width}")
    return cells + [""] * (width - len(cells))


def cell_text(value: Any) -> str | None:
    """A cell as text, or None when it is a missing value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return None if text.lower() in MISSING else text


def number_text(value: Any) -> str | None:
    """A cell of a number column (seconds): missing is None, but NaN is kept to be refused (a
    JSON NaN or a "nan" cell is a broken number, not an empty cell)."""
    if isinstance(value, float):
        return repr(value)  # 1e+308, nan: not int(1e308)'s 309 digits
    text = cell_text(value)
    if text is None and value is not None and str(value).strip().lower() == "nan":
        return "nan"
    return text


def pick(columns: list[str], wanted: tuple[str, ...]) -> str | None:
    """The first of `wanted` among `columns` (case-insensitive), as the file spells it."""
    lowered = {c.strip().lower(): c for c in columns}
    return next((lowered[w] for w in wanted if w in lowered), None)


def need(
    path: Path, line: int, columns: list[str], given: str | None, wanted: tuple[str, ...], key: str
) -> str:
    """The column holding `key`: the one `--map` names, else the first of `wanted` present."""
    if given is not None:
        if given not in columns:
            raise DataFileError(
                path, line, f"--map {key}={given}: no such column; found {', '.join(columns)}"
            )
        return given
    found = pick(columns, wanted)
    if found is None:
        raise DataFileError(
            path,
            line,
            f"no {key} column (expected one of {', '.join(wanted)}; found "
            f"{', '.join(columns) or 'none'}): name it with --map {key}=COLUMN",
        )
    return found


def json_value(text: str, path: Path, line: int | None) -> Any:
    """One JSON value, or a DataFileError saying why not: bad syntax, nesting too deep for the
    reader (a file nested 100,000 deep), or a number too long to read (thousands of digits)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(path, line, f"not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise DataFileError(path, line, "JSON nested too deeply to read") from None
    except ValueError as exc:  # int() of more than 4,300 digits
        raise DataFileError(path, line, f"JSON value cannot be read ({exc})") from None
