"""What goes into a study's leaderboard file: the human answer of every sampled test item and,
when asked, a model's predictions for the test items people did not label (the leaderboards
want every test item), with a record of which rows are whose.

The result is plain data (ids, label values, provenance); `annotate.formats.writers` turns it
into bytes. Gold labels are never read here: the test items are loaded without them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from annotate import specs
from annotate.errors import DataFileError, UserError
from annotate.export import MANIFEST_SUFFIX
from annotate.export.human_answers import human_answers
from annotate.report.data.loading import TEST_PHASE, find_study, load_study_data
from annotate.scoring.benchmark import choose_studies
from annotate.scoring.predictions import ModelPredictions
from annotate.splits import canonical_split, same_split_family
from annotate.store.models import Dataset, Item, Study, StudyItem


@dataclass
class TestItem:
    """A test item as a submission needs it: no text, no gold."""

    source_id: str
    position: int
    paragraph: str | None = None
    """MultiRC: the paragraph idx the question belongs to."""
    answers: list[str] = field(default_factory=list)
    """MultiRC: the idx of each candidate answer."""


def load_test_items(
    engine: Engine, study: Study, spec: specs.TaskSpec, whole: bool
) -> list[TestItem]:
    """The study's sampled test items (`whole`: every item of its test dataset), in the order of
    the source file."""
    multirc = spec.kind == "multi_answer"
    columns: list[Any] = [Item.source_id, Item.position]
    if multirc:
        columns.append(Item.fields)
    query = select(*columns)
    if whole:
        query = query.where(Item.dataset_id == study.test_dataset_id)
    else:
        query = query.join(StudyItem, StudyItem.item_id == Item.id).where(
            StudyItem.study_id == study.id, StudyItem.phase == TEST_PHASE
        )
    with engine.connect() as conn:
        rows = conn.execute(query.order_by(Item.position)).all()
    items = []
    for row in rows:
        item = TestItem(source_id=str(row[0]), position=int(row[1]))
        if multirc:
            fields = row[2] or {}
            item.paragraph = str(fields.get("paragraph", ""))
            item.answers = [str(a["idx"]) for a in fields.get("answers", [])]
        items.append(item)
    return items


def source_positions(engine: Engine, study_name: str, spec: specs.TaskSpec) -> dict[str, int]:
    """Source id -> place in its file of the study's test items: the order every per-item
    table (labels, soft, answers) lists them in, whatever the sample's order."""
    items = load_test_items(engine, find_study(engine, study_name), spec, whole=False)
    return {i.source_id: i.position for i in items}


@dataclass
class StudySubmission:
    """One task's submission content and its provenance."""

    study: str
    spec: specs.TaskSpec
    order: list[str]
    """Source ids of the rows, in source order."""
    predictions: dict[str, Any]
    """Source id -> label value (MultiRC: {answer idx: "0"/"1"})."""
    paragraph_of: dict[str, str]
    human: list[str]
    """Rows whose answer is the human aggregate."""
    model: list[str]
    """Rows filled from the model's file."""
    incomplete: list[str]
    """MultiRC questions written without a judgement for every candidate answer."""
    missing: list[str]
    """Items of the file's item set (the sample; with a model, the whole dataset) with no
    answer at all (left out of the file)."""
    unlabelled: list[str]
    """Sampled items nobody has labelled yet."""
    undecided: list[str]
    """Sampled items whose tie the study's rule left without an answer."""
    aggregation: str
    n_sample: int
    n_test_items: int
    """Items in the dataset the study's test items are drawn from: the rows a full file has."""
    test_split: str
    """That dataset's split (canonical: `test`, `dev`, `train` …)."""
    filled_from: str | None = None

    @property
    def file(self) -> str:
        return self.spec.submission.file

    @property
    def n_rows(self) -> int:
        return sum(1 for i in self.order if i in self.predictions)

    @property
    def rows_short(self) -> int:
        """Items of the dataset the file has no row for (a leaderboard wants every one)."""
        return self.n_test_items - self.n_rows

    @property
    def of_test_split(self) -> bool:
        """Whether the items are a test split's: a leaderboard scores nothing else."""
        return same_split_family(self.test_split, "test")

    def manifest(self) -> dict[str, Any]:
        """The record of this file kept beside it: which rows are human, which the model's."""
        return {
            "file": self.file,
            "study": self.study,
            "task": self.spec.name,
            "aggregation": self.aggregation,
            "test_split": self.test_split,
            "rows": self.n_rows,
            "sampled_items": self.n_sample,
            "test_items": self.n_test_items,
            "human_rows": len(self.human),
            "model_rows": len(self.model),
            "filled_from": self.filled_from,
            "missing_rows": self.rows_short,
            "human_ids": self.human,
            "model_ids": self.model,
            "incomplete_ids": self.incomplete,
            "missing_ids": self.missing,
            "unlabelled_ids": self.unlabelled,
            "undecided_ids": self.undecided,
        }


