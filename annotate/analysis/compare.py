"""A model beside the humans of a study, on exactly the same test items: the human majority (as
the report aggregates it), the mean single annotator, the model, the paired difference with a
bootstrap interval, McNemar's test for classification, and which items each gets right.

Pairing: all three are scored on the *common* items, those with gold, a human answer and a
model prediction. The human and model replicates draw the same resamples (the same seed over
the same units), so the interval is that of the paired difference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annotate.analysis import aggregate as agg
from annotate.analysis.coding import CodedStudy
from annotate.analysis.data import StudyData
from annotate.analysis.human_answers import describe_aggregation, final_aggregate
from annotate.analysis.intervals import percentile_interval, rng_for
from annotate.analysis.metrics import NO_ANSWER, Scorer, record_scores, task_score
from annotate.analysis.models import model_units
from annotate.analysis.predictions import ModelPredictions
from annotate.analysis.scoring import (
    answer_scorer,
    count_scored,
    entity_texts,
    gold_available,
    score_with_intervals,
    scorer_for,
)
from annotate.errors import UserError


def _has_gold(coded: CodedStudy) -> np.ndarray:
    if coded.kind == "regression":
        return np.isfinite(coded.gold_number)
    if coded.kind == "entity_choice":
        return np.array([bool(g) for g in coded.gold_entities], dtype=bool)
    return coded.gold_code >= 0


def _answered(coded: CodedStudy, pred: np.ndarray) -> np.ndarray:
    if coded.kind == "regression":
        return np.isfinite(pred)
    if pred.dtype == object:
        return np.array([p is not None for p in pred], dtype=bool)
    return pred != agg.NO_LABELS


def _masked(coded: CodedStudy, pred: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """`pred` with the units outside `keep` marked as not answered (so not scored)."""
    out = pred.copy()
    if coded.kind == "regression":
        out[~keep] = np.nan
    elif out.dtype == object:
        out[~keep] = None
    else:
        out[~keep] = agg.NO_LABELS
    return out


def _units_right(coded: CodedStudy, pred: np.ndarray) -> np.ndarray:
    """Whether each unit's prediction is right (ReCoRD: exact match with a gold answer)."""
    if coded.kind == "entity_choice":
        return np.array(
            [
                p is not None and p is not NO_ANSWER and record_scores(p, g or [])[1] == 1.0
                for p, g in zip(pred, coded.gold_entities, strict=True)
            ],
            dtype=bool,
        )
    return pred == coded.gold_code


def _items_right(coded: CodedStudy, pred: np.ndarray, common: np.ndarray) -> np.ndarray:
    """Per item: every common unit of it right (MultiRC: the question's exact match)."""
    wrong = np.bincount(
        coded.unit_item, weights=common & ~_units_right(coded, pred), minlength=coded.n_items
    )
    return wrong == 0


def _item_lists(
    coded: CodedStudy, human: np.ndarray, model: np.ndarray, common: np.ndarray
) -> tuple[dict[str, list[str]], np.ndarray, np.ndarray]:
    """Source ids of the common items by who gets them right; the right/wrong arrays."""
    item_has = np.bincount(coded.unit_item, weights=common, minlength=coded.n_items) > 0
    human_right = _items_right(coded, human, common)[item_has]
    model_right = _items_right(coded, model, common)[item_has]
    names = coded.items["source_id"].astype(str).to_numpy()[item_has]
    lists = {
        "both_right": names[human_right & model_right].tolist(),
        "human_only_right": names[human_right & ~model_right].tolist(),
        "model_only_right": names[model_right & ~human_right].tolist(),
        "neither_right": names[~human_right & ~model_right].tolist(),
    }
    return lists, human_right, model_right


def _paired_difference(
    human: Scorer, model: Scorer, value: float, metrics: list[str], replicates: int, seed: int
) -> dict[str, Any]:
    """Model minus human task score with the percentile interval of the paired replicates."""
    model_reps = _replicate_totals(model, metrics, replicates, seed)
    human_reps = _replicate_totals(human, metrics, replicates, seed)
    low = high = None
    if len(model_reps) and len(model_reps) == len(human_reps):
        low, high = percentile_interval(model_reps - human_reps)
    return {
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "of": "model minus human majority, task score",
    }


def _replicate_totals(scorer: Scorer, metrics: list[str], n: int, seed: int) -> np.ndarray:
    """Task score per bootstrap replicate; the same seed and units give the same resamples."""
    if n <= 0 or scorer.n_units == 0:
        return np.zeros(0)
    reps = scorer.replicates(n, rng_for(seed, "compare"))
    return np.mean(np.vstack([reps[m] for m in metrics]), axis=0)


