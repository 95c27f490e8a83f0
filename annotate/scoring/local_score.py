"""The standard scorer, run locally: a model's (or the humans') submission file against a
labelled data file of the task, matched by id.

Coverage counts what the file answers: items (MultiRC: questions, and their answers). A file
that leaves any out is incomplete: its scores are given on what it answers, and beside them as
a leaderboard would score it, everything left out counted wrong (`model_predictions`).

The gold file is coded into units with gold (`code_gold`, as a study's sample is) and the
predictions are scored by the same code that scores models in a study report (`model_units` +
`scorer_for`), so a file exported from a study scores exactly what the report says. Ids in the
gold file without a prediction are left out and reported as coverage; the benchmark score
(GLUE / SuperGLUE) is the mean over the tasks present of each task score, marked partial when
any task is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from annotate.errors import UserError
from annotate.scoring.benchmark import average_tasks, benchmark_tasks
from annotate.scoring.caveats import score_caveats
from annotate.scoring.diagnostics import diagnostics
from annotate.scoring.model_predictions import (
    counted_wrong,
    counted_wrong_rule,
    missing_answers,
    model_units,
)
from annotate.scoring.predictions import ModelPredictions
from annotate.scoring.scorers import count_scored, score_with_intervals, scorer_for
from annotate.scoring.units import GoldUnits, code_gold
from annotate.specs import TaskSpec
from annotate.splits import refuse_other_split


class GoldData(Protocol):
    """The gold of one labelled data file (`annotate.formats.gold.GoldFile` is one)."""

    path: str
    spec: TaskSpec
    ids: list[str]
    gold: list[Any]
    tags: list[dict[str, list[str]] | None]
    pair_ids: list[str | None]
    paragraphs: list[str | None]
    split: str | None


def code_gold_file(gold: GoldData) -> GoldUnits:
    """The gold file's items as units with gold."""
    return code_gold(gold.spec, gold.ids, gold.gold, gold.pair_ids)


def _with_gold(units: GoldUnits) -> int:
    """Items that carry gold (MultiRC: questions with a gold judgement)."""
    if units.kind == "regression":
        return int(np.isfinite(units.gold_number).sum())
    if units.kind == "entity_choice":
        return sum(1 for g in units.gold_entities if g)
    return len(np.unique(units.unit_item[units.gold_code >= 0]))


def _drop_models(entry: Any) -> Any:
    """Diagnostics rows without the (empty) per-model columns of the report's version."""
    if isinstance(entry, dict):
        return {k: _drop_models(v) for k, v in entry.items() if k != "models"}
    return entry