def study_submission(
    engine: Engine, study_name: str, model: ModelPredictions | None = None
) -> StudySubmission:
    """The submission of study `study_name`: the human answers of its sample, completed with
    `model`'s predictions for the rest of its test dataset when a model is given."""
    data = load_study_data(engine, study_name, exclusions=False)  # every item is answered
    study = find_study(engine, study_name)
    spec = data.spec
    human = human_answers(data)
    items = load_test_items(engine, study, spec, whole=model is not None)
    with engine.connect() as conn:
        n_test_items = conn.execute(
            select(Dataset.n_items).where(Dataset.id == study.test_dataset_id)
        ).scalar_one()
    if model is not None:
        _check_model_ids(model, items, study)
    multirc = spec.kind == "multi_answer"
    out = StudySubmission(
        study=data.name,
        spec=spec,
        order=[i.source_id for i in items],
        predictions={},
        paragraph_of={i.source_id: i.paragraph or "" for i in items} if multirc else {},
        human=[],
        model=[],
        incomplete=[],
        missing=[],
        unlabelled=sorted(human.unlabelled, key=_order_key(items)),
        undecided=sorted(human.undecided, key=_order_key(items)),
        aggregation=human.description,
        n_sample=data.n_sample,
        n_test_items=int(n_test_items),
        test_split=canonical_split(data.test_split or "test"),
        filled_from=model.path if model is not None else None,
    )
    model_preds = model.predictions if model is not None else {}
    for item in items:
        sid = item.source_id
        mine, theirs = human.answers.get(sid), model_preds.get(sid)
        if multirc:
            merged = {a: v for a, v in (theirs or {}).items() if a in item.answers}
            merged.update(mine or {})
            value: Any = merged or None
            if value is not None and set(merged) != set(item.answers):
                out.incomplete.append(sid)
        else:
            value = mine if mine is not None else theirs
        if value is None:
            out.missing.append(sid)
            continue
        out.predictions[sid] = value
        (out.human if mine is not None else out.model).append(sid)
    return out


def _order_key(items: list[TestItem]) -> Callable[[str], int]:
    """Sort ids by their item's place in the source file."""
    place = {i.source_id: i.position for i in items}
    return lambda sid: place.get(sid, -1)


def _check_model_ids(model: ModelPredictions, items: list[TestItem], study: Study) -> None:
    """A fill file must be for this test set: an id that is not one of its items means the
    wrong file (another split or task)."""
    known = {i.source_id for i in items}
    stray = [sid for sid in model.predictions if sid not in known]
    if stray:
        raise DataFileError(
            model.path,
            None,
            f"{len(stray)} of its {len(model.predictions)} ids are not items of study "
            f"{study.name!r}'s test set (dataset {study.test_dataset_id}), e.g. {stray[0]!r}: "
            "is it the prediction file for this task's test split?",
        )


# --- the folder's manifest --------------------------------------------------------------------


def manifest_name(benchmark: str) -> str:
    return benchmark + MANIFEST_SUFFIX


@dataclass
class FolderManifest:
    """A folder's manifest after an export: the files just written and those of earlier
    exports into the folder that are still there as they were written."""

    manifest: dict[str, Any]
    kept: dict[str, bytes]
    """Earlier exports' files the manifest still lists (name -> content, as checked)."""
    dropped: list[str]
    """Why an earlier entry is no longer listed, one sentence each."""

    @property
    def not_of_test_items(self) -> list[tuple[str, str]]:
        """(file, split) of each listed file whose items are not a test split's."""
        return [
            (e["file"], str(e["test_split"]))
            for e in self.manifest["files"]
            if e.get("test_split") and not same_split_family(str(e["test_split"]), "test")
        ]


