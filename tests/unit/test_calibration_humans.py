"""The humans interval keeps its promise, beside the headline's: over seeded studies whose
annotators are drawn from a population, the humans interval ("annotators like these, not
only these") covers the population's majority-of-k accuracy, never falls inside the
fixed-annotator (headline) interval, and the headline covers the study's own truth (these
annotators, more items).

Each study: a two-class task (RTE), k = 5 answers per item. Half the studies are fully
crossed (5 annotators answer everything), half draw each item's 5 from a pool of 12. Each
annotator has a chance of the right answer per gold class (entailment, not entailment);
answers are independent given the annotator and the gold class. Four crowds:

- *varying*: skills Beta-distributed around 0.78 (sd 0.1), alike for both classes; 100 items;
- *near 100%*: skills around 0.97 (sd 0.02), 20 items (the demo's size): most studies get
  every item right;
- *leaning*: skills around 0.85 (sd 0.08), and 40% of the annotators lean towards
  "entailment" (on half their answers they say it without reading); 100 items;
- *bimodal*: 70% good annotators (around 0.9, sd 0.05), 30% spammers (a coin); 100 items.

Then:

- the population value is sum over the gold classes (each half the items) of
  P(Binomial(5, m_g) >= 3), m_g the population's mean chance of a right answer on class g:
  every vote on an item comes from an annotator drawn independently from the population;
- the study's own truth is the mean over its items of the chance that the majority of *that
  item's* annotators is right (a Poisson-binomial probability).

The intervals are the report's own (`build_report` for the headline, `humans_interval` with
the report's replicates, generator and headline interval for the humans interval)."""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

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

K = 5
LEAN = 0.5
"""A leaning annotator's share of answers that are "entailment" whatever the item."""


def beta(rng: np.random.Generator, mean: float, sd: float, n: int) -> np.ndarray:
    shape = mean * (mean * (1 - mean) / sd**2 - 1)
    return rng.beta(shape, shape * (1 - mean) / mean, n)


@dataclass(frozen=True)
class Crowd:
    """A population of annotators: `draw` gives a pool's chances of a right answer, (pool, 2):
    column 0 on entailment items, column 1 on the others; `means` the population's."""

    name: str
    items: int
    means: tuple[float, float]

    def draw(self, rng: np.random.Generator, pool: int) -> np.ndarray:
        if self.name == "varying":
            s = beta(rng, 0.78, 0.10, pool)
            return np.column_stack([s, s])
        if self.name == "near 100%":
            s = beta(rng, 0.97, 0.02, pool)
            return np.column_stack([s, s])
        if self.name == "leaning":
            s = beta(rng, 0.85, 0.08, pool)
            lean = rng.random(pool) < 0.4
            on_e = np.where(lean, LEAN + (1 - LEAN) * s, s)
            on_n = np.where(lean, (1 - LEAN) * s, s)
            return np.column_stack([on_e, on_n])
        good = rng.random(pool) < 0.7
        s = np.where(good, beta(rng, 0.9, 0.05, pool), 0.5)
        return np.column_stack([s, s])


CROWDS = (
    Crowd("varying", 100, (0.78, 0.78)),
    Crowd("near 100%", 20, (0.97, 0.97)),
    Crowd("leaning", 100, (0.85 + 0.4 * LEAN * 0.15, 0.85 - 0.4 * LEAN * 0.85)),
    Crowd("bimodal", 100, (0.7 * 0.9 + 0.3 * 0.5,) * 2),
)


def population_value(crowd: Crowd) -> float:
    """Mean over the two gold classes of P(at least 3 of 5 votes right)."""
    return float(
        np.mean(
            [
                sum(comb(K, r) * m**r * (1 - m) ** (K - r) for r in range(3, K + 1))
                for m in crowd.means
            ]
        )
    )


def majority_right(p: np.ndarray) -> np.ndarray:
    """Per row: P(more than half of the independent votes right), rows of chances."""
    dist = np.zeros((len(p), p.shape[1] + 1))
    dist[:, 0] = 1.0
    for j in range(p.shape[1]):
        shifted = np.zeros_like(dist)
        shifted[:, 1:] = dist[:, :-1] * p[:, j : j + 1]
        dist = dist * (1 - p[:, j : j + 1]) + shifted
    return dist[:, K // 2 + 1 :].sum(axis=1)


def simulated_study(rng: np.random.Generator, crowd: Crowd, pool: int) -> tuple[StudyData, float]:
    chances = crowd.draw(rng, pool)
    g = rng.integers(0, 2, crowd.items)  # 0: entailment, 1: not entailment
    who = np.argsort(rng.random((crowd.items, pool)), axis=1)[:, :K]  # each item's 5
    p = chances[who, g[:, None]]
    right = rng.random((crowd.items, K)) < p
    gold = np.array(RTE_CLASSES)[g]
    return rte_answers_study(gold, right, who), float(majority_right(p).mean())


def run_studies(crowd: Crowd, n_studies: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    population = population_value(crowd)
    humans = headline = inside = outside = at_top = 0
    for s in range(n_studies):
        data, own_truth = simulated_study(rng, crowd, 5 if s % 2 else 12)
        report = build_report(data, bootstrap=0, aggregation_models=False)
        h = report.headline_interval
        assert h is not None and h.low is not None and h.high is not None
        headline += h.low <= own_truth <= h.high
        coded, final = final_aggregate(data)
        point = task_score(scorer_for(coded, final.pred).point())
        low, high = humans_interval(
            coded,
            data.protocol.tie_rule,
            "mean",
            None,
            1000,
            rng_for(s, "humans"),
            final.pred,
            None,
            (h.low, h.high),
        )
        assert low is not None and high is not None and point is not None
        humans += low <= population <= high
        outside += high < point or low > point
        inside += low > h.low or high < h.high
        at_top += high >= 1.0 and point < 1.0
    return {
        "humans": humans / n_studies,
        "headline": headline / n_studies,
        "outside": outside,
        "inside": inside,
        "at_top": at_top,
        "n": n_studies,
    }


def _summary(crowd: Crowd, result: dict[str, float]) -> str:
    return (
        f"calibration over {result['n']} studies, {crowd.name} crowd: the humans interval "
        f"covered the population's majority-of-5 accuracy in {result['humans']:.1%} (never "
        f"inside the fixed-annotator interval: {result['inside']} exceptions), the headline "
        f"covered the study's own truth in {result['headline']:.1%}"
    )


def _check(crowd: Crowd, result: dict[str, float], level: float) -> None:
    assert result["outside"] == 0  # every interval contains its point estimate
    assert result["inside"] == 0  # never surer than the fixed-annotator interval
    assert result["at_top"] == 0  # 100% as a bound only where every item is right
    assert result["humans"] >= level, _summary(crowd, result)
    assert result["headline"] >= level, _summary(crowd, result)


@pytest.mark.slow
@pytest.mark.parametrize("crowd", CROWDS, ids=[c.name for c in CROWDS])
def test_the_humans_interval_covers_the_population_value_in_200_studies(crowd, record_property):
    result = run_studies(crowd, 200, 20261201)
    record_property("summary", _summary(crowd, result))
    _check(crowd, result, 0.93)


def test_the_humans_interval_covers_the_population_value_fast_variant(record_property):
    """20 studies of each crowd (a few seconds): the same checks with room for the smaller
    sample."""
    for crowd in CROWDS:
        result = run_studies(crowd, 20, 7)
        record_property("summary", _summary(crowd, result))
        _check(crowd, result, 0.75)
