"""How much fitting Dawid–Skene or MACE adds to the uncertainty of its score: the bootstrap
that refits.

The fixed-fit interval resamples the test items with the model's answers held fixed, so it
leaves out that another sample of items gives another fit and other answers (Dawid–Skene's
fixed-fit Wilson interval covered its target in 91.7% of 600 simulated studies). Here the
first `REFIT_REPLICATES` of the report's own item draws (the `model-aggregation` draws every
aggregation's interval shares) are refitted: each replicate's labels are weighted by how often
it drew their item, the model's EM runs again from the full fit (a warm start) and the
replicate is scored with its own answers. The *design effect* of fitting is

    max(1, var(task score, refitted) / var(task score, answers fixed))

over the same draws, and the quoted interval (`scoring.intervals.quoted_interval`, the one
rule) is widened by it: Wilson's at n / design effect items, the bootstrap's stretched about
the point by its square root. Refitting costs about one EM per replicate, so it is done on
studies of at most `REFIT_LABELS` labels; above that the interval holds the fit fixed and its
method says so.
"""

from __future__ import annotations

import numpy as np

from annotate.report.aggregation import estimators
from annotate.report.aggregation.majority import NO_LABELS
from annotate.scoring.intervals import rng_for, weight_chunks
from annotate.scoring.metrics import Scorer, task_score
from annotate.scoring.scorers import HEADLINE_DRAWS, scorer_for

REFIT_REPLICATES = 200
"""Replicates refitted (the first of the report's draws): enough for a variance ratio."""
REFIT_LABELS = 2_500
"""Studies with more labels keep the fixed-fit interval. Measured with `python -m
bench.bench_refit` (MNLI, 50 annotators, 5 labels per item, 1000 replicates, a shared
2-core machine): the refit adds about 0.35 s at 1,000 labels and 0.9 s at 2,500 (to a 0.3 s
report, imports aside), growing with the labels; at 20,000 it would make the report 6–8
times slower (7–14 s more), so from 2,501 labels the fit is held fixed and the report costs
what it did."""
PURPOSE = HEADLINE_DRAWS
"""The draws every aggregation's interval uses (`latent._score`): the headline's own, so the
majority-vote row quotes the headline's interval and every method's differs from it by its
answers only."""


def refits(n_labels: int, bootstrap: int) -> bool:
    """Whether the study's model intervals include the refit."""
    return bootstrap > 0 and 0 < n_labels <= REFIT_LABELS


def design_effect(
    given: estimators.FitInput,
    estimator: estimators.Estimator,
    full: estimators.Fitted,
    scorer: Scorer,
    fixed: np.ndarray,
    seed: int,
) -> float | None:
    """The refit's design effect (>= 1) for `estimator`, from the first replicates of the
    `PURPOSE` draws; `fixed` holds the fixed-answer task scores of those same replicates (in
    order). None when it cannot be measured (no spread, no replicates)."""
    if estimator.refit is None:
        return None
    coded = given.coded
    rows = scorer.resampled_rows(coded.n_units)
    n_rows = scorer.n_units
    count = min(REFIT_REPLICATES, len(fixed))
    if n_rows == 0 or count < 2:
        return None
    draws = np.vstack(list(weight_chunks(n_rows, count, rng_for(seed, PURPOSE))))
    # Only the units with labels are refitted (`labelled_units`: the others have no answer).
    # Units outside the scored rows (no gold) keep their labels in every refit, once.
    units, _ = estimators.labelled_units(given)
    row = rows[units]
    weights = np.where(row[None, :] >= 0, draws[:, np.maximum(row, 0)], 1.0)
    answers = estimator.refit(given, full, weights)
    refitted = np.full(count, np.nan)
    for r in range(count):
        pred = np.full(coded.n_units, NO_LABELS, dtype=np.int64)
        pred[units] = answers[r]
        values = scorer_for(coded, pred).weighted(draws[r : r + 1])
        score = task_score({m: float(v[0]) for m, v in values.items()})
        refitted[r] = np.nan if score is None else score
    base = fixed[:count]
    ok = np.isfinite(refitted) & np.isfinite(base)
    if ok.sum() < 2:
        return None
    spread = float(np.var(base[ok]))
    if spread <= 0:
        return None
    return max(1.0, float(np.var(refitted[ok])) / spread)
