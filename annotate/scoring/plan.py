"""Plan a study's size for a target precision (`annotate plan`, issue 16).

Analytic part. Annotators answer right with probability p (each its own p, with a pilot) and,
when wrong, pick one of the other C - 1 classes at random: the model `annotate simulate` uses.
The majority of k then has accuracy

    P(maj right) = Σ over vote counts of the multinomial probability of the counts
                   · (1 if the right class has the most votes, 1/t if it shares the top with
                     t - 1 others: the `random` tie rule)

computed exactly by summing over count vectors (k <= 15, C <= 10 here). With a pilot the k
annotators of an item are a random k-subset of the pilot's annotators, averaged over subsets
(all of them up to MAX_SUBSETS, else a seeded sample). The number of test items is the
smallest n whose 95% Wilson interval at that accuracy has half-width <= the target: the
study's headline interval for an accuracy-scored task (`report.build._headline_interval`).

`verify` checks the analytic answer by simulation at the aggregation layer: N seeded studies
of n items, k labels each drawn by the same model, majority with random ties, Wilson interval;
it reports the realised half-widths and how often the interval covers the true majority
accuracy. The engine is not in that loop (200 studies of a thousand items through it would
take an hour); a slow test runs seeded studies through the real engine (`annotate simulate`,
then the report) and checks they agree with this layer.

Pilot uncertainty. A pilot annotator's accuracy is estimated from a handful of answers (9 of
10 right is not "0.9"), so with a pilot each annotator's accuracy is a Beta posterior from
their right and wrong counts under the Jeffreys prior Beta(1/2, 1/2): the reference prior for
a binomial proportion, invariant to reparametrisation, and the one whose intervals keep close
to their nominal coverage for small counts (Brown, Cai & DasGupta 2001); unlike a uniform
prior it moves a small count little toward 1/2, and unlike none it gives 10 of 10 right a
posterior below 1. Accuracies are drawn independently per annotator (POSTERIOR_DRAWS seeded
draws); each draw gives the pool's exact majority-of-k accuracy, and the draws' 2.5% and
97.5% quantiles are its 95% interval. The Wilson half-width grows with p(1 - p), so n items
reach the target for every accuracy at least as far from 1/2 as the one they are sized for:
the items are sized at the (1 - assurance) quantile of the draws' distance from 1/2: at the
study's own majority accuracy the interval is then at most the target with probability
`assurance` (`ASSURANCE`, 80%, as power is commonly set; 97.5% sizes at the lower end of the
95% interval). A pilot never plans fewer items than its point estimate would. A realised
interval also varies with the study's items: `verify` draws each simulated study's
annotators' accuracies from the same posterior and checks coverage against that study's
own majority accuracy. The point figures (`majority_accuracy`, `pilot_accuracies`,
`PilotUncertainty.point_items`) are kept beside them.

The pool's majority accuracy is computed through the number R of right votes: a wrong vote
falls on the other classes evenly whoever casts it, so P(majority right | R) is one function
of R (`right_vote_outcomes`), and the distribution of R over random k-subsets of the pool is
the coefficient of x^r y^(k-r) in prod_i (1 + p_i x + (1 - p_i) y) over C(m, k)
(`right_vote_distribution`): exact over every subset, for thousands of draws at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import get_args

import numpy as np

from annotate.scoring.intervals import seed_bits, wilson_half_width, wilson_interval
from annotate.specs import ProtocolSpec
from annotate.wording import count_of

POSTERIOR_DRAWS = 10_000
"""Draws of the pilot annotators' accuracies (a few hundredths of a second): between seeds,
the docs' 20-answer pilot then plans 317 to 325 items (4,000 draws: 311 to 329)."""
CREDIBLE_LEVEL = 0.95
ASSURANCE = 0.8
"""With a pilot: the probability, given what the pilot says of its annotators, that the
planned study's majority accuracy needs no more items for the target half-width than planned
(`annotate plan --assurance`): 80%, as a study's power is commonly set; 0.975 sizes at the
lower end of the 95% interval."""
JEFFREYS = (0.5, 0.5)
"""Beta prior of each pilot annotator's accuracy (see the module docstring)."""
PRIOR_NAME = "Jeffreys Beta(1/2, 1/2)"
MAX_ITEMS = 1_000_000
WIDTH_TABLE_ITEMS = (25, 50, 100, 200, 300, 500, 1000, 2000)