def folder_manifest(
    folder: Path,
    benchmark: str,
    entries: Sequence[dict[str, Any]],
    passed_over: Sequence[str] | None = None,
) -> FolderManifest:
    """The manifest of `folder` once `entries`' files are written into it: every submission
    file in it that a manifest describes. An earlier export's entry stays listed while its
    file is in the folder with the digest it was written with; an entry of a file written now
    (the same task) is replaced. `missing_tasks` are the benchmark's tasks with no file listed;
    `passed_over_studies` (an export of the benchmark) the studies another stood for."""
    path = folder / manifest_name(benchmark)
    written = {e["file"] for e in entries}
    kept: dict[str, bytes] = {}
    kept_entries: list[dict[str, Any]] = []
    dropped: list[str] = []
    for entry in _earlier_entries(path):
        name = entry["file"]
        if name in written or name in kept:
            continue
        try:
            content = (folder / name).read_bytes()
        except OSError:
            dropped.append(f"{name} (in {path.name}) is no longer in {folder}: no longer listed")
            continue
        if hashlib.sha256(content).hexdigest() != entry.get("sha256"):
            dropped.append(
                f"{name} changed since it was exported (its sha256 is not the one {path.name} "
                "recorded): no longer listed nor zipped; export its study again"
            )
            continue
        kept[name] = content
        kept_entries.append(entry)
    files = sorted([*entries, *kept_entries], key=lambda e: str(e["file"]))
    listed = {e.get("task") for e in files}
    tasks = [t.name for t in specs.builtin_tasks() if t.benchmark == benchmark]
    manifest: dict[str, Any] = {
        "format": benchmark,
        "files": files,
        "missing_tasks": [t for t in tasks if t not in listed],
    }
    if passed_over is not None:
        manifest["passed_over_studies"] = list(passed_over)
    return FolderManifest(manifest, kept, dropped)


def _earlier_entries(path: Path) -> list[dict[str, Any]]:
    """The file entries of a manifest an earlier export wrote ([] when there is none); one
    that is not such a manifest is an error naming it (an export does not write over it)."""
    if not path.parent.is_dir():  # a new folder (a --to that is no folder: output_folder's)
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise DataFileError(path, None, f"cannot read it ({exc}); move it away") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(
            path,
            exc.lineno,
            f"not valid JSON ({exc.msg}): not a manifest an export wrote; move it away",
        ) from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list):
        raise DataFileError(
            path, None, "no 'files' list: not a manifest an export wrote; move it away"
        )
    entries = []
    for n, entry in enumerate(files, start=1):
        name = entry.get("file") if isinstance(entry, dict) else None
        # A plain file name of the folder: an entry never names a file elsewhere.
        if not isinstance(name, str) or not name or Path(name).name != name or name in (".", ".."):
            raise DataFileError(
                path,
                None,
                f"files #{n} names no file of the folder: not a manifest an export wrote; "
                "move it away",
            )
        entries.append(entry)
    return entries


# --- the studies of a benchmark --------------------------------------------------------------


@dataclass
class BenchmarkStudies:
    chosen: list[tuple[specs.TaskSpec, str]]
    """(task, study) for each task of the benchmark that has a study (choose_studies)."""
    missing_tasks: list[str]
    passed_over: list[str]
    """Studies of a task that another study (chosen with --study) stands for."""


def benchmark_studies(
    engine: Engine, benchmark: str, chosen: Sequence[str] = ()
) -> BenchmarkStudies:
    """The study to export for each task of `benchmark` (diagnostic sets included), by the one
    rule (scoring.benchmark.choose_studies, as `report --benchmark` chooses): UserError, in
    the same words, when a task has several studies and none was chosen with --study."""
    tasks = [t for t in specs.builtin_tasks() if t.benchmark == benchmark]
    if not tasks:
        raise UserError(f"no tasks of benchmark {benchmark!r}")
    choice = choose_studies(engine, benchmark, chosen, tasks=[t.name for t in tasks]).require()
    return BenchmarkStudies(
        chosen=[(t, choice.chosen[t.name]) for t in tasks if t.name in choice.chosen],
        missing_tasks=choice.missing,
        passed_over=choice.passed_over,
    )
