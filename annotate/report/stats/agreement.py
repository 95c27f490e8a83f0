"""Agreement between annotators: Krippendorff's α, Fleiss' κ, pairwise Cohen's κ and the
per-item agreement histogram.

Inputs are long arrays, one entry per label: `unit` (what was labelled, 0..n_units-1),
`annotator` (who), `code` (the answer as a class index) and, for α at the ordinal, interval or
ratio level, `number` (the answer as a number). Missing labels are simply absent.

Point values come from the reference implementations (`krippendorff.alpha`; statsmodels'
`fleiss_kappa`, restated operation for operation); the bootstrap uses algebraically identical
sums over units so that 1000 replicates are a few matrix products (the tests check both agree).
Each coefficient takes either its own generator or a `Resampling` of the units shared with the
other coefficients (`unit_resampling`): then every unit is resampled, and a unit a coefficient
leaves out (fewer than two labels, or not the common number of raters for κ) adds nothing to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotate.scoring.intervals import (
    Resampling,
    bootstrap_sums,
    group_sums,
    percentile_interval,
    row_patterns,
    wilson_interval,
)

LEVELS = ("nominal", "ordinal", "interval", "ratio")
DENSE_LIMIT = 50_000_000
"""Largest units x values table built for the reference implementations."""
MAX_DENSE_VALUES = 64
"""Ordinal and ratio α bootstrap with at most this many distinct values (V x V per unit)."""


@dataclass
class Estimate:
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high}
        if self.note:
            out["note"] = self.note
        return out


def counts_table(unit: np.ndarray, code: np.ndarray, n_units: int, n_values: int) -> np.ndarray:
    """(n_units x n_values) number of labels of each value per unit."""
    unit = np.asarray(unit, dtype=np.int64)
    code = np.asarray(code, dtype=np.int64)
    flat = np.bincount(unit * n_values + code, minlength=n_units * n_values)
    return flat.reshape(n_units, n_values)


def _cluster_sums(stats: np.ndarray, cluster: np.ndarray | None) -> np.ndarray:
    if cluster is None:
        return stats
    cluster = np.asarray(cluster, dtype=np.int64)
    return group_sums(stats, cluster, int(cluster.max()) + 1 if len(cluster) else 0)


def unit_resampling(
    tables: list[np.ndarray],
    replicates: int,
    rng: np.random.Generator,
    cluster: np.ndarray | None = None,
) -> Resampling:
    """One resampling of the units (or of the `cluster`s of units, e.g. MultiRC questions) for
    every agreement coefficient of them. `tables` are the (units x values) label counts the
    coefficients are computed from: units with equal rows in all of them are interchangeable."""
    # One table is its own key (no copy: a ReCoRD table can be large).
    key = tables[0] if len(tables) == 1 else np.column_stack(tables)
    if cluster is None:
        return Resampling(key, replicates, rng)
    # A cluster is described by how many of its units have each pattern of counts.
    cluster = np.asarray(cluster, dtype=np.int64)
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 0
    _, pattern, _ = row_patterns(key)
    n_patterns = int(pattern.max()) + 1 if len(pattern) else 0
    if n_clusters * n_patterns > DENSE_LIMIT:
        return Resampling(np.arange(n_clusters), replicates, rng)  # every cluster its own
    key = np.bincount(cluster * n_patterns + pattern, minlength=n_clusters * n_patterns)
    return Resampling(key.reshape(n_clusters, n_patterns), replicates, rng)


def _all_units(stats: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Statistics of the `kept` units, as rows of all units (zeros for the others)."""
    full = np.zeros((len(kept), stats.shape[1]))
    full[kept] = stats
    return full


# --- perfect agreement ------------------------------------------------------------------------


def resampled_units(kept: np.ndarray, cluster: np.ndarray | None) -> int:
    """How many resampling units (the `kept` units, or their clusters) a coefficient rests on."""
    if cluster is None:
        return int(np.count_nonzero(kept))
    return len(np.unique(np.asarray(cluster, dtype=np.int64)[kept]))


