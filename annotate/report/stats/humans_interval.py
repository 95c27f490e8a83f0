"""An interval for claims about *humans like these annotators*, not only these annotators.

The report's other intervals resample test items and hold the annotators fixed: they say how
well these particular people would do on more items of the task. A claim about "human
performance" also has to allow that other annotators from the same pool would have voted
differently. The estimand is the majority-of-k score of annotators drawn afresh from the pool
these come from, on items of the task.

Method: a bootstrap with a fitted annotator model, in two independent parts added per replicate.

- *Items*: the study's own majority is scored on test items resampled with replacement (the
  scorer's own resampling units), exactly as the headline's bootstrap does.
- *Annotators*: each annotator is fitted a one-coin model: right with probability `skill`
  (their accuracy against gold, shrunk by `PRIOR_LABELS` labels towards the pooled accuracy),
  otherwise a wrong answer drawn from the study's pooled confusion given the gold class. A
  replicate replaces every annotator by one drawn with replacement from the study's
  annotators (the pool), keeps the study's design (which annotator slot answered which unit)
  and simulates every answer; the change in the task score against the same simulation with
  the fitted annotators themselves (common random numbers) is the annotators' part.

The replicates' spread about their median is laid around the point estimate (the study's
score): the interval is `[S + q2.5 - m, S + q97.5 - m]`, so it contains its point estimate by
construction, and the model's level (items differ in difficulty, which a one-coin model
ignores) does not move it. Why not resample the annotators' actual answers: on a crossed
design a resampled committee repeats annotators (5 drawn from 5 hold 3.4 distinct people on
average), so its majority is that of a smaller, noisier committee. Its replicates centre below
the study's score (an interval could miss its own point estimate) and, re-centred, are about
three times too wide (measured: 99% coverage for a nominal 95%). Simulated answers of a
drawn annotator are independent of the original's, so a repeated skill is a fresh person.

The simulation is vectorised over replicates (no Python loop per replicate for classification
tasks; MultiRC's and AX-g's pair-aware scorers are called once per replicate). Ratings
(STS-B) and ReCoRD's entities have no one-coin model: no interval is given for them.
"""

from __future__ import annotations

import numpy as np

from annotate.report.aggregation import majority as agg
from annotate.report.data.coding import CodedStudy
from annotate.scoring.intervals import Z_95
from annotate.scoring.metrics import CellScorer, task_score
from annotate.scoring.scorers import scorer_for

METHOD = (
    "bootstrap with a fitted annotator model, 95%: test items resampled, and annotators "
    "drawn afresh from these (one-coin model, answers simulated in the study's design); "
    "spread laid around the point estimate"
)
KINDS = ("classification", "multi_answer")
PRIOR_LABELS = 2.0
"""Each annotator's skill is (right + 2·pooled) / (labels + 2): one label is not a skill of 0/1."""
MAX_SIMULATED_LABELS = 10_000
"""The annotators' part is computed on at most this many labels: larger studies use a fixed,
seeded random subset of their units. The annotators' effect on the score does not shrink
with the number of items, so 2,000 items of 5 labels estimate it well (exactly, for two
classes: no simulation noise), and a report of 500,000 labels costs the same here as one of
10,000 (no cut-off, no cliff)."""
MAX_ANNOTATOR_REPLICATES = 200
"""Draws of the annotator pool; each of the items' replicates is paired with one at random."""
INNER_UNITS = 500
MAX_INNER = 16
CELLS_PER_CHUNK = 2_000_000
LUT = 1024
"""Resolution of the wrong-answer draw (inverse-CDF lookup per gold class)."""


T_975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.16,
    2.145,
    2.131,
    2.12,
    2.11,
    2.101,
    2.093,
    2.086,
    2.08,
    2.074,
    2.069,
    2.064,
    2.06,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
"""Student's t 97.5% quantiles for 1..30 degrees of freedom (scipy.stats.t.ppf; not imported)."""


def _t_975(df: int) -> float:
    if df <= len(T_975):
        return T_975[df - 1]
    return Z_95 + (Z_95**3 + Z_95) / (4 * df)  # Cornish–Fisher, within 0.001 beyond 30


