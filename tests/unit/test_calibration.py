"""The headline interval keeps its promise: over seeded simulated studies, a nominal 95%
interval covers the study's true value at least 94% of the time.

Each study: 100 test items of a two-class task, the same 5 annotators on every item, each right
with their own probability (drawn around 0.8) and independently across items. The true value
is the chance that the majority of these 5 is right on an item of the task: the Poisson-binomial
probability that at least 3 of them are. The report is built by the real report code (the
aggregation layer; no store), as `annotate report` builds it, without the Dawid–Skene and
MACE section (not the headline, and a second per study)."""

from __future__ import annotations

import itertools

import numpy as np

from annotate.report.build import build_report
from annotate.report.data.loading import StudyData
from tests.engine_helpers import RTE_CLASSES, rte_answers_study

STUDIES = 400
ITEMS = 100
K = 5


def majority_right_probability(accuracies: list[float]) -> float:
    """P(at least 3 of the 5 are right), each independently with their own accuracy."""
    total = 0.0
    for right in itertools.product([0, 1], repeat=len(accuracies)):
        if sum(right) * 2 > len(accuracies):
            total += float(
                np.prod([a if r else 1 - a for a, r in zip(accuracies, right, strict=True)])
            )
    return total


def simulated_study(rng: np.random.Generator) -> tuple[StudyData, float]:
    accuracies = np.clip(rng.normal(0.8, 0.05, K), 0.55, 0.97).tolist()
    gold = rng.choice(RTE_CLASSES, ITEMS)
    right = rng.random((ITEMS, K)) < np.asarray(accuracies)
    who = np.tile(np.arange(K), (ITEMS, 1))  # the same 5 on every item
    return rte_answers_study(gold, right, who), majority_right_probability(accuracies)


def test_the_headline_interval_covers_the_true_value_95_percent_of_the_time(record_property):
    rng = np.random.default_rng(20261130)
    covered = 0
    for _ in range(STUDIES):
        data, truth = simulated_study(rng)
        report = build_report(data, bootstrap=0, aggregation_models=False)  # the headline only
        interval = report.headline_interval
        assert interval is not None and interval.low is not None and interval.high is not None
        covered += interval.low <= truth <= interval.high
    coverage = covered / STUDIES
    record_property(
        "summary",
        f"calibration: the headline's nominal 95% interval ({interval.method.split(',')[0]}) "
        f"covered the true value in {covered} of {STUDIES} simulated studies ({coverage:.1%})",
    )
    assert coverage >= 0.94
