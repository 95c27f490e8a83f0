"""An interval for claims about *humans like these annotators*, not only these annotators.

The report's other intervals resample test items and hold the annotators fixed: they say how
well these particular people would do on more items of the task. A claim about "human
performance" also has to allow that other annotators from the same pool would have voted
differently. The estimand is the majority-of-k score of annotators drawn afresh from the pool
these come from, on items of the task.

Method: two independent parts, added per replicate on the logit scale of the score (its share
of the way from the metric's lowest value to 1), the interval read off the replicates' own
quantiles.

- *Items*: the score-type confidence distribution of the fixed-annotator interval: the score
  is a share over n effective units (Wilson's n for accuracy; otherwise the effective number of
  resampling units, `scoring.intervals.effective_units`), and a replicate is Wilson's bound at
  a standard normal draw z. Its 2.5% and 97.5% quantiles are Wilson's bounds, so it does not
  collapse where every item is right (as the percentile bootstrap does: the reason the
  headline uses Wilson); there half its draws are exactly 100%.
- *Annotators*: each annotator is fitted a class-conditional model: a confusion matrix (the
  chance of each answer given the gold class), their own counts shrunk by `PRIOR_LABELS`
  labels per gold class towards the crowd's pooled confusion. Annotators who lean towards one
  class are right more often on it and wrong together on the others, which one skill per
  annotator hides (measured: 83% coverage for a nominal 95% with 40% of the annotators
  leaning). A replicate replaces every annotator by one drawn with replacement from the
  study's annotators (the pool) or, as the pool's prior, by one who guesses (`GUESSERS`: a few
  annotators cannot show the kinds they happen not to include), keeps the study's design
  (which annotator slot answered which unit) and simulates every answer; the change in the
  logit of the task score against the same simulation with the fitted annotators themselves
  (common random numbers) is the annotators' part, centred on its median (the model's own
  level, which ignores that items differ in difficulty, does not move the interval).

The sum's 2.5% and 97.5% quantiles, mapped back from the logit scale, are the interval: both
ends move with the data (a bound reaches 100% only when every item is right) and no spread
is laid symmetrically about the score and clipped. The broader claim is never surer than the
fixed-annotator one: the interval is widened, where the sampling left it short, to contain
the fixed-annotator interval (and so its point estimate).

Why not resample the annotators' actual answers: on a crossed design a resampled committee
repeats annotators (5 drawn from 5 hold 3.4 distinct people on average), so its majority is
that of a smaller, noisier committee. Its replicates centre below the study's score and,
re-centred, are about three times too wide (measured: 99% coverage for a nominal 95%).
Simulated answers of a drawn annotator are independent of the original's, so a repeated
annotator is a fresh person.

The simulation is vectorised over replicates (no Python loop per replicate for classification
tasks; MultiRC's and AX-g's pair-aware scorers are called once per replicate). Ratings
(STS-B) and ReCoRD's entities have no such model: no interval is given for them.
"""

from __future__ import annotations

import numpy as np

from annotate.report.aggregation import majority as agg
from annotate.report.data.coding import CodedStudy
from annotate.scoring.intervals import (
    Z_95,
    effective_units,
    percentile_interval,
    scale_lowest,
    wilson_applies,
)
from annotate.scoring.metrics import CellScorer, task_score
from annotate.scoring.scorers import count_answers_scored, count_scored, scorer_for