def _single_annotators(coded: CodedStudy, common: np.ndarray) -> dict[str, Any]:
    """Each annotator's own answers on the common units, scored; their mean."""
    n_ann = len(coded.annotators)
    if n_ann == 0:
        return {"n_annotators": 0, "task_score": None, "scores": {}}
    scorer, annotator = answer_scorer(coded)
    group = np.where(common[coded.label_unit], annotator, n_ann)
    per = scorer.by_group(group, n_ann + 1)[:n_ann]
    totals = [task_score(p) for p in per]
    defined = [t for t in totals if t is not None]
    metrics = {m: _mean([p.get(m) for p in per]) for m in coded.spec.metrics}
    return {
        "n_annotators": len(defined),
        "task_score": float(np.mean(defined)) if defined else None,
        "scores": metrics,
    }


def _mean(values: list[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return float(np.mean(defined)) if defined else None


def _mcnemar(human_right: np.ndarray, model_right: np.ndarray) -> dict[str, Any]:
    """McNemar's exact test (statsmodels) on the items' right/wrong pairs."""
    from statsmodels.stats.contingency_tables import mcnemar  # heavy: only this command

    both = int((human_right & model_right).sum())
    human_only = int((human_right & ~model_right).sum())
    model_only = int((model_right & ~human_right).sum())
    neither = int((~human_right & ~model_right).sum())
    result = mcnemar([[both, human_only], [model_only, neither]], exact=True)
    return {
        "table": {
            "both_right": both,
            "human_only_right": human_only,
            "model_only_right": model_only,
            "neither_right": neither,
        },
        "statistic": float(result.statistic),
        "p_value": float(result.pvalue),
        "method": "exact (binomial on the discordant items), statsmodels",
    }


def compare_model(
    data: StudyData, model: ModelPredictions, *, bootstrap: int = 1000, seed: int | None = None
) -> dict[str, Any]:
    """The comparison of `model` with the study's humans as JSON-ready data."""
    seed = data.protocol.seed if seed is None else seed
    coded, final = final_aggregate(data)
    if not gold_available(coded):
        raise UserError(
            f"study {data.name!r} has no gold labels for its test items: nothing to compare on"
        )
    human_pred = final.pred
    model_pred = model_units(coded, model)
    if coded.kind == "entity_choice":
        human_pred = entity_texts(coded, human_pred)
    has_gold = _has_gold(coded)
    common = has_gold & _answered(coded, human_pred) & _answered(coded, model_pred)
    if not common.any():
        raise UserError(
            f"{model.path}: no prediction for any labelled item of study {data.name!r} "
            "(is it the file of this task's test split?)"
        )
    metrics = list(coded.spec.metrics)
    human_scorer = scorer_for(coded, _masked(coded, human_pred, common))
    model_scorer = scorer_for(coded, _masked(coded, model_pred, common))
    human_scores, human_total = score_with_intervals(
        human_scorer, metrics, bootstrap, seed, "compare/human"
    )
    model_scores, model_total = score_with_intervals(
        model_scorer, metrics, bootstrap, seed, "compare/model"
    )
    difference = None
    if human_total["value"] is not None and model_total["value"] is not None:
        difference = _paired_difference(
            human_scorer,
            model_scorer,
            model_total["value"] - human_total["value"],
            metrics,
            bootstrap,
            seed,
        )
    n_common_items = len(np.unique(coded.unit_item[common]))
    items: dict[str, list[str]] | None = None
    mcnemar = None
    notes = []
    if coded.kind != "regression":
        items, human_right, model_right = _item_lists(coded, human_pred, model_pred, common)
        if coded.kind == "classification":
            mcnemar = _mcnemar(human_right, model_right)
    else:
        notes.append("ratings have no right or wrong per item: no item lists, no McNemar test")
    n_scored = count_scored(coded, human_pred)
    n_model = count_scored(coded, model_pred)
    if n_common_items < max(n_scored, n_model):
        notes.append(
            f"scored on the {n_common_items} items with gold, a human answer and a prediction "
            f"(human answers: {n_scored}, model predictions: {n_model})"
        )
    return {
        "study": data.name,
        "task": coded.spec.name,
        "model": {"name": model.name, "file": model.path},
        "metrics": metrics,
        "aggregation": describe_aggregation(data),
        "n_items": n_common_items,
        "unit": "question" if coded.kind == "multi_answer" else "item",
        "coverage": {
            "sample": coded.n_items,
            "human_scored": n_scored,
            "model_scored": n_model,
            "common": n_common_items,
        },
        "human": {"scores": human_scores, "task_score": human_total},
        "single_annotator": _single_annotators(coded, common),
        "model_scores": {"scores": model_scores, "task_score": model_total},
        "difference": difference,
        "mcnemar": mcnemar,
        "items": items,
        "bootstrap": {"replicates": bootstrap, "seed": seed},
        "notes": notes,
    }
