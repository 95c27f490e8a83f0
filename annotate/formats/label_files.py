"""Readers for label files made outside annotate: MTurk batch results, a Qualtrics CSV export,
Potato's annotated_instances.jsonl, a Label Studio JSON export, and a generic long CSV/JSONL.

Each reader turns its file into `RawLabel`s, one per (item, worker) answer, with the line it
came from, so that every later check (an unknown item, an answer no `--values` maps) can name
file and line. Nothing here touches the store: `label_import.py` does, all or nothing.

Times: where a file gives one span per assignment or response (MTurk AcceptTime..SubmitTime
with WorkTimeInSeconds, Qualtrics StartDate..EndDate with Duration), the span is shared equally
among the answers in it, in slot order, so each worker's time on task sums to what the platform
recorded. Potato and Label Studio record a time per label.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError, UserError

csv.field_size_limit(1 << 30)

FORMATS = ("long", "mturk", "qualtrics", "potato", "labelstudio")
FORMAT_NAMES = {
    "long": "long-format file",
    "mturk": "MTurk batch",
    "qualtrics": "Qualtrics export",
    "potato": "Potato output",
    "labelstudio": "Label Studio export",
}
MISSING = {"", ".", "na", "n/a", "nan", "null", "none"}
MAP_KEYS = ("item", "annotator", "label", "seconds", "answered_at", "shown_at", "comment", "gold")
"""`--map` keys every format understands; any other key names a task field (item creation)."""


@dataclass(slots=True)
class RawLabel:
    line: int
    item: str
    """The item's id as the file writes it (matched to Item.source_id)."""
    worker: str
    """The platform's worker id (WorkerId, ResponseId or PROLIFIC_PID, Potato user, LS user)."""
    value: Any
    """The answer as the file writes it (text or number); `--values` maps it."""
    fields: dict[str, Any] = field(default_factory=dict)
    """What the file says about the item (MTurk Input.*, LS data, long-file columns)."""
    shown_at: datetime | None = None
    answered_at: datetime | None = None
    comment: str | None = None
    gold: Any = None
    source: Path | None = None
    """The file the line is in, when the import read a folder (Potato: one file per user)."""


@dataclass
class LabelFile:
    path: Path
    format: str
    labels: list[RawLabel]
    n_assignments: int
    """Assignments (MTurk), responses (Qualtrics), annotations (Label Studio), files' users
    (Potato) or distinct (worker, file) in a long file: what the labels came in."""
    n_excluded: dict[str, int] = field(default_factory=dict)
    """Why answers were left out, and how many: rejected assignments, empty slots, …"""
    max_assignments: dict[str, int] = field(default_factory=dict)
    """MTurk: HITId -> MaxAssignments (checked against k by the import)."""
    hit_of_item: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    has_times: bool = True
    dates: bool = True
    platform: str = ""
    """Whose ids the worker ids are: mturk, prolific (a survey's PROLIFIC_PID), or the tool
    (qualtrics, potato, labelstudio, long): a worker keeps one pseudonym per platform."""
    """False when the file gives durations only: the labels are laid end to end per worker
    from 1970-01-01, so only their seconds mean anything."""

    @property
    def description(self) -> str:
        return FORMAT_NAMES[self.format]

    def where(self, label: RawLabel) -> Path:
        """The file a label's line number belongs to."""
        return label.source or self.path


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


