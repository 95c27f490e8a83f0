"""Glue between a coded study and the metrics: aggregate its labels with the study's rules, and
build the scorer for a set of predictions (the human majority, each annotator's own answers, a
model's predictions) of any task kind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from annotate.analysis import aggregate as agg
from annotate.analysis.coding import CodedStudy
from annotate.analysis.intervals import percentile_interval, rng_for
from annotate.analysis.metrics import (
    NO_ANSWER,
    RegressionScorer,
    Scorer,
    classification_scorer,
    entity_scorer,
    multi_answer_scorer,
    task_score,
)


@dataclass
class Aggregated:
    """One answer per unit: a class code (agg.NO_LABELS / NO_DECISION when none) or a rating."""

    pred: np.ndarray
    votes: agg.UnitVotes | None
    result: agg.VoteResult | None


def priority_for(coded: CodedStudy, dev_counts: dict[str, int] | None) -> np.ndarray | None:
    """Class priority for the dev-majority-class rule: how often each class is gold in dev."""
    if not dev_counts or coded.kind not in {"classification", "multi_answer"}:
        return None
    return np.array([dev_counts.get(c, 0) for c in coded.classes], dtype=float)


def aggregate(
    coded: CodedStudy,
    rule: str,
    how: str,
    rng: np.random.Generator,
    priority: np.ndarray | None = None,
    label_mask: np.ndarray | None = None,
    spare_mask: np.ndarray | None = None,
) -> Aggregated:
    """Aggregate the labels (or the subset `label_mask`) per unit. With the extra-annotator
    rule, a unit tied on `label_mask` is voted again with the labels in `spare_mask` added."""
    mask = np.ones(len(coded.label_unit), dtype=bool) if label_mask is None else label_mask
    if coded.kind == "regression":
        pred = agg.aggregate_ratings(
            coded.label_unit[mask], coded.label_number[mask], coded.n_units, how
        )
        return Aggregated(pred, None, None)
    votes = agg.unit_votes(coded.label_unit[mask], coded.label_code[mask], coded.n_units)
    result = agg.majority_vote(votes, rule, rng, priority)
    if rule == "extra-annotator" and spare_mask is not None and spare_mask.any():
        widened = mask | spare_mask
        has_spare = np.bincount(coded.label_unit[spare_mask], minlength=coded.n_units) > 0
        retry = result.tied & has_spare
        if retry.any():
            votes2 = agg.unit_votes(
                coded.label_unit[widened], coded.label_code[widened], coded.n_units
            )
            again = agg.majority_vote(votes2, rule, rng, priority)
            result.pred[retry] = again.pred[retry]
            result.resolution[retry] = np.where(again.tied[retry], agg.OPEN, "extra-annotator")
    return Aggregated(result.pred, votes, result)


def pair_codes(coded: CodedStudy) -> np.ndarray | None:
    """AX-g: each item's minimal-pair number (-1 when it has none); None for other tasks."""
    if "gender_parity" not in coded.spec.metrics:
        return None
    codes, _ = pd.factorize(coded.items["pair_id"], use_na_sentinel=True)
    return np.asarray(codes, dtype=np.int64)


def entity_texts(coded: CodedStudy, pred: np.ndarray) -> np.ndarray:
    """Class codes of ReCoRD units as entity texts (None: no answer; NO_ANSWER: undecided)."""
    out = np.empty(len(pred), dtype=object)
    for i, code in enumerate(pred.tolist()):
        if code >= 0:
            out[i] = coded.classes[code]
        else:
            out[i] = None if code == agg.NO_LABELS else NO_ANSWER
    return out


