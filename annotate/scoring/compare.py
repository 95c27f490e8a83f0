"""A model beside the humans of a study, on exactly the same test items: the human majority (as
the report aggregates it), the mean single annotator, the model, the paired difference with a
interval, McNemar's test for classification, and which items each gets right.

Pairing: all three are scored on the *common* items, those with gold, a human answer and a
model prediction. The human and model replicates draw the same resamples (the headline's
draws, `HEADLINE_DRAWS`, over the same units), and the difference's interval is that of the
paired difference (`metrics.paired_replicates`): read off the very replicates of the two
intervals beside it, but in a large study drawn per pattern, where it is drawn over the
patterns of both answers together (apart, the two would be drawn independently). Where the
two scores are accuracies quoted with Wilson's interval, the difference is quoted as they
are: Newcombe's paired interval from the right/wrong table (`intervals.
paired_difference_interval`), never zero-wide as the bootstrap's is when both agree on
every item.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotate.errors import UserError
from annotate.scoring.caveats import score_caveats
from annotate.scoring.intervals import (
    PAIRED_BOOTSTRAP_METHOD,
    PAIRED_METHOD,
    paired_difference_interval,
    percentile_interval,
    quoted_interval,
    rng_for,
    wilson_applies,
)
from annotate.scoring.mcnemar import METHOD, McNemar, mcnemar_exact
from annotate.scoring.metrics import (
    NO_ANSWER,
    Scorer,
    paired_replicates,
    record_scores,
    task_score,
)
from annotate.scoring.model_predictions import id_order, model_units
from annotate.scoring.predictions import ModelPredictions
from annotate.scoring.scorers import (
    HEADLINE_DRAWS,
    count_scored,
    entity_texts,
    gold_available,
    score_with_intervals,
    scorer_for,
)
from annotate.scoring.units import NO_LABELS, GoldUnits
from annotate.wording import count_of


@dataclass
class Humans:
    """A study's humans as the comparison needs them (`report.human_answers.humans` builds
    it from a study): their aggregated answer per unit and each annotator's own answers."""

    study: str
    units: GoldUnits
    answer: np.ndarray
    """The aggregated answer per unit, as the report aggregates it (codes; ratings)."""
    aggregation: str
    """How the answers were aggregated, e.g. `majority of 5, ties: random (seed 7)`."""
    seed: int
    """The study's seed: the default seed of the bootstrap."""
    n_annotators: int
    individual: Scorer
    """Every annotator's own answers scored against gold (one input per answer)."""
    individual_unit: np.ndarray
    """The unit of each input of `individual`."""
    individual_annotator: np.ndarray
    """The annotator (0..n_annotators-1) of each input of `individual`."""


def _has_gold(units: GoldUnits) -> np.ndarray:
    if units.kind == "regression":
        return np.isfinite(units.gold_number)
    if units.kind == "entity_choice":
        return np.array([bool(g) for g in units.gold_entities], dtype=bool)
    return units.gold_code >= 0


def _answered(units: GoldUnits, pred: np.ndarray) -> np.ndarray:
    if units.kind == "regression":
        return np.isfinite(pred)
    if pred.dtype == object:
        return np.array([p is not None for p in pred], dtype=bool)
    return pred != NO_LABELS