# --- shared pieces ---------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise DataFileError(path, None, "no such file")
    try:
        return path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise DataFileError(path, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise DataFileError(path, None, f"not valid UTF-8 ({exc.reason})") from None


def _csv_rows(path: Path, text: str, delimiter: str | None = None) -> list[tuple[int, list[str]]]:
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


def _cell_text(value: Any) -> str | None:
    """A cell as text, or None when it is a missing value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return None if text.lower() in MISSING else text


def _pick(columns: list[str], wanted: tuple[str, ...]) -> str | None:
    lowered = {c.strip().lower(): c for c in columns}
    return next((lowered[w] for w in wanted if w in lowered), None)


def _need(
    path: Path, line: int, columns: list[str], given: str | None, wanted: tuple[str, ...], key: str
) -> str:
    """The column holding `key`: the one `--map` names, else the first of `wanted` present."""
    if given is not None:
        if given not in columns:
            raise DataFileError(
                path, line, f"--map {key}={given}: no such column; found {', '.join(columns)}"
            )
        return given
    found = _pick(columns, wanted)
    if found is None:
        raise DataFileError(
            path,
            line,
            f"no {key} column (expected one of {', '.join(wanted)}; found "
            f"{', '.join(columns) or 'none'}): name it with --map {key}=COLUMN",
        )
    return found


def parse_time(text: str, path: Path, line: int, what: str) -> datetime:
    """ISO 8601 (Label Studio, long files; no zone = UTC), MTurk's `Tue Jun 04 10:12:33 PDT
    2019`, or Qualtrics' `2024-05-01 10:00:00` (UTC)."""
    raw = text.strip()
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None:
        match = re.fullmatch(r"(\w{3} \w{3} \d{1,2} \d{2}:\d{2}:\d{2}) (\w+) (\d{4})", raw)
        if match is None:
            raise DataFileError(path, line, f"{what} {raw!r} is not a date and time")
        zone = match.group(2).upper()
        if zone not in ZONES:
            raise DataFileError(path, line, f"{what} {raw!r}: unknown time zone {zone}")
        try:
            moment = datetime.strptime(
                f"{match.group(1)} {match.group(3)}", "%a %b %d %H:%M:%S %Y"
            ).replace(tzinfo=UTC) - timedelta(hours=ZONES[zone])
        except ValueError:
            raise DataFileError(path, line, f"{what} {raw!r} is not a date and time") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


ZONES = {"UTC": 0, "GMT": 0, "PDT": -7, "PST": -8, "EDT": -4, "EST": -5, "CDT": -5, "CST": -6}
"""Zone abbreviations MTurk writes (its requester site shows Pacific time), in hours from UTC."""


def _seconds(text: str | None, path: Path, line: int, what: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise DataFileError(path, line, f"{what} {text!r} is not a number of seconds") from None
    if not value >= 0:
        raise DataFileError(path, line, f"{what} {text!r} must not be negative")
    return value


def _share_span(
    labels: list[RawLabel], start: datetime | None, end: datetime | None, seconds: float | None
) -> None:
    """Spread one assignment's time over its answers, in order: each gets an equal share of the
    work time (or of end - start), back to back from the start (or ending at the end)."""
    if not labels:
        return
    if seconds is None and start is not None and end is not None:
        seconds = max((end - start).total_seconds(), 0.0)
    if seconds is None:
        for label in labels:
            label.answered_at = end or start
            label.shown_at = label.answered_at
        return
    share = timedelta(seconds=seconds / len(labels))
    origin = start if start is not None else (end - share * len(labels) if end else None)
    if origin is None:
        return
    for n, label in enumerate(labels):
        label.shown_at = origin + share * n
        label.answered_at = origin + share * (n + 1)


# --- generic long files ----------------------------------------------------------------------


def padded(path: Path, line: int, cells: list[str], width: int) -> list[str]:
    """A row's cells to the header's width: a short row's last cells are empty (MTurk writes
    rows without the cells of its trailing Approve/Reject columns); a long row is an error."""
    if len(cells) > width:
        raise DataFileError(path, line, f"row has {len(cells)} fields, expected {width}")
    return cells + [""] * (width - len(cells))


def read_records(path: Path) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    """Column names and (line, row) pairs of a CSV/TSV or JSON-lines file (the long files of
    `import-labels` and `annotate agreement`)."""
    text = _read_text(path)
    if path.suffix.lower() in {".jsonl", ".ndjson", ".json"}:
        rows, columns = [], []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataFileError(path, number, f"not valid JSON ({exc.msg})") from None
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
    table = _csv_rows(path, text, "\t" if tab else ",")
    header = [c.strip() for c in table[0][1]]
    rows = [
        (number, dict(zip(header, padded(path, number, cells, len(header)), strict=True)))
        for number, cells in table[1:]
    ]
    return header, rows


def read_long(path: Path, mapping: dict[str, str], field_names: list[str]) -> LabelFile:
    """One row per label: item, annotator, label; optional seconds, answered_at, shown_at,
    comment, gold and the item's fields (`--map field=column`, else the field's own name)."""
    columns, rows = read_records(path)
    if not rows:
        raise DataFileError(path, None, "no labels in the file")
    item_col = _need(
        path, 1, columns, mapping.get("item"), ("item", "item_id", "idx", "id"), "item"
    )
    ann_col = _need(
        path,
        1,
        columns,
        mapping.get("annotator"),
        ("annotator", "annotator_id", "worker", "worker_id", "workerid", "coder", "rater"),
        "annotator",
    )
    label_col = _need(path, 1, columns, mapping.get("label"), ("label", "value", "answer"), "label")
    optional = {
        key: mapping.get(key) or _pick(columns, (key,))
        for key in ("seconds", "answered_at", "shown_at", "comment", "gold")
    }
    for key, column in optional.items():
        if column is not None and column not in columns:
            raise DataFileError(path, 1, f"--map {key}={column}: no such column")
    fields = {
        name: mapping.get(name, name) for name in field_names if mapping.get(name, name) in columns
    }
    labels: list[RawLabel] = []
    skipped = 0
    has_times = optional["answered_at"] is not None or optional["seconds"] is not None
    for number, row in rows:
        item, worker = _cell_text(row.get(item_col)), _cell_text(row.get(ann_col))
        if not item:
            raise DataFileError(path, number, f"missing {item_col}")
        if not worker:
            raise DataFileError(path, number, f"missing {ann_col}")
        value = _cell_text(row.get(label_col))
        if value is None:
            skipped += 1
            continue
        label = RawLabel(
            line=number,
            item=item,
            worker=worker,
            value=value,
            fields={f: row.get(c) for f, c in fields.items()},
            comment=_cell_text(row.get(optional["comment"])) if optional["comment"] else None,
            gold=_cell_text(row.get(optional["gold"])) if optional["gold"] else None,
        )
        answered = _cell_text(row.get(optional["answered_at"])) if optional["answered_at"] else None
        shown = _cell_text(row.get(optional["shown_at"])) if optional["shown_at"] else None
        secs = (
            _seconds(_cell_text(row.get(optional["seconds"])), path, number, "seconds")
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
            label.fields["__seconds__"] = secs
        labels.append(label)
    if not labels:
        raise DataFileError(path, None, "every label in the file is missing")
    dates = _seconds_only(labels)
    return LabelFile(
        path=path,
        format="long",
        dates=dates,
        labels=labels,
        n_assignments=len({lab.worker for lab in labels}),
        n_excluded={"empty answers": skipped} if skipped else {},
        has_times=has_times,
    )


def _seconds_only(labels: list[RawLabel]) -> bool:
    """Labels with seconds but no clock time: laid end to end per worker from the epoch of the
    import (only the durations mean anything; the datasheet says the dates are unknown)."""
    clock: dict[str, datetime] = {}
    for label in labels:
        secs = label.fields.pop("__seconds__", None)
        if secs is None:
            continue
        start = clock.get(label.worker, datetime(1970, 1, 1, tzinfo=UTC))
        label.shown_at, label.answered_at = start, start + timedelta(seconds=secs)
        clock[label.worker] = label.answered_at
    return not clock


# --- MTurk batch results ---------------------------------------------------------------------

SLOT = re.compile(r"^(Input|Answer)\.(.+?)_?(\d+)$")
ID_FIELDS = ("id", "idx", "item", "item_id", "itemid", "source_id")


def read_mturk(
    path: Path, mapping: dict[str, str], field_names: list[str], keep_rejected: bool
) -> LabelFile:
    """An MTurk batch results CSV: one row per assignment; item slots `Input.X_N` with answers
    `Answer.Y_N` (or `Answer.YN`) melted by slot N. Rows shorter than the header (MTurk leaves
    the `Approve`/`Reject` cells out) are padded; rejected assignments are left out unless
    `keep_rejected`. A crowd-html template's single `Answer.taskAnswers` JSON column is read
    as the `Answer.*` columns it holds (a radio group: the option marked true)."""
    table = _csv_rows(path, _read_text(path))
    if len(table) < 2:
        raise DataFileError(path, None, "no assignments in the file")
    header_line, header = table[0][0], [c.strip() for c in table[0][1]]
    for required in ("WorkerId", "AssignmentId"):
        if required not in header:
            raise DataFileError(path, header_line, f"no {required} column: not an MTurk batch file")
    if TASK_ANSWERS in header:
        header, table = _task_answers(path, header, table)
    inputs: dict[str, dict[int, str]] = {}
    answers: dict[str, dict[int, str]] = {}
    plain_inputs: dict[str, str] = {}
    plain_answers: dict[str, str] = {}
    for column in header:
        match = SLOT.match(column)
        if match:
            kind, base, slot = match.groups()
            (inputs if kind == "Input" else answers).setdefault(base, {})[int(slot)] = column
        elif column.startswith("Input."):
            plain_inputs[column[6:]] = column
        elif column.startswith("Answer."):
            plain_answers[column[7:]] = column
    slotted = bool(inputs)
    if not slotted:  # one item per HIT: Input.id and Answer.label
        inputs = {b: {0: c} for b, c in plain_inputs.items()}
        answers = {b: {0: c} for b, c in plain_answers.items()}
    id_base = _slot_base(path, header_line, inputs, mapping.get("item"), ID_FIELDS, "item", "Input")
    label_base = _slot_base(path, header_line, answers, mapping.get("label"), (), "label", "Answer")
    comment_base = mapping.get("comment")
    if (
        comment_base is not None
        and comment_base not in answers
        and comment_base not in (plain_answers)
    ):
        raise DataFileError(
            path, header_line, f"--map comment={comment_base}: no Answer.{comment_base} column"
        )
    field_bases = {name: mapping.get(name, name) for name in field_names}
    position = {c: i for i, c in enumerate(header)}
    labels: list[RawLabel] = []
    excluded: Counter[str] = Counter()
    max_assignments: dict[str, int] = {}
    hit_of_item: dict[str, str] = {}
    n_assignments = 0
    for number, cells in table[1:]:
        row = padded(path, number, cells, len(header))

        def cell(column: str | None, row: list[str] = row) -> str | None:
            if column is None or column not in position:  # an optional column left out
                return None
            return _cell_text(row[position[column]])

        worker = cell("WorkerId")
        if not worker:
            raise DataFileError(path, number, "missing WorkerId")
        status = cell("AssignmentStatus") or ""
        hit = cell("HITId") or f"line {number}"
        if "MaxAssignments" in position and cell("MaxAssignments"):
            try:
                max_assignments[hit] = int(str(cell("MaxAssignments")))
            except ValueError:
                raise DataFileError(
                    path, number, f"MaxAssignments {cell('MaxAssignments')!r} is not a number"
                ) from None
        slots = sorted(inputs[id_base])
        if status.lower() == "rejected" and not keep_rejected:
            excluded["rejected assignments"] += 1
            continue
        n_assignments += 1
        mine: list[RawLabel] = []
        for slot in slots:
            item = cell(inputs[id_base].get(slot))
            if not item:
                continue  # a short HIT: fewer items than slots
            answer_column = answers[label_base].get(slot)
            value = cell(answer_column)
            if value is None:
                excluded["empty answer slots"] += 1
                continue
            comment = None
            if comment_base is not None:
                comment = cell((answers.get(comment_base) or {}).get(slot)) or cell(
                    plain_answers.get(comment_base)
                )
            fields = {
                name: cell((inputs.get(base) or {}).get(slot)) or cell(plain_inputs.get(base))
                for name, base in field_bases.items()
                if base in inputs or base in plain_inputs
            }
            mine.append(RawLabel(number, item, worker, value, fields, comment=comment))
            hit_of_item.setdefault(item, hit)
        accept = cell("AcceptTime")
        submit = cell("SubmitTime")
        _share_span(
            mine,
            parse_time(accept, path, number, "AcceptTime") if accept else None,
            parse_time(submit, path, number, "SubmitTime") if submit else None,
            _seconds(cell("WorkTimeInSeconds"), path, number, "WorkTimeInSeconds"),
        )
        labels += mine
    if not labels:
        raise DataFileError(path, None, "no answers in the file (every assignment rejected?)")
    has_times = any(lab.shown_at is not None for lab in labels)
    return LabelFile(
        path=path,
        format="mturk",
        labels=labels,
        n_assignments=n_assignments,
        n_excluded=dict(excluded),
        max_assignments=max_assignments,
        hit_of_item=hit_of_item,
        has_times=has_times,
    )


TASK_ANSWERS = "Answer.taskAnswers"


def _task_answers(
    path: Path, header: list[str], table: list[tuple[int, list[str]]]
) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and rows with `Answer.taskAnswers` spread into one `Answer.KEY` column per
    key of its JSON (`[{"rating0": 67, "q1": {"yes": true, "no": false}}]`)."""
    at = header.index(TASK_ANSWERS)
    parsed: list[dict[str, Any]] = []
    for number, cells in table[1:]:
        raw = padded(path, number, cells, len(header))[at].strip()
        try:
            value = json.loads(raw) if raw else [{}]
        except json.JSONDecodeError as exc:
            raise DataFileError(path, number, f"{TASK_ANSWERS} is not JSON ({exc.msg})") from None
        if isinstance(value, list):
            value = value[0] if value else {}
        if not isinstance(value, dict):
            raise DataFileError(path, number, f"{TASK_ANSWERS} is not a JSON object")
        flat = {}
        for key, answer in value.items():
            if isinstance(answer, dict):
                marked = [k for k, v in answer.items() if v is True]
                answer = marked[0] if len(marked) == 1 else None
            flat[key] = "" if answer is None else str(answer)
        parsed.append(flat)
    keys = list(dict.fromkeys(k for row in parsed for k in row))
    extra = [f"Answer.{k}" for k in keys if f"Answer.{k}" not in header]
    rows = [table[0]] + [
        (number, padded(path, number, cells, len(header)) + [flat.get(c[7:], "") for c in extra])
        for (number, cells), flat in zip(table[1:], parsed, strict=True)
    ]
    return header + extra, rows


def _slot_base(
    path: Path,
    line: int,
    bases: dict[str, dict[int, str]],
    given: str | None,
    defaults: tuple[str, ...],
    key: str,
    kind: str,
) -> str:
    if given is not None:
        if given not in bases:
            raise DataFileError(
                path,
                line,
                f"--map {key}={given}: no {kind}.{given}_N columns; the file has "
                f"{', '.join(sorted(bases)) or 'none'}",
            )
        return given
    lowered = {b.lower(): b for b in bases}
    found = next((lowered[d] for d in defaults if d in lowered), None)
    if found is None and not defaults and len(bases) == 1:
        found = next(iter(bases))
    if found is None:
        raise DataFileError(
            path,
            line,
            f"which {kind} column holds the {key}? The file has {kind}."
            f"{{{', '.join(sorted(bases)) or 'none'}}}: pass --map {key}=NAME",
        )
    return found


# --- Qualtrics -------------------------------------------------------------------------------

QUALTRICS_META = {
    "StartDate",
    "EndDate",
    "Status",
    "IPAddress",
    "Progress",
    "Duration (in seconds)",
    "Finished",
    "RecordedDate",
    "ResponseId",
    "RecipientLastName",
    "RecipientFirstName",
    "RecipientEmail",
    "ExternalReference",
    "LocationLatitude",
    "LocationLongitude",
    "DistributionChannel",
    "UserLanguage",
}


def read_qualtrics(path: Path, mapping: dict[str, str]) -> LabelFile:
    """A Qualtrics CSV export: three header rows (names, question texts, import ids), then one
    row per response. Each question column is one item: its id is the column name, or the
    first group of the `--map item=REGEX` that the column names must match. The annotator is
    PROLIFIC_PID when the survey records it, else ResponseId (`--map annotator=COLUMN`).
    Unfinished responses (Finished False) are left out."""
    table = _csv_rows(path, _read_text(path))
    if len(table) < 4:
        raise DataFileError(path, None, "no responses (a Qualtrics export has three header rows)")
    names = [c.strip() for c in table[0][1]]
    import_ids = table[2][1]
    if not all(c.strip().startswith("{") for c in import_ids if c.strip()):
        raise DataFileError(
            path, table[2][0], 'the third row is not Qualtrics import ids ({"ImportId": …})'
        )
    pattern = None
    if "item" in mapping:
        try:
            pattern = re.compile(mapping["item"])
        except re.error as exc:
            raise UserError(
                f"--map item={mapping['item']}: not a regular expression ({exc})"
            ) from None
    questions: dict[str, str] = {}
    for index, name in enumerate(names):
        raw_id = import_ids[index] if index < len(import_ids) else ""
        try:
            qid = str(json.loads(raw_id).get("ImportId", "")) if raw_id.strip() else ""
        except (json.JSONDecodeError, AttributeError):
            raise DataFileError(path, table[2][0], f"column {name}: import id {raw_id!r}") from None
        if pattern is not None:
            match = pattern.fullmatch(name)
            if match:
                questions[name] = match.group(1) if match.groups() else name
        elif name not in QUALTRICS_META and qid.startswith("QID") and not qid.endswith("_TEXT"):
            questions[name] = name
    if not questions:
        raise DataFileError(path, table[0][0], "no question columns (pass --map item=REGEX)")
    annotator = _need(
        path,
        table[0][0],
        names,
        mapping.get("annotator"),
        ("prolific_pid", "workerid", "responseid"),
        "annotator",
    )
    position = {n: i for i, n in enumerate(names)}
    labels: list[RawLabel] = []
    excluded: Counter[str] = Counter()
    n_responses = 0
    for number, cells in table[3:]:
        row = padded(path, number, cells, len(names))

        def cell(column: str, row: list[str] = row) -> str | None:
            return _cell_text(row[position[column]]) if column in position else None

        worker = cell(annotator)
        if not worker:
            raise DataFileError(path, number, f"missing {annotator}")
        if (cell("Finished") or "true").lower() in {"false", "0"}:
            excluded["unfinished responses"] += 1
            continue
        n_responses += 1
        mine = [
            RawLabel(number, item, worker, value)
            for column, item in questions.items()
            if (value := cell(column)) is not None
        ]
        start, end = cell("StartDate"), cell("EndDate")
        _share_span(
            mine,
            parse_time(start, path, number, "StartDate") if start else None,
            parse_time(end, path, number, "EndDate") if end else None,
            _seconds(cell("Duration (in seconds)"), path, number, "Duration (in seconds)"),
        )
        labels += mine
    if not labels:
        raise DataFileError(path, None, "no answers in the file")
    return LabelFile(
        platform="prolific" if annotator.lower() == "prolific_pid" else "qualtrics",
        path=path,
        format="qualtrics",
        labels=labels,
        n_assignments=n_responses,
        n_excluded=dict(excluded),
        has_times=any(lab.shown_at is not None for lab in labels),
    )


# --- Potato ----------------------------------------------------------------------------------

POTATO_TIME = re.compile(r"Time spent:\s*(\d+)d\s*(\d+)h\s*(\d+)m\s*(\d+)s")


POTATO_FILE = "annotated_instances.jsonl"


def potato_files(path: Path) -> list[Path]:
    """The file itself, or every annotated_instances.jsonl under a folder (Potato's
    annotation_output/, one folder per user)."""
    if path.is_file():
        return [path]
    found = sorted(p for p in path.rglob(POTATO_FILE) if p.is_file())
    if not found:
        raise DataFileError(path, None, f"no {POTATO_FILE} in this folder")
    return found


def read_potato(path: Path, mapping: dict[str, str]) -> LabelFile:
    """Potato's annotated_instances.jsonl (or a folder of them: annotation_output/ with one
    folder per user): one line per instance a user annotated, with `label_annotations`
    {scheme: {label: value}} and `behavioral_data.time_string`. The user is the line's
    `user_id`, else the folder the file sits in. The answer of a radio or Likert scheme is the
    label marked; of a slider or text box, its value. `--map label=SCHEME` chooses the scheme
    when there are several."""
    labels: list[RawLabel] = []
    users: set[str] = set()
    for one in potato_files(path):
        labels += _read_potato_file(one, mapping, users, one if one != path else None)
    if not labels:
        raise DataFileError(path, None, "no annotated instances in the file")
    has_times = any("__seconds__" in lab.fields for lab in labels)
    dates = _seconds_only(labels)
    return LabelFile(
        path, "potato", labels, n_assignments=len(users), has_times=has_times, dates=dates
    )


def _read_potato_file(
    path: Path, mapping: dict[str, str], users: set[str], source: Path | None
) -> list[RawLabel]:
    text = _read_text(path)
    labels: list[RawLabel] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFileError(path, number, f"not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or "id" not in obj:
            raise DataFileError(path, number, "expected an object with an id")
        schemes = obj.get("label_annotations", obj.get("annotation"))
        if not isinstance(schemes, dict):
            raise DataFileError(path, number, "no label_annotations object")
        worker = _cell_text(obj.get("user_id") or obj.get("user")) or path.parent.name
        if not schemes:
            continue
        scheme = mapping.get("label")
        if scheme is None:
            if len(schemes) != 1:
                raise DataFileError(
                    path,
                    number,
                    f"several schemes ({', '.join(sorted(schemes))}): pass --map label=SCHEME",
                )
            scheme = next(iter(schemes))
        if scheme not in schemes:
            continue  # this instance was not answered in the chosen scheme
        value = _potato_value(schemes[scheme], path, number)
        if value is None:
            continue
        comment = None
        if "comment" in mapping and isinstance(schemes.get(mapping["comment"]), dict):
            comment = _potato_value(schemes[mapping["comment"]], path, number)
        label = RawLabel(number, str(obj["id"]), worker, value, comment=comment, source=source)
        behaviour = obj.get("behavioral_data") or {}
        match = POTATO_TIME.search(str(behaviour.get("time_string", "")))
        if match:
            d, h, m, s = (int(g) for g in match.groups())
            label.fields["__seconds__"] = float(((d * 24 + h) * 60 + m) * 60 + s)
        users.add(worker)
        labels.append(label)
    return labels


def _potato_value(answer: Any, path: Path, line: int) -> Any:
    if not isinstance(answer, dict):
        return _cell_text(answer)
    marked = [k for k, v in answer.items() if str(v).lower() == "true"]
    if len(marked) == 1:
        return marked[0]
    if len(answer) == 1:
        return _cell_text(next(iter(answer.values())))
    if not answer:
        return None
    raise DataFileError(path, line, f"cannot tell the answer from {json.dumps(answer)}")


# --- Label Studio ----------------------------------------------------------------------------


def _json_array_lines(path: Path, text: str) -> list[tuple[int, Any]]:
    """The elements of a top-level JSON array with the line each starts on."""
    decoder = json.JSONDecoder()
    start = text.find("[")
    if start < 0 or text[:start].strip():
        raise DataFileError(path, 1, "expected a JSON array of tasks (Label Studio's JSON export)")
    out = []
    index = start + 1
    while True:
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        if index >= len(text):
            raise DataFileError(path, text.count("\n") + 1, "the JSON array is not closed")
        if text[index] == "]":
            return out
        line = text.count("\n", 0, index) + 1
        try:
            obj, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            raise DataFileError(path, exc.lineno, f"not valid JSON ({exc.msg})") from None
        out.append((line, obj))


def read_labelstudio(path: Path, mapping: dict[str, str], field_names: list[str]) -> LabelFile:
    """A Label Studio JSON export: a list of tasks, each with `data` (the item) and
    `annotations` [{completed_by, result: [{from_name, value: {choices|rating|number|text}}],
    created_at, updated_at, lead_time, was_cancelled}]. The item id is `data[idx]` (or
    `--map item=KEY`; else the task id); the time is lead_time seconds ending at updated_at."""
    tasks = _json_array_lines(path, _read_text(path))
    labels: list[RawLabel] = []
    excluded: Counter[str] = Counter()
    n_annotations = 0
    for number, task in tasks:
        if not isinstance(task, dict) or not isinstance(task.get("annotations", []), list):
            raise DataFileError(path, number, "expected a task object with an annotations list")
        data = task.get("data") or {}
        key = mapping.get("item")
        if key is not None:
            if key not in data:
                raise DataFileError(path, number, f"--map item={key}: the task's data has no {key}")
            item = _cell_text(data[key])
        else:
            found = next((k for k in ID_FIELDS if k in data), None)
            item = _cell_text(data[found] if found else task.get("id"))
        if not item:
            raise DataFileError(path, number, "the task has no id")
        fields = {n: data.get(mapping.get(n, n)) for n in field_names if mapping.get(n, n) in data}
        for annotation in task.get("annotations", []):
            if not isinstance(annotation, dict):
                raise DataFileError(path, number, "an annotation is not an object")
            if annotation.get("was_cancelled"):
                excluded["cancelled annotations"] += 1
                continue
            n_annotations += 1
            who = annotation.get("completed_by")
            if isinstance(who, dict):
                who = who.get("email") or who.get("id")
            worker = _cell_text(who)
            if not worker:
                raise DataFileError(path, number, "an annotation has no completed_by")
            value = _ls_value(annotation.get("result") or [], mapping.get("label"), path, number)
            if value is None:
                excluded["annotations without an answer"] += 1
                continue
            label = RawLabel(number, item, worker, value, dict(fields))
            stamp = annotation.get("updated_at") or annotation.get("created_at")
            if stamp:
                label.answered_at = parse_time(str(stamp), path, number, "updated_at")
                lead = annotation.get("lead_time")
                secs = _seconds(_cell_text(lead), path, number, "lead_time") if lead else 0.0
                label.shown_at = label.answered_at - timedelta(seconds=secs or 0.0)
            labels.append(label)
    if not labels:
        raise DataFileError(path, None, "no annotations in the file")
    return LabelFile(
        path,
        "labelstudio",
        labels,
        n_assignments=n_annotations,
        n_excluded=dict(excluded),
        has_times=any(lab.answered_at is not None for lab in labels),
    )


def _ls_value(result: list[Any], name: str | None, path: Path, line: int) -> Any:
    answers = [r for r in result if isinstance(r, dict) and isinstance(r.get("value"), dict)]
    names = sorted({str(r.get("from_name")) for r in answers})
    if name is None:
        if len(names) > 1:
            raise DataFileError(
                path, line, f"several controls ({', '.join(names)}): pass --map label=FROM_NAME"
            )
    else:
        answers = [r for r in answers if r.get("from_name") == name]
    if not answers:
        return None
    value = answers[0]["value"]
    for key in ("choices", "rating", "number", "text", "labels"):
        if key in value:
            got = value[key]
            if isinstance(got, list):
                if len(got) != 1:
                    raise DataFileError(path, line, f"{key} {got!r}: expected one answer")
                got = got[0]
            return _cell_text(got)
    raise DataFileError(path, line, f"cannot tell the answer from {json.dumps(value)}")


# --- choosing the reader ---------------------------------------------------------------------


def detect_format(path: Path) -> str:
    """The format of a label file, from its content: MTurk (WorkerId and AssignmentId columns),
    Qualtrics (a third header row of import ids), Potato (label_annotations), Label Studio (a
    JSON array of tasks with annotations), else a long file."""
    if path.is_dir():
        potato_files(path)  # a folder is Potato's output, or an error saying what it lacks
        return "potato"
    text = _read_text(path)
    head = text.lstrip()[:1]
    if head == "[":
        return "labelstudio"
    if head == "{":
        first = text.lstrip().split("\n", 1)[0]
        try:
            obj = json.loads(first)
        except json.JSONDecodeError:
            return "long"
        if isinstance(obj, dict) and ("label_annotations" in obj or "annotation" in obj):
            return "potato"
        return "long"
    first_lines = _csv_rows(path, "\n".join(text.splitlines()[:6]))
    if first_lines:
        header = [c.strip() for c in first_lines[0][1]]
        if "WorkerId" in header and "AssignmentId" in header:
            return "mturk"
        if len(first_lines) >= 3 and any(
            c.strip().startswith('{"ImportId"') for c in first_lines[2][1]
        ):
            return "qualtrics"
    return "long"


def read_label_file(
    path: Path,
    fmt: str | None,
    mapping: dict[str, str],
    field_names: list[str],
    *,
    keep_rejected: bool = False,
) -> LabelFile:
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt}: known formats are {', '.join(FORMATS)}")
    if fmt == "mturk":
        file = read_mturk(path, mapping, field_names, keep_rejected)
    elif fmt == "qualtrics":
        file = read_qualtrics(path, mapping)
    elif fmt == "potato":
        file = read_potato(path, mapping)
    elif fmt == "labelstudio":
        file = read_labelstudio(path, mapping, field_names)
    else:
        file = read_long(path, mapping, field_names)
    file.platform = file.platform or fmt
    return file