def scorer_for(coded: CodedStudy, pred: np.ndarray) -> Scorer:
    """The task's metrics for one prediction per unit (codes; ratings; ReCoRD: codes or texts)."""
    spec = coded.spec
    if coded.kind == "classification":
        pairs = pair_codes(coded)
        pair = None if pairs is None else pairs[coded.unit_item]
        return classification_scorer(
            spec.metrics, len(coded.classes), coded.gold_code, pred, coded.positive_code(), pair
        )
    if coded.kind == "regression":
        return RegressionScorer(
            list(spec.metrics), coded.gold_number, np.asarray(pred, dtype=float)
        )
    if coded.kind == "multi_answer":
        return multi_answer_scorer(
            coded.gold_code, pred, coded.unit_item, coded.n_items, coded.positive_code() or 0
        )
    texts = pred if pred.dtype == object else entity_texts(coded, pred)
    return entity_scorer(list(texts), coded.gold_entities)


def answer_scorer(coded: CodedStudy) -> tuple[Scorer, np.ndarray]:
    """Each annotator's own answers scored against gold; returns the scorer and the annotator
    of each of its input units (for `by_group`)."""
    spec = coded.spec
    unit = coded.label_unit
    annotator = coded.label_annotator
    if coded.kind == "classification":
        pairs = pair_codes(coded)
        pair = None
        if pairs is not None:
            item_pair = pairs[coded.unit_item[unit]]
            span = int(item_pair.max()) + 1 if len(item_pair) else 1
            pair = np.where(item_pair >= 0, annotator * span + item_pair, -1)
        scorer: Scorer = classification_scorer(
            spec.metrics,
            len(coded.classes),
            coded.gold_code[unit],
            coded.label_code,
            coded.positive_code(),
            pair,
        )
        return scorer, annotator
    if coded.kind == "regression":
        return RegressionScorer(
            list(spec.metrics), coded.gold_number[unit], coded.label_number
        ), annotator
    if coded.kind == "multi_answer":
        scorer = multi_answer_scorer(
            coded.gold_code[unit],
            coded.label_code,
            coded.label_row,
            len(coded.row_item),
            coded.positive_code() or 0,
        )
        return scorer, annotator
    texts = [coded.classes[c] for c in coded.label_code.tolist()]
    golds = [coded.gold_entities[u] for u in unit.tolist()]
    return entity_scorer(texts, golds), annotator


def gold_available(coded: CodedStudy) -> bool:
    """Whether any unit has gold (test files often have none)."""
    if coded.kind == "regression":
        return bool(np.isfinite(coded.gold_number).any())
    if coded.kind == "entity_choice":
        return any(bool(g) for g in coded.gold_entities)
    return bool((coded.gold_code >= 0).any())


def count_scored(coded: CodedStudy, pred: np.ndarray) -> int:
    """Items scored: with gold and at least one label."""
    if coded.kind == "regression":
        return int((np.isfinite(coded.gold_number) & np.isfinite(pred)).sum())
    if coded.kind == "entity_choice":
        answered = (
            [p is not None for p in pred]
            if pred.dtype == object
            else (pred != agg.NO_LABELS).tolist()
        )
        return sum(1 for g, a in zip(coded.gold_entities, answered, strict=True) if g and a)
    scored = (coded.gold_code >= 0) & (pred != agg.NO_LABELS)
    return len(np.unique(coded.unit_item[scored]))


def estimate(point: float | None, replicates: np.ndarray | None) -> dict[str, Any]:
    """{value, ci_low, ci_high}: the point value with the percentile interval of replicates."""
    low = high = None
    if replicates is not None and len(replicates) and point is not None:
        low, high = percentile_interval(replicates)
    return {"value": point, "ci_low": low, "ci_high": high}


def score_with_intervals(
    scorer: Scorer, metrics: list[str], replicates: int, rng_seed: int, purpose: str
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Point values with bootstrap intervals for each metric and for the task score."""
    point = scorer.point()
    reps: dict[str, np.ndarray] = {}
    if replicates > 0 and scorer.n_units > 0:
        reps = scorer.replicates(replicates, rng_for(rng_seed, purpose))
    scores = {m: estimate(point[m], reps.get(m)) for m in metrics}
    total_reps = np.mean(np.vstack([reps[m] for m in metrics]), axis=0) if reps else None
    return scores, estimate(task_score(point), total_reps)