def _masked(units: GoldUnits, pred: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """`pred` with the units outside `keep` marked as not answered (so not scored)."""
    out = pred.copy()
    if units.kind == "regression":
        out[~keep] = np.nan
    elif out.dtype == object:
        out[~keep] = None
    else:
        out[~keep] = NO_LABELS
    return out


def _units_right(units: GoldUnits, pred: np.ndarray) -> np.ndarray:
    """Whether each unit's prediction is right (ReCoRD: exact match with a gold answer)."""
    if units.kind == "entity_choice":
        return np.array(
            [
                p is not None and p is not NO_ANSWER and record_scores(p, g or [])[1] == 1.0
                for p, g in zip(pred, units.gold_entities, strict=True)
            ],
            dtype=bool,
        )
    return pred == units.gold_code


def _items_right(units: GoldUnits, pred: np.ndarray, common: np.ndarray) -> np.ndarray:
    """Per item: every common unit of it right (MultiRC: the question's exact match)."""
    wrong = np.bincount(
        units.unit_item, weights=common & ~_units_right(units, pred), minlength=units.n_items
    )
    return wrong == 0


def _item_lists(
    units: GoldUnits, human: np.ndarray, model: np.ndarray, common: np.ndarray
) -> tuple[dict[str, list[str]], np.ndarray, np.ndarray]:
    """Source ids of the common items by who gets them right; the right/wrong arrays."""
    item_has = np.bincount(units.unit_item, weights=common, minlength=units.n_items) > 0
    human_right = _items_right(units, human, common)[item_has]
    model_right = _items_right(units, model, common)[item_has]
    names = units.item_ids[item_has]
    lists = {
        "both_right": names[human_right & model_right].tolist(),
        "human_only_right": names[human_right & ~model_right].tolist(),
        "model_only_right": names[model_right & ~human_right].tolist(),
        "neither_right": names[~human_right & ~model_right].tolist(),
    }
    return lists, human_right, model_right


def _quoted(
    units: GoldUnits,
    metrics: list[str],
    total: dict[str, Any],
    n: int,
    n_units: int,
    alike: bool = False,
) -> dict[str, Any] | None:
    """The task score's interval by the one rule (scoring.intervals.quoted_interval), as the
    report's headline quotes it (`n` units scored, `n_units` resampling units; `alike`: every
    metric's resamples were one value, so the score-type interval, named as such)."""
    value = total["value"]
    low, high = (
        (value, value)
        if alike and value is not None
        else (
            total.get("ci_low"),
            total.get("ci_high"),
        )
    )
    quoted = quoted_interval(
        metrics,
        units.kind,
        units.item_pair is not None,
        value,
        n,
        low,
        high,
        n_units=n_units,
        n_obs=n,
    )
    return (
        None
        if quoted is None
        else {"low": quoted.low, "high": quoted.high, "method": quoted.method}
    )


def _paired_difference(
    human: Scorer, model: Scorer, value: float, metrics: list[str], replicates: int, seed: int
) -> dict[str, Any]:
    """Model minus human task score with the percentile interval of the paired replicates."""
    low = high = None
    if replicates > 0 and human.n_units and human.n_units == model.n_units:
        drawn = paired_replicates([human, model], replicates, rng_for(seed, HEADLINE_DRAWS))
        human_reps, model_reps = (np.mean([r[m] for m in metrics], axis=0) for r in drawn)
        if len(human_reps) and len(model_reps) == len(human_reps):
            low, high = percentile_interval(model_reps - human_reps)
    return {
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "method": PAIRED_BOOTSTRAP_METHOD if low is not None else None,
        "of": "model minus human majority, task score",
    }


def _newcombe(difference: dict[str, Any], test: McNemar) -> None:
    """The difference of two accuracies quoted as each is (Wilson's, not the bootstrap's, which
    is zero-wide where the two agree on every item): Newcombe's paired interval, from the
    right/wrong table of the same items."""
    low, high = paired_difference_interval(
        test.both_right, test.model_only_right, test.human_only_right, test.neither_right
    )
    n = test.both_right + test.model_only_right + test.human_only_right + test.neither_right
    same = n and math.isclose(
        (test.model_only_right - test.human_only_right) / n, difference["value"], abs_tol=1e-9
    )
    if low is not None and same:  # the table is of the very scores (one item, one unit)
        difference.update(ci_low=low, ci_high=high, method=PAIRED_METHOD)


def _single_annotators(humans: Humans, common: np.ndarray) -> dict[str, Any]:
    """Each annotator's own answers on the common units, scored; their mean."""
    n_ann = humans.n_annotators
    if n_ann == 0:
        return {"n_annotators": 0, "task_score": None, "scores": {}}
    group = np.where(common[humans.individual_unit], humans.individual_annotator, n_ann)
    per = humans.individual.by_group(group, n_ann + 1)[:n_ann]
    totals = [task_score(p) for p in per]
    defined = [t for t in totals if t is not None]
    metrics = {m: _mean([p.get(m) for p in per]) for m in humans.units.spec.metrics}
    return {
        "n_annotators": len(defined),
        "task_score": float(np.mean(defined)) if defined else None,
        "scores": metrics,
    }


def _mean(values: list[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return float(np.mean(defined)) if defined else None


MATCH_NAMED = 20
"""Ids listed per group of `matching` (the counts are always whole)."""


def matching(units: GoldUnits, model: ModelPredictions) -> dict[str, Any]:
    """How the model's predictions met the study's items, by the dataset's id: how many were
    matched, which sample items have none, and what named no item of the sample."""
    sample = set(units.item_ids.tolist())
    given = set(model.predictions)
    lacking = sorted((i for i in units.item_ids.tolist() if i not in given), key=id_order)
    outside = sorted(given - sample, key=id_order)
    return {
        "predictions": len(given),
        "matched": len(given & sample),
        "sample_items_without_prediction": len(lacking),
        "without_prediction": lacking[:MATCH_NAMED],
        "not_in_sample": len(outside),
        "not_in_sample_ids": outside[:MATCH_NAMED],
        "unreadable": len(model.unmatched),
        "unreadable_named": model.unmatched[:MATCH_NAMED],
    }


def compare_model(
    humans: Humans, model: ModelPredictions, *, bootstrap: int = 1000, seed: int | None = None
) -> dict[str, Any]:
    """The comparison of `model` with the study's humans as JSON-ready data."""
    seed = humans.seed if seed is None else seed
    units = humans.units
    if not gold_available(units):
        raise UserError(
            f"study {humans.study!r} has no gold labels for its test items: nothing to compare on"
        )
    human_pred = humans.answer
    model_pred = model_units(units, model)
    if units.kind == "entity_choice":
        human_pred = entity_texts(units, human_pred)
    has_gold = _has_gold(units)
    common = has_gold & _answered(units, human_pred) & _answered(units, model_pred)
    if not common.any():
        raise UserError(
            f"{model.path}: no prediction for any labelled item of study {humans.study!r} "
            "(is it the file of this task's test split?)"
        )
    metrics = list(units.spec.metrics)
    human_scorer = scorer_for(units, _masked(units, human_pred, common))
    model_scorer = scorer_for(units, _masked(units, model_pred, common))
    # The report's own draws (its headline's, which its model rows share): where the model
    # answers every item the humans do, each score has the interval the report quotes for it.
    human_alike: list[str] = []
    model_alike: list[str] = []
    human_scores, human_total = score_with_intervals(
        human_scorer, metrics, bootstrap, seed, HEADLINE_DRAWS, collapsed=human_alike
    )
    model_scores, model_total = score_with_intervals(
        model_scorer, metrics, bootstrap, seed, HEADLINE_DRAWS, collapsed=model_alike
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
    n_common_items = len(np.unique(units.unit_item[common]))
    for total, scorer, alike in (
        (human_total, human_scorer, human_alike),
        (model_total, model_scorer, model_alike),
    ):
        every_alike = bool(metrics) and set(metrics) <= set(alike)
        total["interval"] = _quoted(
            units, metrics, total, int(common.sum()), scorer.n_units, every_alike
        )
    items: dict[str, list[str]] | None = None
    mcnemar = None
    notes = []
    if units.kind != "regression":
        items, human_right, model_right = _item_lists(units, human_pred, model_pred, common)
        if units.kind == "classification":
            test = mcnemar_exact(human_right, model_right)
            pairs = units.item_pair is not None
            if difference is not None and wilson_applies(metrics, units.kind, pairs):
                _newcombe(difference, test)
            mcnemar = {
                "table": {
                    "both_right": test.both_right,
                    "human_only_right": test.human_only_right,
                    "model_only_right": test.model_only_right,
                    "neither_right": test.neither_right,
                },
                "statistic": test.statistic,
                "p_value": test.p_value,
                "method": METHOD,
            }
    else:
        notes.append("ratings have no right or wrong per item: no item lists, no McNemar test")
    for answers, pred in (("the human answers", human_pred), ("the predictions", model_pred)):
        # A caveat of the gold (one class on the common items) is true of both: said once.
        caveats = score_caveats(units, _masked(units, pred, common), answers)
        notes.extend(note for note in caveats if note not in notes)
    n_scored = count_scored(units, human_pred)
    n_model = count_scored(units, model_pred)
    if n_common_items < max(n_scored, n_model):
        notes.append(
            f"scored on the {count_of(n_common_items, 'item')} with gold, a human answer and a "
            "prediction "
            f"(human answers: {n_scored}, model predictions: {n_model})"
        )
    return {
        "study": humans.study,
        "task": units.spec.name,
        "model": {"name": model.name, "file": model.path},
        "matching": matching(units, model),
        "metrics": metrics,
        "aggregation": humans.aggregation,
        "n_items": n_common_items,
        "unit": "question" if units.kind == "multi_answer" else "item",
        "coverage": {
            "sample": units.n_items,
            "human_scored": n_scored,
            "model_scored": n_model,
            "common": n_common_items,
        },
        "human": {"scores": human_scores, "task_score": human_total},
        "single_annotator": _single_annotators(humans, common),
        "model_scores": {"scores": model_scores, "task_score": model_total},
        "difference": difference,
        "mcnemar": mcnemar,
        "items": items,
        "bootstrap": {"replicates": bootstrap, "seed": seed},
        "notes": notes,
    }