def nominal_chance_disagreement(counts: np.ndarray) -> float:
    """The chance that two of the pairable labels (of units with two or more), drawn without
    replacement, name different values: Krippendorff's expected disagreement at nominal level."""
    pairable = counts[counts.sum(axis=1) >= 2].astype(float)
    n_c = pairable.sum(axis=0)
    n = n_c.sum()
    return float((n * n - (n_c * n_c).sum()) / (n * (n - 1))) if n > 1 else 0.0


def finish_interval(
    estimate: Estimate, units: int, chance_disagreement: float, alike: bool = False
) -> None:
    """The bootstrap's interval where it says something: a score-type one where every unit
    agreed (perfect_agreement_interval), and none where every resample is the sample again: a
    single unit, or units that are all `alike` (labelled the same way, say 3 to 2 on every
    item; see units_alike). A width of zero there would claim certainty, though the same
    items again say nothing of the others. Changes `estimate` in place, and says so."""
    perfect_agreement_interval(estimate, units, chance_disagreement)
    if estimate.ci_low is None or estimate.note is not None:
        return
    if units == 1:
        estimate.ci_low = estimate.ci_high = None
        estimate.note = "no interval: one item, which every resample gives back"
    elif alike:
        estimate.ci_low = estimate.ci_high = None
        estimate.note = (
            f"no interval: all {units} items have the same labels, so every resample gives "
            "them back"
        )


def units_alike(table: np.ndarray, kept: np.ndarray, cluster: np.ndarray | None) -> bool:
    """Whether every resampling unit a coefficient rests on (the `kept` rows of a units x
    values `table` of label counts, or their clusters) is the same as every other: then every
    resample is the same table, and each coefficient here the same value."""
    rows = np.asarray(table)[kept]
    if len(rows) < 2 or not (rows == rows[0]).all():
        return False
    if cluster is None:
        return True
    # Clusters of alike units are alike when they hold as many of them.
    _, sizes = np.unique(np.asarray(cluster, dtype=np.int64)[kept], return_counts=True)
    return bool((sizes == sizes[0]).all())


def perfect_agreement_interval(estimate: Estimate, units: int, chance_disagreement: float) -> None:
    """Where every unit agreed, a score-type interval instead of the bootstrap's [1, 1].

    Every resample of units that all agree agrees too, so the percentile bootstrap has width
    zero, as it has for a score of 100% (where the headline uses Wilson). There is no standard
    score interval for α, κ or AC1, so this is built from the one for the share of units in
    agreement: all `units` agreed, and Wilson's lower bound L says how many of the task's units
    could plausibly disagree (1 - L). Units that disagree as chance pairs do (by as much, on
    average, as two labels drawn at random that differ) would bring the coefficient, which is
    1 - observed/chance disagreement with chance held at its observed value, down to
    1 - (1 - L) / `chance_disagreement` (the chance that two labels differ, the coefficient's
    own p_e as 1 - p_e). The upper bound is 1. Changes `estimate` in place, and says so."""
    if (
        estimate.value is None
        or estimate.ci_low is None
        or estimate.value < 1 - 1e-9
        or units <= 0
        or chance_disagreement <= 0
    ):
        return
    low, _ = wilson_interval(units, units)
    assert low is not None
    estimate.ci_low = max(-1.0, 1 - (1 - low) / chance_disagreement)
    estimate.ci_high = 1.0
    estimate.note = f"all agree: score interval over {units} units, chance held fixed"


# --- Krippendorff's alpha --------------------------------------------------------------------


def _domain_and_index(
    code: np.ndarray, number: np.ndarray | None, level: str
) -> tuple[np.ndarray, np.ndarray]:
    """The value domain (sorted numbers, or class codes for nominal) and each label's index."""
    if level == "nominal" or number is None:
        domain, index = np.unique(np.asarray(code, dtype=np.int64), return_inverse=True)
        return domain.astype(float), index
    domain, index = np.unique(np.asarray(number, dtype=float), return_inverse=True)
    return domain, index


