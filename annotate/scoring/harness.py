"""Read EleutherAI lm-evaluation-harness sample logs (`lm_eval … --log_samples`) as a model's
predictions, so a language model is scored by exactly the code that scores the humans.

The harness writes, per model, a folder (the model's name with `/` written `__`) holding
`results_<date>.json` and one `samples_<task>_<date>.jsonl` per task: one JSON object per
document with `doc_id`, `doc` (the dataset's row, with its `idx`), `target`, `arguments`,
`resps`, `filtered_resps` and the metric values (`acc` …). For a multiple-choice task,
`filtered_resps` holds one `[loglikelihood, is_greedy]` per choice (written as numbers, or as
strings by newer versions); the answer is the choice of highest loglikelihood, as the harness's
`acc` takes it. The tasks' `doc_to_target` is the dataset's integer label, so the choice's
index is a Hugging Face ClassLabel index, named here in the task's own label values
(`HARNESS_TASKS`). ReCoRD's answer is the entity (`doc.entities`) of highest loglikelihood;
MultiRC has one document per candidate answer, its `idx` a dict (paragraph, question, answer).

Harness versions 0.4.0 to 0.4.2 wrote the same documents otherwise (their `lm_eval/__main__.py`):
no folder per model, `results.json` in the `--output_path` folder and, per task,
`<model_args>_<task>.jsonl` (the model arguments with `/` and `=` written `__`:
`pretrained__EleutherAI__pythia-160m_sglue_rte.jsonl`) holding ONE JSON array of the
documents (`json.dumps(samples, indent=2)`), not JSON lines. Both layouts are read by the same
code; in the older one a document is named by its record number, its line says nothing.

Documents are matched to the study's items by the dataset's `idx`, never by `doc_id` (the
harness's row number). A document without a usable idx is counted in `unmatched`. For QQP and
MRPC the Hub's idx is not the id GLUE's own files give an item (`HarnessTask.file_ids`): their
logs are refused against a study of items read from those files (`refuse_file_ids`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from annotate.errors import DataFileError
from annotate.scoring.predictions import json_object_lines
from annotate.specs import TaskSpec


@dataclass(frozen=True)
class HarnessTask:
    task: str
    """Our task's name (`superglue/rte`)."""
    classes: tuple[str, ...] | None
    """Our label value of each ClassLabel index of the Hub dataset (`aps/super_glue`,
    `nyu-mll/glue`), in the Hub's order; None: the answer is an entity (ReCoRD)."""
    split: str = "validation"
    """The split the harness's task evaluates (its YAML's `validation_split`: these tasks
    have no test split with labels), so the documents' idx are that split's."""
    file_ids: str | None = None
    """What GLUE's own files (`dev.tsv`) give an item as its id, where that is not the Hub's
    idx the documents keep (the same number there names another item); None: the same ids."""
    hub_idx: str = ""
    """What the Hub's idx is, where `file_ids` differs from it."""


_BOOL = ("false", "true")
_BINARY = ("0", "1")
_RTE = ("entailment", "not_entailment")
_MNLI = ("entailment", "neutral", "contradiction")
HARNESS_TASKS: dict[str, HarnessTask] = {
    # SuperGLUE (`aps/super_glue` ClassLabel orders: CB is entailment, contradiction, neutral).
    "boolq": HarnessTask("superglue/boolq", _BOOL),
    "cb": HarnessTask("superglue/cb", ("entailment", "contradiction", "neutral")),
    "copa": HarnessTask("superglue/copa", _BINARY),
    "multirc": HarnessTask("superglue/multirc", _BINARY),
    "record": HarnessTask("superglue/record", None),
    "sglue_rte": HarnessTask("superglue/rte", _RTE),
    "wic": HarnessTask("superglue/wic", _BOOL),
    "wsc": HarnessTask("superglue/wsc", _BOOL),
    # GLUE (`nyu-mll/glue`; WNLI's 1 is entailment, as in the GLUE files).
    "cola": HarnessTask("glue/cola", _BINARY),
    "sst2": HarnessTask("glue/sst2", _BINARY),
    # The Hub numbers MRPC's rows as they stand in msr_paraphrase_train.txt, whose rows the
    # dev split is carved from; GLUE's dev.tsv has no id column. QQP's dev.tsv has Quora's
    # pair `id`; the Hub numbers the rows (HF-glue `example["idx"] = n`).
    "mrpc": HarnessTask(
        "glue/mrpc",
        _BINARY,
        file_ids="their row number in it",
        hub_idx="each row's number in msr_paraphrase_train.txt, which the split is carved from",
    ),
    "qqp": HarnessTask(
        "glue/qqp",
        _BINARY,
        file_ids="the file's `id` (Quora's pair id)",
        hub_idx="each row's number in the split",
    ),
    "qnli": HarnessTask("glue/qnli", _RTE),
    "rte": HarnessTask("glue/rte", _RTE),
    "wnli": HarnessTask("glue/wnli", _BINARY),
    "mnli": HarnessTask("glue/mnli-m", _MNLI, "validation_matched"),
    "mnli_mismatch": HarnessTask("glue/mnli-mm", _MNLI, "validation_mismatched"),
}
"""The harness's task names (its `lm_eval/tasks/super_glue` and `glue` YAML files) and ours."""

SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d\d-\d\dT[\d.\-:]+)\.jsonl$")
"""`samples_<task>_<date>.jsonl`, the date as the harness writes it (2024-05-13T12-34-56.1)."""


def sample_task(path: Path) -> str | None:
    """The harness task of a sample log, from its file name; None: not a sample log's name."""
    match = SAMPLES_NAME.match(path.name)
    return match["task"] if match else None


def is_sample_log(path: Path) -> bool:
    """A `samples_*.jsonl` name, or a first line with the harness's `doc_id` and
    `filtered_resps`, or (harness 0.4.0 to 0.4.2) a JSON array that starts with the first
    document's `doc_id`, as that harness wrote it (`_ARRAY_LOG_START`)."""
    if sample_task(path) is not None:
        return True
    if path.suffix.lower() not in (".jsonl", ".json"):
        return False
    try:
        with path.open(encoding="utf-8") as f:
            first = f.readline(_HEAD_CHARS)
            if first.lstrip().startswith("["):
                # The older harness's array, told by how it starts: parsing the whole log
                # here (tens of MB for ReCoRD) would only be done again by read_sample_log.
                return _ARRAY_LOG_START.match(first + f.read(_HEAD_CHARS)) is not None
            if not first.endswith("\n"):  # a first line longer than the head
                first += f.readline()
            obj = json.loads(first)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(obj, dict) and "doc_id" in obj and "filtered_resps" in obj


_HEAD_CHARS = 4096


_ARRAY_LOG_START = re.compile(r'\s*\[\s*\{\s*"doc_id"\s*:')
"""How the older harness's array starts (`json.dumps` puts `doc_id` first)."""


def is_array_log(path: Path) -> bool:
    """Whether a file starts as the older harness's JSON array does (its first character
    `[`): the cheap test a results folder's other `.jsonl` files are sorted out by."""
    try:
        with path.open(encoding="utf-8") as f:
            return f.read(64).lstrip().startswith("[")
    except (OSError, UnicodeDecodeError):
        return False


def array_log_task(path: Path) -> str | None:
    """The harness task of an older log (`<model_args>_<task>.jsonl`) from its name: one of
    the tasks `results.json` beside it ran, else one of `HARNESS_TASKS` (the longest that ends
    the name: `sglue_rte` before `rte`); None: neither ends it."""
    names = list(HARNESS_TASKS)
    try:
        results = json.loads((path.parent / "results.json").read_text(encoding="utf-8"))
        configs = results.get("configs") if isinstance(results, dict) else None
        if isinstance(configs, dict):
            names = [*configs, *names]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        pass
    ending = [t for t in names if path.name == f"{t}.jsonl" or path.name.endswith(f"_{t}.jsonl")]
    return max(ending, key=len) if ending else None


_MODEL_ARGS = ("pretrained", "model", "engine", "path")
"""The model arguments that name the model (`hf`'s pretrained, the API models' model)."""


def array_log_model(path: Path, task: str) -> str | None:
    """The model an older log's name gives (`pretrained__org__name,dtype__x_<task>.jsonl`:
    `org/name`); None: its name gives none."""
    prefix = path.name.removesuffix(f"{task}.jsonl").removesuffix("_")
    if prefix == path.name:
        return None
    args = dict(part.partition("__")[::2] for part in prefix.split(",") if "__" in part)
    for key in _MODEL_ARGS:
        if args.get(key):
            return args[key].replace("__", "/")
    return prefix.replace("__", "=") or None


