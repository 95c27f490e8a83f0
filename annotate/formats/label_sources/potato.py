"""Potato's annotated_instances.jsonl, or its annotation_output/ folder with one file per user."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.formats.label_sources.cells import cell_text, json_value, read_text
from annotate.formats.label_sources.labels import LabelFile, RawLabel
from annotate.formats.label_sources.options import ReadOptions
from annotate.formats.label_sources.source import LabelSource, Peek
from annotate.formats.label_sources.times import SECONDS_ONLY, lay_end_to_end, seconds

POTATO_TIME = re.compile(r"Time spent:\s*(\d+)d\s*(\d+)h\s*(\d+)m\s*(\d+)s")
POTATO_FILE = "annotated_instances.jsonl"
SCHEME_KEYS = ("label_annotations", "annotation")


class PotatoSource(LabelSource):
    name = "potato"
    description = "Potato output"
    unit = "annotator"
    map_keys = ("label", "comment")
    reads_fields = False
    folder_hint = POTATO_FILE

    def claims(self, peek: Peek) -> bool:
        """A folder with annotated_instances.jsonl in it, or JSON lines with label_annotations."""
        if peek.path.is_dir():
            return any(p.is_file() for p in peek.path.rglob(POTATO_FILE))
        first = peek.first_object
        return isinstance(first, dict) and any(key in first for key in SCHEME_KEYS)

    def files(self, path: Path) -> list[Path]:
        return potato_files(path)

    def read(self, path: Path, options: ReadOptions) -> LabelFile:
        return read_potato(path, options.mapping)


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
    """One line per instance a user annotated, with `label_annotations` {scheme: {label: value}}
    and `behavioral_data.time_string`. The user is the line's `user_id`, else the folder the
    file sits in. The answer of a radio or Likert scheme is the label marked; of a slider or
    text box, its value. `--map label=SCHEME` chooses the scheme when there are several."""
    labels: list[RawLabel] = []
    users: set[str] = set()
    for one in potato_files(path):
        labels += _read_potato_file(one, mapping, users, one if one != path else None)
    if not labels:
        raise DataFileError(path, None, "no annotated instances in the file")
    has_times = any(SECONDS_ONLY in lab.fields for lab in labels)
    dates = lay_end_to_end(labels, path)
    return LabelFile(
        path, "potato", labels, n_assignments=len(users), has_times=has_times, dates=dates
    )


def _read_potato_file(
    path: Path, mapping: dict[str, str], users: set[str], source: Path | None
) -> list[RawLabel]:
    text = read_text(path)
    labels: list[RawLabel] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        obj = json_value(line, path, number)
        if not isinstance(obj, dict) or "id" not in obj:
            raise DataFileError(path, number, "expected an object with an id")
        schemes = obj.get("label_annotations", obj.get("annotation"))
        if not isinstance(schemes, dict):
            raise DataFileError(path, number, "no label_annotations object")
        worker = cell_text(obj.get("user_id") or obj.get("user")) or path.parent.name
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
            if max(len(g) for g in match.groups()) > 9:
                raise DataFileError(path, number, "time_string: a number too long to be a time")
            d, h, m, s = (int(g) for g in match.groups())
            spent = str(((d * 24 + h) * 60 + m) * 60 + s)
            label.fields[SECONDS_ONLY] = seconds(spent, path, number, "time_string")
        users.add(worker)
        labels.append(label)
    return labels


def _potato_value(answer: Any, path: Path, line: int) -> Any:
    if not isinstance(answer, dict):
        return cell_text(answer)
    marked = [k for k, v in answer.items() if str(v).lower() == "true"]
    if len(marked) == 1:
        return marked[0]
    if len(answer) == 1:
        return cell_text(next(iter(answer.values())))
    if not answer:
        return None
    raise DataFileError(path, line, f"cannot tell the answer from {json.dumps(answer)}")
