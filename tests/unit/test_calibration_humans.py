"""The humans interval keeps its promise, beside the headline's: over seeded studies whose
annotators are drawn from a population of varying skill, the humans interval ("annotators like
these, not only these") covers the population's majority-of-k accuracy, and the headline
covers the study's own truth (these annotators, more items).

Each study: 100 items of a two-class task, k = 5 answers per item. Half the studies are fully
crossed (5 annotators answer everything), half draw each item's 5 from a pool of 12. Skills
are Beta-distributed around 0.78 (sd 0.1); answers are independent given the skill. Then:

- the population value is P(Binomial(5, 0.78) >= 3): every vote on an item comes from an
  annotator drawn independently from the population, so it is right with the mean skill;
- the study's own truth is the mean over its items of the chance that the majority of *that
  item's* annotators is right (a Poisson-binomial probability).

The intervals are the report's own (`build_report` for the headline, `humans_interval` with
the report's replicates and generator for the humans interval)."""

from __future__ import annotations

import numpy as np
import pytest

from annotate.report.aggregation.study import final_aggregate
from annotate.report.build import build_report
from annotate.report.data.loading import StudyData
from annotate.report.stats.humans_interval import humans_interval
from annotate.scoring.intervals import rng_for
from annotate.scoring.metrics import task_score
from annotate.scoring.scorers import scorer_for
from tests.engine_helpers import RTE_CLASSES, rte_answers_study

ITEMS, K, MEAN, SD = 100, 5, 0.78, 0.10


def population_value() -> float:
    """P(at least 3 of 5 votes right), each right with the population's mean skill."""
    from math import comb

    return sum(comb(K, r) * MEAN**r * (1 - MEAN) ** (K - r) for r in range(K // 2 + 1, K + 1))


def majority_right(p: np.ndarray) -> np.ndarray:
    """Per row: P(more than half of the independent votes right), rows of skills."""
    dist = np.zeros((len(p), p.shape[1] + 1))
    dist[:, 0] = 1.0
    for j in range(p.shape[1]):
        shifted = np.zeros_like(dist)
        shifted[:, 1:] = dist[:, :-1] * p[:, j : j + 1]
        dist = dist * (1 - p[:, j : j + 1]) + shifted
    return dist[:, K // 2 + 1 :].sum(axis=1)


def simulated_study(rng: np.random.Generator, pool: int) -> tuple[StudyData, float]:
    shape = MEAN * (MEAN * (1 - MEAN) / SD**2 - 1)
    skill = rng.beta(shape, shape * (1 - MEAN) / MEAN, pool)
    gold = rng.choice(RTE_CLASSES, ITEMS)
    who = np.argsort(rng.random((ITEMS, pool)), axis=1)[:, :K]  # each item's 5 annotators
    right = rng.random((ITEMS, K)) < skill[who]
    return rte_answers_study(gold, right, who), float(majority_right(skill[who]).mean())


def run_studies(n_studies: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    population = population_value()
    humans = headline = below = 0
    for s in range(n_studies):
        data, own_truth = simulated_study(rng, 5 if s % 2 else 12)
        report = build_report(data, bootstrap=0, aggregation_models=False)
        h = report.headline_interval
        assert h is not None and h.low is not None and h.high is not None
        headline += h.low <= own_truth <= h.high
        coded, final = final_aggregate(data)
        point = task_score(scorer_for(coded, final.pred).point())
        low, high = humans_interval(
            coded, data.protocol.tie_rule, "mean", None, 1000, rng_for(s, "humans"), final.pred
        )
        assert low is not None and high is not None and point is not None
        humans += low <= population <= high
        below += high < point or low > point
    return {
        "humans": humans / n_studies,
        "headline": headline / n_studies,
        "outside": below,
        "n": n_studies,
    }


def _summary(result: dict[str, float]) -> str:
    return (
        f"calibration over {result['n']} studies with varying annotator skill: the humans "
        f"interval covered the population's majority-of-5 accuracy in {result['humans']:.1%}, "
        f"the headline covered the study's own truth in {result['headline']:.1%}"
    )


@pytest.mark.slow
def test_the_humans_interval_covers_the_population_value_in_200_studies(record_property):
    result = run_studies(200, 20261201)
    record_property("summary", _summary(result))
    assert result["outside"] == 0  # every interval contains its point estimate
    assert result["humans"] >= 0.93
    assert result["headline"] >= 0.95


def test_the_humans_interval_covers_the_population_value_fast_variant(record_property):
    """40 studies (a few seconds): the same checks with room for the smaller sample."""
    result = run_studies(40, 7)
    record_property("summary", _summary(result))
    assert result["outside"] == 0
    assert result["humans"] >= 0.85
    assert result["headline"] >= 0.85
