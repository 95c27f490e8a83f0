"""Writers for what `annotate export` produces: the leaderboards' submission files, label
tables (CSV or JSON lines) and deterministic zips.

Every writer returns bytes: UTF-8, `\\n` line endings, rows in the order given and fixed number
formatting, so the same input always gives byte-identical output (DESIGN invariant 7). The
submission writers are handed predictions only, never an item's gold (invariant 3).

Submission files, by the task's `submission.style`:

- `glue-tsv`: header `index<TAB>prediction`, then `<id><TAB><label>`; ratings clipped to the
  task's range and written with its `float_format` (STS-B: `%.3f` in [0, 5]);
- `superglue-jsonl` and `record`: `{"idx": <id>, "label": <label>}` per line, the label encoded
  as the task says (BoolQ/WiC "true", WSC "True", COPA the int 1, ReCoRD the entity text);
- `multirc`: one line per paragraph, `{"idx", "passage": {"questions": [{"idx", "answers":
  [{"idx", "label"}]}]}}`, as in the data files.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from annotate import install_hint
from annotate.errors import UserError
from annotate.specs import TaskSpec
from annotate.text import neutralised

SUBMISSION_HEADER = ("index", "prediction")
ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)
"""Every zip member gets this timestamp (the earliest a zip can hold): no clock in the bytes."""
TABLE_FLOAT_FORMAT = "%.3f"

_INTEGER = re.compile(r"-?[0-9]+")


def id_value(source_id: str) -> int | str:
    """An id as a submission writes it: an int when the source id is a whole number (AX-b's
    file has the string ids "0", "1", …; jiant writes them as ints), else the text."""
    text = str(source_id).strip()
    return int(text) if _INTEGER.fullmatch(text) else text


def encoded_label(spec: TaskSpec, value: Any) -> Any:
    """A label value ("true", "0", "entailment", a rating, an entity) as the submission file
    holds it, type kept: COPA's "1" is the int 1, WSC's "true" the text "True"."""
    if spec.kind == "regression":
        return _rating(spec, value)
    encoding = spec.submission.encoding if spec.submission else {}
    key = str(value)
    if key in encoding:
        return encoding[key]
    if spec.kind == "classification" and encoding:
        raise UserError(f"{value!r} is not a {spec.name} label ({', '.join(encoding)})")
    return value


def _rating(spec: TaskSpec, value: Any) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise UserError(f"rating {value!r} is not a finite number")
    clip = spec.submission.clip if spec.submission else None
    if clip is not None:
        low, high = clip
        number = min(high, max(low, number))
    return number + 0.0  # turns -0.0 into 0.0, so "-0.000" is never written


def _rating_text(spec: TaskSpec, value: Any) -> str:
    return _float_format(spec) % _rating(spec, value)


def _float_format(spec: TaskSpec) -> str:
    return spec.submission.float_format if spec.submission else "%.3f"


def _tsv_cell(value: Any, what: str) -> str:
    text = str(value)
    if any(c in text for c in "\t\r\n"):
        raise UserError(f"{what} {text!r} contains a tab or line break: a TSV row cannot hold it")
    return text


def _json_line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def submission_bytes(
    spec: TaskSpec,
    predictions: Mapping[str, Any],
    order: Sequence[str],
    paragraph_of: Mapping[str, str] | None = None,
) -> bytes:
    """The submission file of `spec` with one row per id in `order` that has a prediction.

    `predictions` maps an item's source id to its label value (MultiRC: {answer id: "0"/"1"});
    `paragraph_of` gives a MultiRC question's paragraph id."""
    ids = [i for i in order if i in predictions]
    style = spec.leaderboard().style
    if style == "glue-tsv":
        lines = ["\t".join(SUBMISSION_HEADER) + "\n"]
        for i in ids:
            value = predictions[i]
            if spec.kind == "regression":
                cell = _rating_text(spec, value)
            else:
                cell = _tsv_cell(encoded_label(spec, value), "label")
            lines.append(f"{_tsv_cell(id_value(i), 'id')}\t{cell}\n")
        return "".join(lines).encode("utf-8")
    if style == "multirc":
        return _multirc(spec, predictions, ids, paragraph_of or {}).encode("utf-8")
    lines = []
    for i in ids:
        label = encoded_label(spec, predictions[i])
        if spec.kind == "regression":
            label = float(_float_format(spec) % label)
        lines.append(_json_line({"idx": id_value(i), "label": label}))
    return "".join(lines).encode("utf-8")


def _answer_order(answer_id: str) -> tuple[int, int, str]:
    """Answer idx are global running numbers in source order: sort numerically."""
    value = id_value(answer_id)
    return (0, value, "") if isinstance(value, int) else (1, 0, str(value))


def _multirc(
    spec: TaskSpec,
    predictions: Mapping[str, Any],
    ids: Sequence[str],
    paragraph_of: Mapping[str, str],
) -> str:
    paragraphs: dict[str, list[dict[str, Any]]] = {}
    for question in ids:
        answers = predictions[question]
        if not isinstance(answers, Mapping) or not answers:
            raise UserError(f"MultiRC question {question!r}: expected a judgement per answer")
        if question not in paragraph_of:
            raise UserError(f"MultiRC question {question!r}: its paragraph is unknown")
        paragraphs.setdefault(paragraph_of[question], []).append(
            {
                "idx": id_value(question),
                "answers": [
                    {"idx": id_value(a), "label": encoded_label(spec, answers[a])}
                    for a in sorted(answers, key=_answer_order)
                ],
            }
        )
    return "".join(
        _json_line({"idx": id_value(p), "passage": {"questions": questions}})
        for p, questions in paragraphs.items()
    )


