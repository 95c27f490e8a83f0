"""Individual annotators beside the committee: each one's score on the items they labelled, the
spread of those scores, and the score of a majority of k (k = 1, 3, 5) obtained by drawing k
of each item's labels at random."""

from __future__ import annotations

import math

import numpy as np

from annotate.protocol.timing import median_seconds
from annotate.report.aggregation import majority as agg
from annotate.report.aggregation.study import aggregate, final_aggregate
from annotate.report.data.coding import CodedStudy
from annotate.report.data.loading import StudyData
from annotate.report.model.schema import AnnotatorRow, CommitteeScore, Individual, Spread
from annotate.scoring.metrics import (
    RegressionScorer,
    Scorer,
    classification_scorer,
    entity_scorer,
    multi_answer_scorer,
    task_score,
)
from annotate.scoring.scorers import scorer_for

CURVE_KS = (1, 3, 5)
CURVE_LABEL_BUDGET = 1_000_000
"""Labels processed per k across all draws: 100 items get 20 draws, 100,000 items 2 (with
100,000 items one draw already pins the curve to a fraction of a point)."""
MAX_DRAWS = 20


def answer_scorer(coded: CodedStudy) -> tuple[Scorer, np.ndarray]:
    """Each annotator's own answers scored against gold; returns the scorer and the annotator
    of each of its input units (for `by_group`)."""
    spec = coded.spec
    unit = coded.label_unit
    annotator = coded.label_annotator
    if coded.kind == "classification":
        pairs = coded.item_pair
        pair = None
        if pairs is not None:
            item_pair = pairs[coded.unit_item[unit]]
            span = int(item_pair.max()) + 1 if len(item_pair) else 1
            pair = np.where(item_pair >= 0, annotator * span + item_pair, -1)
        scorer: Scorer = classification_scorer(
            spec.metrics,
            len(coded.classes),
            coded.gold_code[unit],
            coded.label_code,
            coded.positive_code(),
            pair,
        )
        return scorer, annotator
    if coded.kind == "regression":
        return RegressionScorer(
            list(spec.metrics), coded.gold_number[unit], coded.label_number
        ), annotator
    if coded.kind == "multi_answer":
        scorer = multi_answer_scorer(
            coded.gold_code[unit],
            coded.label_code,
            coded.label_row,
            len(coded.row_item),
            coded.positive_code() or 0,
            spec.metrics,
        )
        return scorer, annotator
    texts = [coded.classes[c] for c in coded.label_code.tolist()]
    golds = [coded.gold_entities[u] for u in unit.tolist()]
    return entity_scorer(texts, golds, spec.metrics), annotator


def annotator_rows(
    coded: CodedStudy, final_pred: np.ndarray, with_gold: bool
) -> list[AnnotatorRow]:
    """One row per annotator: answers given, time per answer, scores against gold, and how
    often they agreed with the final (aggregated) answer."""
    names = coded.annotators
    n_ann = len(names)
    if n_ann == 0:
        return []
    answers = np.bincount(coded.row_annotator, minlength=n_ann)
    seconds = coded.row_seconds
    order = np.argsort(coded.row_annotator, kind="stable")
    bounds = np.r_[0, np.cumsum(answers)]
    scores = [dict.fromkeys(coded.spec.metrics)] * n_ann
    if with_gold:
        scorer, group = answer_scorer(coded)
        scores = scorer.by_group(group, n_ann)
    agreement = _agreement_with_final(coded, final_pred, n_ann)
    rows = []
    for a, name in enumerate(names):
        own = seconds[order[bounds[a] : bounds[a + 1]]]
        own = own[np.isfinite(own)]
        rows.append(
            AnnotatorRow.model_construct(
                name=name,
                n=int(answers[a]),
                scores=scores[a],
                task_score=task_score(scores[a]) if with_gold else None,
                agrees_with_majority=agreement[a],
                seconds_per_item=median_seconds(own),
                seconds_mean=float(own.mean()) if len(own) else None,
            )
        )
    return rows


def agreement_with_majority(data: StudyData) -> dict[str, float | None]:
    """Annotator -> share of their answers, unit by unit (a MultiRC candidate answer is one),
    equal to the study's aggregated answer (tie rule and seed as in the report); units with no
    aggregated answer, or answered by one annotator alone (agreement with nobody), are left
    out: None when none is left, and ratings have none. The report's "agrees with majority"
    and the console's "Agree" column are this."""
    coded, final = final_aggregate(data)
    shares = _agreement_with_final(coded, final.pred, len(coded.annotators))
    return dict(zip(coded.annotators, shares, strict=True))


