"""What goes into a study's leaderboard file: the human answer of every sampled test item and,
when asked, a model's predictions for the test items people did not label (the leaderboards
want every test item), with a record of which rows are whose.

The result is plain data (ids, label values, provenance); `annotate.formats.writers` turns it
into bytes. Gold labels are never read here: the test items are loaded without them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from annotate import specs
from annotate.errors import DataFileError, UserError
from annotate.export.human_answers import human_answers
from annotate.report.data.loading import TEST_PHASE, find_study, load_study_data
from annotate.scoring.benchmark import choose_studies
from annotate.scoring.predictions import ModelPredictions
from annotate.store.models import Item, Study, StudyItem


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
    """Items of the file's item set with no answer at all (left out of the file)."""
    unlabelled: list[str]
    """Sampled items nobody has labelled yet."""
    undecided: list[str]
    """Sampled items whose tie the study's rule left without an answer."""
    aggregation: str
    n_sample: int
    filled_from: str | None = None
    n_test_items: int | None = None
    """Items in the study's test dataset (with a model fill: the rows a full file has)."""

    @property
    def file(self) -> str:
        return self.spec.submission.file

    def manifest(self) -> dict[str, Any]:
        """The record of this file kept beside it: which rows are human, which the model's."""
        return {
            "file": self.file,
            "study": self.study,
            "task": self.spec.name,
            "aggregation": self.aggregation,
            "rows": sum(1 for i in self.order if i in self.predictions),
            "sampled_items": self.n_sample,
            "test_items": self.n_test_items,
            "human_rows": len(self.human),
            "model_rows": len(self.model),
            "filled_from": self.filled_from,
            "missing_rows": len(self.missing),
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
        filled_from=model.path if model is not None else None,
        n_test_items=len(items) if model is not None else None,
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
