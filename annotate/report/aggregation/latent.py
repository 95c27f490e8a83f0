"""Model-based aggregation beside the majority (issue 16): Dawid–Skene and MACE estimate each
annotator's reliability from the labels alone and weigh their answers by it, where the
majority counts every answer the same. The report gives the human score under each
aggregation with its interval, each annotator's estimated competence (Dawid–Skene's confusion
matrix too), and the items where the models and the majority disagree.

The models sit behind one interface (`estimators`). Dawid–Skene and MACE are fitted to
convergence by `aggregation.em` (vectorised EM; MACE with sorted class coding, a stated seed
and restarts, the best likelihood kept), at any study size, and the report states each fit's
iterations, log-likelihood, convergence and tolerance (`fits`). On studies of at most
`refit.REFIT_LABELS` labels their intervals include the fitting uncertainty (`refit`: the
models refitted on bootstrap replicates, the interval widened by the design effect); above,
they hold the fitted answers fixed. The interval's method says which.

The data is computed here; its tables are `sections.model_aggregation`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from annotate.report.aggregation import estimators, refit
from annotate.report.aggregation.majority import NO_LABELS, answer_of, votes_of
from annotate.report.aggregation.study import Aggregated
from annotate.report.data.coding import CodedStudy
from annotate.report.model.schema import (
    AggregationDisagreement,
    AggregationScore,
    AnnotatorCompetence,
    Estimate,
    HeadlineInterval,
    ModelAggregation,
)
from annotate.scoring.intervals import accuracy_wilson, quoted_interval
from annotate.scoring.scorers import (
    count_answers_scored,
    count_scored,
    score_with_intervals,
    scorer_for,
)

WILSON = "Wilson score interval, 95%, with the fitted model's answers held fixed"
BOOTSTRAP = (
    "bootstrap percentile interval, 95%: test items resampled, the fitted model's answers "
    "held fixed"
)
MAJORITY_WILSON = "Wilson score interval, 95%: the majority has nothing fitted"
MAJORITY_BOOTSTRAP = (
    "bootstrap percentile interval, 95%: test items resampled (the majority has nothing fitted)"
)
_ABOVE = (
    f" (not refitted: the study has more than {refit.REFIT_LABELS:,} labels, the limit for "
    "refitting per replicate)"
)
_REFIT = (
    ", {effect:.2f} being the design effect of refitting the model (refitted from the full fit "
    "on {replicates} of the bootstrap's item resamples; done on studies of up to "
    f"{refit.REFIT_LABELS:,} labels)"
)


_UNDRAWN = " (not refitted: no bootstrap replicates drawn)"


SCORE = "Wilson score interval at the effective number of resampling units, 95%"
"""The score-type interval of a score that is not one proportion (`quoted_interval`)."""


def _methods(
    estimator: estimators.Estimator, refitted: bool, effect: float | None, bootstrap: int
) -> tuple[str, str, str]:
    """The (Wilson, bootstrap, score-type) method strings of an aggregation's interval."""
    if estimator.refit is None:
        return MAJORITY_WILSON, MAJORITY_BOOTSTRAP, SCORE + ": the majority has nothing fitted"
    if not refitted:
        why = _UNDRAWN if bootstrap <= 0 else _ABOVE
        return (
            WILSON + why,
            BOOTSTRAP + why,
            SCORE + ", the fitted model's answers held fixed" + why,
        )
    d = 1.0 if effect is None else effect
    tail = _REFIT.format(effect=d, replicates=min(refit.REFIT_REPLICATES, bootstrap))
    refit_wilson = f"Wilson score interval, 95%, at n / {d:.2f} items"
    refit_boot = (
        "bootstrap percentile interval, 95%: test items resampled, stretched about the score "
        f"by √{d:.2f}"
    )
    refit_score = f"{SCORE}, divided by {d:.2f}"
    return refit_wilson + tail, refit_boot + tail, refit_score + tail


def fit_in_interval(method: str) -> str:
    """What an aggregation's interval does with the fitted model, from its method string (the
    strings are made above): the words the tables give beside the interval, as the JSON's
    method says it."""
    if "being the design effect of refitting" in method:
        return "model refitted in the bootstrap"
    if "held fixed" in method:
        return "model held fixed"
    return "nothing fitted"


