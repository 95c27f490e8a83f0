"""One bootstrap resampling, drawn once and shared: unit by unit for a small study (the draws
the report always made), counts per pattern of per-unit statistics for a large one (the same
distribution, at a cost that does not grow with the number of units)."""

from __future__ import annotations

import numpy as np
import pytest

from annotate.report.stats import agreement as agr
from annotate.report.stats.gwet import gwet_ac1
from annotate.scoring.intervals import (
    MAX_CELLS_PER_CHUNK,
    Resampling,
    bootstrap_sums,
    percentile_interval,
    rng_for,
    shared_draws,
    weight_chunks,
)


def _labels(n_units: int, seed: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """5 labels per unit, 3 classes, annotators right 80% of the time."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n_units)
    unit = np.repeat(np.arange(n_units), 5)
    right = rng.random(len(unit)) < 0.8
    code = np.where(right, truth[unit], (truth[unit] + rng.integers(1, 3, len(unit))) % 3)
    return unit, code


def test_a_small_bootstrap_draws_unit_by_unit_as_it_always_did():
    stats = np.random.default_rng(1).integers(0, 4, (300, 2)).astype(float)
    resampling = Resampling(stats, 1000, rng_for(7, "x"))
    assert not resampling.by_pattern
    expected = np.vstack([w @ stats for w in weight_chunks(300, 1000, rng_for(7, "x"))])
    assert np.array_equal(bootstrap_sums(stats, 1000, rng_for(7, "x")), expected)
    assert np.array_equal(resampling.sums(stats), expected)


@pytest.mark.parametrize("n_units", [300, 40_000])
def test_every_statistic_gets_the_same_draws(n_units):
    rng = np.random.default_rng(2)
    key = rng.integers(0, 3, n_units)
    resampling = Resampling(key, 200, rng_for(3, "shared"))
    assert resampling.by_pattern == (n_units * 200 > MAX_CELLS_PER_CHUNK)
    first = resampling.sums(np.eye(3)[key])
    again = resampling.sums(np.eye(3)[key])
    assert np.array_equal(first, again)
    # Each replicate resamples every unit once: the counts of the three patterns add up to n.
    assert np.array_equal(first.sum(axis=1), np.full(200, float(n_units)))
    with pytest.raises(ValueError, match="rows of statistics"):
        resampling.sums(np.ones((n_units + 1, 1)))


def test_counts_per_pattern_have_the_unit_bootstraps_distribution():
    rng = np.random.default_rng(5)
    n, b = 30_000, 2000
    stats = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 6, n)]).astype(float)
    by_pattern = Resampling(stats, b, rng_for(1, "p"))
    assert by_pattern.by_pattern
    sums = by_pattern.sums(stats)
    # A sum over n units drawn with replacement: mean n·μ, variance n·σ² per column.
    assert sums.mean(axis=0) == pytest.approx(stats.sum(axis=0), rel=2e-3)
    assert sums.std(axis=0) == pytest.approx(np.sqrt(n) * stats.std(axis=0), rel=0.06)
    unit_by_unit = np.vstack([w @ stats for w in weight_chunks(n, b, rng_for(1, "u"))])
    for col in range(2):
        low, high = percentile_interval(sums[:, col] / n)
        ref_low, ref_high = percentile_interval(unit_by_unit[:, col] / n)
        width = ref_high - ref_low
        assert abs(low - ref_low) < 0.1 * width and abs(high - ref_high) < 0.1 * width


def test_agreement_coefficients_share_alphas_draws_and_keep_their_intervals():
    n_units = 20_000
    unit, code = _labels(n_units)
    table = agr.counts_table(unit, code, n_units, 3)
    resampling = agr.unit_resampling([table], 1000, rng_for(1, "alpha"))
    assert resampling.by_pattern  # 21 patterns of 5 labels in 3 classes, not 20,000 units
    shared_alpha = agr.krippendorff_alpha(unit, code, n_units, resampling=resampling)
    own_alpha = agr.krippendorff_alpha(
        unit, code, n_units, replicates=1000, rng=rng_for(1, "alpha")
    )
    kappa, used, raters = agr.fleiss_kappa(table, 5, resampling=resampling)
    ac1, _ = gwet_ac1(table, 3, resampling=resampling)
    own_ac1, _ = gwet_ac1(table, 3, replicates=1000, rng=rng_for(1, "gwet-ac1"))
    assert (used, raters) == (n_units, 5)
    assert shared_alpha.value == own_alpha.value
    for shared, own in ((shared_alpha, own_alpha), (ac1, own_ac1)):
        width = own.ci_high - own.ci_low
        assert shared.ci_low < shared.value < shared.ci_high
        assert abs(shared.ci_low - own.ci_low) < 0.15 * width
        assert abs(shared.ci_high - own.ci_high) < 0.15 * width
    # With every unit complete, α and κ are nearly one statistic: on the same draws their
    # intervals match far closer than two independent bootstraps would.
    assert abs(kappa.ci_low - shared_alpha.ci_low) < 0.02 * (kappa.ci_high - kappa.ci_low)
    assert abs(kappa.ci_high - shared_alpha.ci_high) < 0.02 * (kappa.ci_high - kappa.ci_low)


def test_clusters_are_resampled_whole():
    unit, code = _labels(600, seed=9)
    table = agr.counts_table(unit, code, 600, 3)
    cluster = np.arange(600) // 4  # 150 questions of 4 candidate answers
    resampling = agr.unit_resampling([table], 500, rng_for(2, "alpha"), cluster)
    assert resampling.n_units == 150
    alpha = agr.krippendorff_alpha(unit, code, 600, cluster=cluster, resampling=resampling)
    assert alpha.ci_low < alpha.value < alpha.ci_high


@pytest.mark.parametrize("n_units", [40, 300, 4000])
def test_draws_kept_for_a_report_are_the_draws_made_without(n_units):
    """Inside `shared_draws` (a report), a second bootstrap from the same generator state
    reuses the first's weights: the same numbers, the generator left where drawing would
    leave it, and the kept matrix cannot be changed by a caller."""
    replicates = min(1000, MAX_CELLS_PER_CHUNK // n_units)
    stats = np.random.default_rng(3).integers(0, 3, (n_units, 2)).astype(float)
    plain, plain_rng = [], rng_for(9, "paired")
    for _ in range(2):  # two statistics from the same state, as the estimators draw
        plain.append([w.copy() for w in weight_chunks(n_units, replicates, rng_for(9, "paired"))])
    list(weight_chunks(n_units, replicates, plain_rng))
    with shared_draws():
        kept_rng = rng_for(9, "paired")
        first = list(weight_chunks(n_units, replicates, kept_rng))
        again_rng = rng_for(9, "paired")
        again = list(weight_chunks(n_units, replicates, again_rng))
        assert again[0] is first[0]
        assert np.array_equal(
            bootstrap_sums(stats, replicates, rng_for(9, "paired")), again[0] @ stats
        )
        with pytest.raises(ValueError, match="read-only"):
            again[0][0, 0] = 5.0
    for got in (first, again):
        assert len(got) == 1 and np.array_equal(got[0], plain[0][0])
    for used in (kept_rng, again_rng):
        assert used.bit_generator.state == plain_rng.bit_generator.state
    # The counts are those of the draws: every replicate draws n units, each a number of times.
    draws = rng_for(9, "paired").integers(0, n_units, size=(replicates, n_units))
    counted = np.array([np.bincount(row, minlength=n_units) for row in draws], dtype=float)
    assert np.array_equal(first[0], counted) and np.array_equal(plain[1][0], counted)
