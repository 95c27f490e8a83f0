"""The latent-class aggregation models behind one interface: each fits the study's labels and
gives an answer per unit and each annotator's estimated competence (with a confusion matrix
when the model has one). The report reads them by method name only, so a model added to
`ESTIMATORS` reaches the score table, the competence table and the disagreements.

Dawid–Skene and MACE are the report's own EM run to convergence (`aggregation.em`): each
fit also says how its EM ended (`Fitted.fit`: iterations, log-likelihood, converged,
tolerance; MACE's restarts and seed). Each model can also be refitted to bootstrap replicates
of the study (`Estimator.refit`, weighted EM from the full fit: `aggregation.refit`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from annotate.report.aggregation import batch_em, em
from annotate.report.aggregation.majority import NO_LABELS
from annotate.report.aggregation.study import Aggregated
from annotate.report.data.coding import CodedStudy
from annotate.report.model.schema import ModelFit


@dataclass
class Fitted:
    """A fitted model: its answer per unit (codes, NO_LABELS where a unit has no labels) and,
    per annotator index, its estimated competence and confusion matrix (truth -> answer ->
    probability, rows summing to 1) where the model estimates one."""

    pred: np.ndarray
    competence: dict[int, float] = field(default_factory=dict)
    confusion: dict[int, dict[str, dict[str, float]]] = field(default_factory=dict)
    fit: ModelFit | None = None
    """How the model's EM ended (None for the majority)."""
    model: em.Fit | None = None
    """The fitted parameters (the warm start of the refits; None for the majority)."""


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
    refit: Callable[[FitInput, Fitted, np.ndarray], np.ndarray] | None = None
    """(given, full fit, weights R x labelled units) -> R answers (codes) per labelled unit,
    the units of `labelled_units`: the model refitted to each weighted copy of the labels from
    the full fit (`REFIT_TOLERANCE`, `REFIT_MAX_ITERATIONS`). None: nothing is fitted."""


REFIT_TOLERANCE = 1e-4
"""A refit stops when its log-likelihood changes by less than this (nats): from the full
fit's warm start its answers settle long before the full fit's 10⁻⁶."""
REFIT_MAX_ITERATIONS = 50
"""A refit's iteration cap: a replicate still moving after 50 EM steps from the full fit is
scored with the answers it has then."""


def _arrays(given: FitInput) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    frame = given.frame
    return (
        frame["task"].to_numpy(dtype=np.int64),
        frame["worker"].to_numpy(dtype=np.int64),
        frame["label"].to_numpy(dtype=np.int64),
    )


def _pred(fit: em.Fit, task: np.ndarray, n_units: int) -> np.ndarray:
    has = np.bincount(task, minlength=n_units) > 0
    return np.where(has, fit.answers, NO_LABELS)


def _fit_row(method: str, fit: em.Fit, restarts: bool) -> ModelFit:
    return ModelFit.model_construct(
        method=method,
        iterations=fit.iterations,
        log_likelihood=fit.log_likelihood,
        converged=fit.converged,
        tolerance=fit.tolerance,
        restarts=fit.restarts if restarts else None,
        seed=fit.seed if restarts else None,
    )


def _dawid_skene(given: FitInput) -> Fitted:
    coded = given.coded
    task, worker, answer = _arrays(given)
    classes = coded.classes
    ds = em.dawid_skene(task, worker, answer, coded.n_units, len(coded.annotators), len(classes))
    assert ds.errors is not None
    fitted = Fitted(
        _pred(ds, task, coded.n_units), fit=_fit_row("dawid_skene", ds, False), model=ds
    )
    for w in np.unique(worker).tolist():
        block = ds.errors[w]  # truth x answer: P(answer | truth, worker)
        fitted.confusion[w] = {
            classes[t]: {classes[a]: float(block[t, a]) for a in range(len(classes))}
            for t in range(len(classes))
        }
        # Estimated probability of a right answer: Σ_k prior(k) · P(answer k | truth k).
        fitted.competence[w] = float((ds.priors * np.diag(block)).sum())
    return fitted


def labelled_units(given: FitInput) -> tuple[np.ndarray, np.ndarray]:
    """The units a refit runs on, those with labels (in unit order), and each label's unit as
    an index among them. A unit without labels adds nothing to a fit, a score or agreement
    (zero likelihood, no answer), yet refitting it costs a (replicates x units x classes)
    array: early in a large study (20,000 sampled items, 74 labels) that was most of the
    report's time and memory. Kept in order, the fits' sums and answers are the same."""
    units, local = np.unique(given.frame["task"].to_numpy(dtype=np.int64), return_inverse=True)
    return units, local.astype(np.int64, copy=False)


def _dawid_skene_refit(given: FitInput, full: Fitted, weights: np.ndarray) -> np.ndarray:
    coded = given.coded
    _, worker, answer = _arrays(given)
    assert full.model is not None
    units, local = labelled_units(given)
    refit = batch_em.dawid_skene_batch(
        local,
        worker,
        answer,
        weights,
        len(units),
        len(coded.annotators),
        len(coded.classes),
        start=full.model.posterior[units],
        tolerance=REFIT_TOLERANCE,
        max_iterations=REFIT_MAX_ITERATIONS,
    )
    return batch_em.answers_of(refit.posterior)


def _class_rank(coded: CodedStudy) -> np.ndarray:
    """Sorted class coding: the fit does not depend on the task's label order."""
    return np.argsort(np.argsort(np.array(coded.classes, dtype=object), kind="stable"))


def _mace_refit(given: FitInput, full: Fitted, weights: np.ndarray) -> np.ndarray:
    coded = given.coded
    _, worker, answer = _arrays(given)
    fit = full.model
    assert fit is not None and fit.class_rank is not None and fit.strategy is not None
    rank = fit.class_rank
    order = np.argsort(rank)  # fit coding -> caller's coding
    units, local = labelled_units(given)
    refit = batch_em.mace_batch(
        local,
        worker,
        rank[answer],
        weights,
        len(units),
        len(coded.annotators),
        len(coded.classes),
        start=fit.posterior[units][:, order],
        competence=fit.competence,
        strategy=fit.strategy[:, order],
        tolerance=REFIT_TOLERANCE,
        max_iterations=REFIT_MAX_ITERATIONS,
    )
    return batch_em.answers_of(refit.posterior[:, :, rank], rank)


def _mace(given: FitInput) -> Fitted:
    coded = given.coded
    task, worker, answer = _arrays(given)
    rank = _class_rank(coded)
    mace = em.mace(
        task,
        worker,
        answer,
        coded.n_units,
        len(coded.annotators),
        len(coded.classes),
        seed=given.seed,
        restarts=em.mace_restarts(len(answer)),
        class_order=rank,
    )
    assert mace.competence is not None
    return Fitted(
        _pred(mace, task, coded.n_units),
        # The estimated probability that the annotator is not spamming (knows the answer).
        {w: float(mace.competence[w]) for w in np.unique(worker).tolist()},
        fit=_fit_row("mace", mace, True),
        model=mace,
    )


MAJORITY = Estimator("majority", "Majority vote", None, lambda given: Fitted(given.final.pred))
"""The study's own rule, scored beside the models (its answers are the report's)."""
DAWID_SKENE = Estimator(
    "dawid_skene", "Dawid–Skene", "Dawid–Skene accuracy", _dawid_skene, _dawid_skene_refit
)
MACE = Estimator("mace", "MACE", "MACE competence", _mace, _mace_refit)
ESTIMATORS: tuple[Estimator, ...] = (DAWID_SKENE, MACE)
"""The models fitted beside the majority, in the tables' order."""