def _agreement_with_final(
    coded: CodedStudy, final_pred: np.ndarray, n_ann: int
) -> list[float | None]:
    if coded.kind == "regression" or len(coded.label_unit) == 0:
        return [None] * n_ann
    final = final_pred[coded.label_unit]
    # A unit only its own annotator answered has that answer for majority: it says nothing.
    shared = np.bincount(coded.label_unit)[coded.label_unit] > 1
    decided = (final >= 0) & shared
    same = np.bincount(
        coded.label_annotator[decided],
        weights=coded.label_code[decided] == final[decided],
        minlength=n_ann,
    )
    total = np.bincount(coded.label_annotator[decided], minlength=n_ann)
    return [float(s / t) if t else None for s, t in zip(same, total, strict=True)]


def spread(values: list[float | None]) -> Spread:
    """Mean, median, standard deviation, min and max of the defined values."""
    v = np.array([x for x in values if x is not None], dtype=float)
    if len(v) == 0:
        return Spread.model_construct(n=0, mean=None, median=None, sd=None, min=None, max=None)
    return Spread.model_construct(
        n=len(v),
        mean=float(v.mean()),
        median=float(np.median(v)),
        sd=float(v.std(ddof=1)) if len(v) > 1 else None,
        min=float(v.min()),
        max=float(v.max()),
    )


def individual_summary(rows: list[AnnotatorRow], metrics: list[str]) -> Individual:
    return Individual.model_construct(
        task_score=spread([r.task_score for r in rows]),
        metrics={m: spread([r.scores.get(m) for r in rows]) for m in metrics},
    )


def majority_of_k(
    coded: CodedStudy,
    rule: str,
    how: str,
    priority: np.ndarray | None,
    rng: np.random.Generator,
    ks: tuple[int, ...] = CURVE_KS,
    *,
    study_k: int | None = None,
    study_pred: np.ndarray | None = None,
) -> list[CommitteeScore]:
    """The score of a committee of k, for each k up to the most labels any item has: k labels of
    each item (items with at least k) are drawn at random, aggregated with the study's rules and
    scored; the values are means over several draws. At the study's own k the committee is the
    study's: its answers `study_pred` as recorded (ties settled once, as in the headline), not
    re-drawn, so that row equals the headline on the items with k labels."""
    per_item = np.bincount(coded.row_item, minlength=coded.n_items)
    most = int(per_item.max()) if len(per_item) else 0
    n_rows = len(coded.row_item)
    sampler = agg.LabelSampler(coded.row_item)
    out = []
    if study_k is not None:
        ks = tuple(sorted({*ks, study_k}))
    for k in ks:
        if k > most:
            continue
        n_items = int((per_item >= k).sum())
        if k == study_k and study_pred is not None:
            out.append(_recorded_committee(coded, study_pred, per_item >= k, k, n_items))
            continue
        draws = max(1, min(MAX_DRAWS, math.ceil(CURVE_LABEL_BUDGET / max(1, n_rows))))
        values: dict[str, list[float]] = {m: [] for m in coded.spec.metrics}
        totals: list[float] = []
        for _ in range(draws):
            chosen_rows, spare_rows = sampler.draw(k, rng, extra=rule == "extra-annotator")
            result = aggregate(
                coded,
                rule,
                how,
                rng,
                priority,
                label_mask=chosen_rows[coded.label_row],
                spare_mask=spare_rows[coded.label_row],
            )
            point = scorer_for(coded, result.pred).point()
            for m, v in point.items():
                if v is not None:
                    values[m].append(v)
            total = task_score(point)
            if total is not None:
                totals.append(total)
        out.append(
            CommitteeScore.model_construct(
                k=k,
                n_items=n_items,
                draws=draws,
                scores={m: float(np.mean(v)) if v else None for m, v in values.items()},
                task_score=float(np.mean(totals)) if totals else None,
                task_score_sd=float(np.std(totals, ddof=1)) if len(totals) > 1 else None,
            )
        )
    return out


def _recorded_committee(
    coded: CodedStudy, pred: np.ndarray, full_items: np.ndarray, k: int, n_items: int
) -> CommitteeScore:
    """The study's own committee: its recorded answers on the items that have k labels."""
    kept = pred.copy()
    dropped = ~full_items[coded.unit_item]
    if kept.dtype.kind == "f":
        kept[dropped] = np.nan
    elif kept.dtype == object:
        kept[dropped] = None
    else:
        kept[dropped] = agg.NO_LABELS
    point = scorer_for(coded, kept).point()
    return CommitteeScore.model_construct(
        k=k,
        n_items=n_items,
        draws=1,
        scores={m: point.get(m) for m in coded.spec.metrics},
        task_score=task_score(point),
        task_score_sd=None,
    )