# --- label tables ----------------------------------------------------------------------------


def text_cell(value: Any, float_format: str = TABLE_FLOAT_FORMAT) -> str:
    """A typed value as one CSV cell: JSON spellings for booleans, fixed decimals for floats,
    JSON text for lists and objects, empty for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_cell(value, float_format)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=False)
    return str(value)


def float_cell(value: float, float_format: str = TABLE_FLOAT_FORMAT) -> str:
    """A float as one CSV cell: fixed decimals, empty when not finite."""
    return "" if not math.isfinite(value) else float_format % value


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class _CsvRows:
    """csv.writer with `\n` line ends, and every row that holds a lone carriage return quoted
    whole: Python's writer (3.11) quotes a cell with `\n` but not one with `\r` alone, which
    every CSV reader then takes for a line break, splitting the row in two."""

    def __init__(self, stream: TextIO) -> None:
        self._minimal = csv.writer(stream, lineterminator="\n")
        self._quoted = csv.writer(stream, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, cells: Sequence[str]) -> None:
        # Every cell is text (csv_cell): one join and one search, cheaper than a test per cell.
        carriage = "\r" in "".join(cells)
        (self._quoted if carriage else self._minimal).writerow(cells)


def write_csv(stream: TextIO, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> int:
    """Write a CSV table with a header row to `stream` as the rows come (constant memory);
    cells quoted only where needed (commas, quotes, line breaks in comments). Text cells that
    a spreadsheet would run as a formula (= + - @) are neutralised (`neutralised`); numbers the
    tool computed are written as they are. Returns the number of rows."""
    writer = _CsvRows(stream)
    writer.writerow([neutralised(c) for c in columns])
    n = 0
    for row in rows:
        writer.writerow([csv_cell(row.get(c)) for c in columns])
        n += 1
    return n


def csv_cell(value: Any) -> str:
    """One cell of `write_csv`: `text_cell`, with text from people neutralised."""
    cell = text_cell(value)
    return neutralised(cell) if isinstance(value, str) else cell


def write_csv_cells(stream: TextIO, columns: Sequence[str], rows: Iterable[list[str]]) -> None:
    """`write_csv` for rows already made cells (`csv_cell`), in the columns' order: the
    streamed label export."""
    writer = _CsvRows(stream)
    writer.writerow([neutralised(c) for c in columns])
    for cells in rows:
        writer.writerow(cells)


def write_jsonl(stream: TextIO, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> int:
    """Write one JSON object per row (keys in `columns` order, values keep their type) to
    `stream` as the rows come. Returns the number of rows."""
    n = 0
    for row in rows:
        stream.write(_json_line({c: _json_value(row.get(c)) for c in columns}))
        n += 1
    return n


def csv_bytes(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> bytes:
    """`write_csv` into bytes."""
    buffer = io.StringIO()
    write_csv(buffer, columns, rows)
    return buffer.getvalue().encode("utf-8")


def jsonl_bytes(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> bytes:
    """`write_jsonl` into bytes."""
    buffer = io.StringIO()
    write_jsonl(buffer, columns, rows)
    return buffer.getvalue().encode("utf-8")


def json_bytes(data: Any) -> bytes:
    """Pretty JSON (a manifest) with a final newline."""
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def zip_bytes(members: Mapping[str, bytes]) -> bytes:
    """A zip of `members` (name -> content) in name order with fixed timestamps and
    permissions, so the same files always give the same zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever machine writes it
            info.external_attr = 0o100644 << 16
            archive.writestr(info, members[name])
    return buffer.getvalue()


PARQUET_EXTRA = "parquet"
"""The optional extra that brings pyarrow: `pip install 'annotate-baselines[parquet]'`."""


def parquet_bytes(
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    types: Mapping[str, str] | None = None,
) -> bytes:
    """A Parquet table (pyarrow, the `parquet` extra). `types` fixes a column's type (pyarrow's
    names: string, float64, int64, bool_) whatever its cells: the same column has the same type
    in every file, so files of several studies load together. Other columns take their cells'
    type; a column whose cells mix types (an `answer` that is a number for some tasks' points
    and text for others) is written as text, and a column of nulls is a text column."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(f"--format parquet needs pyarrow: {install_hint(PARQUET_EXTRA)}") from None
    types = types or {}
    arrays: dict[str, Any] = {}
    for column in columns:
        cells = [row.get(column) for row in rows]
        declared = types.get(column)
        if declared is not None:
            if declared == "string":
                cells = [
                    None if c is None else c if isinstance(c, str) else text_cell(c) for c in cells
                ]
            arrays[column] = pa.array(cells, type=getattr(pa, declared)())
            continue
        kinds = {type(c) for c in cells if c is not None}
        if len(kinds) > 1 and not kinds <= {int, float}:
            cells = [None if c is None else text_cell(c) for c in cells]
        arrays[column] = pa.array(cells, type=None if kinds else pa.string())
    buffer = io.BytesIO()
    pq.write_table(pa.table(arrays), buffer)
    return buffer.getvalue()
