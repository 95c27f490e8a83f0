"""Where a model's predictions come from, for `compare` and the report's model rows: one path
gives one model or several.

- a leaderboard submission file (`RTE.jsonl`, `STS-B.tsv`): one model, named after its folder
  (`roberta/RTE.jsonl`: roberta) where the file has the leaderboard's name, else after the file;
- an lm-evaluation-harness sample log (`samples_<task>_<date>.jsonl`): one model named after
  its folder (the harness writes `org__name` for `org/name`); or a log of harness 0.4.0 to
  0.4.2 (`<model_args>_<task>.jsonl`, one JSON array): one model named by its model arguments;
- a harness results folder: every model folder in it with a sample log of the study's task
  (the newest log per model when a task was run more than once), and every older log of the
  task (one per model arguments) in a folder without a dated one;
- a long table (CSV or JSON lines, `id,prediction`, optional `model`; `--map` names other
  columns): one model per `model` value, else one named after the file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from annotate.errors import DataFileError, UserError
from annotate.scoring.harness import (
    array_log_task,
    harness_task_for,
    is_array_log,
    is_sample_log,
    no_harness_task,
    read_sample_log,
    sample_task,
)
from annotate.scoring.long_predictions import has_columns, read_long
from annotate.scoring.predictions import ModelPredictions, read_predictions, submission_file
from annotate.specs import TaskSpec
from annotate.splits import refuse_other_split


def read_models(
    path: Path,
    spec: TaskSpec,
    mapping: Mapping[str, str] | None = None,
    *,
    study_split: str | None = None,
    study_source: str | None = None,
) -> list[ModelPredictions]:
    """The models `path` holds for `spec`'s task (see the module's list). `study_split`: the
    split the study's items come from; predictions that say they are on another split are
    refused, as their ids name other items (a `_val` file, a harness log's validation
    documents, against a study of test items). `study_source`: the file the study's items
    were imported from; a harness log whose idx that file does not give is refused
    (`harness.refuse_file_ids`)."""
    path = Path(path)
    models = _models(path, spec, mapping or {}, study_source, study_split)
    for model in models:
        refuse_other_split(model.path, model.split, study_split, "the study's items are")
    return models


def names_apart(named: Sequence[tuple[str, str]]) -> list[str]:
    """The names of models given as (name, path): a name two of them share
    (`run1/preds/RTE.jsonl` and `run2/preds/RTE.jsonl`, two folders called `bert`) is replaced
    by each one's path, so no two are scored, or averaged, as one."""
    count = Counter(name for name, _ in named)
    return [path if count[name] > 1 else name for name, path in named]


def refuse_folder_without_submissions(
    folder: Path, option: str, benchmark: str, tasks: Sequence[TaskSpec]
) -> None:
    """A folder of a benchmark's submission files (`report --benchmark --model`, `export
    --benchmark --fill-from`) holding none of `tasks`' files would add nothing, with no word
    why (a model row of dashes, no row filled): refused, naming the files looked for and, in
    a folder of lm-evaluation-harness sample logs, what reads those."""
    files = [t.submission.file for t in tasks if t.submission is not None]
    if any((folder / name).is_file() for name in files):
        return
    logs = next(folder.rglob("samples_*.jsonl"), None) is not None
    raise UserError(
        f"{option} {folder}: no {benchmark} submission file to read in it (looked for "
        f"{', '.join(files)})"
        + (
            "; it holds lm-evaluation-harness sample logs: give them to a study's report "
            "(report STUDY --model) or to compare"
            if logs
            else ""
        )
    )


