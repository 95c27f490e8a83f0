"""Uncertainty: a seeded item-level bootstrap, the Wilson interval, and the one rule that says
which of the two a score is quoted with (`quoted_interval`: the headline, the model rows and
the aggregation models, `compare` and the benchmark row), which accuracy gets Wilson's bounds
beside its bootstrap (`accuracy_wilson`: the report's scores, the aggregation models' and each
annotator's) and the interval of a share of independent units (`share_interval`: the training
pass rate). Each is computed with the report, before anything is drawn: renderers (tables,
LaTeX, figures, the console's charts) read the bounds and compute none.

The bootstrap resamples *resampling units* (items; AX-g minimal pairs) with replacement. Each
replicate is represented by how many times it drew each unit (a row of a weight matrix), so a
statistic that is a sum over units (a confusion matrix, a coincidence matrix, tp/fp/fn counts)
is one matrix product for all replicates at once. Replicates are built in chunks so memory
stays bounded for large studies.

A large study draws counts per *pattern* instead (`Resampling`): units whose statistics are
equal are interchangeable, so resampling n units is drawing how many of the n draws fall on
each distinct pattern, a multinomial. That is the same distribution as drawing unit by unit,
at a cost that grows with the number of patterns (a few hundred for 3 classes and 5 labels),
not with n. One `Resampling` is shared by every statistic summed over the same units.
"""

from __future__ import annotations

import copy
import math
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from annotate.metric_registry import find_metric

CONFIDENCE = 0.95
Z_95 = 1.959963984540054
"""Two-sided 95% normal quantile."""
MAX_CELLS_PER_CHUNK = 4_000_000
"""Replicates x units per chunk: bounds the weight matrix at ~32 MB."""
ROW_BY_ROW_FROM = 256
"""Units from which draws are counted one replicate at a time (`_draw_weights`)."""


