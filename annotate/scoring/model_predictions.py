"""A model's predictions (read from a leaderboard submission file) as one answer per unit, in
the form the scorers take, so a model is scored by exactly the code that scores the humans."""

from __future__ import annotations

import numpy as np

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
    return out