METHOD = (
    "bootstrap with a fitted annotator model, 95%: test items a sample (Wilson's score "
    "distribution at the effective number of units), annotators drawn afresh from these with "
    "one who guesses as the pool's prior (class-conditional model, answers simulated in the "
    "study's design), combined on the logit scale; never narrower than the fixed-annotator "
    "interval"
)
KINDS = ("classification", "multi_answer")
PRIOR_LABELS = 2.0
"""Each annotator's confusion row for a gold class is (their counts + 2·the crowd's row) /
(their labels of that class + 2): one label is not a certainty of 0 or 1."""
GUESSERS = 1
"""The pool's prior: a drawn annotator is one of the study's A annotators or, with chance
1/(A + 1), one who guesses (a Dirichlet process over the annotators with one guesser as its
base, weight 1). A study's few annotators cannot show the kinds of annotator they happen not to
include: five annotators who are all right on every item do not rule out a crowd with 30%
spammers (measured: 88% coverage of a bimodal crowd without it, 96% with it)."""
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
"""Resolution of the wrong-answer draw (inverse-CDF lookup per annotator and gold class)."""


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
    fixed: tuple[float | None, float | None] | None = None,
) -> tuple[float | None, float | None]:
    """The interval about the study's score `pred` (its majority; None: recomputed without
    tie draws); (None, None) when not computable. `item_replicates`: the headline bootstrap's
    task-score replicates of the same answers, shared (else drawn here), which give the
    effective number of units where Wilson's n does not apply. `fixed`: the fixed-annotator
    (headline) interval, which this one always contains. `how` (ratings) is unused: no model."""
    del how
    if coded.kind not in KINDS or replicates <= 0 or len(coded.label_unit) == 0:
        return None, None
    if pred is None:
        votes = agg.unit_votes(coded.label_unit, coded.label_code, coded.n_units)
        pred = agg.majority_vote(votes, rule, rng, priority).pred
    scorer = scorer_for(coded, pred)
    point = task_score(scorer.point())
    lowest = scale_lowest(coded.spec.metrics)
    if point is None or scorer.n_units == 0 or lowest is None or not lowest <= point <= 1:
        return None, None
    scale = _Scale(lowest, scorer.n_units)
    n_items = _item_units(coded, pred, scorer, point, scale, item_replicates, replicates, rng)
    item_part = _logit(_wilson_draws(scale.share(point), n_items, rng.standard_normal(replicates)))
    model = _AnnotatorModel.fit(coded, pred)
    if model is None:
        return None, None
    annotator_part = model.replicate_changes(
        coded, rule, priority, min(replicates, MAX_ANNOTATOR_REPLICATES), rng, scale
    )
    annotator_part = annotator_part[np.isfinite(annotator_part)]
    if len(annotator_part) == 0:
        return None, None
    annotator_part -= np.median(annotator_part)
    paired = annotator_part[rng.integers(0, len(annotator_part), len(item_part))]
    with np.errstate(invalid="ignore"):
        total = _expit(item_part + paired)  # +inf (every item right) stays 100%
    total = total[np.isfinite(total)]
    if len(total) == 0:
        return None, None
    low, high = (scale.value(float(q)) for q in np.percentile(total, [2.5, 97.5]))
    low, high = min(low, point), max(high, point)
    if fixed is not None and fixed[0] is not None and fixed[1] is not None:
        low, high = min(low, fixed[0]), max(high, fixed[1])
    return low, high


class _Scale:
    """A score's place between the metric's lowest value and 1 (a share), and the logit of a
    share over n units, kept finite at 0 and 1 by half a unit (the empirical logit)."""

    def __init__(self, lowest: float, n_units: int) -> None:
        self.lowest, self.span, self.n = lowest, 1.0 - lowest, max(1, n_units)

    def share(self, value):
        return (np.asarray(value, dtype=float) - self.lowest) / self.span

    def value(self, share: float) -> float:
        return float(self.lowest + self.span * share)

    def logit(self, value) -> np.ndarray:
        p = (self.share(value) * self.n + 0.5) / (self.n + 1)
        return np.log(p) - np.log1p(-p)


def _item_units(coded, pred, scorer, point, scale, item_replicates, replicates, rng) -> float:
    """The items' part's number of units: Wilson's n where the score is one proportion (as
    the headline), else the effective number of resampling units of the bootstrap (the
    headline's replicates `item_replicates`, else drawn here)."""
    metrics = list(coded.spec.metrics)
    paired = coded.item_pair is not None
    if wilson_applies(metrics, coded.kind, paired):
        return float(count_scored(coded, pred))
    if item_replicates is None:
        item_replicates = _task_replicates(scorer, replicates, rng)
    low, high = percentile_interval(item_replicates)
    share = float(scale.share(point))
    lo = None if low is None else float(scale.share(low))
    hi = None if high is None else float(scale.share(high))
    return effective_units(share, scorer.n_units, count_answers_scored(coded, pred), lo, hi)


def _wilson_draws(p: float, n: float, z: np.ndarray) -> np.ndarray:
    """Wilson's bound at each standard normal `z` (increasing in z): draws whose 2.5% and 97.5%
    quantiles are Wilson's 95% interval for p over n, the score interval's confidence
    distribution. At p = 1 every z > 0 gives 1 exactly (the upper bound), unlike a Beta."""
    z2n = z * z / n
    root = np.sqrt(np.maximum(p * (1 - p) / n + z2n / (4 * n), 0.0))
    return np.clip((p + z2n / 2 + z * root) / (1 + z2n), 0.0, 1.0)