def group_sums(stats: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """(n_groups x m) column sums of `stats` per group: the statistics of resampling units
    made of several rows (a question's answers, a minimal pair's items). Faster than np.add.at."""
    out = np.zeros((n_groups, stats.shape[1]))
    for col in range(stats.shape[1]):
        column = stats[:, col]
        if column.any():
            out[:, col] = np.bincount(group, weights=column, minlength=n_groups)
    return out


def seed_bits(seed: int) -> int:
    """A study's seed as numpy takes it: its 32 low bits (numpy refuses a negative seed, which
    a protocol may hold: `--set seed=-1`); a seed from 0 to 2**32 - 1 is itself."""
    return int(seed) & 0xFFFFFFFF


def rng_for(seed: int, purpose: str) -> np.random.Generator:
    """A generator for one purpose: the same seed gives the same draws for each statistic no
    matter which other statistics are computed."""
    return np.random.default_rng([seed_bits(seed), zlib.crc32(purpose.encode())])


def weight_chunks(n_units: int, replicates: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """(b x n_units) matrices of draw counts; the rows of all chunks are the replicates.

    Inside `shared_draws()`, draws that fit one chunk are kept: a second call from an equal
    generator state (the paired bootstrap of several statistics or estimators over the same
    units) gets the same matrix, read-only, and leaves `rng` where drawing would have."""
    if n_units == 0 or replicates <= 0:
        return
    per_chunk = max(1, MAX_CELLS_PER_CHUNK // n_units)
    kept = _SHARED_DRAWS.get()
    if kept is not None and replicates <= per_chunk:
        key = (n_units, replicates, repr(rng.bit_generator.state))
        hit = kept.get(key)
        if hit is None:
            weights = _draw_weights(n_units, replicates, rng)
            weights.flags.writeable = False
            kept.clear()  # one matrix at a time: memory stays bounded by one chunk
            kept[key] = hit = (weights, rng.bit_generator.state)
        else:
            rng.bit_generator.state = hit[1]
        yield hit[0]
        return
    done = 0
    while done < replicates:
        b = min(per_chunk, replicates - done)
        yield _draw_weights(n_units, b, rng)
        done += b


def _draw_weights(n_units: int, b: int, rng: np.random.Generator) -> np.ndarray:
    """(b x n_units) draw counts of `b` resamples of `n_units` units."""
    draws = rng.integers(0, n_units, size=(b, n_units))
    if n_units < ROW_BY_ROW_FROM:
        offsets = (np.arange(b) * n_units)[:, None]
        weights = np.bincount((draws + offsets).ravel(), minlength=b * n_units)
        return weights.reshape(b, n_units).astype(float)
    # Counted row by row, each row's counters stay in cache: several times faster than one
    # bincount over all rows once the matrix outgrows it (the same counts).
    out = np.empty((b, n_units))
    for r in range(b):
        out[r] = np.bincount(draws[r], minlength=n_units)
    return out


_SHARED_DRAWS: ContextVar[dict[tuple[int, int, str], tuple[np.ndarray, dict]] | None] = ContextVar(
    "shared_draws", default=None
)


@contextmanager
def shared_draws() -> Iterator[None]:
    """Within this block, bootstrap weights drawn twice from the same generator state are drawn
    once (`weight_chunks`): the same numbers, without redrawing 4 million counts per statistic
    in a study just small enough to be resampled unit by unit. A report builds inside one."""
    token = _SHARED_DRAWS.set({})
    try:
        yield
    finally:
        _SHARED_DRAWS.reset(token)


def row_patterns(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of `key` (n x d): the index of each one's first row, each row's
    pattern and how many rows each pattern has. Rows are compared byte for byte."""
    key = np.ascontiguousarray(key)
    if key.ndim == 1:
        key = key[:, None]
    rows = key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).ravel()
    _, first, inverse, freq = np.unique(
        rows, return_index=True, return_inverse=True, return_counts=True
    )
    return first, inverse.reshape(-1), freq


class Resampling:
    """`replicates` bootstrap resamples of `len(key)` units, drawn once and shared by every
    statistic summed over those units (`sums`).

    Rows of `key` say which units are interchangeable: a statistic passed to `sums` must be
    equal on units whose key rows are equal (its rows may serve as their own key). When the
    unit-by-unit weight matrix would not fit one chunk and the units have few patterns (at most
    half as many as units), the draws are counts per pattern (b x patterns, multinomial);
    otherwise they are weight chunks, replayed from the same generator state for each
    statistic (for a small study: the draws `bootstrap_sums` made before patterns existed)."""

    def __init__(self, key: np.ndarray, replicates: int, rng: np.random.Generator) -> None:
        key = np.asarray(key)
        self.n_units = len(key)
        self.replicates = max(0, int(replicates)) if self.n_units else 0
        self._first: np.ndarray | None = None
        self._counts: np.ndarray | None = None
        # The unit-by-unit draws: the first statistic advances `rng` as a lone bootstrap would;
        # the next ones replay the same draws from a copy of its state.
        self._live: np.random.Generator | None = rng
        self._replay = copy.deepcopy(rng)
        if self.replicates and self.n_units * self.replicates > MAX_CELLS_PER_CHUNK:
            first, _, freq = row_patterns(key)
            if len(first) <= self.n_units // 2:
                self._first = first
                draws = rng.multinomial(self.n_units, freq / self.n_units, size=self.replicates)
                self._counts = draws.astype(float)

    @property
    def by_pattern(self) -> bool:
        """Whether the draws are counts per pattern (a large study with few patterns)."""
        return self._counts is not None

    def sums(self, stats: np.ndarray) -> np.ndarray:
        """(replicates x m) sums of per-unit statistics (n_units x m) over the resamples."""
        stats = np.asarray(stats, dtype=float)
        if stats.ndim == 1:
            stats = stats[:, None]
        if len(stats) != self.n_units:
            raise ValueError(f"{len(stats)} rows of statistics for {self.n_units} units")
        if self._counts is not None and self._first is not None:
            return self._counts @ stats[self._first]
        rng, self._live = self._live or copy.deepcopy(self._replay), None
        parts = [w @ stats for w in weight_chunks(self.n_units, self.replicates, rng)]
        if not parts:
            return np.zeros((0, stats.shape[1]))
        return np.vstack(parts)


def bootstrap_sums(stats: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(replicates x m) sums of the per-unit statistics `stats` (n_units x m) over resamples."""
    stats = np.asarray(stats, dtype=float)
    if stats.ndim == 1:
        stats = stats[:, None]
    return Resampling(stats, replicates, rng).sums(stats)


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


def wilson_half_width(p: float, n: float, z: float = Z_95) -> float:
    """Half the width of the Wilson interval at observed proportion p over n (unclipped: also
    the planning value, a smooth function of n)."""
    denominator = 1 + z * z / n
    return z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator


def wilson_interval(
    successes: float, n: float, z: float = Z_95
) -> tuple[float | None, float | None]:
    """Wilson score interval for a proportion (None when n is 0)."""
    if n <= 0:
        return None, None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = wilson_half_width(p, n, z)
    # At 0% or 100% the bound is the point itself (exactly, not 1 - 2e-16).
    low = 0.0 if p <= 0 else max(0.0, centre - half)
    high = 1.0 if p >= 1 else min(1.0, centre + half)
    return low, high


PAIRED_METHOD = (
    "Newcombe's hybrid score interval of a paired difference (Wilson's of each accuracy), 95%: "
    "these annotators held fixed, test items a sample of the task's"
)
PAIRED_BOOTSTRAP_METHOD = (
    "bootstrap percentile interval of the paired difference, 95%: these annotators held fixed, "
    "test items resampled"
)


def paired_difference_interval(
    both: int, first_only: int, second_only: int, neither: int, z: float = Z_95
) -> tuple[float | None, float | None]:
    """The interval of the difference between two accuracies on the same items (the first's
    minus the second's), from their right/wrong table: Newcombe's hybrid score interval for
    paired proportions (Statistics in Medicine 17, 1998, method 10, as in Fagerland, Lydersen
    and Laake's reference code), which combines each
    accuracy's Wilson interval with the correlation of the two answerers' right answers.
    Written here because statsmodels has it only for independent samples. Unlike a percentile
    bootstrap it is not zero-wide when the two agree on every item (every resample would
    differ by nothing, though other items of the task would not all agree). (None, None) over
    no item."""
    n = both + first_only + second_only + neither
    if n <= 0:
        return None, None
    p1, p2 = (both + first_only) / n, (both + second_only) / n
    l1, u1 = wilson_interval(both + first_only, n, z)
    l2, u2 = wilson_interval(both + second_only, n, z)
    assert l1 is not None and u1 is not None and l2 is not None and u2 is not None
    # phi, the correlation of the two right/wrong columns, as Newcombe corrects it for
    # continuity (AD - BC less n/2 when positive, none within n/2); 0 where a margin is empty.
    margins = (both + first_only) * (second_only + neither) * (both + second_only)
    margins *= first_only + neither
    cross = both * neither - first_only * second_only
    cross = cross - n / 2 if cross > n / 2 else min(cross, 0)
    phi = cross / math.sqrt(margins) if margins else 0.0
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    difference = p1 - p2
    return (
        max(-1.0, difference - math.sqrt(max(below, 0.0))),
        min(1.0, difference + math.sqrt(max(above, 0.0))),
    )


# --- which interval a score is quoted with ----------------------------------------------------
WILSON_METHOD = (
    "Wilson score interval, 95%: these annotators held fixed, test items a sample of the task's"
)
BOOTSTRAP_METHOD = (
    "bootstrap percentile interval, 95%: these annotators held fixed, test items resampled"
)


def wilson_applies(metrics: Sequence[str], kind: str, paired: bool) -> bool:
    """Whether a score is one binomial proportion, so Wilson's interval applies: a task's only
    metric, one the registry marks as a share of independent units (`Metric.wilson`:
    accuracy), over independent classification items (not MultiRC's answers grouped by
    question, not AX-g's minimal pairs)."""
    if len(metrics) != 1 or kind != "classification" or paired:
        return False
    entry = find_metric(metrics[0])
    return entry is not None and entry.wilson


def scale_lowest(metrics: Sequence[str]) -> float | None:
    """The smallest value the mean of `metrics` can take (its largest is 1): 0 for shares,
    -1 for correlations (`Metric.lowest`); None when a metric is unknown."""
    entries = [find_metric(m) for m in metrics]
    if not entries or any(e is None for e in entries):
        return None
    return float(np.mean([e.lowest for e in entries if e is not None]))


def effective_units(
    share: float, n_units: int, n_obs: int, ci_low: float | None, ci_high: float | None
) -> float:
    """How many independent units the score's bootstrap spread is worth (Korn & Graubard's
    effective sample size): a binomial share of `share` over n has variance share(1-share)/n,
    so n_eff = share(1-share) / variance, the variance read off the percentile interval
    (`ci_low`, `ci_high`, on the share's scale). At most `n_obs` (the scored answers: a score
    is never surer than all of them independent), at least 1. Where the bootstrap gives no
    spread (every resample alike, as when every unit is right) or none was drawn: `n_units`,
    the units of resampling themselves (AX-g's pairs, MultiRC's questions)."""
    if ci_low is None or ci_high is None or not 0.0 < share < 1.0:
        return float(n_units)
    se = (ci_high - ci_low) / (2 * Z_95)
    if se <= 0:
        return float(n_units)
    return float(np.clip(share * (1 - share) / (se * se), 1.0, max(1, n_obs)))


@dataclass(frozen=True)
class ScoreInterval:
    low: float
    high: float
    n_effective: float


def score_interval(
    value: float,
    lowest: float,
    n_units: int,
    n_obs: int,
    ci_low: float | None,
    ci_high: float | None,
    design_effect: float = 1.0,
) -> ScoreInterval | None:
    """A score-type interval for a score that is not one binomial proportion (AX-g's pairs,
    MultiRC's answers grouped by question, several metrics averaged): Wilson's interval at
    the effective number of units (`effective_units`; divided by `design_effect`), on the
    scale from `lowest` to 1. Unlike the percentile bootstrap it never has zero width on
    finite data (the bootstrap collapses when every unit is right) and it does not end at
    the bound short of it. None when the value lies outside the scale or there are no units."""
    if n_units <= 0 or not lowest <= value <= 1.0 or lowest >= 1.0:
        return None
    span = 1.0 - lowest

    def share(x: float | None) -> float | None:
        return None if x is None else (x - lowest) / span

    p = (value - lowest) / span
    n_eff = effective_units(p, n_units, n_obs, share(ci_low), share(ci_high))
    n_eff /= max(1.0, float(design_effect))
    low, high = wilson_interval(p * n_eff, n_eff)
    assert low is not None and high is not None
    return ScoreInterval(lowest + span * low, lowest + span * high, n_eff)


def accuracy_wilson(
    kind: str, paired: bool, value: float | None, n: int
) -> tuple[float | None, float | None]:
    """Wilson's bounds for an accuracy of `value` over `n` answers, given beside its bootstrap
    interval (the study's, a model's, one annotator's): where the accuracy is one binomial
    proportion (`wilson_applies` to accuracy alone: independent classification items, not
    AX-g's minimal pairs). (None, None) where it is not, or without a value."""
    if not wilson_applies(["accuracy"], kind, paired) or value is None or n <= 0:
        return None, None
    return wilson_interval(value * n, n)


def share_interval(count: int, n: int) -> tuple[float | None, float | None]:
    """The interval of a share of independent units, such as the annotators the gate admitted
    of those it decided (the datasheet's training pass rate): Wilson's, (None, None) over none."""
    return wilson_interval(count, n)


@dataclass(frozen=True)
class QuotedInterval:
    low: float
    high: float
    method: str


SCORE_METHOD = (
    "Wilson score interval at the effective number of resampling units, 95%: these "
    "annotators held fixed, test items a sample of the task's"
)
"""The quotable interval of a score over shares that is not one proportion (pairs, answers
grouped by question, several metrics): `score_interval`."""


def _effective_words(n_eff: float, n_units: int) -> str:
    return f" ({n_eff:,.1f} effective of {n_units:,} resampling units)"


def quoted_interval(
    metrics: Sequence[str],
    kind: str,
    paired: bool,
    value: float | None,
    n: int,
    ci_low: float | None,
    ci_high: float | None,
    *,
    wilson_method: str = WILSON_METHOD,
    bootstrap_method: str = BOOTSTRAP_METHOD,
    score_method: str = SCORE_METHOD,
    design_effect: float = 1.0,
    n_units: int | None = None,
    n_obs: int | None = None,
) -> QuotedInterval | None:
    """The interval a task score of `value` over `n` scored items is quoted with. Wilson's where
    it applies: the percentile bootstrap under-covers at a hundred items (about 93% for a
    nominal 95% in seeded simulations) and collapses to zero width when every item is right,
    while Wilson keeps its coverage and is never zero-wide. A score of shares that is not one
    proportion (AX-g's minimal pairs, MultiRC's questions, several metrics): the score-type
    interval at the effective number of its `n_units` resampling units (`score_interval`;
    `n_obs` scored answers at most; both default to `n`), once the bootstrap was drawn.
    Otherwise (correlations) the bootstrap's (`ci_low`, `ci_high`), if drawn, and the
    score-type interval at the units where every resample was alike; None without either.

    `design_effect` (>= 1) is how many times the score's variance exceeds that of a score
    with its answers fixed (a model refitted per replicate: `report.aggregation.refit`):
    Wilson's interval is then taken at n / design effect items, the bootstrap's stretched
    about `value` by its square root."""
    d = max(1.0, float(design_effect))
    if wilson_applies(metrics, kind, paired) and value is not None and n > 0:
        effective = n / d
        low, high = wilson_interval(value * effective, effective)
        assert low is not None and high is not None
        return QuotedInterval(low, high, wilson_method)
    if ci_low is None or ci_high is None:
        return None
    units = n if n_units is None else n_units
    lowest = scale_lowest(metrics)
    if value is not None and lowest is not None and (lowest == 0.0 or ci_low >= ci_high):
        scored = n if n_obs is None else n_obs
        score = score_interval(value, lowest, units, scored, ci_low, ci_high, d)
        if score is not None:
            words = _effective_words(score.n_effective, units)
            return QuotedInterval(score.low, score.high, score_method + words)
    if d > 1.0 and value is not None:
        stretch = math.sqrt(d)
        ci_low = max(-1.0, value - stretch * (value - ci_low))
        ci_high = min(1.0, value + stretch * (ci_high - value))
    return QuotedInterval(ci_low, ci_high, bootstrap_method)
