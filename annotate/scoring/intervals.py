"""Uncertainty: a seeded item-level bootstrap and the Wilson interval.

The bootstrap resamples *resampling units* (items; AX-g minimal pairs) with replacement. Each
replicate is represented by how many times it drew each unit (a row of a weight matrix), so a
statistic that is a sum over units (a confusion matrix, a coincidence matrix, tp/fp/fn counts)
is one matrix product for all replicates at once. Replicates are built in chunks so memory
stays bounded for large studies.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterator

import numpy as np

CONFIDENCE = 0.95
Z_95 = 1.959963984540054
"""Two-sided 95% normal quantile."""
MAX_CELLS_PER_CHUNK = 4_000_000
"""Replicates x units per chunk: bounds the weight matrix at ~32 MB."""


def group_sums(stats: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """(n_groups x m) column sums of `stats` per group: the statistics of resampling units
    made of several rows (a question's answers, a minimal pair's items). Faster than np.add.at."""
    out = np.zeros((n_groups, stats.shape[1]))
    for col in range(stats.shape[1]):
        column = stats[:, col]
        if column.any():
            out[:, col] = np.bincount(group, weights=column, minlength=n_groups)
    return out


def rng_for(seed: int, purpose: str) -> np.random.Generator:
    """A generator for one purpose: the same seed gives the same draws for each statistic no
    matter which other statistics are computed."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(purpose.encode())])


def weight_chunks(n_units: int, replicates: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """(b x n_units) matrices of draw counts; the rows of all chunks are the replicates."""
    if n_units == 0 or replicates <= 0:
        return
    per_chunk = max(1, MAX_CELLS_PER_CHUNK // n_units)
    done = 0
    while done < replicates:
        b = min(per_chunk, replicates - done)
        draws = rng.integers(0, n_units, size=(b, n_units))
        offsets = (np.arange(b) * n_units)[:, None]
        weights = np.bincount((draws + offsets).ravel(), minlength=b * n_units)
        yield weights.reshape(b, n_units).astype(float)
        done += b


def bootstrap_sums(stats: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(replicates x m) sums of the per-unit statistics `stats` (n_units x m) over resamples."""
    stats = np.asarray(stats, dtype=float)
    parts = [w @ stats for w in weight_chunks(len(stats), replicates, rng)]
    if not parts:
        return np.zeros((0, stats.shape[1] if stats.ndim == 2 else 0))
    return np.vstack(parts)


def bootstrap(
    n_units: int,
    replicates: int,
    rng: np.random.Generator,
    statistic: Callable[[np.ndarray], dict[str, np.ndarray]],
) -> dict[str, np.ndarray]:
    """Apply `statistic(weights)` to every chunk of replicate weights and join the results."""
    parts: dict[str, list[np.ndarray]] = {}
    for weights in weight_chunks(n_units, replicates, rng):
        for key, values in statistic(weights).items():
            parts.setdefault(key, []).append(np.asarray(values, dtype=float))
    return {key: np.concatenate(chunks) for key, chunks in parts.items()}


def percentile_interval(
    values: np.ndarray, level: float = CONFIDENCE
) -> tuple[float | None, float | None]:
    """The central `level` share of the replicates (undefined replicates left out)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return None, None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def wilson_interval(successes: float, n: int, z: float = Z_95) -> tuple[float | None, float | None]:
    """Wilson score interval for a proportion (None when n is 0)."""
    if n <= 0:
        return None, None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