def _models(
    path: Path,
    spec: TaskSpec,
    mapping: Mapping[str, str],
    study_source: str | None,
    study_split: str | None,
) -> list[ModelPredictions]:
    if path.is_dir():
        return _results_folder(path, spec, study_source, study_split)
    if not path.is_file():
        raise DataFileError(path, None, "no such file or folder")
    if is_sample_log(path):
        return [_sample_model(path, spec, _model_name(path.parent), study_source)]
    if mapping:  # the table's columns named: it is a table
        return read_long(path, spec, mapping)
    if path.suffix.lower() in (".csv", ".tsv", ".jsonl") and (
        has_columns(path, mapping) or not _submission_suffix(path, spec)
    ):  # a table; a file of another suffix than the leaderboard's can be nothing else
        return read_long(path, spec, mapping)
    return [read_predictions(path, spec)]  # with the split its name says (`RTE_val.jsonl`)


def _submission_suffix(path: Path, spec: TaskSpec) -> bool:
    """Whether `path` has the suffix of the task's leaderboard file (GLUE's `.tsv`,
    SuperGLUE's `.jsonl`); a task without one takes any."""
    if spec.submission is None:
        return True
    return path.suffix.lower() == Path(spec.submission.file).suffix.lower()


def _sample_model(
    path: Path, spec: TaskSpec, name: str, study_source: str | None
) -> ModelPredictions:
    log = read_sample_log(path, spec, items_source=study_source)
    return ModelPredictions(
        name=log.model or name,
        path=str(path),
        predictions=log.predictions,
        unmatched=[f"doc_id {d}" for d in log.unmatched],
        split=log.split,
    )


def _model_name(folder: Path) -> str:
    """The model's name: `model_name` of the folder's newest results_*.json, else the folder's
    name with the harness's `__` read back as `/`."""
    for results in sorted(folder.glob("results_*.json"), reverse=True):
        try:
            data = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        name = data.get("model_name") if isinstance(data, dict) else None
        if isinstance(name, str) and name.strip():
            return name.strip()
    return folder.name.replace("__", "/")


def _results_folder(
    folder: Path, spec: TaskSpec, study_source: str | None, study_split: str | None = None
) -> list[ModelPredictions]:
    wanted = set(harness_task_for(spec))
    logs = sorted(folder.rglob("samples_*.jsonl"))
    # Harness 0.4.0 to 0.4.2: `<model_args>_<task>.jsonl`, a JSON array, no date in the name.
    older = {
        p: array_log_task(p)
        for p in sorted(folder.rglob("*.jsonl"))
        if sample_task(p) is None and is_array_log(p)
    }
    if not logs and not any(older.values()):
        # A folder of submission files, as `report --benchmark --model DIR` takes one: the
        # task's file in it is the model, named after the folder (`roberta/RTE.jsonl`).
        official = folder / spec.submission.file if spec.submission is not None else None
        found = submission_file(folder, spec, study_split)
        if found is not None:
            return [read_predictions(found, spec)]
        raise UserError(
            f"{folder}: no lm-evaluation-harness sample logs (samples_*.jsonl, or "
            "<model_args>_<task>.jsonl of harness 0.4.0 to 0.4.2) in it"
            + (f", nor {official.name}, the task's submission file" if official else "")
        )
    newest: dict[Path, Path] = {}
    for log in logs:  # names sort by date within a task: the last is the newest run
        if sample_task(log) in wanted:
            newest[log.parent] = log
    # An older log is the run of the model its arguments name; a folder holding a dated log
    # of the task too is a model's folder logged again by a newer harness: its dated log is
    # the newest run, as among dated logs.
    undated = [log for log, task in older.items() if task in wanted and log.parent not in newest]
    chosen = sorted([*newest.values(), *undated])
    if not chosen:
        found = sorted({t for t in [*(sample_task(p) for p in logs), *older.values()] if t})
        logged = f"harness task {', '.join(sorted(wanted))}" if wanted else no_harness_task(spec)
        raise UserError(
            f"{folder}: no sample log of {spec.name} ({logged}); the logs here are of: "
            f"{', '.join(found)}"
        )
    return [_sample_model(log, spec, _model_name(log.parent), study_source) for log in chosen]
