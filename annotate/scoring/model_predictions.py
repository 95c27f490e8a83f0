"""A model's predictions (read from a leaderboard submission file) as one answer per unit, in
the form the scorers take, so a model is scored by exactly the code that scores the humans.

What a file leaves out is either not scored (an id it does not answer: counted in coverage)
or counted wrong: a MultiRC answer missing from a question the file does answer gets the
wrong judgement (a false negative when gold is true, a false positive when false), so that
question cannot be an exact match. `counted_wrong` gives the leaderboard's view, where every
id left out is wrong."""

from __future__ import annotations

import numpy as np

from annotate.scoring.metrics import NO_ANSWER
from annotate.scoring.predictions import ModelPredictions
from annotate.scoring.units import NO_DECISION, NO_LABELS, GoldUnits, class_code_map


def model_units(units: GoldUnits, model: ModelPredictions) -> np.ndarray:
    """A model's prediction per unit in the form `scorer_for` takes (missing: not predicted)."""
    names = units.item_ids.tolist()
    preds = model.predictions
    if units.kind == "regression":
        return np.array([float(preds[n]) if n in preds else np.nan for n in names])
    if units.kind == "entity_choice":
        return np.array([preds.get(n) for n in names], dtype=object)
    if units.kind == "classification":
        codes_of = class_code_map(units.spec)
        return np.array(
            [codes_of.get(str(preds[n]), NO_DECISION) if n in preds else NO_LABELS for n in names],
            dtype=np.int64,
        )
    codes_of = {v: i for i, v in enumerate(units.classes)}
    out = np.full(units.n_units, NO_LABELS, dtype=np.int64)
    for u, (item, unit_name) in enumerate(
        zip(units.unit_item.tolist(), units.unit_name.tolist(), strict=True)
    ):
        answers = preds.get(names[item])
        if isinstance(answers, dict):
            answer = str(unit_name).rsplit("/", 1)[-1]
            if answer in answers:
                out[u] = codes_of.get(str(answers[answer]), NO_DECISION)
            elif units.gold_code[u] >= 0:
                out[u] = _wrong_judgement(units, u)
    return out


def _wrong_judgement(units: GoldUnits, unit: int) -> int:
    """MultiRC: the judgement that is not gold (true for a false answer, and back)."""
    return 1 - int(units.gold_code[unit])


def missing_answers(units: GoldUnits, model: ModelPredictions) -> int:
    """MultiRC: answers with gold that the file leaves out of questions it answers."""
    if units.kind != "multi_answer":
        return 0
    names = units.item_ids.tolist()
    missing = 0
    for u, (item, unit_name) in enumerate(
        zip(units.unit_item.tolist(), units.unit_name.tolist(), strict=True)
    ):
        answers = model.predictions.get(names[item])
        if isinstance(answers, dict) and units.gold_code[u] >= 0:
            missing += str(unit_name).rsplit("/", 1)[-1] not in answers
    return missing


def counted_wrong(units: GoldUnits, pred: np.ndarray) -> np.ndarray:
    """`pred` with every unit that has gold but no prediction made wrong, as a leaderboard
    scores a file that leaves ids out: no answer for classification and ReCoRD, the wrong
    judgement for MultiRC, and for a rating the scale's midpoint (Pearson and Spearman have no
    'wrong' value; the midpoint carries no information)."""
    out = pred.copy()
    if units.kind == "regression":
        scale = units.spec.scale
        middle = (scale.min + scale.max) / 2 if scale else 0.0
        out[np.isfinite(units.gold_number) & ~np.isfinite(out)] = middle
    elif units.kind == "entity_choice":
        for u, gold in enumerate(units.gold_entities):
            if gold and out[u] is None:
                out[u] = NO_ANSWER
    elif units.kind == "classification":
        out[(units.gold_code >= 0) & (out == NO_LABELS)] = NO_DECISION
    else:
        for u in np.flatnonzero((units.gold_code >= 0) & (out == NO_LABELS)):
            out[u] = _wrong_judgement(units, int(u))
    return out