def humans_interval(
    coded: CodedStudy,
    rule: str,
    how: str,
    priority: np.ndarray | None,
    replicates: int,
    rng: np.random.Generator,
    pred: np.ndarray | None = None,
    item_replicates: np.ndarray | None = None,
) -> tuple[float | None, float | None]:
    """The interval about the study's score `pred` (its majority; None: recomputed without
    tie draws); (None, None) when not computable. `item_replicates`: the headline bootstrap's
    task-score replicates of the same answers, shared (else drawn here). `how` (ratings) is
    unused: no model."""
    del how
    if coded.kind not in KINDS or replicates <= 0 or len(coded.label_unit) == 0:
        return None, None
    if pred is None:
        votes = agg.unit_votes(coded.label_unit, coded.label_code, coded.n_units)
        pred = agg.majority_vote(votes, rule, rng, priority).pred
    scorer = scorer_for(coded, pred)
    point = task_score(scorer.point())
    if point is None or scorer.n_units == 0:
        return None, None
    item_part = (
        _task_replicates(scorer, replicates, rng)
        if item_replicates is None
        else np.asarray(item_replicates, dtype=float)
    )
    model = _AnnotatorModel.fit(coded, pred)
    if model is None:
        return None, None
    annotator_part = model.replicate_changes(
        coded, rule, priority, min(replicates, MAX_ANNOTATOR_REPLICATES), rng
    )
    total = item_part + annotator_part[rng.integers(0, len(annotator_part), len(item_part))]
    total = total[np.isfinite(total)]
    if len(total) == 0:
        return None, None
    low, mid, high = np.percentile(total, [2.5, 50, 97.5])
    return float(np.clip(point + low - mid, 0, 1)), float(np.clip(point + high - mid, 0, 1))


def _task_replicates(scorer, replicates: int, rng: np.random.Generator) -> np.ndarray:
    reps = scorer.replicates(replicates, rng)
    values = np.vstack([reps[m] for m in scorer.metrics])
    with np.errstate(invalid="ignore"):
        return values.mean(axis=0)