@dataclass
class TaskResult:
    task: str
    title: str
    benchmark: str
    file: str
    gold: str
    metrics: list[str]
    scores: dict[str, dict[str, Any]]
    task_score: dict[str, Any]
    coverage: dict[str, Any]
    diagnostics: dict[str, Any] | None
    missing_counted_wrong: dict[str, Any] | None = None
    """Incomplete files: {"scores", "task_score"} of the complete file with every id left out
    answered wrong, the "rule" it was completed by and a "note" where its score reads unlike
    the metric on the answers given (a correlation below 0)."""
    notes: list[str] = field(default_factory=list)
    """Why a score reads as it does where its metric degenerates (`scoring.caveats`)."""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def score_predictions(
    gold: GoldData, model: ModelPredictions, *, bootstrap: int = 0, seed: int = 0
) -> TaskResult:
    """Score `model` against `gold` (same task). Errors when no prediction matches a gold id."""
    spec = gold.spec
    # The rule `compare` applies to a study's items: `RTE_val.jsonl` is not scored on train.
    refuse_other_split(model.path, model.split, gold.split, f"the items of {gold.path} are")
    units = code_gold_file(gold)
    pred = model_units(units, model, gold.paragraphs if units.kind == "multi_answer" else None)
    scored = count_scored(units, pred)
    known = set(gold.ids)
    not_in_gold = sum(1 for sid in model.predictions if sid not in known)
    if scored == 0:
        raise UserError(
            f"{model.path}: none of its {len(model.predictions)} predictions matches a labelled "
            f"item of {gold.path} (is it the gold file of the same task and split?)"
        )
    scorer = scorer_for(units, pred)
    metrics = list(spec.metrics)
    purpose = f"score/{spec.name}"
    scores, total = score_with_intervals(scorer, metrics, bootstrap, seed, purpose)
    n_gold = _with_gold(units)
    answers_missing = missing_answers(units, model)
    complete = scored == n_gold and answers_missing == 0
    as_leaderboard = None
    if not complete:
        wrong_scores, wrong_total = score_with_intervals(
            scorer_for(units, counted_wrong(units, pred)), metrics, bootstrap, seed, purpose
        )
        rule, note = counted_wrong_rule(units)
        as_leaderboard = {
            "scores": wrong_scores,
            "task_score": wrong_total,
            "rule": rule,
            "note": note,
        }
    diag = None
    if units.kind == "classification" and any(gold.tags):
        table = diagnostics(
            list(gold.tags),
            units.gold_code,
            pred,
            {},
            len(units.classes),
            replicates=bootstrap,
            seed=seed,
            category_order=list(spec.source.tag_columns),
        )
        diag = _drop_models(table)
    return TaskResult(
        task=spec.name,
        title=spec.title,
        benchmark=spec.benchmark,
        file=model.path,
        gold=gold.path,
        metrics=metrics,
        scores=scores,
        task_score=total,
        coverage={
            "unit": "question" if units.kind == "multi_answer" else "item",
            "scored": scored,
            "gold": n_gold,
            "fraction": scored / n_gold if n_gold else None,
            "predictions": len(model.predictions),
            "not_in_gold": not_in_gold,
            "complete": complete,
            **(
                _answer_coverage(units, pred, answers_missing)
                if units.kind == "multi_answer"
                else {}
            ),
        },
        diagnostics=diag,
        missing_counted_wrong=as_leaderboard,
        notes=score_caveats(units, pred, "the predictions"),
    )


def _answer_coverage(units: GoldUnits, pred: np.ndarray, missing: int) -> dict[str, Any]:
    """MultiRC: answers with gold, answered by the file, and left out of answered questions
    (scored as wrong, see `model_predictions`)."""
    with_gold = units.gold_code >= 0
    return {
        "answers_gold": int(with_gold.sum()),
        "answers_given": int((with_gold & (pred != -1)).sum()) - missing,
        "answers_missing": missing,
        "rule": "an answer missing from a question the file answers counts as wrong "
        "(F1a: a false negative or false positive; that question is not an exact match)",
    }


def benchmark_scores(results: Sequence[TaskResult]) -> list[dict[str, Any]]:
    """The GLUE / SuperGLUE score over the tasks scored, one entry per benchmark present: the
    mean over tasks of each task score (MNLI matched and mismatched averaged into one task;
    the diagnostic sets are not part of it, as on the leaderboards)."""
    out = []
    for benchmark in sorted({r.benchmark for r in results}):
        components = [t.name for t in benchmark_tasks(benchmark)]
        if not components:
            continue
        scored = {
            r.task: r.task_score["value"]
            for r in results
            if r.task in components and r.task_score["value"] is not None
        }
        if not scored:
            continue  # only diagnostic sets (or nothing scorable): no benchmark score
        average = average_tasks(scored, components)
        all_groups, group_scores = average.groups, average.group_scores
        missing = [t for t in components if t not in scored]
        incomplete = [
            r.task for r in results if r.task in scored and not r.coverage.get("complete", True)
        ]
        as_leaderboard = {
            r.task: (r.missing_counted_wrong or {"task_score": r.task_score})["task_score"]["value"]
            for r in results
            if r.task in scored
        }
        notes = []
        if missing:
            notes.append(
                f"{len(group_scores)} of {len(all_groups)} tasks; missing " + ", ".join(missing)
            )
        if incomplete:
            notes.append("ids missing from " + ", ".join(incomplete))
        out.append(
            {
                "benchmark": benchmark,
                "score": average.score,
                "partial": bool(missing or incomplete),
                "n_tasks": len(all_groups),
                "n_tasks_covered": len(group_scores),
                "tasks": dict(group_scores),
                "missing": missing,
                "incomplete": incomplete,
                # What a leaderboard would give: every id a file leaves out counted wrong.
                "score_missing_counted_wrong": average_tasks(as_leaderboard, components).score
                if incomplete
                else None,
                "note": "partial: " + "; ".join(notes) if notes else None,
            }
        )
    return out