def _alpha_stats(
    counts: np.ndarray, domain: np.ndarray, level: str
) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]] | None:
    """Per-unit statistics whose sums give α, and the function of the sums; None when the
    bootstrap is not available for this many values."""
    m = counts.sum(axis=1).astype(float)
    pairable = m >= 2
    counts = counts[pairable].astype(float)
    m = m[pairable]
    v = len(domain)
    if level == "nominal":
        disagree = (m * m - (counts * counts).sum(axis=1)) / (m - 1)
        stats = np.column_stack([disagree, m, counts])

        def nominal(s: np.ndarray) -> np.ndarray:
            n = s[:, 1]
            nc = s[:, 2:]
            expected = n * n - (nc * nc).sum(axis=1)
            return _alpha(s[:, 0], expected, n)

        return stats, nominal
    if level == "interval":
        s1 = counts @ domain
        s2 = counts @ (domain * domain)
        disagree = 2 * (m * s2 - s1 * s1) / (m - 1)
        stats = np.column_stack([disagree, m, s1, s2])

        def interval(s: np.ndarray) -> np.ndarray:
            n = s[:, 1]
            expected = 2 * (n * s[:, 3] - s[:, 2] ** 2)
            return _alpha(s[:, 0], expected, n)

        return stats, interval
    if v > MAX_DENSE_VALUES:
        return None
    coincidence = counts[:, :, None] * counts[:, None, :]
    idx = np.arange(v)
    coincidence[:, idx, idx] -= counts
    coincidence /= (m - 1)[:, None, None]
    stats = coincidence.reshape(len(counts), v * v)
    if level == "ratio":
        total = domain[:, None] + domain[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = (
                np.where(
                    total != 0,
                    (domain[:, None] - domain[None, :]) / np.where(total != 0, total, 1),
                    0.0,
                )
                ** 2
            )
    else:
        delta = None

    def dense(s: np.ndarray) -> np.ndarray:
        o = s.reshape(-1, v, v)
        nc = o.sum(axis=2)
        n = nc.sum(axis=1)
        if delta is None:  # ordinal: distances depend on the marginals of each resample
            cum = np.cumsum(nc, axis=1)
            lo, hi = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
            between = cum[:, hi] - cum[:, lo] + nc[:, lo]
            d = (between - (nc[:, :, None] + nc[:, None, :]) / 2) ** 2
        else:
            d = np.broadcast_to(delta, o.shape)
        observed = (o * d).sum(axis=(1, 2))
        expected = (nc[:, :, None] * nc[:, None, :] * d).sum(axis=(1, 2))
        return _alpha(observed, expected, n)

    return stats, dense


def _alpha(observed: np.ndarray, expected: np.ndarray, n: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            expected > 0, 1 - (n - 1) * observed / np.where(expected > 0, expected, 1), np.nan
        )


def krippendorff_alpha(
    unit: np.ndarray,
    code: np.ndarray,
    n_units: int,
    level: str = "nominal",
    number: np.ndarray | None = None,
    *,
    replicates: int = 0,
    rng: np.random.Generator | None = None,
    cluster: np.ndarray | None = None,
    resampling: Resampling | None = None,
) -> Estimate:
    """Krippendorff's α at `level` (nominal on `code`; other levels on `number`), with a
    bootstrap interval over resampling clusters (`cluster[unit]`, default: units): its own
    replicates drawn with `rng`, or the shared `resampling`'s."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}")
    unit = np.asarray(unit, dtype=np.int64)
    if len(unit) == 0:
        return Estimate(None, note="no labels")
    domain, index = _domain_and_index(code, number, level)
    counts = counts_table(unit, index, n_units, len(domain))
    m = counts.sum(axis=1)
    if not (m >= 2).any():
        return Estimate(None, note="undefined: no item has two labels")
    if len(domain) < 2 or (counts[m >= 2] > 0).sum(axis=0).astype(bool).sum() < 2:
        return Estimate(None, note="undefined: every label has the same value (no variation)")
    value = _alpha_reference(counts, domain, level)
    estimate = Estimate(value)
    if (replicates > 0 and rng is not None) or resampling is not None:
        built = _alpha_stats(counts, domain, level)
        if built is None:
            estimate.note = f"no bootstrap interval: more than {MAX_DENSE_VALUES} distinct values"
            return estimate
        stats, finish = built
        if resampling is not None:
            sums = resampling.sums(_cluster_sums(_all_units(stats, m >= 2), cluster))
        else:
            assert rng is not None
            pairable_cluster = None if cluster is None else np.asarray(cluster)[m >= 2]
            sums = bootstrap_sums(_cluster_sums(stats, pairable_cluster), replicates, rng)
        estimate.ci_low, estimate.ci_high = percentile_interval(finish(sums))
        finish_interval(
            estimate,
            resampled_units(m >= 2, cluster),
            nominal_chance_disagreement(counts),
            units_alike(counts, m >= 2, cluster),
        )
    return estimate


def _alpha_reference(counts: np.ndarray, domain: np.ndarray, level: str) -> float | None:
    """The point value from the `krippendorff` package (our sums when the table is huge)."""
    pairable = counts[counts.sum(axis=1) >= 2]
    if pairable.size <= DENSE_LIMIT:
        import krippendorff

        value = float(
            krippendorff.alpha(
                value_counts=pairable, value_domain=domain, level_of_measurement=level
            )
        )
    else:
        built = _alpha_stats(counts, domain, level)
        if built is None:
            return None
        stats, finish = built
        value = float(finish(stats.sum(axis=0)[None, :])[0])
    return value if np.isfinite(value) else None


# --- Fleiss' kappa ---------------------------------------------------------------------------


def complete_units(counts: np.ndarray, expected: int | None = None) -> tuple[np.ndarray, int]:
    """Mask of units rated by the same number of raters, and that number: k (`expected`) when
    any unit has exactly k labels, unless more units share one larger number (labels imported
    with `--k` below what most items have: every label counts, so do those items); else the
    most common number of at least 2."""
    m = counts.sum(axis=1)
    if expected is not None and expected >= 2 and (m == expected).any():
        values, freq = np.unique(m[m >= expected], return_counts=True)
        # np.unique sorts: on a tie the smallest number, k itself, is kept.
        raters = int(values[freq.argmax()])
        return m == raters, raters
    multi = m[m >= 2]
    if len(multi) == 0:
        return np.zeros(len(m), dtype=bool), 0
    values, freq = np.unique(multi, return_counts=True)
    raters = int(values[freq.argmax()])
    return m == raters, raters


def fleiss_kappa(
    counts: np.ndarray,
    expected_raters: int | None = None,
    *,
    replicates: int = 0,
    rng: np.random.Generator | None = None,
    cluster: np.ndarray | None = None,
    resampling: Resampling | None = None,
) -> tuple[Estimate, int, int]:
    """Fleiss' κ over complete units (as statsmodels computes it), with a bootstrap interval
    (drawn with `rng`, or the shared `resampling`'s replicates).

    Returns (estimate, units used, raters per unit)."""
    mask, raters = complete_units(counts, expected_raters)
    table = counts[mask]
    if len(table) == 0:
        return Estimate(None, note="undefined: no item has two or more labels"), 0, raters
    p = table.sum(axis=0) / table.sum()
    if (p * p).sum() >= 1 - 1e-12:
        return (
            Estimate(None, note="undefined: every label has the same value (no variation)"),
            len(table),
            raters,
        )
    if table.size <= DENSE_LIMIT:
        value = _fleiss_reference(table)
    else:
        value = float(
            _fleiss_from_sums(_fleiss_stats(table, raters).sum(axis=0)[None, :], raters)[0]
        )
    estimate = Estimate(value if np.isfinite(value) else None)
    if resampling is not None:
        stats = _all_units(_fleiss_stats(table, raters), mask)
        sums = resampling.sums(_cluster_sums(stats, cluster))
        estimate.ci_low, estimate.ci_high = percentile_interval(_fleiss_from_sums(sums, raters))
    elif replicates > 0 and rng is not None:
        stats = _fleiss_stats(table, raters)
        sub_cluster = None if cluster is None else np.asarray(cluster)[mask]
        sums = bootstrap_sums(_cluster_sums(stats, sub_cluster), replicates, rng)
        estimate.ci_low, estimate.ci_high = percentile_interval(_fleiss_from_sums(sums, raters))
    finish_interval(
        estimate,
        resampled_units(mask, cluster),
        1 - float((p * p).sum()),
        units_alike(counts, mask, cluster),
    )
    return estimate, len(table), raters


def _fleiss_reference(table: np.ndarray) -> float:
    """statsmodels' `inter_rater.fleiss_kappa(table, method="fleiss")`, operation for
    operation (the same float), without importing scipy through statsmodels (a second of a
    report's start); the tests check both agree."""
    table = 1.0 * np.asarray(table)
    n_total = table.sum()
    n_rat = table.sum(1).max()
    p_cat = table.sum(0) / n_total
    p_rat = ((table * table).sum(1) - n_rat) / (n_rat * (n_rat - 1.0))
    p_mean_exp = (p_cat * p_cat).sum()
    return float((p_rat.mean() - p_mean_exp) / (1 - p_mean_exp))


def _fleiss_stats(table: np.ndarray, raters: int) -> np.ndarray:
    table = table.astype(float)
    p_i = ((table * table).sum(axis=1) - raters) / (raters * (raters - 1))
    return np.column_stack([p_i, np.ones(len(table)), table])


def _fleiss_from_sums(sums: np.ndarray, raters: int) -> np.ndarray:
    n = sums[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        p_mean = sums[:, 0] / n
        p_cat = sums[:, 2:] / (n * raters)[:, None]
        p_exp = (p_cat * p_cat).sum(axis=1)
        return np.where(p_exp < 1 - 1e-12, (p_mean - p_exp) / (1 - p_exp), np.nan)


# --- pairwise Cohen's kappa ------------------------------------------------------------------


def label_pairs(unit: np.ndarray, annotator: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j) of every two labels of one unit by two annotators, annotator[i] <
    annotator[j]: one entry per co-labelled unit and annotator pair."""
    unit = np.asarray(unit, dtype=np.int64)
    annotator = np.asarray(annotator, dtype=np.int64)
    order = np.lexsort((annotator, unit))
    u = unit[order]
    firsts, seconds = [], []
    for offset in range(1, len(u)):
        same = u[offset:] == u[:-offset]
        if not same.any():
            break
        hit = np.flatnonzero(same)
        firsts.append(order[hit])
        seconds.append(order[hit + offset])
    if not firsts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(firsts), np.concatenate(seconds)


def pairwise_cohen_kappa(
    unit: np.ndarray,
    annotator: np.ndarray,
    code: np.ndarray,
    names: list[str],
    position: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """Cohen's κ of every two annotators on the units both labelled (as sklearn's
    cohen_kappa_score). With `position` (each label's place on an ordered scale) the κ is
    quadratic-weighted. Undefined values (one class only) are None."""
    annotator = np.asarray(annotator, dtype=np.int64)
    code = np.asarray(code, dtype=np.int64)
    i, j = label_pairs(unit, annotator)
    if len(i) == 0:
        return []
    n_ann = len(names)
    pair_key = annotator[i] * n_ann + annotator[j]
    if n_ann * n_ann <= 4 * len(pair_key) + 1_000_000:  # dense: no sort
        present = np.bincount(pair_key, minlength=n_ann * n_ann) > 0
        keys = np.flatnonzero(present)
        pair = (np.cumsum(present) - 1)[pair_key]
    else:
        keys, pair = np.unique(pair_key, return_inverse=True)
    n_pairs = len(keys)
    n = np.bincount(pair, minlength=n_pairs).astype(float)
    if position is None:
        agree = np.bincount(pair, weights=code[i] == code[j], minlength=n_pairs)
        expected = _chance_agreement(pair, code[i], code[j], n_pairs)
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = agree / n
            pe = expected / (n * n)
            kappa = np.where(pe < 1 - 1e-12, (observed - pe) / (1 - pe), np.nan)
    else:
        pos = np.asarray(position, dtype=float)
        a, b = pos[i], pos[j]
        mean_sq = np.bincount(pair, weights=(a - b) ** 2, minlength=n_pairs) / n
        ma = np.bincount(pair, weights=a, minlength=n_pairs) / n
        mb = np.bincount(pair, weights=b, minlength=n_pairs) / n
        va = np.bincount(pair, weights=a * a, minlength=n_pairs) / n - ma * ma
        vb = np.bincount(pair, weights=b * b, minlength=n_pairs) / n - mb * mb
        chance = va + vb + (ma - mb) ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = np.where(chance > 1e-12, 1 - mean_sq / chance, np.nan)
    out = []
    for key, count, value in zip(keys.tolist(), n.tolist(), kappa.tolist(), strict=True):
        out.append(
            {
                "a": names[key // n_ann],
                "b": names[key % n_ann],
                "n": int(count),
                "kappa": value if np.isfinite(value) else None,
            }
        )
    return out


def _chance_agreement(pair: np.ndarray, ca: np.ndarray, cb: np.ndarray, n_pairs: int) -> np.ndarray:
    """Σ_c count_a(c) * count_b(c) per pair (sparse when pairs x classes would be large)."""
    span = int(max(ca.max(), cb.max())) + 1
    if n_pairs * span <= 4 * len(pair) + 1_000_000:
        ta = np.bincount(pair * span + ca, minlength=n_pairs * span).reshape(n_pairs, span)
        tb = np.bincount(pair * span + cb, minlength=n_pairs * span).reshape(n_pairs, span)
        return (ta * tb).sum(axis=1).astype(float)
    ka, na = np.unique(pair * span + ca, return_counts=True)
    kb, nb = np.unique(pair * span + cb, return_counts=True)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return np.bincount(common // span, weights=na[ia] * nb[ib], minlength=n_pairs)


PAIRS_UNDEFINED = (
    "undefined for every pair: on the items both labelled, each two raters gave one and the "
    "same answer throughout"
)
"""Why no pairwise κ has a value: two raters share items only when a pair exists, so κ is
undefined only where chance agreement is 1 (one answer from both)."""


def pairs_undefined(n_pairs: int, mean: float | None) -> str:
    """` (PAIRS_UNDEFINED)` where there are pairs and none has a κ; else empty."""
    return f" ({PAIRS_UNDEFINED})" if n_pairs and mean is None else ""


def summarise_pairs(pairs: list[dict[str, Any]]) -> dict[str, Any]:
    values = np.array([p["kappa"] for p in pairs if p["kappa"] is not None], dtype=float)
    if len(values) == 0:
        return {"n_pairs": len(pairs), "mean": None, "median": None, "min": None, "max": None}
    return {
        "n_pairs": len(pairs),
        "mean": float(values.mean()),
        "median": float(np.median(values)),
        "min": float(values.min()),
        "max": float(values.max()),
    }


# --- per-item agreement ----------------------------------------------------------------------


def item_agreement_histogram(top: np.ndarray, n_labels: np.ndarray) -> dict[str, int]:
    """How many units had their most chosen answer chosen by `top` of `n` annotators, keyed
    "5/5", "4/5", "3/5", … (most labels first, then strongest agreement first)."""
    top = np.asarray(top, dtype=np.int64)
    n_labels = np.asarray(n_labels, dtype=np.int64)
    keep = n_labels > 0
    if not keep.any():
        return {}
    span = int(n_labels.max()) + 1
    counts = np.bincount(n_labels[keep] * span + top[keep], minlength=span * span)
    keys = np.flatnonzero(counts)[::-1]  # most labels first, then strongest agreement
    return {f"{key % span}/{key // span}": int(counts[key]) for key in keys.tolist()}