def model_aggregation(
    coded: CodedStudy,
    final: Aggregated,
    metrics: list[str],
    bootstrap: int,
    seed: int,
    has_gold: bool,
) -> ModelAggregation | None:
    """The models of `estimators.ESTIMATORS` (Dawid–Skene, MACE) beside the study's majority;
    None for tasks without fixed classes (ratings, ReCoRD's entities), where they do not
    apply."""
    if coded.kind not in {"classification", "multi_answer"}:
        return None
    unit = "candidate answer" if coded.kind == "multi_answer" else "item"
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
        return ModelAggregation.model_construct(
            available=False, note="not computed: fewer than two distinct answers", unit=unit
        )
    given = estimators.FitInput(frame, coded, final, seed)
    every = (estimators.MAJORITY, *estimators.ESTIMATORS)
    fitted = {e.method: e.fit(given) for e in every}
    refitted = refit.refits(len(frame), bootstrap)
    scores = [
        _score(given, e, fitted[e.method], metrics, bootstrap, refitted, has_gold) for e in every
    ]
    models = {e.method: fitted[e.method] for e in estimators.ESTIMATORS}
    return ModelAggregation.model_construct(
        available=True,
        note=None,
        unit=unit,
        estimators=scores,
        annotators=_competences(coded, frame, models),
        disagreements=_disagreements(coded, final, {m: f.pred for m, f in models.items()}),
        competence_titles={
            e.method: e.competence_title for e in estimators.ESTIMATORS if e.competence_title
        },
        fits=[f.fit for f in models.values() if f.fit is not None],
    )


def _score(
    given: estimators.FitInput,
    estimator: estimators.Estimator,
    fitted: estimators.Fitted,
    metrics: list[str],
    bootstrap: int,
    refitted: bool,
    has_gold: bool,
) -> AggregationScore:
    coded, seed, pred = given.coded, given.seed, fitted.pred
    method, title = estimator.method, estimator.title
    changed = int(((pred != given.final.pred) & (pred != NO_LABELS)).sum())
    if not has_gold:
        return AggregationScore.model_construct(
            method=method,
            title=title,
            scores={m: Estimate.model_construct(value=None) for m in metrics},
            task_score=Estimate.model_construct(value=None),
            interval=None,
            n_changed=changed,
        )
    scorer = scorer_for(coded, pred)
    # Same replicates for every method (one purpose): the intervals differ by the answers only.
    fixed: list[np.ndarray] = []
    raw, raw_total = score_with_intervals(scorer, metrics, bootstrap, seed, refit.PURPOSE, fixed)
    scores = {m: Estimate.of(e) for m, e in raw.items()}
    total = Estimate.of(raw_total)
    n = count_scored(coded, pred)
    accuracy = scores.get("accuracy")
    if accuracy is not None:  # Wilson's bounds where the one rule gives them
        accuracy.wilson_low, accuracy.wilson_high = accuracy_wilson(
            coded.kind, coded.item_pair is not None, accuracy.value, n
        )
    effect = None
    if refitted and fixed and estimator.refit is not None:
        effect = refit.design_effect(given, estimator, fitted, scorer, fixed[0], seed)
    wilson_method, bootstrap_method, score_method = _methods(estimator, refitted, effect, bootstrap)
    quoted = quoted_interval(
        metrics,
        coded.kind,
        coded.item_pair is not None,
        total.value,
        n,
        total.ci_low,
        total.ci_high,
        wilson_method=wilson_method,
        bootstrap_method=bootstrap_method,
        score_method=score_method,
        design_effect=1.0 if effect is None else effect,
        n_units=scorer.n_units,
        n_obs=count_answers_scored(coded, pred),
    )
    interval = (
        None
        if quoted is None
        else HeadlineInterval.model_construct(
            low=quoted.low, high=quoted.high, method=quoted.method
        )
    )
    return AggregationScore.model_construct(
        method=method,
        title=title,
        scores=scores,
        task_score=total,
        interval=interval,
        n_changed=changed,
    )


def _competences(
    coded: CodedStudy, frame: Any, fitted: dict[str, estimators.Fitted]
) -> list[AnnotatorCompetence]:
    counts = frame["worker"].value_counts()
    return [
        AnnotatorCompetence.model_construct(
            annotator=coded.annotators[int(worker)],
            n_labels=int(counts[worker]),
            competence={m: f.competence.get(int(worker)) for m, f in fitted.items()},
            confusion={
                m: f.confusion[int(worker)] for m, f in fitted.items() if int(worker) in f.confusion
            },
        )
        for worker in sorted(counts.index, key=int)
    ]


def _disagreements(
    coded: CodedStudy, final: Aggregated, preds: dict[str, np.ndarray]
) -> list[AggregationDisagreement]:
    votes = final.votes
    assert votes is not None
    classes = coded.classes
    differs = np.zeros(coded.n_units, dtype=bool)
    for pred in preds.values():
        differs |= pred != final.pred
    return [
        AggregationDisagreement.model_construct(
            item=str(coded.unit_name[u]),
            votes=votes_of(votes, u, classes),
            majority=answer_of(classes, int(final.pred[u])),
            answers={m: answer_of(classes, int(pred[u])) for m, pred in preds.items()},
            gold=answer_of(classes, int(coded.gold_code[u])),
        )
        for u in np.flatnonzero(differs).tolist()
    ]