def items_for_half_width(p: float, half_width: float) -> int:
    """The smallest number of items whose Wilson half-width at accuracy p is <= half_width."""
    if wilson_half_width(p, MAX_ITEMS) > half_width:
        raise ValueError(f"no study of up to {MAX_ITEMS:,} items reaches ±{half_width}")
    low, high = 1, MAX_ITEMS
    while low < high:  # the half-width falls as n grows
        mid = (low + high) // 2
        if wilson_half_width(p, mid) <= half_width:
            high = mid
        else:
            low = mid + 1
    return low


def _count_vectors(k: int, c: int) -> list[tuple[int, ...]]:
    """Every way k votes fall on c classes (class 0 is the right one)."""
    if c == 1:
        return [(k,)]
    return [(i, *rest) for i in range(k + 1) for rest in _count_vectors(k - i, c - 1)]


TIE_RULES = get_args(ProtocolSpec.model_fields["tie_rule"].annotation)
"""The protocol's tie rules (`ProtocolSpec.tie_rule`)."""
MAX_EXTRA_LABELS = 50
"""Extra labels one tied item may take under extra-annotator (a tie left after them: wrong)."""


Prob = float | np.ndarray
"""A probability, or one per posterior draw (an array: the draws ride along every sum)."""


def _add_vote(dist: dict[tuple[int, ...], Prob], p: Prob, c: int) -> dict[tuple[int, ...], Prob]:
    """The vote counts after one more annotator, right with probability p."""
    step = [p] + [(1 - p) / (c - 1)] * (c - 1)
    nxt: dict[tuple[int, ...], Prob] = {}
    for counts, prob in dist.items():
        for cls, q in enumerate(step):
            if isinstance(q, float) and q == 0:
                continue
            key = (*counts[:cls], counts[cls] + 1, *counts[cls + 1 :])
            nxt[key] = nxt.get(key, 0.0) + prob * q
    return nxt


def _is_tied(counts: tuple[int, ...]) -> bool:
    top = max(counts)
    return sum(1 for x in counts if x == top) > 1


def vote_outcome(
    accuracies: Sequence[float],
    n_classes: int,
    tie_rule: str = "random",
    extra_accuracy: float | None = None,
) -> tuple[float, float]:
    """P(the majority of these annotators is right) under the study's tie rule, and the
    expected labels per item past k (extra-annotator), wrong answers spread evenly over the
    other classes. Ties: `random` and `dev-majority-class` (balanced classes) right with
    1/t for t tied answers; `abstain` wrong; `extra-annotator` one more label at a time (at
    `extra_accuracy`, default the annotators' mean) until the tie breaks."""
    if tie_rule not in TIE_RULES:
        raise ValueError(f"unknown tie rule {tie_rule!r}")
    # distribution of vote counts, one annotator at a time (a dict over count vectors)
    dist: dict[tuple[int, ...], Prob] = {(0,) * n_classes: 1.0}
    for p in accuracies:
        dist = _add_vote(dist, p, n_classes)
    assert not len(accuracies) or abs(sum(dist.values()) - 1) < 1e-9
    if extra_accuracy is None:
        extra_accuracy = float(np.mean(accuracies)) if len(accuracies) else 0.0
    total, extra = _settle(dist, n_classes, tie_rule, extra_accuracy)
    return float(total), float(extra)


def _settle(
    dist: dict[tuple[int, ...], Prob], c: int, tie_rule: str, p_extra: Prob
) -> tuple[Prob, Prob]:
    """P(right) and the expected extra labels from a distribution of vote counts (class 0 the
    right one) under `tie_rule`; extra labels are right with `p_extra`."""
    extra: Prob = 0.0
    if tie_rule == "extra-annotator" and sum(next(iter(dist))) > 0:  # k > 0
        settled = {key: prob for key, prob in dist.items() if not _is_tied(key)}
        open_ = {key: prob for key, prob in dist.items() if _is_tied(key)}
        for _ in range(MAX_EXTRA_LABELS):
            still_open = sum(open_.values(), 0.0)
            if np.max(still_open) < 1e-12:
                break
            extra = extra + still_open
            open_ = _add_vote(open_, p_extra, c)
            for key in [key for key in open_ if not _is_tied(key)]:
                settled[key] = settled.get(key, 0.0) + open_.pop(key)
        dist = settled  # a tie still open after MAX_EXTRA_LABELS scores as wrong
    total: Prob = 0.0
    for counts, prob in dist.items():
        top = max(counts)
        if counts[0] == top:
            t = sum(1 for x in counts if x == top)
            if t == 1:
                total = total + prob
            elif tie_rule != "abstain":
                total = total + prob / t
    return total, extra


