"""The functions of the built-in metrics, one per entry of `annotate.metric_registry.builtin`,
with the arguments their family gives (`annotate.metric_registry.Family`). Each takes the sums
of per-unit statistics, one row per bootstrap replicate (or a single row for the point value),
and returns one value per row, as sklearn's and scipy's scorers compute it.
"""

from __future__ import annotations

import numpy as np


def ratio(num: np.ndarray, den: np.ndarray, undefined: float = 0.0) -> np.ndarray:
    """num / den, `undefined` where den is 0."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), undefined)


# --- classification: confusion matrices (..., K+1, K+1) [gold, predicted] ---------------------


def mcc_from_confusion(cm: np.ndarray, undefined: float = 0.0) -> np.ndarray:
    """Gorodkin's multiclass MCC of confusion matrices (..., K, K) [gold, predicted], as
    sklearn's matthews_corrcoef computes it (`undefined` where it is: sklearn's 0)."""
    cm = np.asarray(cm, dtype=float)
    t_sum = cm.sum(axis=-1)
    p_sum = cm.sum(axis=-2)
    correct = np.trace(cm, axis1=-2, axis2=-1)
    n = t_sum.sum(axis=-1)
    cov_tp = correct * n - (t_sum * p_sum).sum(axis=-1)
    cov_pp = n * n - (p_sum * p_sum).sum(axis=-1)
    cov_tt = n * n - (t_sum * t_sum).sum(axis=-1)
    den = cov_tt * cov_pp
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, cov_tp / np.sqrt(np.where(den > 0, den, 1)), undefined)


def f1_from_confusion(cm: np.ndarray, c: int) -> np.ndarray:
    """F1 of class `c` (0 when it is neither gold nor predicted)."""
    cm = np.asarray(cm, dtype=float)
    tp = cm[..., c, c]
    fp = cm[..., :, c].sum(axis=-1) - tp
    fn = cm[..., c, :].sum(axis=-1) - tp
    return ratio(2 * tp, 2 * tp + fp + fn)


def accuracy(cm: np.ndarray, n_classes: int, positive: int | None) -> np.ndarray:
    """Share of units whose decision is the gold label (undefined without units)."""
    return ratio(np.trace(cm, axis1=-2, axis2=-1), cm.sum(axis=(-2, -1)), np.nan)


def f1(cm: np.ndarray, n_classes: int, positive: int | None) -> np.ndarray:
    """F1 of the positive class (class 1 when the task names none)."""
    return f1_from_confusion(cm, positive if positive is not None else 1)


def macro_f1(cm: np.ndarray, n_classes: int, positive: int | None) -> np.ndarray:
    """Mean F1 over the classes that occur (gold or predicted), as sklearn averages them."""
    per_class = np.stack([f1_from_confusion(cm, c) for c in range(n_classes)], axis=-1)
    seen = (cm.sum(axis=-1)[..., :n_classes] + cm.sum(axis=-2)[..., :n_classes]) > 0
    return ratio((per_class * seen).sum(axis=-1), seen.sum(axis=-1))


def mcc(cm: np.ndarray, n_classes: int, positive: int | None) -> np.ndarray:
    """Matthews correlation (Gorodkin's multiclass form: R3 on three classes); NaN where it is
    undefined (a bootstrap replicate with one class only is left out; a point estimate there
    is 0, the registry's `undefined_point`, as sklearn's)."""
    return mcc_from_confusion(cm, undefined=np.nan)


# --- AX-g minimal pairs ----------------------------------------------------------------------


def gender_parity(pairs: np.ndarray, alike: np.ndarray) -> np.ndarray:
    """Share of minimal pairs predicted alike."""
    return ratio(alike, pairs, np.nan)


# --- MultiRC: sums of (tp, fp, fn, questions all right, questions) ---------------------------


def f1a(sums: np.ndarray) -> np.ndarray:
    """Binary F1 over all candidate answers."""
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    return ratio(2 * tp, 2 * tp + fp + fn)


def exact_match(sums: np.ndarray) -> np.ndarray:
    """Share of questions with every answer right."""
    return ratio(sums[:, 3], sums[:, 4], np.nan)


# --- ReCoRD: sums of (token F1, exact match, queries) ----------------------------------------


def record_token_f1(sums: np.ndarray) -> np.ndarray:
    """Mean over queries of the token F1 (max over gold answers)."""
    return ratio(sums[:, 0], sums[:, 2], np.nan)


def record_exact_match(sums: np.ndarray) -> np.ndarray:
    """Mean over queries of the exact match (max over gold answers)."""
    return ratio(sums[:, 1], sums[:, 2], np.nan)


# --- STS-B: ratings ----------------------------------------------------------------------------


def weighted_pearson(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Pearson correlation per row of weights w (b x n) for fixed or per-row x, y."""
    total = w.sum(axis=-1)
    mx = ratio((w * x).sum(axis=-1), total, np.nan)
    my = ratio((w * y).sum(axis=-1), total, np.nan)
    dx = x - mx[:, None]
    dy = y - my[:, None]
    cov = (w * dx * dy).sum(axis=-1)
    var = (w * dx * dx).sum(axis=-1) * (w * dy * dy).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 1e-300, cov / np.sqrt(np.where(var > 0, var, 1)), np.nan)


def weighted_ranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Mid-ranks of x within each resample (ties share the mean rank), as rankdata would give
    on the resampled data; x is fixed, w (b x n) counts each unit's draws."""
    _, group = np.unique(x, return_inverse=True)
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group[order]) != 0])
    per_value = np.add.reduceat(w[:, order], starts, axis=1)
    below = np.cumsum(per_value, axis=1) - per_value
    ranks = below + (per_value + 1) / 2
    return ranks[:, group]


def pearson(gold: np.ndarray, pred: np.ndarray, weights: np.ndarray | None) -> float | np.ndarray:
    """scipy's pearsonr for the point value; the weighted form for replicates."""
    if weights is None:
        from scipy import stats  # heavy import: only reports of rating tasks need it

        return float(stats.pearsonr(gold, pred)[0])
    return weighted_pearson(gold, pred, weights)


def spearman(gold: np.ndarray, pred: np.ndarray, weights: np.ndarray | None) -> float | np.ndarray:
    """scipy's spearmanr for the point value; Pearson of the resamples' mid-ranks for
    replicates."""
    if weights is None:
        from scipy import stats  # heavy import: only reports of rating tasks need it

        return float(stats.spearmanr(gold, pred)[0])
    return weighted_pearson(weighted_ranks(gold, weights), weighted_ranks(pred, weights), weights)
