"""A Label Studio JSON export: a list of tasks, each with `data` (the item) and `annotations`."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.formats.label_sources.cells import cell_text, number_text, read_text
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import ID_FIELDS, ReadOptions
from annotate.formats.label_sources.source import LabelSource, Peek
from annotate.formats.label_sources.times import parse_time, seconds

ANSWER_KEYS = ("choices", "rating", "number", "text", "labels")


class LabelStudioSource(LabelSource):
    name = "labelstudio"
    description = "Label Studio export"
    unit = "annotation"
    map_keys = ("item", "label")

    def claims(self, peek: Peek) -> bool:
        return peek.head == "["  # a JSON array: Label Studio's export is the one we read

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        return read_labelstudio(path, options.mapping, options.field_names)


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
        except RecursionError:
            raise DataFileError(path, line, "JSON nested too deeply to read") from None
        except ValueError as exc:  # int() of more than 4,300 digits
            raise DataFileError(path, line, f"JSON value cannot be read ({exc})") from None
        out.append((line, obj))


def read_labelstudio(path: Path, mapping: dict[str, str], field_names: list[str]) -> LabelFile:
    """Each task's `annotations` [{completed_by, result: [{from_name, value:
    {choices|rating|number|text}}], created_at, updated_at, lead_time, was_cancelled}]. The item
    id is `data[idx]` (or `--map item=KEY`; else the task id); the time is lead_time seconds
    ending at updated_at."""
    tasks = _json_array_lines(path, read_text(path))
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
            item = cell_text(data[key])
        else:
            found = next((k for k in ID_FIELDS if k in data), None)
            item = cell_text(data[found] if found else task.get("id"))
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
            worker = cell_text(who)
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
                secs = seconds(number_text(lead), path, number, "lead_time") if lead else None
                if secs is not None or lead == 0:  # no lead_time: time on task unknown, not 0
                    label.shown_at = label.answered_at - timedelta(seconds=secs or 0.0)
            labels.append(label)
    if not labels:
        if tasks and not any(isinstance(t, dict) and "annotations" in t for _, t in tasks):
            # JSON-MIN and CSV exports flatten each annotation into one object per row.
            raise DataFileError(
                path,
                None,
                "no task has an annotations list: this reads Label Studio's JSON export, not "
                "JSON-MIN (export the project as JSON)",
            )
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
    for key in ANSWER_KEYS:
        if key in value:
            got = value[key]
            if isinstance(got, list):
                if len(got) != 1:
                    raise DataFileError(path, line, f"{key} {got!r}: expected one answer")
                got = got[0]
            return cell_text(got)
    raise DataFileError(path, line, f"cannot tell the answer from {json.dumps(value)}")
