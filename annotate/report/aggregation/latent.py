"""Model-based aggregation beside the majority (issue 16): Dawid–Skene and MACE estimate each
annotator's reliability from the labels alone and weigh their answers by it, where the
majority counts every answer the same. The report gives the human score under each
aggregation with its interval, each annotator's estimated competence (Dawid–Skene's confusion
matrix too), and the items where the models and the majority disagree.

The estimators come from `crowd-kit` (the optional extra `annotate[aggregation]`), imported
here lazily: it pulls in pandas, scikit-learn and transformers and costs a second or two, so
only a report that computes them pays for it. Without it the report says so and how to get it.

Data first (`model_aggregation`), rendering second (`model_aggregation_sections`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

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
)
from annotate.scoring.intervals import wilson_interval
from annotate.scoring.scorers import count_scored, score_with_intervals, scorer_for

MAX_LABELS = 200_000
"""Largest study (labels) aggregated by the models; MACE's EM takes seconds per 100,000."""
INSTALL_HINT = "pip install 'annotate[aggregation]'"
EM_ITERATIONS = 100
"""Dawid–Skene's EM stops earlier once converged (a tenth of a second for 100 items)."""
MACE_ITERATIONS = 50
"""MACE runs all its iterations, about 8 ms each at any size up to thousands of labels: one
start (no random restarts) keeps it near 0.4 s; the tests check it still finds a spammer."""
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
    n_labels = len(coded.label_unit)
    if n_labels > MAX_LABELS:
        return ModelAggregation(
            False,
            f"not computed: the study has {n_labels:,} labels, more than {MAX_LABELS:,}",
            unit,
        )
    try:
        from crowdkit.aggregation import MACE, DawidSkene
    except ImportError:
        return ModelAggregation(False, f"Dawid–Skene and MACE need crowd-kit: {INSTALL_HINT}", unit)
    import pandas as pd

    keep = coded.label_code >= 0
    frame = pd.DataFrame(
        {
            "task": coded.label_unit[keep],
            "worker": coded.label_annotator[keep],
            "label": coded.label_code[keep],
        }
    )
    if frame.empty or frame["label"].nunique() < 2:
        return ModelAggregation(False, "not computed: fewer than two distinct answers", unit)
    with warnings.catch_warnings():
        # crowd-kit uses pandas keywords pandas 3 deprecates: not the user's concern
        warnings.simplefilter("ignore")
        ds = DawidSkene(n_iter=EM_ITERATIONS).fit(frame)
        mace = MACE(n_iter=MACE_ITERATIONS, n_restarts=1, random_state=seed).fit(frame)
    ds_pred = _predictions(ds.labels_, coded.n_units)
    mace_pred = _predictions(mace.labels_, coded.n_units)
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
        _competences(coded, frame, ds, mace),
        _disagreements(coded, final, ds_pred, mace_pred),
    )


def _predictions(labels: Any, n_units: int) -> np.ndarray:
    """A fitted model's answer per unit as codes (NO_LABELS where a unit has no labels)."""
    pred = np.full(n_units, NO_LABELS, dtype=np.int64)
    pred[labels.index.to_numpy(dtype=np.int64)] = labels.to_numpy(dtype=np.int64)
    return pred


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


def _competences(coded: CodedStudy, frame: Any, ds: Any, mace: Any) -> list[AnnotatorCompetence]:
    import pandas as pd

    classes = coded.classes
    counts = frame["worker"].value_counts()
    priors = ds.priors_
    errors = ds.errors_  # index (worker, answer), columns truth: P(answer | truth, worker)
    # MACE numbers its workers in order of first appearance (pandas.factorize), as here.
    _, mace_workers = pd.factorize(frame["worker"])
    spamming = np.asarray(mace.spamming_, dtype=float)
    competent = spamming[:, 1] / spamming.sum(axis=1)
    mace_of = {int(w): float(c) for w, c in zip(mace_workers, competent, strict=True)}
    rows = []
    for worker in sorted(counts.index, key=int):
        block = errors.xs(worker, level=0)
        confusion = {
            classes[int(truth)]: {
                classes[int(answer)]: float(block.at[answer, truth]) for answer in block.index
            }
            for truth in block.columns
        }
        accuracy = sum(
            float(priors[truth]) * float(block.at[truth, truth])
            for truth in block.columns
            if truth in block.index
        )
        rows.append(
            AnnotatorCompetence(
                coded.annotators[int(worker)],
                int(counts[worker]),
                accuracy,
                confusion,
                mace_of.get(int(worker)),
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
