"""Read a model's predictions in the leaderboards' submission formats, so
the model can be scored on exactly the items of the human sample.

- GLUE: TSV with the header `index<TAB>prediction`;
- SuperGLUE: JSON lines `{"idx": …, "label": …}`; MultiRC nests paragraphs, questions and
  answers (`{"idx", "passage": {"questions": [{"idx", "answers": [{"idx", "label"}]}]}}`).

Predictions are mapped back to the task's label values through `submission.encoding` (WSC's
"True" is the label "true", COPA's 0 is "0"), or else by the label's names in published copies
(the Hugging Face Hub's ClassLabel names: CoLA's "acceptable" is "1"), as the data readers map
them. A bad file is a DataFileError naming the line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError
from annotate.specs import TaskSpec
from annotate.splits import named_split, same_split_family


@dataclass
class ModelPredictions:
    name: str
    path: str
    predictions: dict[str, Any]
    """Item source id -> label value (text), rating, {answer idx: "0"/"1"} or entity text."""
    unmatched: list[str] = field(default_factory=list)
    """What the file holds that names no item (a sample log's documents without an idx)."""
    split: str | None = None
    """The split the predictions are on, where the source says (`RTE_val.jsonl`, a harness
    log's validation documents); None: not said."""
    line_of: dict[str, int] = field(default_factory=dict)
    """The line of the file each id was read from, where the reader knows it."""
    paragraph_of: dict[str, str] = field(default_factory=dict)
    """MultiRC: the paragraph idx each question is given under (a line without an idx: none)."""


def _key(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip().lower()


def _decoder(spec: TaskSpec) -> dict[str, str]:
    """Submission value (normalised) -> label value."""
    decode = {_key(v): v for v in spec.label_values()}
    encoding = spec.submission.encoding if spec.submission else {}
    decode.update({_key(encoded): value for value, encoded in encoding.items()})
    return decode


def _label(raw: Any, spec: TaskSpec, decode: dict[str, str], path: Path, line: int) -> Any:
    if spec.kind == "regression":
        try:
            value = float(raw)
        except (TypeError, ValueError, OverflowError):  # an int of 400 digits overflows
            raise DataFileError(path, line, f"prediction {raw!r} is not a number") from None
        if not math.isfinite(value):  # "nan", "inf": not a rating (nor "no prediction")
            raise DataFileError(path, line, f"prediction {raw!r} is not a finite number")
        return value
    if spec.kind == "entity_choice":
        if not isinstance(raw, str):
            raise DataFileError(path, line, f"prediction {raw!r} is not an entity text")
        return raw
    # A model trained on the Hub's copy writes its class names ("acceptable", "choice1"); the
    # spec's one name lookup maps them, as it does for the Hub's data files.
    value = decode.get(_key(raw)) or spec.label_for_name(_key(raw))
    if value is None:
        raise DataFileError(
            path,
            line,
            f"unknown prediction {raw!r}; {spec.name} predictions are "
            + ", ".join(
                sorted(
                    {str(v) for v in (spec.submission.encoding if spec.submission else {}).values()}
                    or set(spec.label_values())
                )
            ),
        )
    return value


def decode_prediction(raw: Any, spec: TaskSpec, path: Path, line: int) -> Any:
    """One prediction as the task's label value (a rating; ReCoRD's entity text), decoded as
    the leaderboard files are; a DataFileError naming the line if it is none of them."""
    if spec.kind == "entity_choice":
        return raw if isinstance(raw, str) else str(raw)
    return _label(raw, spec, _decoder(spec), path, line)


def _id(value: Any, path: Path, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise DataFileError(path, line, f"idx {value!r} is not an id")
    return str(value)


def read_predictions(path: Path, spec: TaskSpec) -> ModelPredictions:
    """A model's predictions for `spec`'s test items, by source id."""
    path = Path(path)
    if not path.is_file():
        raise DataFileError(path, None, "no such file")
    style = spec.leaderboard().style
    model = ModelPredictions(name=model_name(path, spec), path=str(path), predictions={})
    if spec.submission is not None:  # jiant's `RTE_val.jsonl` says its split
        model.split = named_split(path.stem, Path(spec.submission.file).stem)
    if style == "glue-tsv":
        _read_glue_tsv(path, spec, model)
    elif style == "multirc":
        _read_multirc(path, spec, model)
    else:
        _read_jsonl(path, spec, model)
    if not model.predictions:
        raise DataFileError(path, None, "no predictions in the file")
    return model


def submission_file(folder: Path, spec: TaskSpec, items_split: str | None) -> Path | None:
    """The task's submission file in a folder of them (`roberta/RTE.jsonl`), None if absent.
    For items of another split than test, the file named for that split, jiant's way, where
    the folder has one (`RTE_val.jsonl` beside `RTE.jsonl`): the plain file holds the test
    predictions, whose ids name other items there."""
    if spec.submission is None:
        return None
    official = folder / spec.submission.file
    if items_split and not same_split_family(items_split, "test") and folder.is_dir():
        for path in sorted(folder.glob(f"*{official.suffix}")):
            said = named_split(path.stem, official.stem)
            if said is not None and same_split_family(said, items_split) and path.is_file():
                return path
    return official if official.is_file() else None


def model_name(path: Path, spec: TaskSpec) -> str:
    """The model a submission file holds: a file named as the leaderboard names the task's
    (`RTE.jsonl`, jiant's `RTE_val.jsonl`) says the task, not the model, so it is named after
    its folder (`roberta/RTE.jsonl`: roberta), as `report --benchmark --model roberta` names a
    folder of them; any other file after its own name (`roberta-rte.jsonl`)."""
    if spec.submission is not None:
        official = Path(spec.submission.file).stem
        stem = path.stem
        if stem.lower() == official.lower() or named_split(stem, official) is not None:
            folder = path.absolute().parent.name
            if folder:
                return folder
    return path.stem


def _lines(path: Path) -> list[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(path, None, f"not valid UTF-8 ({exc.reason})") from None
    return [
        (n, line.rstrip("\r")) for n, line in enumerate(text.split("\n"), start=1) if line.strip()
    ]


def _read_glue_tsv(path: Path, spec: TaskSpec, model: ModelPredictions) -> None:
    lines = _lines(path)
    if not lines:
        return
    header = [h.strip().lower() for h in lines[0][1].split("\t")]
    if header[:2] not in (["index", "prediction"], ["id", "prediction"]):
        raise DataFileError(
            path, lines[0][0], "expected the header 'index<TAB>prediction' (GLUE submission)"
        )
    decode = _decoder(spec)
    out = model.predictions
    for number, line in lines[1:]:
        cells = line.split("\t")
        if len(cells) != 2:
            raise DataFileError(
                path, number, f"row has {len(cells)} fields, expected 2 (index, prediction)"
            )
        index = cells[0].strip()
        if index in out:
            raise DataFileError(path, number, f"duplicate index {index!r}")
        out[index] = _label(cells[1].strip(), spec, decode, path, number)
        model.line_of[index] = number


def _json_objects(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return json_object_lines(path, _lines(path))


def json_object_lines(
    path: Path, lines: Iterable[tuple[int, str]]
) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of each JSON-lines line; a line that is not one JSON object is
    refused with its number (every model-prediction reader reads JSON lines so)."""
    objects = []
    for number, line in lines:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFileError(path, number, f"not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise DataFileError(path, number, "expected a JSON object per line")
        objects.append((number, obj))
    return objects


def _read_jsonl(path: Path, spec: TaskSpec, model: ModelPredictions) -> None:
    decode = _decoder(spec)
    out = model.predictions
    for number, obj in _json_objects(path):
        if "idx" not in obj or "label" not in obj:
            raise DataFileError(
                path, number, "expected keys 'idx' and 'label' (SuperGLUE submission)"
            )
        idx = _id(obj["idx"], path, number)
        if idx in out:
            raise DataFileError(path, number, f"duplicate idx {idx!r}")
        out[idx] = _label(obj["label"], spec, decode, path, number)
        model.line_of[idx] = number


def _read_multirc(path: Path, spec: TaskSpec, model: ModelPredictions) -> None:
    """The paragraph idx each question is given under is kept: whether the ids fit the
    gold's nesting is `model_predictions.check_multirc_ids`'s to say."""
    decode = _decoder(spec)
    out = model.predictions
    for number, obj in _json_objects(path):
        passage = obj.get("passage")
        questions = passage.get("questions") if isinstance(passage, dict) else None
        if not isinstance(questions, list):
            raise DataFileError(path, number, "expected passage.questions (MultiRC submission)")
        paragraph = _id(obj["idx"], path, number) if "idx" in obj else None
        for q in questions:
            if not isinstance(q, dict) or "idx" not in q or not isinstance(q.get("answers"), list):
                raise DataFileError(path, number, "a question lacks 'idx' or 'answers'")
            qid = _id(q["idx"], path, number)
            answers: dict[str, str] = {}
            for a in q["answers"]:
                if not isinstance(a, dict) or "idx" not in a or "label" not in a:
                    raise DataFileError(path, number, "an answer lacks 'idx' or 'label'")
                aid = _id(a["idx"], path, number)
                if aid in answers:
                    raise DataFileError(path, number, f"duplicate answer idx {aid!r}")
                answers[aid] = _label(a["label"], spec, decode, path, number)
            if qid in out:
                raise DataFileError(path, number, f"duplicate question idx {qid!r}")
            out[qid] = answers
            model.line_of[qid] = number
            if paragraph is not None:
                model.paragraph_of[qid] = paragraph
