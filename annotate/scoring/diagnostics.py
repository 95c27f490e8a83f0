"""Per-phenomenon diagnostics for tagged items (GLUE AX, SuperGLUE AX-b, curated sets).

Items carry tags as {coarse category: [fine tags]}. A coarse category scores every item with
any tag in it; a fine tag only the items carrying it. The score is R3 (Gorodkin's 3-class
Matthews correlation) for 3-way tasks and MCC for 2-way ones, for the human majority and for
each model side by side. As the GLUE paper says, compare models within a category, not
categories with each other: categories differ in size, label mix and difficulty.

A correlation is undefined on a subset whose gold (or whose answers) hold one class: every
single-item phenomenon, say. Such an entry has no value and says why (`undefined`), rather than
a 0.00 that reads like chance.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from annotate.scoring.intervals import rng_for, scale_lowest
from annotate.scoring.metrics import classification_scorer
from annotate.scoring.scorers import estimate

NOTE = (
    "Scores compare across models (and humans) within a category, not across categories: "
    "categories differ in size, label balance and difficulty."
)


def tag_masks(
    tags: list[dict[str, list[str]] | None], category_order: Sequence[str] = ()
) -> tuple[dict[str, np.ndarray], dict[str, dict[str, np.ndarray]]]:
    """Item masks per coarse category and per fine tag (nested under its category).
    Categories come in `category_order` (the task's), then as they first appear; fine tags
    from the most to the least frequent."""
    n = len(tags)
    coarse: dict[str, np.ndarray] = {}
    fine: dict[str, dict[str, np.ndarray]] = {}
    for i, item_tags in enumerate(tags):
        if not item_tags:
            continue
        for category, fine_tags in item_tags.items():
            if not fine_tags:
                continue
            coarse.setdefault(category, np.zeros(n, dtype=bool))[i] = True
            per_cat = fine.setdefault(category, {})
            for tag in fine_tags:
                per_cat.setdefault(tag, np.zeros(n, dtype=bool))[i] = True
    rank = {c: i for i, c in enumerate(category_order)}
    order = sorted(coarse, key=lambda c: (rank.get(c, len(rank)), list(coarse).index(c)))
    coarse = {c: coarse[c] for c in order}
    fine = {
        c: dict(sorted(fine[c].items(), key=lambda kv: (-int(kv[1].sum()), kv[0]))) for c in order
    }
    return coarse, fine


def undefined_reason(gold: np.ndarray, pred: np.ndarray, n_classes: int) -> str | None:
    """Why a Matthews correlation of these scored units is undefined (its denominator is 0),
    or None when it is defined. `pred` -2 (no decision) counts as one more answer class."""
    if len(gold) == 0:
        return "no items"
    if len(np.unique(gold)) < 2:
        return "one class"
    if len(np.unique(np.where(pred >= 0, pred, n_classes))) < 2:
        return "one predicted class"
    return None


def undefined_text(n: int, reason: str) -> str:
    """How every format writes an undefined score: `undefined (n=3, one class)`."""
    return f"undefined (n={n}, {reason})"


def _score(
    gold: np.ndarray,
    pred: np.ndarray,
    mask: np.ndarray,
    n_classes: int,
    metric: str,
    replicates: int,
    seed: int,
    purpose: str,
) -> dict[str, Any]:
    pred = np.asarray(pred, dtype=np.int64)
    scored = mask & (gold >= 0) & (pred != -1)
    undefined = undefined_reason(gold[scored], pred[scored], n_classes)
    scorer = classification_scorer([metric], n_classes, np.where(mask, gold, -1), pred)
    value = None if undefined else scorer.point()[metric]
    out: dict[str, Any] = {"value": value, "n": scorer.n_units, "ci_low": None, "ci_high": None}
    if undefined:
        out["undefined"] = undefined
    elif replicates > 0 and scorer.n_units > 0:
        reps = scorer.replicates(replicates, rng_for(seed, purpose))[metric]
        # The bootstrap's interval; where every resample is alike, the score-type one over
        # the tag's items (never a zero width).
        e = estimate(value, reps, scale_lowest([metric]), scorer.n_units)
        out["ci_low"], out["ci_high"] = e["ci_low"], e["ci_high"]
    return out


def diagnostics(
    tags: list[dict[str, list[str]] | None],
    gold: np.ndarray,
    human: np.ndarray,
    models: dict[str, np.ndarray],
    n_classes: int,
    *,
    replicates: int = 0,
    seed: int = 0,
    category_order: Sequence[str] = (),
) -> dict[str, Any] | None:
    """R3/MCC per coarse category and fine tag for the human majority and each model.

    `gold`, `human` and each model's array hold one class code per item (gold -1: none;
    prediction -1: not predicted, -2: no decision, counted wrong). None without tagged items."""
    coarse_masks, fine_masks = tag_masks(tags, category_order)
    if not coarse_masks:
        return None
    metric = "r3" if n_classes == 3 else "mcc"
    gold = np.asarray(gold, dtype=np.int64)
    tagged = np.zeros(len(gold), dtype=bool)
    for mask in coarse_masks.values():
        tagged |= mask

    scored: dict[bytes, dict[str, Any]] = {}

    def row(mask: np.ndarray, purpose: str) -> dict[str, Any]:
        # A tag on exactly the items of another row (a category's only tag, say) gets that
        # row's figures: its own resamples would give the same items another interval.
        key = mask.tobytes()
        if key in scored:
            return copy.deepcopy(scored[key])
        scored[key] = _row(mask, purpose)
        return scored[key]

    def _row(mask: np.ndarray, purpose: str) -> dict[str, Any]:
        # One purpose for the humans and every model (not the model's name): over the same
        # items of a tag they are scored on the same resamples.
        entry = _score(gold, human, mask, n_classes, metric, replicates, seed, f"diag/{purpose}")
        entry["models"] = {
            name: _score(gold, pred, mask, n_classes, metric, replicates, seed, f"diag/{purpose}")
            for name, pred in models.items()
        }
        return entry

    return {
        "metric": metric,
        "note": NOTE,
        "n_tagged_items": int((tagged & (gold >= 0)).sum()),
        "all_tagged": row(tagged, "all"),
        "coarse": {cat: row(mask, cat) for cat, mask in coarse_masks.items()},
        "fine": {
            cat: {tag: row(mask, f"{cat}/{tag}") for tag, mask in per_cat.items()}
            for cat, per_cat in fine_masks.items()
        },
    }
