"""Why a score reads as it does where its metric degenerates: a correlation with no variance
(undefined), a Matthews correlation on one class (0 by convention) and a macro-F1 that averages
in a class no gold item has (at F1 0). The report, `score` and `compare` print these words
beside the number, so a "–" or a 0.0 is never left unexplained."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from annotate.metric_registry import metric
from annotate.scoring.units import GoldUnits

CORRELATIONS = ("mcc", "r3")


def score_caveats(units: GoldUnits, pred: np.ndarray, answers: str) -> list[str]:
    """One sentence per degenerate metric of `pred` (class codes or ratings, one per unit) on
    the units with gold and an answer; `answers` names them in the sentence ("the human
    answers", "the predictions")."""
    metrics = list(units.spec.metrics)
    if units.kind == "regression":
        return _regression(units.gold_number, np.asarray(pred, dtype=float), metrics, answers)
    if units.kind == "classification" and units.item_pair is None:
        return _classification(units, np.asarray(pred), metrics, answers)
    return []


def _names(metrics: Sequence[str]) -> str:
    names = [metric(m).inline_name for m in metrics]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _regression(gold: np.ndarray, pred: np.ndarray, metrics: list[str], answers: str) -> list[str]:
    scored = np.isfinite(gold) & np.isfinite(pred)
    gold, pred = gold[scored], pred[scored]
    if len(gold) < 2:
        why = f"fewer than 2 items have both gold and a rating ({len(gold)})"
    elif np.ptp(gold) == 0:
        why = f"the gold ratings are all {gold[0]:g} (no variance)"
    elif np.ptp(pred) == 0:
        why = f"{answers} are all {pred[0]:g} (no variance)"
    else:
        return []
    verb = "is" if len(metrics) == 1 else "are"
    return [f"{_names(metrics)} {verb} undefined: {why}."]


def _classification(
    units: GoldUnits, pred: np.ndarray, metrics: list[str], answers: str
) -> list[str]:
    scored = (units.gold_code >= 0) & (pred != -1)
    gold, pred = units.gold_code[scored], pred[scored]
    if len(gold) == 0:
        return []
    classes = units.classes
    notes = []
    correlations = [m for m in metrics if m in CORRELATIONS]
    if correlations:
        decided = np.unique(pred[pred >= 0])
        if len(np.unique(gold)) < 2:
            why = f"the gold labels are all {classes[gold[0]]}"
        elif len(decided) < 2 and not (pred < 0).any():
            why = f"{answers} are all {classes[decided[0]]}"
        else:
            why = None
        if why is not None:
            notes.append(
                f"{_names(correlations)} is undefined on one class ({why}): it is given as 0, "
                "as sklearn's matthews_corrcoef and the official scorers give it."
            )
    if "macro_f1" in metrics:
        absent = [
            f"{classes[c]} (answered for {int((pred == c).sum())})"
            for c in np.unique(pred[pred >= 0])
            if not (gold == c).any()
        ]
        if absent:
            notes.append(
                f"{_names(['macro_f1'])} averages over the classes in gold or in {answers}: "
                f"{', '.join(absent)} has no gold item and counts with F1 0, as sklearn's "
                "f1_score(average='macro') counts it."
            )
    return notes
