"""Read a model's predictions from a long table: a CSV or JSON-lines file with one row per
item, `id,prediction` (and an optional `model` column: several models in one file). `--map
id=COLUMN`, `--map prediction=COLUMN`, `--map model=COLUMN` name other columns.

`id` is the item's id in its source file (a MultiRC answer: `question/answer`); a prediction
is a label value or the leaderboard's encoding of one (BoolQ `true`, COPA `1`), a rating, or
ReCoRD's entity text, decoded as the leaderboard reader decodes it."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError, UserError
from annotate.scoring.predictions import ModelPredictions, decode_prediction, json_object_lines
from annotate.specs import TaskSpec

MAP_KEYS = ("id", "prediction", "model")


def parse_map(pairs: list[str]) -> dict[str, str]:
    """`--map KEY=COLUMN` options as {key: column}; an unknown key is refused by name."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        key, sep, column = pair.partition("=")
        key, column = key.strip(), column.strip()
        if not sep or not column:
            raise UserError(f"--map {pair!r}: expected KEY=COLUMN")
        if key not in MAP_KEYS:
            raise UserError(f"--map {key}: a prediction table maps {', '.join(MAP_KEYS)}")
        mapping[key] = column
    return mapping


def _rows(path: Path) -> list[tuple[int, Mapping[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(path, None, f"not valid UTF-8 ({exc.reason})") from None
    if path.suffix.lower() in (".jsonl", ".json"):
        lines = enumerate(text.split("\n"), start=1)
        return json_object_lines(path, ((n, line) for n, line in lines if line.strip()))
    dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
    reader = csv.DictReader(io.StringIO(text, newline=""), dialect=dialect)
    return [(reader.line_num, row) for row in reader]


def has_columns(path: Path, mapping: Mapping[str, str]) -> bool:
    """Whether `path` is a table with the id and prediction columns (after `mapping`)."""
    try:
        rows = _rows(path)
    except DataFileError:
        return False
    if not rows:
        return False
    first = rows[0][1]
    return all(mapping.get(k, k) in first for k in ("id", "prediction"))


def read_long(path: Path, spec: TaskSpec, mapping: Mapping[str, str]) -> list[ModelPredictions]:
    """One ModelPredictions per model of the table (the file's stem without a model column)."""
    id_col, pred_col = mapping.get("id", "id"), mapping.get("prediction", "prediction")
    model_col = mapping.get("model", "model")
    rows = _rows(path)
    if not rows:
        raise DataFileError(path, None, "no rows in the file")
    missing = [c for c in (id_col, pred_col) if c not in rows[0][1]]
    if missing:
        raise DataFileError(
            path,
            rows[0][0],
            f"no column {', '.join(repr(c) for c in missing)} (the columns are "
            f"{', '.join(map(str, rows[0][1])) or 'none'}; --map id=COLUMN, "
            "--map prediction=COLUMN name others)",
        )
    if "model" in mapping and model_col not in rows[0][1]:
        raise DataFileError(path, rows[0][0], f"no column {model_col!r} (--map model)")
    by_model: dict[str, dict[str, Any]] = {}
    for number, row in rows:
        name = str(row.get(model_col) or path.stem) if model_col in row else path.stem
        raw_id, raw = row.get(id_col), row.get(pred_col)
        if raw_id is None or str(raw_id).strip() == "":
            raise DataFileError(path, number, f"no id in column {id_col!r}")
        if raw is None or str(raw).strip() == "":
            continue  # no prediction for this item: not scored
        item_id = str(raw_id).strip()
        value = decode_prediction(raw, spec, path, number)
        predictions = by_model.setdefault(name, {})
        if spec.kind == "multi_answer":
            question, sep, answer = item_id.rpartition("/")
            if not sep:
                raise DataFileError(
                    path, number, f"id {item_id!r}: a MultiRC id is question/answer"
                )
            answers = predictions.setdefault(question, {})
            if answer in answers:  # the last would win, silently
                raise DataFileError(path, number, f"duplicate id {item_id!r}")
            answers[answer] = value
            continue
        if item_id in predictions:
            raise DataFileError(path, number, f"duplicate id {item_id!r}")
        predictions[item_id] = value
    if not by_model:
        raise DataFileError(path, None, "no predictions in the file")
    return [ModelPredictions(name=n, path=str(path), predictions=p) for n, p in by_model.items()]
