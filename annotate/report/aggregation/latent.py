"""Model-based aggregation beside the majority (issue 16): Dawid–Skene and MACE estimate each
annotator's reliability from the labels alone and weigh their answers by it, where the
majority counts every answer the same. The report gives the human score under each
aggregation with its interval, each annotator's estimated competence (Dawid–Skene's confusion
matrix too), and the items where the models and the majority disagree.

Both are fitted to convergence by `aggregation.em` (vectorised EM; MACE with sorted class
coding, a stated seed and restarts, the best likelihood kept), and the report states each
fit's iterations, log-likelihood, convergence and tolerance. Their intervals hold the fitted
answers fixed and resample the test items (said in the interval's method).

Data first (`model_aggregation`), rendering second (`model_aggregation_sections`).
"""

from __future__ import annotations

import numpy as np

from annotate.report.aggregation import em
from annotate.report.aggregation.majority import NO_LABELS, answer_of, votes_of
from annotate.report.aggregation.study import Aggregated
from annotate.report.data.coding import CodedStudy, wilson_fits
from annotate.report.model.schema import (
    AggregationDisagreement,
    AggregationScore,
    AnnotatorCompetence,
    Estimate,
    HeadlineInterval,
    ModelAggregation,
    ModelFit,
)
from annotate.scoring.intervals import wilson_interval
from annotate.scoring.scorers import count_scored, score_with_intervals, scorer_for

DISAGREEMENTS_SHOWN = 10
WILSON = "Wilson score interval, 95%, with the fitted model's answers held fixed"
BOOTSTRAP = (
    "bootstrap percentile interval, 95%: test items resampled, the fitted model's answers "
    "held fixed"
)
ESTIMATOR_NAMES = {"majority": "Majority vote", "dawid_skene": "Dawid–Skene", "mace": "MACE"}


def model_aggregation(
    coded: CodedStudy,
    final: Aggregated,
    metrics: list[str],
    bootstrap: int,
    seed: int,
    has_gold: bool,
) -> ModelAggregation | None:
    """Dawid–Skene and MACE beside the study's majority; None for tasks without fixed classes
    (ratings, ReCoRD's entities), where neither model applies."""
    if coded.kind not in {"classification", "multi_answer"}:
        return None
    unit = "candidate answer" if coded.kind == "multi_answer" else "item"
    keep = coded.label_code >= 0
    task = coded.label_unit[keep].astype(np.int64)
    worker = coded.label_annotator[keep].astype(np.int64)
    answer = coded.label_code[keep].astype(np.int64)
    if len(answer) == 0 or len(np.unique(answer)) < 2:
        return ModelAggregation(False, "not computed: fewer than two distinct answers", unit)
    n_workers, n_classes = len(coded.annotators), len(coded.classes)
    ds = em.dawid_skene(task, worker, answer, coded.n_units, n_workers, n_classes)
    # Sorted class coding: the fit does not depend on the task's label order.
    rank = np.argsort(np.argsort(np.array(coded.classes, dtype=object), kind="stable"))
    mace = em.mace(
        task,
        worker,
        answer,
        coded.n_units,
        n_workers,
        n_classes,
        seed=seed,
        restarts=em.mace_restarts(len(answer)),
        class_order=rank,
    )
    has = np.bincount(task, minlength=coded.n_units) > 0
    ds_pred = np.where(has, ds.answers, NO_LABELS)
    mace_pred = np.where(has, mace.answers, NO_LABELS)
    estimators = []
    for method, pred in (("majority", final.pred), ("dawid_skene", ds_pred), ("mace", mace_pred)):
        estimators.append(
            _score(coded, method, pred, final.pred, metrics, bootstrap, seed, has_gold)
        )
    return ModelAggregation(
        True,
        None,
        unit,
        estimators,
        _competences(coded, worker, ds, mace),
        _disagreements(coded, final, ds_pred, mace_pred),
        fits=[_fit_row("dawid_skene", ds), _fit_row("mace", mace)],
    )


def _fit_row(method: str, fit: em.Fit) -> ModelFit:
    return ModelFit(
        method,
        fit.iterations,
        fit.log_likelihood,
        fit.converged,
        fit.tolerance,
        fit.restarts if method == "mace" else None,
        fit.seed if method == "mace" else None,
    )


def _score(
    coded: CodedStudy,
    method: str,
    pred: np.ndarray,
    majority: np.ndarray,
    metrics: list[str],
    bootstrap: int,
    seed: int,
    has_gold: bool,
) -> AggregationScore:
    changed = int(((pred != majority) & (pred != NO_LABELS)).sum())
    if not has_gold:
        return AggregationScore(
            method, {m: Estimate(None) for m in metrics}, Estimate(None), None, changed
        )
    scorer = scorer_for(coded, pred)
    # Same replicates for every method (one purpose): the intervals differ by the answers only.
    raw, raw_total = score_with_intervals(scorer, metrics, bootstrap, seed, "model-aggregation")
    scores = {m: Estimate.of(e) for m, e in raw.items()}
    total = Estimate.of(raw_total)
    interval = None
    n = count_scored(coded, pred)
    accuracy = scores.get("accuracy")
    if wilson_fits(metrics, coded) and accuracy is not None and accuracy.value is not None and n:
        low, high = wilson_interval(accuracy.value * n, n)
        accuracy.wilson_low, accuracy.wilson_high = low, high
        interval = HeadlineInterval(low, high, WILSON)
    elif total.ci_low is not None:
        interval = HeadlineInterval(total.ci_low, total.ci_high, BOOTSTRAP)
    return AggregationScore(method, scores, total, interval, changed)