def majority_accuracy(
    accuracies: Sequence[float], n_classes: int, tie_rule: str = "random"
) -> float:
    """P(the majority of these annotators is right), wrong answers spread evenly over the other
    classes, ties settled by `tie_rule` (`vote_outcome`)."""
    return vote_outcome(accuracies, n_classes, tie_rule)[0]


def right_vote_outcomes(
    k: int, n_classes: int, tie_rule: str, extra_accuracy: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For r = 0..k right votes of k: P(the majority is right) and the expected extra labels,
    shape (k + 1,), or (draws, k + 1) for an array of `extra_accuracy` (one per draw).
    Who cast the votes does not matter: a wrong vote falls on the other classes evenly."""
    if tie_rule not in TIE_RULES:
        raise ValueError(f"unknown tie rule {tie_rule!r}")
    shape = np.shape(extra_accuracy)
    right, extra = [], []
    for r in range(k + 1):
        dist: dict[tuple[int, ...], Prob] = {(0,) * n_classes: 1.0}
        for p in [1.0] * r + [0.0] * (k - r):
            dist = _add_vote(dist, p, n_classes)
        value, more = _settle(dist, n_classes, tie_rule, extra_accuracy)
        right.append(np.broadcast_to(value, shape))
        extra.append(np.broadcast_to(more, shape))
    return np.stack(right, axis=-1), np.stack(extra, axis=-1)


def right_vote_distribution(pool: np.ndarray, k: int) -> np.ndarray:
    """P(r of an item's k annotators answer right), r = 0..k, when they are a uniformly random
    k-subset of `pool` (accuracies, last axis; leading axes are draws): the coefficient of
    x^r y^(k-r) in prod_i (1 + p_i x + (1 - p_i) y), divided by C(m, k)."""
    pool = np.asarray(pool, dtype=float)
    m = pool.shape[-1]
    if k > m:
        raise ValueError(f"k = {k} needs at least {k} annotators; the pilot has {m}")
    # g[..., a, b]: sum over disjoint sets A (right) and B (wrong), |A| = a, |B| = b, so far
    g = np.zeros((*pool.shape[:-1], k + 1, k + 1))
    g[..., 0, 0] = 1.0
    for i in range(m):
        p = pool[..., i, None, None]
        nxt = g.copy()
        nxt[..., 1:, :] += p * g[..., :-1, :]
        nxt[..., :, 1:] += (1 - p) * g[..., :, :-1]
        g = nxt
    r = np.arange(k + 1)
    return g[..., r, k - r] / math.comb(m, k)


def pool_majority_accuracy(
    pool: Sequence[float], k: int, n_classes: int, tie_rule: str = "random"
) -> tuple[float, str]:
    """The majority-of-k accuracy when each item's k annotators are a random k-subset of
    `pool` (a pilot's annotators), and how it was computed."""
    value, how, _ = pool_vote_outcome(pool, k, n_classes, tie_rule)
    return value, how


def pool_vote_outcome(
    pool: Sequence[float], k: int, n_classes: int, tie_rule: str = "random"
) -> tuple[float, str, float]:
    """`pool_majority_accuracy` and the expected extra labels per item (extra-annotator:
    drawn at the pool's mean accuracy). Exact over every k-subset, however many."""
    n_subsets = math.comb(len(pool), k) if k <= len(pool) else 0
    right, extra = pool_outcome_draws(
        np.asarray(pool, dtype=float)[None, :], k, n_classes, tie_rule
    )
    how = (
        f"exact over all {n_subsets:,} sets of {k} pilot annotators"
        if n_subsets > 1
        else f"exact for the pilot's {count_of(k, 'annotator')}"
    )
    return float(right[0]), how, float(extra[0])


def pool_outcome_draws(
    pools: np.ndarray, k: int, n_classes: int, tie_rule: str = "random"
) -> tuple[np.ndarray, np.ndarray]:
    """The majority-of-k accuracy and expected extra labels of each row of `pools` (one row
    of annotator accuracies per draw), k annotators a random k-subset of the row's."""
    p_extra = pools.mean(axis=1) if tie_rule == "extra-annotator" else 0.0
    right, extra = right_vote_outcomes(k, n_classes, tie_rule, p_extra)
    dist = right_vote_distribution(pools, k)
    return (dist * right).sum(axis=-1), (dist * extra).sum(axis=-1)


@dataclass
class WidthRow:
    items: int
    half_width: float
    interval_low: float
    interval_high: float


@dataclass
class PilotAnnotator:
    """One pilot annotator: their counts, the point accuracy and its posterior interval."""

    name: str
    right: int
    answers: int
    """Test answers on items with gold."""
    accuracy: float
    """right / answers: the point estimate the plan used before it carried the uncertainty."""
    interval_low: float
    interval_high: float
    """Equal-tailed 95% interval of the Beta posterior (`PRIOR_NAME`)."""


@dataclass
class PilotUncertainty:
    """What the pilot's small counts leave open, and the accuracy the plan is sized at."""

    prior: str
    level: float
    draws: int
    seed: int
    majority_accuracy_median: float
    majority_accuracy_low: float
    majority_accuracy_high: float
    """The majority-of-k accuracy's interval over the posterior draws (equal-tailed)."""
    assurance: float
    """The probability, over the pilot's uncertainty, that the study's majority accuracy
    needs no more items for the target than planned (`ASSURANCE`, `--assurance`)."""
    sized_at: str
    """Which accuracy the items are sized at (`Plan.planning_accuracy`), in words."""
    point_items: int
    """The items the point estimate (`Plan.majority_accuracy`) alone would plan."""
    annotators: list[PilotAnnotator]


@dataclass
class Plan:
    task: str
    n_classes: int
    k: int
    annotator_accuracy: float
    """Mean single-annotator accuracy (the pilot's mean point estimate with --pilot)."""
    majority_accuracy: float
    """The point majority-of-k accuracy: at the given accuracy, or the pilot's point estimates."""
    majority_accuracy_method: str
    planning_accuracy: float
    """The majority accuracy the items, half-width and width table are computed at:
    `majority_accuracy` without a pilot; with one, the end of its posterior interval nearest
    1/2 (`pilot_uncertainty.sized_at`)."""
    target_half_width: float
    items: int
    half_width: float
    """Wilson half-width at `planning_accuracy` and `items`."""
    interval_method: str
    test_labels: int
    """k per item, plus the expected extra labels of ties (`extra_labels`)."""
    training_labels: int
    annotators: int
    seconds_per_item: float
    """Seconds per test answer."""
    training_seconds_per_item: float
    """Seconds per training answer (a pilot's training median when it has one)."""
    seconds_source: str
    annotator_hours: float
    hourly_rate: float | None
    cost: float | None
    width_table: list[WidthRow]
    assumptions: list[str] = field(default_factory=list)
    pilot: str | None = None
    pilot_accuracies: dict[str, float] | None = None
    """Each pilot annotator's point accuracy (`pilot_uncertainty.annotators` has the rest)."""
    tie_rule: str = "random"
    """The protocol's tie rule, which the majority accuracy and `verify` follow."""
    extra_labels: int = 0
    """Expected labels past k for ties (tie_rule extra-annotator), rounded up."""
    warnings: list[str] = field(default_factory=list)
    """What makes the plan doubtful: annotators at or below chance."""
    pilot_uncertainty: PilotUncertainty | None = None
    """With a pilot of counted answers: the posterior figures (None without a pilot)."""


def posterior_accuracies(
    right: Sequence[int], answers: Sequence[int], draws: int, rng: np.random.Generator
) -> np.ndarray:
    """`draws` rows of the pilot annotators' accuracies, each drawn from its own Beta
    posterior (prior `JEFFREYS`), independently: shape (draws, annotators)."""
    r = np.asarray(right, dtype=float)
    n = np.asarray(answers, dtype=float)
    return rng.beta(r + JEFFREYS[0], n - r + JEFFREYS[1], size=(draws, len(r)))


def _posterior_rng(seed: int) -> np.random.Generator:
    # Its own stream: the plan's draws do not shift `verify`'s studies of the same seed.
    return np.random.default_rng([seed_bits(seed), 1])


def _pilot_uncertainty(
    names: Sequence[str],
    right: Sequence[int],
    answers: Sequence[int],
    *,
    k: int,
    n_classes: int,
    tie_rule: str,
    point: float,
    half_width: float,
    seed: int,
    draws: int,
    assurance: float = ASSURANCE,
) -> tuple[PilotUncertainty, float]:
    """The posterior figures of a pilot and the accuracy to size the study at: the items it
    takes are enough for the target half-width at the majority accuracy of a share `assurance`
    of the draws."""
    from scipy.special import betaincinv  # lazily: scipy is slow to import

    tail = (1 - CREDIBLE_LEVEL) / 2
    people = []
    for name, r, n in zip(names, right, answers, strict=True):
        a, b = r + JEFFREYS[0], n - r + JEFFREYS[1]
        low, high = betaincinv(a, b, [tail, 1 - tail])
        people.append(PilotAnnotator(name, int(r), int(n), r / n, float(low), float(high)))
    pools = posterior_accuracies(right, answers, draws, _posterior_rng(seed))
    values, _ = pool_outcome_draws(pools, k, n_classes, tie_rule)
    low, median, high = (float(x) for x in np.quantile(values, [tail, 0.5, 1 - tail]))
    # The Wilson half-width grows with p(1 - p), symmetric about 1/2: n items reach the target
    # exactly in the draws at least as far from 1/2 as the accuracy n is sized at. Sized at
    # the (1 - assurance) quantile of that distance, the target holds with that probability.
    # The point estimate's distance caps it, so a pilot never plans fewer items than it would.
    # Capped, the items are sized at the point estimate itself: near 50% the draws' median can
    # lie on the other side of 50% from it, and mirroring it there would name an accuracy
    # that is neither the point nor the assured one.
    distance = float(np.quantile(np.abs(values - 0.5), 1 - assurance))
    capped = distance >= abs(point - 0.5)
    side = 1.0 if median >= 0.5 else -1.0
    planning = point if capped else 0.5 + side * distance
    sized_at = (
        f"the point estimate, nearer 50% than {assurance:.0%} assurance asks"
        if capped
        else f"for {assurance:.0%} assurance"
    )
    uncertainty = PilotUncertainty(
        prior=PRIOR_NAME,
        level=CREDIBLE_LEVEL,
        draws=draws,
        seed=seed,
        majority_accuracy_median=median,
        majority_accuracy_low=low,
        majority_accuracy_high=high,
        assurance=assurance,
        sized_at=sized_at,
        point_items=items_for_half_width(point, half_width),
        annotators=people,
    )
    return uncertainty, planning


def make_plan(
    *,
    task: str,
    n_classes: int,
    k: int,
    half_width: float,
    accuracies: Sequence[float],
    seconds_per_item: float,
    seconds_source: str,
    annotators: int,
    training_items: int,
    hourly_rate: float | None,
    interval_method: str,
    assumptions: Sequence[str] = (),
    pilot: str | None = None,
    pilot_names: Sequence[str] | None = None,
    pilot_right: Sequence[int] | None = None,
    pilot_answers: Sequence[int] | None = None,
    seed: int = 0,
    tie_rule: str = "random",
    training_seconds_per_item: float | None = None,
    draws: int = POSTERIOR_DRAWS,
    assurance: float = ASSURANCE,
) -> Plan:
    """The plan: items for the target half-width, labels, hours, cost and the width table.
    One accuracy means every annotator has it; several are a pilot's annotators. With the
    pilot's counts (`pilot_right` of `pilot_answers`), the items are enough for `half_width`
    at the majority accuracy with probability `assurance` over its posterior (seeded by
    `seed`).
    Training labels take `training_seconds_per_item` (default: `seconds_per_item`)."""
    if len(accuracies) == 1:
        p_maj, extra = vote_outcome([accuracies[0]] * k, n_classes, tie_rule)
        how = (
            f"exact: majority of {count_of(k, 'annotator')} at accuracy {accuracies[0]:g}, "
            f"{n_classes} classes"
        )
    else:
        p_maj, how, extra = pool_vote_outcome(accuracies, k, n_classes, tie_rule)
    how += f", ties: {tie_rule}"
    uncertainty, planning = None, p_maj
    if pilot_right is not None and pilot_answers is not None:
        uncertainty, planning = _pilot_uncertainty(
            pilot_names or [str(i + 1) for i in range(len(pilot_right))],
            pilot_right,
            pilot_answers,
            k=k,
            n_classes=n_classes,
            tie_rule=tie_rule,
            point=p_maj,
            half_width=half_width,
            seed=seed,
            draws=draws,
            assurance=assurance,
        )
    items = items_for_half_width(planning, half_width)
    extra_labels = math.ceil(items * extra - 1e-9)
    test_labels = items * k + extra_labels
    training_labels = annotators * training_items
    training_seconds = (
        seconds_per_item if training_seconds_per_item is None else (training_seconds_per_item)
    )
    hours = (test_labels * seconds_per_item + training_labels * training_seconds) / 3600
    table_sizes = sorted({*WIDTH_TABLE_ITEMS, items})
    rows = []
    for n in table_sizes:
        low, high = wilson_interval(planning * n, n)
        assert low is not None and high is not None
        rows.append(WidthRow(n, wilson_half_width(planning, n), low, high))
    mean = float(np.mean(accuracies))
    warnings = []
    if mean <= 1 / n_classes + 1e-12:
        # Below chance a majority is worse than one annotator (at chance, no better): the
        # plan would size a study whose human ceiling is an artefact of the accuracy given.
        warnings.append(
            f"annotators at accuracy {mean:.3f} are at or below chance for {n_classes} "
            f"classes ({1 / n_classes:.3f}): a majority of {k} ({p_maj:.3f}) is no better "
            "than one annotator; check the accuracy (a pilot's gold, its answer scale) "
            "before sizing a study on it"
        )
    return Plan(
        task=task,
        n_classes=n_classes,
        k=k,
        annotator_accuracy=mean,
        majority_accuracy=p_maj,
        majority_accuracy_method=how,
        planning_accuracy=planning,
        target_half_width=half_width,
        items=items,
        half_width=wilson_half_width(planning, items),
        interval_method=interval_method,
        test_labels=test_labels,
        training_labels=training_labels,
        annotators=annotators,
        seconds_per_item=seconds_per_item,
        training_seconds_per_item=training_seconds,
        seconds_source=seconds_source,
        annotator_hours=hours,
        hourly_rate=hourly_rate,
        cost=None if hourly_rate is None else hours * hourly_rate,
        width_table=rows,
        assumptions=list(assumptions),
        pilot=pilot,
        pilot_accuracies=None
        if pilot_names is None
        else {n: float(a) for n, a in zip(pilot_names, accuracies, strict=True)},
        tie_rule=tie_rule,
        extra_labels=extra_labels,
        warnings=warnings,
        pilot_uncertainty=uncertainty,
    )


@dataclass
class Verification:
    studies: int
    seed: int
    items: int
    layer: str
    """Where the studies were simulated ("aggregation" or "engine")."""
    mean_half_width: float
    median_half_width: float
    max_half_width: float
    within_10_percent: bool
    """Mean realised half-width within 10% of the target."""
    coverage: float
    """Share of studies whose interval holds the true majority accuracy (with `posterior`:
    the study's own, from its drawn accuracies)."""
    true_majority_accuracy: float
    """The majority accuracy the intervals are checked against; with `posterior`, the mean
    of the studies' drawn values."""
    share_within_target: float = 0.0
    """Share of studies whose realised half-width is at or under the target."""
    posterior: bool = False
    """Each study drew its annotators' accuracies from the pilot's posterior."""


def verify(
    plan: Plan,
    studies: int,
    seed: int = 0,
    accuracies: Sequence[float] | None = None,
    posterior: bool | None = None,
) -> Verification:
    """`studies` seeded studies of the plan's size simulated at the aggregation layer. With a
    pilot's posterior (`plan.pilot_uncertainty`; `posterior=False` turns it off) each study
    first draws the annotators' accuracies from it, so the coverage allows for the pilot's
    own uncertainty; else every study has the point accuracies (`accuracies`, a pilot's)."""
    rng = np.random.default_rng(seed_bits(seed))
    n, k, c = plan.items, plan.k, plan.n_classes
    uncertainty = plan.pilot_uncertainty
    drawn = uncertainty is not None if posterior is None else posterior and bool(uncertainty)
    if drawn:
        assert uncertainty is not None
        people = uncertainty.annotators
        pools = posterior_accuracies(
            [a.right for a in people],
            [a.answers for a in people],
            studies,
            np.random.default_rng([seed_bits(seed), 2]),  # apart from the votes' stream
        )
        truths = pool_outcome_draws(pools, k, c, plan.tie_rule)[0]
    else:
        pool = np.asarray(accuracies if accuracies is not None else [plan.annotator_accuracy])
        pools = np.broadcast_to(pool, (studies, len(pool)))
        truths = np.full(studies, plan.majority_accuracy)
    halves, covered = [], 0
    for pool, truth in zip(pools, truths, strict=True):
        if len(pool) == 1:
            p = np.full((n, k), pool[0])
        else:  # each item's k annotators: a random k-subset of the pilot's
            p = pool[np.argsort(rng.random((n, len(pool))), axis=1)[:, :k]]
        right = rng.random((n, k)) < p
        # class 0 is the truth; a wrong vote goes to one of the other classes
        votes = np.where(right, 0, rng.integers(1, c, size=(n, k)))
        counts = np.stack([(votes == cls).sum(axis=1) for cls in range(c)], axis=1)
        top = counts.max(axis=1, keepdims=True)
        tied = counts == top
        # random tie rule: a uniformly chosen class among the tied
        choice = np.argmax(tied * rng.random((n, c)), axis=1)
        is_tied = tied.sum(axis=1) > 1
        if plan.tie_rule == "abstain":
            choice[is_tied] = -1  # no answer: wrong
        elif plan.tie_rule == "extra-annotator":
            choice = _extra_votes(rng, counts, choice, is_tied, float(pool.mean()), c)
        correct = int((choice == 0).sum())
        low, high = wilson_interval(correct, n)
        assert low is not None and high is not None
        halves.append((high - low) / 2)
        covered += low <= truth <= high
    h = np.asarray(halves)
    return Verification(
        studies=studies,
        seed=seed,
        items=n,
        layer="aggregation",
        mean_half_width=float(h.mean()),
        median_half_width=float(np.median(h)),
        max_half_width=float(h.max()),
        within_10_percent=bool(
            abs(h.mean() - plan.target_half_width) <= 0.1 * plan.target_half_width
        ),
        coverage=covered / studies,
        true_majority_accuracy=float(np.mean(truths)) if drawn else plan.majority_accuracy,
        share_within_target=float(np.mean(h <= plan.target_half_width + 1e-12)),
        posterior=drawn,
    )


def _extra_votes(
    rng: np.random.Generator,
    counts: np.ndarray,
    choice: np.ndarray,
    is_tied: np.ndarray,
    p: float,
    c: int,
) -> np.ndarray:
    """extra-annotator: each tied item takes one more vote (right with p) until its tie
    breaks; one still tied after MAX_EXTRA_LABELS has no answer."""
    counts, choice = counts.copy(), choice.copy()
    open_ = np.flatnonzero(is_tied)
    for _ in range(MAX_EXTRA_LABELS):
        if not len(open_):
            break
        right = rng.random(len(open_)) < p
        vote = np.where(right, 0, rng.integers(1, c, size=len(open_)))
        counts[open_, vote] += 1
        rows = counts[open_]
        still = (rows == rows.max(axis=1, keepdims=True)).sum(axis=1) > 1
        choice[open_[~still]] = rows[~still].argmax(axis=1)
        open_ = open_[still]
    choice[open_] = -1
    return choice
