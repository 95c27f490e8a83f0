"""An MTurk batch results CSV: one row per assignment, item slots `Input.X_N` with answers
`Answer.Y_N` (or `Answer.YN`), or one `Answer.taskAnswers` JSON cell (crowd-html templates)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.formats.label_sources.cells import (
    cell_text,
    csv_rows,
    json_value,
    number_text,
    padded,
    read_text,
)
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import ID_FIELDS, ReadOptions
from annotate.formats.label_sources.source import LabelSource, Peek
from annotate.formats.label_sources.times import (
    SHARED_SPAN_NOTE,
    lay_end_to_end,
    parse_time,
    seconds,
    share_span,
)

SLOT = re.compile(r"^(Input|Answer)\.(.+?)_?(\d+)$")
TASK_ANSWERS = "Answer.taskAnswers"
RADIO = "radio"
"""The Answer name of a group of crowd-radio-buttons left at their default value ("on"): the
name of the button that is on (`Answer.radio0` for the buttons of slot 0)."""
KEY_SLOT = re.compile(r"^(.+?)_?(\d+)$")
REQUIRED = ("WorkerId", "AssignmentId")


class MTurkSource(LabelSource):
    name = "mturk"
    description = "MTurk batch"
    unit = "assignment"
    map_keys = ("item", "label", "comment", "flag")
    reads_side_columns = True

    def claims(self, peek: Peek) -> bool:
        return all(column in peek.header for column in REQUIRED)

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        return read_mturk(
            path, options.mapping, options.field_names, options.keep_rejected, options.side_columns
        )


def read_mturk(
    path: Path,
    mapping: dict[str, str],
    field_names: list[str],
    keep_rejected: bool,
    side_columns: tuple[str, ...] = (),
) -> LabelFile:
    """One row per assignment; item slots melted by slot N. Rows shorter than the header (MTurk
    leaves the `Approve`/`Reject` cells out) are padded; rejected assignments are left out
    unless `keep_rejected`. A crowd-html template's single `Answer.taskAnswers` JSON column is
    read as the `Answer.*` columns it holds (a radio group: the option marked true; radio
    buttons left at their default value, `{"entailment0": {"on": true}, "neutral0": …}`: the
    name of the one that is on, in `Answer.radio0`, the label unless `--map label=` says)."""
    table = csv_rows(path, read_text(path))
    if len(table) < 2:
        raise DataFileError(path, None, "no assignments in the file")
    header_line, header = table[0][0], [c.strip() for c in table[0][1]]
    for required in REQUIRED:
        if required not in header:
            raise DataFileError(path, header_line, f"no {required} column: not an MTurk batch file")
    asides = {mapping.get("comment"), *side_columns}
    if TASK_ANSWERS in header:
        header, table = _task_answers(path, header, table, asides)
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
    comment_base = mapping.get("comment")
    # Columns named as the comment, --skip-when or flag hold no label: the label is the rest.
    candidates = {b: c for b, c in answers.items() if b not in asides} or answers
    label_base = _slot_base(
        path,
        header_line,
        candidates,
        mapping.get("label"),
        (RADIO,) if RADIO in candidates else (),
        "label",
        "Answer",
    )
    if (
        comment_base is not None
        and comment_base not in answers
        and comment_base not in (plain_answers)
    ):
        raise DataFileError(
            path, header_line, f"--map comment={comment_base}: no Answer.{comment_base} column"
        )
    for name in side_columns:
        if name not in answers and name not in plain_answers:
            raise DataFileError(
                path,
                header_line,
                f"no Answer.{name} column (--skip-when and --map flag= name an Answer column as "
                f"--map does: na for Answer.na0, Answer.na1, ...); the file has Answer."
                f"{{{', '.join(sorted({*answers, *plain_answers})) or 'none'}}}",
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
            return cell_text(row[position[column]])

        def _raw(column: str, row: list[str] = row) -> str | None:
            return number_text(row[position[column]]) if column in position else None

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
            side = {
                name: cell((answers.get(name) or {}).get(slot)) or cell(plain_answers.get(name))
                for name in side_columns
            }
            mine.append(RawLabel(number, item, worker, value, fields, comment=comment, side=side))
            hit_of_item.setdefault(item, hit)
        accept = cell("AcceptTime")
        submit = cell("SubmitTime")
        share_span(
            mine,
            parse_time(accept, path, number, "AcceptTime") if accept else None,
            parse_time(submit, path, number, "SubmitTime") if submit else None,
            seconds(_raw("WorkTimeInSeconds"), path, number, "WorkTimeInSeconds"),
        )
        labels += mine
    if not labels:
        raise DataFileError(path, None, "no answers in the file (every assignment rejected?)")
    dates = lay_end_to_end(labels, path)  # work times without AcceptTime or SubmitTime
    has_times = any(lab.shown_at is not None for lab in labels)
    return LabelFile(
        path=path,
        format="mturk",
        dates=dates,
        labels=labels,
        n_assignments=n_assignments,
        n_excluded=dict(excluded),
        max_assignments=max_assignments,
        hit_of_item=hit_of_item,
        has_times=has_times,
        time_note=SHARED_SPAN_NOTE,
    )


def _task_answers(
    path: Path, header: list[str], table: list[tuple[int, list[str]]], asides: set[str | None]
) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and rows with `Answer.taskAnswers` spread into one `Answer.KEY` column per
    key of its JSON (`[{"rating0": 67, "q1": {"yes": true, "no": false}}]`). Two or more
    radio buttons of one slot at their default value (`{"on": true}`), not named by `asides`
    (the comment, --skip-when, flag), are a group: `Answer.radioN` is the one that is on."""
    at = header.index(TASK_ANSWERS)
    parsed: list[dict[str, Any]] = []
    for number, cells in table[1:]:
        raw = padded(path, number, cells, len(header))[at].strip()
        value = json_value(raw, path, number) if raw else [{}]
        if isinstance(value, list):
            value = value[0] if value else {}
        if not isinstance(value, dict):
            raise DataFileError(path, number, f"{TASK_ANSWERS} is not a JSON object")
        flat = {}
        buttons: dict[str, list[tuple[str, bool]]] = {}
        for key, answer in value.items():
            slot = KEY_SLOT.match(key)
            base, number = (slot.group(1), slot.group(2)) if slot else (key, "")
            if _default_button(answer) and base not in asides:
                buttons.setdefault(number, []).append((base, answer["on"] is True))
            answer = element_answer(answer)
            flat[key] = "" if answer is None else str(answer)
        for number, group in buttons.items():
            if len(group) > 1:
                on = [base for base, checked in group if checked]
                flat[f"{RADIO}{number}"] = on[0] if len(on) == 1 else (json.dumps(on) if on else "")
        parsed.append(flat)
    keys = list(dict.fromkeys(k for row in parsed for k in row))
    extra = [f"Answer.{k}" for k in keys if f"Answer.{k}" not in header]
    rows = [table[0]] + [
        (number, padded(path, number, cells, len(header)) + [flat.get(c[7:], "") for c in extra])
        for (number, cells), flat in zip(table[1:], parsed, strict=True)
    ]
    return header + extra, rows


def _default_button(answer: Any) -> bool:
    """A crowd-radio-button (or checkbox) without a value attribute: {"on": true|false}."""
    return isinstance(answer, dict) and len(answer) == 1 and isinstance(answer.get("on"), bool)


def element_answer(answer: Any) -> Any:
    """What one crowd-html element wrote, as documented for each: `<crowd-classifier>`
    {"label": "entailment"}; `<crowd-classifier-multi-select>` {"labels": ["a"]} (one label,
    else the list as JSON, which no label matches); a `<crowd-checkbox>` or
    `<crowd-radio-button>` {"VALUE": true} (the value marked true, "on" by default; none
    marked: no answer); `<crowd-slider>` a number; `<crowd-input>` text."""
    if not isinstance(answer, dict):
        if isinstance(answer, list):
            return json.dumps(answer) if answer else None
        return answer
    if isinstance(answer.get("label"), str | int | float) and not isinstance(
        answer.get("label"), bool
    ):
        return answer["label"]
    if isinstance(answer.get("labels"), list):
        labels = answer["labels"]
        return labels[0] if len(labels) == 1 else (json.dumps(labels) if labels else None)
    marked = [k for k, v in answer.items() if v is True]
    return marked[0] if len(marked) == 1 else None


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