def _logit(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


def _expit(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(x / 2))


def _task_replicates(scorer, replicates: int, rng: np.random.Generator) -> np.ndarray:
    reps = scorer.replicates(replicates, rng)
    values = np.vstack([reps[m] for m in scorer.metrics])
    with np.errstate(invalid="ignore"):
        return values.mean(axis=0)


class _AnnotatorModel:
    """Class-conditional annotators fitted on the scored labels (units with gold): each one's
    confusion matrix, shrunk towards the crowd's."""

    def __init__(self, label, unit, gold, annotator, skill, lut, n_classes):
        self.label, self.unit, self.gold = label, unit, gold
        self.annotator, self.lut, self.n_classes = annotator, lut, n_classes
        self.skill = skill
        """(annotators, classes): each one's chance of the right answer given the gold class."""
        # A bootstrap over A annotators has (A - 1)/A of their variance: restored.
        # and its spread is itself estimated from A annotators: Student's t with A - 1 degrees
        # of freedom against the normal quantile widens it where A is small (1.42x at A = 5).
        a = len(skill) - GUESSERS
        self.small_pool = float(np.sqrt(a / (a - 1)) * _t_975(a - 1) / Z_95) if a > 1 else 1.0

    @classmethod
    def fit(cls, coded: CodedStudy, pred: np.ndarray) -> _AnnotatorModel | None:
        gold_of_unit = coded.gold_code
        label_gold = gold_of_unit[coded.label_unit]
        keep = (coded.label_code >= 0) & (label_gold >= 0)
        labels = np.flatnonzero(keep)
        n_classes = len(coded.classes)
        if len(labels) == 0 or n_classes < 2:
            return None
        code, gold = coded.label_code[labels], label_gold[labels]
        annotator = coded.label_annotator[labels].astype(np.int64)
        n_annotators = len(coded.annotators)
        cc = n_classes * n_classes
        counts = np.bincount(annotator * cc + gold * n_classes + code, minlength=n_annotators * cc)
        counts = counts.reshape(n_annotators, n_classes, n_classes).astype(float)
        crowd = counts.sum(axis=0)
        rows = crowd.sum(axis=1, keepdims=True)
        # A gold class no one answered: the study's overall accuracy, the rest spread evenly.
        overall = float(np.trace(crowd) / crowd.sum())
        spread = np.full((n_classes, n_classes), (1 - overall) / (n_classes - 1))
        np.fill_diagonal(spread, overall)
        crowd = np.where(rows > 0, crowd / np.maximum(rows, 1), spread)
        confusion = (counts + PRIOR_LABELS * crowd[None]) / (
            counts.sum(axis=2, keepdims=True) + PRIOR_LABELS
        )
        skill = confusion[:, np.arange(n_classes), np.arange(n_classes)].copy()
        # Wrong answers: each one's confusion off the diagonal (evenly, where it has none).
        wrong = confusion.copy()
        wrong[:, np.arange(n_classes), np.arange(n_classes)] = 0.0
        total = wrong.sum(axis=2, keepdims=True)
        even = np.ones((n_classes, n_classes)) - np.eye(n_classes)
        wrong = np.where(
            total > 0, wrong / np.where(total > 0, total, 1.0), even[None] / (n_classes - 1)
        )
        cdf = np.cumsum(wrong, axis=2)  # (annotator, gold, answer)
        grid = (np.arange(LUT) + 0.5) / LUT
        lut = np.zeros((n_annotators, n_classes, LUT), dtype=np.int16)  # -> the answer's code
        for c in range(n_classes - 1):  # a class at a time: memory of one LUT, not of C
            lut += grid[None, None, :] > cdf[:, :, c, None]
        if GUESSERS:  # the pool's prior: one more annotator who guesses (see GUESSERS)
            skill = np.vstack([skill, np.full((GUESSERS, n_classes), 1.0 / n_classes)])
            guess = (np.arange(LUT) * (n_classes - 1) // LUT)[None, :]
            guess = guess + (guess >= np.arange(n_classes)[:, None])  # any class but gold
            lut = np.concatenate(
                [lut, np.broadcast_to(guess.astype(np.int16), (GUESSERS, n_classes, LUT))]
            )
        return cls(labels, coded.label_unit[labels], gold, annotator, skill, lut, n_classes)

    def replicate_changes(
        self,
        coded: CodedStudy,
        rule: str,
        priority: np.ndarray | None,
        replicates: int,
        rng: np.random.Generator,
        scale: _Scale,
    ) -> np.ndarray:
        """Per replicate: the logit of the task score with drawn annotators minus with the
        fitted ones."""
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
        if cell_scorer and n_classes == 2:
            return self._expected_changes(
                coded, unit, gold, annotator, rule, priority, replicates, rng, scale
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
            drawn = np.repeat(rng.integers(0, n_annotators, size=(b, n_annotators)), inner, axis=0)
            scores = []
            for who in (drawn[:, annotator], np.broadcast_to(annotator, (rows, len(annotator)))):
                skill = self.skill[who, gold[None, :]]
                wrong = self.lut[who, gold[None, :], pick]
                answer = np.where(u < skill, gold[None, :], wrong)
                pred = _batched_majority(answer, unit, n_units, n_classes, rule, priority, rng)
                if cell_scorer:
                    scores.append(_cell_scores(template, unit_gold, len(coded.classes), pred))
                else:
                    scores.append(_point_scores(coded, pred))
            change = (scale.logit(scores[0]) - scale.logit(scores[1])).reshape(b, inner)
            out[done : done + b] = change.mean(axis=1) * self.small_pool
            done += b
        return out

    def _expected_changes(
        self, coded, unit, gold, annotator, rule, priority, replicates, rng, scale
    ):
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
        fitted = self.skill[annotator, gold]
        while done < replicates:
            b = min(per_chunk, replicates - done)
            drawn = rng.integers(0, n_annotators, size=(b, n_annotators))
            skills = np.vstack([self.skill[drawn[:, annotator], gold[None, :]], fitted[None, :]])
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
            score = scale.logit(np.vstack([values[m] for m in first.metrics]).mean(axis=0))
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
