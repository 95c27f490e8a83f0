"""Gwet's AC1 (Gwet 2008, "Computing inter-rater reliability and its variance in the presence
of high agreement", Br. J. Math. Stat. Psychol. 61, 29-48): a chance-corrected agreement
coefficient for nominal answers that stays meaningful when one class dominates, where Fleiss'
κ and Krippendorff's α collapse (the "kappa paradoxes").

For units i with r_i labels, r_ik of them in class k, and Q possible classes:

    p_a = mean over units with r_i >= 2 of  Σ_k r_ik (r_ik - 1) / (r_i (r_i - 1))
    π_k = mean over units with r_i >= 1 of  r_ik / r_i
    p_e = Σ_k π_k (1 - π_k) / (Q - 1)
    AC1 = (p_a - p_e) / (1 - p_e)

Units with a single label count towards π but not towards p_a, as in Gwet's handbook (and the
irrCAC package) for raw ratings with missing values. The interval is a percentile bootstrap
over units, from per-unit sums (one matrix product for all replicates).
"""

from __future__ import annotations

import numpy as np

from annotate.report.stats.agreement import (
    Estimate,
    _cluster_sums,
    finish_interval,
    resampled_units,
    units_alike,
)
from annotate.scoring.intervals import Resampling, bootstrap_sums, percentile_interval


def _unit_stats(table: np.ndarray) -> np.ndarray:
    """Per unit: [pairwise agreement (0 if r < 2), 1 if r >= 2, r_ik / r_i for each k, 1 if
    r >= 1]; their sums over units give AC1."""
    table = np.asarray(table, dtype=float)
    r = table.sum(axis=1)
    pairable = r >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = np.where(
            pairable, (table * (table - 1)).sum(axis=1) / np.maximum(r * (r - 1), 1), 0.0
        )
        share = np.where(r[:, None] > 0, table / np.maximum(r, 1)[:, None], 0.0)
    return np.column_stack([agree, pairable.astype(float), share, (r > 0).astype(float)])


def _chance_agreement(sums: np.ndarray, n_classes: int) -> np.ndarray:
    """Gwet's p_e per row of summed unit statistics."""
    sums = np.atleast_2d(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        pi = sums[:, 2:-1] / sums[:, -1:]
    return (pi * (1 - pi)).sum(axis=1) / (n_classes - 1)


def _ac1_from_sums(sums: np.ndarray, n_classes: int) -> np.ndarray:
    """AC1 per row of summed unit statistics (NaN where undefined)."""
    sums = np.atleast_2d(sums)
    p_e = _chance_agreement(sums, n_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_a = sums[:, 0] / sums[:, 1]
        return (p_a - p_e) / (1 - p_e)


def gwet_ac1(
    table: np.ndarray,
    n_classes: int | None = None,
    *,
    replicates: int = 0,
    rng: np.random.Generator | None = None,
    cluster: np.ndarray | None = None,
    resampling: Resampling | None = None,
) -> tuple[Estimate, int]:
    """AC1 of a (units x classes) table of label counts, with a bootstrap interval over units
    (or over `cluster`s of units, e.g. MultiRC questions), and the number of units with two or
    more labels. `n_classes` is the number of classes annotators could choose (default: the
    table's columns): a class nobody chose still counts in Q. `resampling`: replicates shared
    with the other agreement coefficients, instead of drawing with `rng`."""
    table = np.asarray(table)
    q = int(n_classes if n_classes is not None else table.shape[1])
    n_pairable = int((table.sum(axis=1) >= 2).sum()) if table.size else 0
    if q < 2:  # the units it would be on are counted all the same: the reason is the classes
        return Estimate(None, note="needs at least two classes: the labels hold one"), n_pairable
    stats = _unit_stats(table)
    if n_pairable == 0:
        return Estimate(None, note="no unit has two or more labels"), 0
    totals = stats.sum(axis=0)
    pairable = stats[:, 1] > 0
    value = float(_ac1_from_sums(totals, q)[0])
    low = high = None
    if resampling is not None:
        reps = _ac1_from_sums(resampling.sums(_cluster_sums(stats, cluster)), q)
        low, high = percentile_interval(reps)
    elif replicates > 0 and rng is not None:
        stats = _cluster_sums(stats, cluster)
        reps = _ac1_from_sums(bootstrap_sums(stats, replicates, rng), q)
        low, high = percentile_interval(reps)
    estimate = Estimate(value if np.isfinite(value) else None, low, high)
    finish_interval(
        estimate,
        resampled_units(pairable, cluster),
        1 - float(_chance_agreement(totals, q)[0]),
        units_alike(table, pairable, cluster),
    )
    return estimate, n_pairable
