"""The standard scorer, run locally: a model's (or the humans') submission file against a
labelled data file of the task, matched by id.

The predictions are scored by the same code that scores models in a study report
(`model_units` + `scorer_for` on the gold coded as a study without labels), so a file exported
from a study scores exactly what the report says. Ids in the gold file without a prediction are
left out and reported as coverage; the benchmark score (GLUE / SuperGLUE) is the mean over the
tasks present of each task score, marked partial when any task is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from annotate.analysis.benchmark import TASK_GROUPS, benchmark_tasks
from annotate.analysis.coding import CodedStudy, code_study
from annotate.analysis.data import ITEM_COLUMNS, LABEL_COLUMNS, StudyData
from annotate.analysis.diagnostics import diagnostics
from annotate.analysis.metrics import task_score
from annotate.analysis.models import model_units
from annotate.analysis.predictions import ModelPredictions
from annotate.analysis.scoring import count_scored, score_with_intervals, scorer_for
from annotate.errors import UserError
from annotate.specs import ProtocolSpec, TaskSpec


class GoldData(Protocol):
    """The gold of one labelled data file (`annotate.formats.gold.GoldFile` is one)."""

    path: str
    spec: TaskSpec
    ids: list[str]
    gold: list[Any]
    tags: list[dict[str, list[str]] | None]
    pair_ids: list[str | None]


# The scorer codes the gold like a study with no labels; no protocol rule is applied to it.
_NO_PROTOCOL = ProtocolSpec(name="local-score", description="scoring a file: no protocol")


def code_gold(gold: GoldData) -> CodedStudy:
    """The gold file as a coded study without labels: units, gold codes, tags and pairs."""
    n = len(gold.ids)
    items = pd.DataFrame(
        {
            "item_id": np.arange(n, dtype=np.int64),
            "source_id": np.asarray(gold.ids, dtype=object),
            "position": np.arange(n, dtype=np.int64),
            "gold": pd.Series(gold.gold, dtype=object),
            "tags": pd.Series(gold.tags, dtype=object),
            "pair_id": pd.Series(gold.pair_ids, dtype=object),
        }
    )[ITEM_COLUMNS]
    labels = pd.DataFrame({c: pd.Series(dtype=object) for c in LABEL_COLUMNS})
    data = StudyData(
        study_id=0,
        name=gold.path,
        state="gold",
        spec=gold.spec,
        protocol=_NO_PROTOCOL,
        settings={},
        items=items,
        labels=labels,
    )
    return code_study(data)


def _with_gold(coded: CodedStudy) -> int:
    """Items that carry gold (MultiRC: questions with a gold judgement)."""
    if coded.kind == "regression":
        return int(np.isfinite(coded.gold_number).sum())
    if coded.kind == "entity_choice":
        return sum(1 for g in coded.gold_entities if g)
    return len(np.unique(coded.unit_item[coded.gold_code >= 0]))


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

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def score_predictions(
    gold: GoldData, model: ModelPredictions, *, bootstrap: int = 0, seed: int = 0
) -> TaskResult:
    """Score `model` against `gold` (same task). Errors when no prediction matches a gold id."""
    spec = gold.spec
    coded = code_gold(gold)
    pred = model_units(coded, model)
    scored = count_scored(coded, pred)
    known = set(gold.ids)
    not_in_gold = sum(1 for sid in model.predictions if sid not in known)
    if scored == 0:
        raise UserError(
            f"{model.path}: none of its {len(model.predictions)} predictions matches a labelled "
            f"item of {gold.path} (is it the gold file of the same task and split?)"
        )
    scorer = scorer_for(coded, pred)
    metrics = list(spec.metrics)
    scores, total = score_with_intervals(scorer, metrics, bootstrap, seed, f"score/{spec.name}")
    n_gold = _with_gold(coded)
    diag = None
    if coded.kind == "classification" and any(gold.tags):
        table = diagnostics(
            list(gold.tags),
            coded.gold_code,
            pred,
            {},
            len(coded.classes),
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
            "unit": "question" if coded.kind == "multi_answer" else "item",
            "scored": scored,
            "gold": n_gold,
            "fraction": scored / n_gold if n_gold else None,
            "predictions": len(model.predictions),
            "not_in_gold": not_in_gold,
        },
        diagnostics=diag,
    )


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
        groups: dict[str, list[float]] = {}
        for task, value in scored.items():
            groups.setdefault(TASK_GROUPS.get(task, task), []).append(value)
        all_groups = list(dict.fromkeys(TASK_GROUPS.get(t, t) for t in components))
        group_scores = {g: float(np.mean(v)) for g, v in groups.items()}
        missing = [t for t in components if t not in scored]
        score = task_score(group_scores) if group_scores else None
        out.append(
            {
                "benchmark": benchmark,
                "score": score,
                "partial": bool(missing),
                "n_tasks": len(all_groups),
                "n_tasks_covered": len(group_scores),
                "tasks": {g: group_scores[g] for g in all_groups if g in group_scores},
                "missing": missing,
                "note": (
                    f"partial: {len(group_scores)} of {len(all_groups)} tasks; missing "
                    + ", ".join(missing)
                )
                if missing
                else None,
            }
        )
    return out