def harness_task_for(spec: TaskSpec) -> list[str]:
    """The harness task names that log `spec`'s task."""
    return [name for name, t in HARNESS_TASKS.items() if t.task == spec.name]


def no_harness_task(spec: TaskSpec) -> str:
    """Why no sample log can be `spec`'s, and what to give instead: no harness task logs the
    diagnostics (AX, AX-b, AX-g) or STS-B."""
    official = f"its submission file ({spec.submission.file}) or " if spec.submission else ""
    return (
        f"lm-evaluation-harness has no task for {spec.name}: give the model's predictions as "
        f"{official}an id,prediction table"
    )


@dataclass
class SampleLog:
    predictions: dict[str, Any]
    """Item source id -> label value, {answer idx: "0"/"1"} (MultiRC) or entity text."""
    unmatched: list[int]
    """doc_ids of documents whose idx could not be read."""
    n_documents: int
    split: str = "validation"
    """The split the documents are of (the harness task's)."""
    model: str | None = None
    """The model an older log's name gives (`array_log_model`); None: the new layout's."""


def read_sample_log(
    path: Path, spec: TaskSpec, task: str | None = None, *, items_source: str | None = None
) -> SampleLog:
    """A sample log of `spec`'s task as predictions by source id. `task`: the harness task
    name when the file's name does not carry it; `items_source`: the file the items to match
    were imported from (`refuse_file_ids`)."""
    records, is_array = _objects(path)
    task = task or sample_task(path) or (array_log_task(path) if is_array else None)
    known = harness_task_for(spec)
    if task is None:
        if len(known) != 1:
            raise DataFileError(path, None, "cannot tell the harness task from the file name")
        task = known[0]
    entry = HARNESS_TASKS.get(task)
    if entry is None or entry.task != spec.name:
        expected = (
            f"study task {spec.name} is logged as: {', '.join(known)}"
            if known
            else no_harness_task(spec)
        )
        raise DataFileError(path, None, f"a sample log of the harness task {task!r}; {expected}")
    refuse_file_ids(path, task, items_source)
    predictions: dict[str, Any] = {}
    unmatched: list[int] = []
    n = 0
    for at, obj in records:
        n += 1
        doc = obj.get("doc")
        if not isinstance(doc, dict) or "filtered_resps" not in obj:
            raise _error(path, at, "expected the harness's 'doc' and 'filtered_resps'")
        answer = _answer(obj["filtered_resps"], doc, entry, spec, path, at)
        key = _item_key(doc.get("idx"), spec)
        if key is None:
            unmatched.append(int(obj.get("doc_id", n - 1)))
            continue
        item, answer_id = key
        if answer_id is not None:
            answers = predictions.setdefault(item, {})
            if answer_id in answers:
                raise _error(
                    path,
                    at,
                    f"a second document for answer {answer_id} of question {item}" + _SEVERAL_RUNS,
                )
            answers[answer_id] = answer
        else:
            if item in predictions:
                raise _error(path, at, f"a second document with idx {item}" + _SEVERAL_RUNS)
            predictions[item] = answer
    if n == 0:
        raise DataFileError(path, None, "no documents in the sample log")
    model = array_log_model(path, task) if is_array else None
    return SampleLog(predictions, unmatched, n, entry.split, model)


OWN_FILE_SUFFIXES = (".tsv", ".txt")
"""GLUE's own files (`dev.tsv`, MRPC's `msr_paraphrase_*.txt`); the Hub's layouts are Parquet,
Arrow, JSON lines or CSV."""


def refuse_file_ids(path: Path, task: str, items_source: str | None) -> None:
    """The one rule for a log whose idx GLUE's own files do not give (QQP, MRPC): refused
    against items read from those files, where the same number is another item; taken
    against items imported from the Hub, whose idx the documents keep."""
    entry = HARNESS_TASKS[task]
    if entry.file_ids is None or items_source is None:
        return
    source = Path(items_source)
    if source.suffix.lower() not in OWN_FILE_SUFFIXES:
        return
    raise DataFileError(
        path,
        None,
        f"the harness's {task} documents carry the Hugging Face dataset's idx, "
        f"{entry.hub_idx}; the study's items, read from {source.name}, carry "
        f"{entry.file_ids}, and the same number there is another item. Make the study of "
        f"the split imported from the Hub (nyu-mll/glue, {task}), whose idx the log keeps",
    )