def _competences(
    coded: CodedStudy, worker: np.ndarray, ds: em.Fit, mace: em.Fit
) -> list[AnnotatorCompetence]:
    classes = coded.classes
    counts = np.bincount(worker, minlength=len(coded.annotators))
    assert ds.errors is not None and mace.competence is not None
    rows = []
    for w in np.flatnonzero(counts).tolist():
        block = ds.errors[w]  # truth x answer
        confusion = {
            classes[t]: {classes[a]: float(block[t, a]) for a in range(len(classes))}
            for t in range(len(classes))
        }
        accuracy = float((ds.priors * np.diag(block)).sum())
        rows.append(
            AnnotatorCompetence(
                coded.annotators[w], int(counts[w]), accuracy, confusion, float(mace.competence[w])
            )
        )
    return rows


def _disagreements(
    coded: CodedStudy, final: Aggregated, ds_pred: np.ndarray, mace_pred: np.ndarray
) -> list[AggregationDisagreement]:
    votes = final.votes
    assert votes is not None
    classes = coded.classes
    differs = (ds_pred != final.pred) | (mace_pred != final.pred)
    return [
        AggregationDisagreement(
            item=str(coded.unit_name[u]),
            votes=votes_of(votes, u, classes),
            majority=answer_of(classes, int(final.pred[u])),
            dawid_skene=answer_of(classes, int(ds_pred[u])),
            mace=answer_of(classes, int(mace_pred[u])),
            gold=answer_of(classes, int(coded.gold_code[u])),
        )
        for u in np.flatnonzero(differs).tolist()
    ]


# --- rendering: (title, headers, rows) sections like the rest of the report -------------------


def model_aggregation_sections(
    m: ModelAggregation | None,
) -> list[tuple[str, list[str], list[list[str]]]]:
    if m is None:
        return []
    if not m.available:
        return [("Model-based aggregation", ["", ""], [["Dawid–Skene, MACE", m.note or ""]])]
    rows = []
    for e in m.estimators:
        interval = e.interval
        rows.append(
            [
                ESTIMATOR_NAMES[e.method],
                _pct(e.task_score.value),
                "–"
                if interval is None or interval.low is None
                else f"[{_pct(interval.low)}, {_pct(interval.high)}]",
                "the study's rule" if e.method == "majority" else f"{e.n_changed} {m.unit}s differ",
            ]
        )
    sections: list[tuple[str, list[str], list[list[str]]]] = [
        ("Model-based aggregation", ["Aggregation", "Score", "95% CI", "Detail"], rows)
    ]
    sections.append(
        (
            "Model fits (EM until the log-likelihood changes by less than the tolerance)",
            ["Model", "Iterations", "Log-likelihood", "Converged", "Tolerance", "Starts"],
            [
                [
                    ESTIMATOR_NAMES[f.method],
                    str(f.iterations),
                    f"{f.log_likelihood:.2f}",
                    "yes" if f.converged else "no (iteration cap)",
                    f"{f.tolerance:g}",
                    "majority vote"
                    if f.restarts is None
                    else f"majority vote + {f.restarts} random (seed {f.seed}), best kept",
                ]
                for f in m.fits
            ],
        )
    )
    sections.append(
        (
            "Estimated annotator competence",
            ["Annotator", "Labels", "Dawid–Skene accuracy", "MACE competence"],
            [
                [
                    a.annotator,
                    str(a.n_labels),
                    _coef(a.dawid_skene_accuracy),
                    _coef(a.mace_competence),
                ]
                for a in m.annotators
            ],
        )
    )
    if m.disagreements:
        shown = m.disagreements[:DISAGREEMENTS_SHOWN]
        more = len(m.disagreements) - len(shown)
        sections.append(
            (
                f"Where model-based aggregation and the majority disagree ({len(m.disagreements)}"
                + (f"; first {len(shown)} shown, all in the JSON" if more else "")
                + ")",
                ["Item", "Votes", "Majority", "Dawid–Skene", "MACE", "Gold"],
                [
                    [
                        d.item,
                        ", ".join(f"{k} {v}" for k, v in d.votes.items()),
                        d.majority or "–",
                        d.dawid_skene or "–",
                        d.mace or "–",
                        d.gold or "–",
                    ]
                    for d in shown
                ],
            )
        )
    return sections


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}"


def _coef(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
