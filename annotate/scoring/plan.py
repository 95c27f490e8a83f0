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
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import get_args

import numpy as np

from annotate.scoring.intervals import wilson_half_width, wilson_interval
from annotate.specs import ProtocolSpec

MAX_SUBSETS = 2000
"""k-subsets of a pilot's annotators averaged exactly up to this many, else sampled."""
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


def _add_vote(dist: dict[tuple[int, ...], float], p: float, c: int) -> dict[tuple[int, ...], float]:
    """The vote counts after one more annotator, right with probability p."""
    step = [p] + [(1 - p) / (c - 1)] * (c - 1)
    nxt: dict[tuple[int, ...], float] = {}
    for counts, prob in dist.items():
        for cls, q in enumerate(step):
            if q == 0:
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
    c, k = n_classes, len(accuracies)
    # distribution of vote counts, one annotator at a time (a dict over count vectors)
    dist: dict[tuple[int, ...], float] = {(0,) * c: 1.0}
    for p in accuracies:
        dist = _add_vote(dist, p, c)
    assert k == 0 or abs(sum(dist.values()) - 1) < 1e-9
    extra = 0.0
    if tie_rule == "extra-annotator" and k:
        p_extra = float(np.mean(accuracies)) if extra_accuracy is None else extra_accuracy
        settled = {key: prob for key, prob in dist.items() if not _is_tied(key)}
        open_ = {key: prob for key, prob in dist.items() if _is_tied(key)}
        for _ in range(MAX_EXTRA_LABELS):
            if sum(open_.values()) < 1e-12:
                break
            extra += sum(open_.values())
            open_ = _add_vote(open_, p_extra, c)
            for key in [key for key in open_ if not _is_tied(key)]:
                settled[key] = settled.get(key, 0.0) + open_.pop(key)
        dist = settled  # a tie still open after MAX_EXTRA_LABELS scores as wrong
    total = 0.0
    for counts, prob in dist.items():
        top = max(counts)
        if counts[0] == top:
            t = sum(1 for x in counts if x == top)
            if t == 1:
                total += prob
            elif tie_rule != "abstain":
                total += prob / t
    return total, extra


def majority_accuracy(
    accuracies: Sequence[float], n_classes: int, tie_rule: str = "random"
) -> float:
    """P(the majority of these annotators is right), wrong answers spread evenly over the other
    classes, ties settled by `tie_rule` (`vote_outcome`)."""
    return vote_outcome(accuracies, n_classes, tie_rule)[0]


def pool_majority_accuracy(
    pool: Sequence[float], k: int, n_classes: int, seed: int = 0, tie_rule: str = "random"
) -> tuple[float, str]:
    """The majority-of-k accuracy when each item's k annotators are a random k-subset of
    `pool` (a pilot's annotators), and how it was averaged."""
    value, how, _ = pool_vote_outcome(pool, k, n_classes, seed, tie_rule)
    return value, how


def pool_vote_outcome(
    pool: Sequence[float], k: int, n_classes: int, seed: int = 0, tie_rule: str = "random"
) -> tuple[float, str, float]:
    """`pool_majority_accuracy` and the expected extra labels per item (extra-annotator:
    drawn at the pool's mean accuracy)."""
    if k > len(pool):
        raise ValueError(f"k = {k} needs at least {k} annotators; the pilot has {len(pool)}")
    n_subsets = math.comb(len(pool), k)
    if n_subsets <= MAX_SUBSETS:
        subsets = list(itertools.combinations(pool, k))
        how = (
            f"exact over all {n_subsets} sets of {k} pilot annotators"
            if n_subsets > 1
            else f"exact for the pilot's {k} annotators"
        )
    else:
        rng = np.random.default_rng(seed)
        subsets = [
            tuple(np.asarray(pool)[rng.choice(len(pool), k, replace=False)])
            for _ in range(MAX_SUBSETS)
        ]
        how = f"mean over {MAX_SUBSETS} seeded random sets of {k} pilot annotators"
    p_extra = float(np.mean(pool))
    outcomes = np.array([vote_outcome(s, n_classes, tie_rule, p_extra) for s in subsets])
    return float(outcomes[:, 0].mean()), how, float(outcomes[:, 1].mean())


@dataclass
class WidthRow:
    items: int
    half_width: float
    interval_low: float
    interval_high: float


@dataclass
class Plan:
    task: str
    n_classes: int
    k: int
    annotator_accuracy: float
    """Mean single-annotator accuracy (the pilot's mean with --pilot)."""
    majority_accuracy: float
    majority_accuracy_method: str
    target_half_width: float
    items: int
    half_width: float
    """Wilson half-width at the planned accuracy and `items`."""
    interval_method: str
    test_labels: int
    """k per item, plus the expected extra labels of ties (`extra_labels`)."""
    training_labels: int
    annotators: int
    seconds_per_item: float
    seconds_source: str
    annotator_hours: float
    hourly_rate: float | None
    cost: float | None
    width_table: list[WidthRow]
    assumptions: list[str] = field(default_factory=list)
    pilot: str | None = None
    pilot_accuracies: dict[str, float] | None = None
    tie_rule: str = "random"
    """The protocol's tie rule, which the majority accuracy and `verify` follow."""
    extra_labels: int = 0
    """Expected labels past k for ties (tie_rule extra-annotator), rounded up."""
    warnings: list[str] = field(default_factory=list)
    """What makes the plan doubtful: annotators at or below chance."""


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
    seed: int = 0,
    tie_rule: str = "random",
) -> Plan:
    """The plan: items for the target half-width, labels, hours, cost and the width table.
    One accuracy means every annotator has it; several are a pilot's annotators."""
    if len(accuracies) == 1:
        p_maj, extra = vote_outcome([accuracies[0]] * k, n_classes, tie_rule)
        how = (
            f"exact: majority of {k} annotators at accuracy {accuracies[0]:g}, {n_classes} classes"
        )
    else:
        p_maj, how, extra = pool_vote_outcome(accuracies, k, n_classes, seed, tie_rule)
    how += f", ties: {tie_rule}"
    items = items_for_half_width(p_maj, half_width)
    extra_labels = math.ceil(items * extra - 1e-9)
    test_labels = items * k + extra_labels
    training_labels = annotators * training_items
    hours = (test_labels + training_labels) * seconds_per_item / 3600
    table_sizes = sorted({*WIDTH_TABLE_ITEMS, items})
    rows = []
    for n in table_sizes:
        low, high = wilson_interval(p_maj * n, n)
        assert low is not None and high is not None
        rows.append(WidthRow(n, wilson_half_width(p_maj, n), low, high))
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
        target_half_width=half_width,
        items=items,
        half_width=wilson_half_width(p_maj, items),
        interval_method=interval_method,
        test_labels=test_labels,
        training_labels=training_labels,
        annotators=annotators,
        seconds_per_item=seconds_per_item,
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
    """Share of studies whose interval holds the true majority accuracy."""
    true_majority_accuracy: float


def verify(
    plan: Plan, studies: int, seed: int = 0, accuracies: Sequence[float] | None = None
) -> Verification:
    """`studies` seeded studies of the plan's size simulated at the aggregation layer."""
    rng = np.random.default_rng(seed)
    n, k, c = plan.items, plan.k, plan.n_classes
    pool = np.asarray(accuracies if accuracies is not None else [plan.annotator_accuracy])
    halves, covered = [], 0
    for _ in range(studies):
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
        covered += low <= plan.majority_accuracy <= high
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
        true_majority_accuracy=plan.majority_accuracy,
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