_SEVERAL_RUNS = (
    " (a log of several filters or repeats holds each document more than once: give the log of one)"
)


Where = int | str
"""Where a document stands: its line (JSON lines), or `record N` (the older harness's array,
whose documents span many lines)."""


def _error(path: Path, at: Where, reason: str) -> DataFileError:
    if isinstance(at, int):
        return DataFileError(path, at, reason)
    return DataFileError(path, None, f"{at}: {reason}")


def _objects(path: Path) -> tuple[list[tuple[Where, dict[str, Any]]], bool]:
    """The documents with where each stands, and whether the file is the older harness's
    JSON array."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(path, None, f"not valid UTF-8 ({exc.reason})") from None
    if not text.lstrip().startswith("["):
        lines = enumerate(text.split("\n"), start=1)
        return list(
            json_object_lines(path, ((n, line) for n, line in lines if line.strip()))
        ), False
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(path, exc.lineno, f"not valid JSON ({exc.msg})") from None
    if not isinstance(records, list):
        raise DataFileError(path, None, "expected a JSON array of the harness's documents")
    objects: list[tuple[Where, dict[str, Any]]] = []
    for number, obj in enumerate(records, start=1):
        if not isinstance(obj, dict):
            raise _error(path, f"record {number}", "expected a JSON object")
        objects.append((f"record {number}", obj))
    return objects, True


def _item_key(idx: Any, spec: TaskSpec) -> tuple[str, str | None] | None:
    """(item source id, MultiRC answer idx) of a document's idx; None if it has none."""
    if isinstance(idx, dict):
        if spec.kind == "multi_answer" and "question" in idx and "answer" in idx:
            return str(idx["question"]), str(idx["answer"])
        if spec.kind == "entity_choice" and "query" in idx:
            return str(idx["query"]), None
        return None
    if isinstance(idx, bool) or not isinstance(idx, int | str) or spec.kind == "multi_answer":
        return None
    return str(idx), None


def _loglikelihood(resp: Any) -> float | None:
    """A choice's loglikelihood from `[ll, is_greedy]` (numbers, or strings)."""
    value = resp[0] if isinstance(resp, list | tuple) and resp else resp
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _shape(value: Any) -> str:
    """What a JSON value is, in words, with the value when short: a string ("x"), a number
    (1.5), an object."""
    kinds = {str: "a string", bool: "true or false", int: "a number", float: "a number"}
    kind = kinds.get(type(value), "an object" if isinstance(value, dict) else "null")
    if isinstance(value, dict) or value is None:
        return kind
    shown = json.dumps(value, ensure_ascii=False)
    return f"{kind} ({shown if len(shown) <= 40 else shown[:39] + '…'})"


def _answer(
    filtered: Any, doc: dict[str, Any], entry: HarnessTask, spec: TaskSpec, path: Path, at: Where
) -> Any:
    if not isinstance(filtered, list):
        raise _error(
            path,
            at,
            f"filtered_resps is {_shape(filtered)} where the harness writes a list "
            "(one [loglikelihood, is_greedy] per choice)",
        )
    if not filtered:
        raise _error(path, at, "filtered_resps is empty")
    scores = [_loglikelihood(r) for r in filtered]
    if any(s is None for s in scores):
        raise _error(
            path,
            at,
            "filtered_resps are not loglikelihoods of the choices (a generation task?): "
            "write the answers as a CSV of id,prediction instead",
        )
    # The harness's own choice (`acc`: `np.argmax(lls)`): the first of equals, and the first
    # nan where a choice's loglikelihood is nan (a model run in half precision can give one).
    best = int(np.argmax(np.array(scores, dtype=float)))
    if entry.classes is None:
        entities = doc.get("entities")
        if not isinstance(entities, list) or len(entities) != len(scores):
            raise _error(path, at, "the doc's entities do not match filtered_resps")
        return str(entities[best])
    if len(scores) != len(entry.classes):
        raise _error(
            path,
            at,
            f"{len(scores)} choices in filtered_resps; {spec.name} has {len(entry.classes)}",
        )
    return entry.classes[best]