class _AnnotatorModel:
    """One-coin annotators fitted on the scored labels (units with gold)."""

    def __init__(self, label, unit, gold, annotator, skill, lut, n_classes):
        self.label, self.unit, self.gold = label, unit, gold
        self.annotator, self.skill, self.lut, self.n_classes = annotator, skill, lut, n_classes
        # A bootstrap over A annotators has (A - 1)/A of their variance: restored.
        # and its spread is itself estimated from A annotators: Student's t with A - 1 degrees
        # of freedom against the normal quantile widens it where A is small (1.42x at A = 5).
        a = len(skill)
        self.small_pool = float(np.sqrt(a / (a - 1)) * _t_975(a - 1) / Z_95) if a > 1 else 1.0

    @classmethod
    def fit(cls, coded: CodedStudy, pred: np.ndarray) -> _AnnotatorModel | None:
        gold_of_unit = coded.gold_code
        label_gold = gold_of_unit[coded.label_unit]
        keep = (coded.label_code >= 0) & (label_gold >= 0)
        labels = np.flatnonzero(keep)
        if len(labels) == 0:
            return None
        n_classes = len(coded.classes)
        code, gold = coded.label_code[labels], label_gold[labels]
        annotator = coded.label_annotator[labels].astype(np.int64)
        n_annotators = len(coded.annotators)
        right = code == gold
        pooled = float(right.mean())
        n_j = np.bincount(annotator, minlength=n_annotators)
        r_j = np.bincount(annotator, weights=right, minlength=n_annotators)
        skill = (r_j + PRIOR_LABELS * pooled) / (n_j + PRIOR_LABELS)
        # Wrong answers: the study's pooled confusion off the diagonal (uniform where unseen).
        confusion = np.bincount(gold * n_classes + code, minlength=n_classes * n_classes)
        confusion = confusion.reshape(n_classes, n_classes).astype(float)
        np.fill_diagonal(confusion, 0.0)
        empty = confusion.sum(axis=1) == 0
        confusion[empty] = 1.0
        np.fill_diagonal(confusion, 0.0)
        if n_classes < 2:
            return None
        cdf = np.cumsum(confusion / confusion.sum(axis=1, keepdims=True), axis=1)
        grid = (np.arange(LUT) + 0.5) / LUT
        lut = (grid[None, :, None] > cdf[:, None, :]).sum(axis=2)  # (gold, LUT) -> code
        lut = np.minimum(lut, n_classes - 1)
        return cls(labels, coded.label_unit[labels], gold, annotator, skill, lut, n_classes)

    def replicate_changes(
        self,
        coded: CodedStudy,
        rule: str,
        priority: np.ndarray | None,
        replicates: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Per replicate: task score with drawn annotators minus with the fitted ones."""
        unit, gold, annotator = self.unit, self.gold, self.annotator
        if len(unit) > MAX_SIMULATED_LABELS:
            units = np.unique(unit)
            chosen = np.zeros(coded.n_units, dtype=bool)
            subset = np.random.default_rng(0).permutation(units)
            cum = np.cumsum(np.bincount(unit, minlength=coded.n_units)[subset])
            chosen[subset[: int(np.searchsorted(cum, MAX_SIMULATED_LABELS)) + 1]] = True
            keep = chosen[unit]
            unit, gold, annotator = unit[keep], gold[keep], annotator[keep]
        n_units, n_classes = coded.n_units, self.n_classes
        n_annotators = len(self.skill)
        cell_scorer = isinstance(scorer_for(coded, np.full(n_units, -1)), CellScorer)
        fitted_skill = self.skill[annotator]
        if cell_scorer and n_classes == 2:
            return self._expected_changes(
                coded, unit, gold, annotator, rule, priority, replicates, rng
            )
        template = scorer_for(coded, np.full(n_units, -1))
        unit_gold = coded.gold_code
        if cell_scorer:  # only the units with labels take part: count votes over those
            kept, unit = np.unique(unit, return_inverse=True)
            n_units, unit_gold = len(kept), coded.gold_code[kept]
        # Several simulations per drawn pool average out the answer-level noise, which the
        # items' part already carries (most needed on small studies; none beyond 2,000 units).
        inner = int(np.clip(np.ceil(INNER_UNITS / max(1, len(np.unique(unit)))), 1, MAX_INNER))
        per_chunk = max(1, CELLS_PER_CHUNK // max(len(unit), n_units * n_classes) // inner)
        out = np.full(replicates, np.nan)
        done = 0
        while done < replicates:
            b = min(per_chunk, replicates - done)
            rows = b * inner
            u = rng.random((rows, len(unit)))
            pick = (rng.random((rows, len(unit))) * LUT).astype(np.int64)
            wrong = self.lut[gold[None, :], pick]
            drawn = np.repeat(rng.integers(0, n_annotators, size=(b, n_annotators)), inner, axis=0)
            drawn_skill = self.skill[drawn][:, annotator]
            scores = []
            for skill in (drawn_skill, fitted_skill[None, :]):
                answer = np.where(u < skill, gold[None, :], wrong)
                pred = _batched_majority(answer, unit, n_units, n_classes, rule, priority, rng)
                if cell_scorer:
                    scores.append(_cell_scores(template, unit_gold, len(coded.classes), pred))
                else:
                    scores.append(_point_scores(coded, pred))
            change = (scores[0] - scores[1]).reshape(b, inner).mean(axis=1)
            out[done : done + b] = change * self.small_pool
            done += b
        return out

    def _expected_changes(self, coded, unit, gold, annotator, rule, priority, replicates, rng):
        """Two classes: each unit's chance that the majority is right, wrong or undecided
        under given skills is exact (a Poisson-binomial count of right answers), so the scores
        are those of the expected confusion matrix, free of answer-level simulation noise."""
        n_annotators = len(self.skill)
        table, sizes = _rows_by_unit(unit)
        units = unit[table[:, 0]]
        unit_gold = gold[table[:, 0]]
        first = scorer_for(coded, np.full(coded.n_units, -1))
        assert isinstance(first, CellScorer)
        k = self.n_classes + 1
        other = 1 - unit_gold
        if rule == "random":
            tie_right, tie_wrong, tie_open = 0.5, 0.5, 0.0
        elif rule == "dev-majority-class":
            favoured = 0 if priority is None else int(np.argmax(priority - np.arange(2) * 1e-9))
            tie_right = (unit_gold == favoured).astype(float)
            tie_wrong, tie_open = 1.0 - tie_right, 0.0
        else:
            tie_right, tie_wrong, tie_open = 0.0, 0.0, 1.0
        cells = np.concatenate(
            [unit_gold * k + unit_gold, unit_gold * k + other, unit_gold * k + self.n_classes]
        )
        width = first.width
        per_chunk = max(1, CELLS_PER_CHUNK // (table.size + len(units)) // 2)
        out = np.full(replicates, np.nan)
        done = 0
        padded = np.where(table >= 0, table, 0)
        while done < replicates:
            b = min(per_chunk, replicates - done)
            drawn = rng.integers(0, n_annotators, size=(b, n_annotators))
            skills = np.vstack([self.skill[drawn][:, annotator], self.skill[annotator][None, :]])
            p = np.where(table[None] >= 0, skills[:, padded], 0.0)  # (rows, units, slots)
            counts = np.zeros((*p.shape[:2], table.shape[1] + 1))
            counts[..., 0] = 1.0
            for j in range(table.shape[1]):
                pj = p[..., j : j + 1]
                shifted = np.zeros_like(counts)
                shifted[..., 1:] = counts[..., :-1] * pj
                counts = counts * (1 - pj) + shifted
            r = np.arange(table.shape[1] + 1)[None, :]
            wins, ties = 2 * r > sizes[:, None], 2 * r == sizes[:, None]
            p_right = (counts * wins).sum(-1)
            p_tie = (counts * ties).sum(-1)
            p_wrong = (counts * (~wins & ~ties)).sum(-1)
            probs = np.concatenate(
                [p_right + tie_right * p_tie, p_wrong + tie_wrong * p_tie, tie_open * p_tie],
                axis=1,
            )
            rows = len(probs)
            index = np.arange(rows)[:, None] * width + cells[None, :]
            sums = np.bincount(index.ravel(), weights=probs.ravel(), minlength=rows * width)
            values = first.finish(sums.reshape(rows, width))
            score = np.vstack([values[m] for m in first.metrics]).mean(axis=0)
            out[done : done + b] = (score[:-1] - score[-1]) * self.small_pool
            done += b
        return out


def _rows_by_unit(unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(table, sizes): each unit's label indices, padded with -1, and how many it has."""
    order = np.argsort(unit, kind="stable")
    units = unit[order]
    starts = np.flatnonzero(np.r_[True, units[1:] != units[:-1]])
    sizes = np.diff(np.r_[starts, len(units)]).astype(np.int64)
    table = np.full((len(starts), int(sizes.max())), -1, dtype=np.int64)
    column = np.arange(len(units)) - np.repeat(starts, sizes)
    table[np.repeat(np.arange(len(starts)), sizes), column] = order
    return table, sizes


def _batched_majority(
    answer: np.ndarray,
    unit: np.ndarray,
    n_units: int,
    n_classes: int,
    rule: str,
    priority: np.ndarray | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """(b, n_units) majority per replicate with the study's tie rule (as `majority_vote`)."""
    b = len(answer)
    keys = (np.arange(b)[:, None] * n_units + unit[None, :]) * n_classes + answer
    counts = np.bincount(keys.ravel(), minlength=b * n_units * n_classes)
    counts = counts.reshape(b, n_units, n_classes)
    top = counts.max(axis=2)
    is_top = (counts == top[..., None]) & (top[..., None] > 0)
    n_top = is_top.sum(axis=2)
    if rule == "random":
        rank = rng.random(counts.shape)
    elif rule == "dev-majority-class" and priority is not None:
        rank = np.broadcast_to(priority - np.arange(n_classes) * 1e-9, counts.shape)
    else:
        rank = np.broadcast_to(-np.arange(n_classes, dtype=float), counts.shape)
    choice = np.where(is_top, rank, -np.inf).argmax(axis=2)
    pred = np.where(top > 0, choice, agg.NO_LABELS)
    if rule not in {"random", "dev-majority-class"}:
        pred = np.where(n_top > 1, agg.NO_DECISION, pred)
    return pred


def _point_scores(coded: CodedStudy, pred: np.ndarray) -> np.ndarray:
    """Task score of each replicate's answers (rows of `pred` over all units)."""
    values = [task_score(scorer_for(coded, p).point()) for p in pred]
    return np.array([np.nan if v is None else v for v in values])


def _cell_scores(template, gold: np.ndarray, n_classes: int, pred: np.ndarray) -> np.ndarray:
    """Task score of each replicate's answers (rows of `pred` over the units whose gold is
    `gold`) through a confusion-matrix scorer's `finish`: one bincount for all replicates."""
    assert isinstance(template, CellScorer)
    b = len(pred)
    k = n_classes + 1
    scored = (gold[None, :] >= 0) & (pred != agg.NO_LABELS)
    cells = np.where(scored, gold[None, :] * k + np.where(pred >= 0, pred, n_classes), -1)
    rows = np.broadcast_to(np.arange(b)[:, None], cells.shape)
    width = template.width
    sums = np.bincount((rows * width + cells)[scored], minlength=b * width).reshape(b, width)
    values = template.finish(sums.astype(float))
    return np.vstack([values[m] for m in template.metrics]).mean(axis=0)
