"""The latent-class aggregation models behind one interface: each fits the study's labels and
gives an answer per unit and each annotator's estimated competence (with a confusion matrix
when the model has one). The report reads them by method name only, so a model added to
`ESTIMATORS` reaches the score table, the competence table and the disagreements.

Dawid–Skene and MACE come from `crowd-kit` (the optional extra), imported inside `fit`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotate.report.aggregation.majority import NO_LABELS
from annotate.report.aggregation.study import Aggregated
from annotate.report.data.coding import CodedStudy

EM_ITERATIONS = 100
"""Dawid–Skene's EM stops earlier once converged (a tenth of a second for 100 items)."""
MACE_ITERATIONS = 50
"""MACE runs all its iterations, about 8 ms each at any size up to thousands of labels: one
start (no random restarts) keeps it near 0.4 s; the tests check it still finds a spammer."""


@dataclass
class Fitted:
    """A fitted model: its answer per unit (codes, NO_LABELS where a unit has no labels) and,
    per annotator index, its estimated competence and confusion matrix (truth -> answer ->
    probability, rows summing to 1) where the model estimates one."""

    pred: np.ndarray
    competence: dict[int, float] = field(default_factory=dict)
    confusion: dict[int, dict[str, dict[str, float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class FitInput:
    frame: Any
    """The labels as a pandas frame: columns task (unit), worker (annotator index), label
    (answer code)."""
    coded: CodedStudy
    final: Aggregated
    """The study's own aggregation (the majority with its tie rule)."""
    seed: int


@dataclass(frozen=True)
class Estimator:
    method: str
    """The id in the JSON ("dawid_skene")."""
    title: str
    """Its name in the tables ("Dawid–Skene")."""
    competence_title: str | None
    """The competence column's heading ("Dawid–Skene accuracy"); None: no competence."""
    fit: Callable[[FitInput], Fitted]


def predictions(labels: Any, n_units: int) -> np.ndarray:
    """A fitted crowd-kit model's answer per unit as codes (NO_LABELS where a unit has no
    labels)."""
    pred = np.full(n_units, NO_LABELS, dtype=np.int64)
    pred[labels.index.to_numpy(dtype=np.int64)] = labels.to_numpy(dtype=np.int64)
    return pred


def _dawid_skene(given: FitInput) -> Fitted:
    from crowdkit.aggregation import DawidSkene

    frame, coded = given.frame, given.coded
    with warnings.catch_warnings():
        # crowd-kit uses pandas keywords pandas 3 deprecates: not the user's concern
        warnings.simplefilter("ignore")
        ds = DawidSkene(n_iter=EM_ITERATIONS).fit(frame)
    fitted = Fitted(predictions(ds.labels_, coded.n_units))
    classes = coded.classes
    priors = ds.priors_
    errors = ds.errors_  # index (worker, answer), columns truth: P(answer | truth, worker)
    for worker in frame["worker"].unique():
        block = errors.xs(worker, level=0)
        fitted.confusion[int(worker)] = {
            classes[int(truth)]: {
                classes[int(answer)]: float(block.at[answer, truth]) for answer in block.index
            }
            for truth in block.columns
        }
        # Estimated probability of a right answer: Σ_k prior(k) · P(answer k | truth k).
        fitted.competence[int(worker)] = sum(
            float(priors[truth]) * float(block.at[truth, truth])
            for truth in block.columns
            if truth in block.index
        )
    return fitted


def _mace(given: FitInput) -> Fitted:
    import pandas as pd
    from crowdkit.aggregation import MACE

    frame, coded, seed = given.frame, given.coded, given.seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mace = MACE(n_iter=MACE_ITERATIONS, n_restarts=1, random_state=seed).fit(frame)
    # MACE numbers its workers in order of first appearance (pandas.factorize), as here.
    _, workers = pd.factorize(frame["worker"])
    spamming = np.asarray(mace.spamming_, dtype=float)
    # The estimated probability that the annotator is not spamming (knows the answer).
    competent = spamming[:, 1] / spamming.sum(axis=1)
    return Fitted(
        predictions(mace.labels_, coded.n_units),
        {int(w): float(c) for w, c in zip(workers, competent, strict=True)},
    )


MAJORITY = Estimator("majority", "Majority vote", None, lambda given: Fitted(given.final.pred))
"""The study's own rule, scored beside the models (its answers are the report's)."""
DAWID_SKENE = Estimator("dawid_skene", "Dawid–Skene", "Dawid–Skene accuracy", _dawid_skene)
MACE = Estimator("mace", "MACE", "MACE competence", _mace)
ESTIMATORS: tuple[Estimator, ...] = (DAWID_SKENE, MACE)
"""The models fitted beside the majority, in the tables' order."""


def available() -> bool:
    """Whether the models' library (crowd-kit) can be imported."""
    try:
        import crowdkit.aggregation  # noqa: F401
    except ImportError:
        return False
    return True
