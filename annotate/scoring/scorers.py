"""Glue between units with gold and the metrics: the task's scorer for one answer per unit (the
human majority, a model's predictions) of any task kind, what is scored, and point values with
bootstrap intervals."""

from __future__ import annotations

from typing import Any

import numpy as np

from annotate.scoring.intervals import percentile_interval, rng_for, scale_lowest, score_interval
from annotate.scoring.metrics import (
    NO_ANSWER,
    RegressionScorer,
    Scorer,
    classification_scorer,
    entity_scorer,
    multi_answer_scorer,
    task_score,
)
from annotate.scoring.units import NO_LABELS, GoldUnits


def entity_texts(units: GoldUnits, pred: np.ndarray) -> np.ndarray:
    """Class codes of ReCoRD units as entity texts (None: no answer; NO_ANSWER: undecided)."""
    out = np.empty(len(pred), dtype=object)
    for i, code in enumerate(pred.tolist()):
        if code >= 0:
            out[i] = units.classes[code]
        else:
            out[i] = None if code == NO_LABELS else NO_ANSWER
    return out


def scorer_for(units: GoldUnits, pred: np.ndarray) -> Scorer:
    """The task's metrics for one prediction per unit (codes; ratings; ReCoRD: codes or texts)."""
    spec = units.spec
    if units.kind == "classification":
        pairs = units.item_pair
        pair = None if pairs is None else pairs[units.unit_item]
        return classification_scorer(
            spec.metrics, len(units.classes), units.gold_code, pred, units.positive_code(), pair
        )
    if units.kind == "regression":
        return RegressionScorer(
            list(spec.metrics), units.gold_number, np.asarray(pred, dtype=float)
        )
    if units.kind == "multi_answer":
        return multi_answer_scorer(
            units.gold_code,
            pred,
            units.unit_item,
            units.n_items,
            units.positive_code() or 0,
            spec.metrics,
        )
    texts = pred if pred.dtype == object else entity_texts(units, pred)
    return entity_scorer(list(texts), units.gold_entities, spec.metrics)


def gold_available(units: GoldUnits) -> bool:
    """Whether any unit has gold (test files often have none)."""
    if units.kind == "regression":
        return bool(np.isfinite(units.gold_number).any())
    if units.kind == "entity_choice":
        return any(bool(g) for g in units.gold_entities)
    return bool((units.gold_code >= 0).any())


def count_scored(units: GoldUnits, pred: np.ndarray) -> int:
    """Items scored: with gold and at least one label."""
    if units.kind == "regression":
        return int((np.isfinite(units.gold_number) & np.isfinite(pred)).sum())
    if units.kind == "entity_choice":
        answered = (
            [p is not None for p in pred] if pred.dtype == object else (pred != NO_LABELS).tolist()
        )
        return sum(1 for g, a in zip(units.gold_entities, answered, strict=True) if g and a)
    scored = (units.gold_code >= 0) & (pred != NO_LABELS)
    return len(np.unique(units.unit_item[scored]))


def count_answers_scored(units: GoldUnits, pred: np.ndarray) -> int:
    """Answers scored: units with gold and an answer (MultiRC: candidate answers; AX-g: items,
    not pairs), the most independent observations a score can rest on."""
    if units.kind in {"regression", "entity_choice"}:
        return count_scored(units, pred)
    return int(((units.gold_code >= 0) & (pred != NO_LABELS)).sum())


def estimate(
    point: float | None,
    replicates: np.ndarray | None,
    lowest: float | None = None,
    n_units: int = 0,
) -> dict[str, Any]:
    """{value, ci_low, ci_high}: the point value with the percentile interval of replicates.
    Where every replicate is alike (a zero-width interval: every unit right, say) and the
    metric's scale (`lowest` to 1) is known, the score-type interval at the `n_units` units of
    resampling instead (`intervals.score_interval`): finite data never gets a zero width."""
    low = high = None
    if replicates is not None and len(replicates) and point is not None:
        low, high = percentile_interval(replicates)
        if _collapsed(low, high) and lowest is not None:
            score = score_interval(point, lowest, n_units, n_units, low, high)
            if score is not None:
                low, high = score.low, score.high
    return {"value": point, "ci_low": low, "ci_high": high}


COLLAPSED_WIDTH = 1e-9
"""Bounds closer than this are one value: replicates of a correlation of 1 differ in the last
bits (0.9999999999999998 to 1.0000000000000002), which must not pass for an interval."""


def _collapsed(low: float | None, high: float | None) -> bool:
    return low is not None and high is not None and high - low <= COLLAPSED_WIDTH


HEADLINE_DRAWS = "scores"
"""The purpose (`rng_for`) of the bootstrap draws of every system scored on a study's items:
the headline score, the aggregation models and each model's predictions (the report's rows
and `compare`). Paired, common resampling: over the same units every system is scored on the
same resamples, so the same answers get the same interval, whatever a model is called."""


def score_with_intervals(
    scorer: Scorer,
    metrics: list[str],
    replicates: int,
    rng_seed: int,
    purpose: str,
    task_replicates: list[np.ndarray] | None = None,
    collapsed: list[str] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Point values with bootstrap intervals for each metric and for the task score. The task
    score's replicates are appended to `task_replicates`, when given, for a statistic that
    shares these draws (the humans interval's items part); the metrics whose replicates were
    all alike (given the score-type interval instead, `estimate`) to `collapsed`."""
    point = scorer.point()
    reps: dict[str, np.ndarray] = {}
    if replicates > 0 and scorer.n_units > 0:
        reps = scorer.replicates(replicates, rng_for(rng_seed, purpose))
    n = scorer.n_units
    scores = {m: estimate(point[m], reps.get(m), scale_lowest([m]), n) for m in metrics}
    if collapsed is not None and reps:
        collapsed += [m for m in metrics if _collapsed(*percentile_interval(reps[m]))]
    total_reps = np.mean(np.vstack([reps[m] for m in metrics]), axis=0) if reps else None
    if task_replicates is not None and total_reps is not None:
        task_replicates.append(total_reps)
    return scores, estimate(task_score(point), total_reps, scale_lowest(metrics), n)
