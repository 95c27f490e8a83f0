"""The scorers of the official metrics, computed the way the standard scorers compute them.

- accuracy, F1 (binary, for the task's positive label; macro-averaged for CB), Matthews
  correlation and R3 (Gorodkin's multiclass MCC) equal sklearn's `accuracy_score`, `f1_score`
  and `matthews_corrcoef` (0 when undefined, as sklearn returns);
- Pearson and Spearman equal scipy's `pearsonr` / `spearmanr`;
- MultiRC F1a is binary F1 over all candidate answers, EM the share of questions with every
  answer right;
- ReCoRD F1 / EM are SQuAD-style normalised token F1 and exact match, max over gold answers;
- AX-g gender parity is the share of minimal pairs (ids 2k and 2k+1) predicted alike.

A unit without a decision (a tie left open or abstained) counts as wrong. With two classes
(binary F1 and MCC, MultiRC's judgements) it counts as the other class, the one wrong answer,
so abstaining never scores better than answering wrong (as its own class, an undecided
negative was no false positive). With more classes it is a prediction of its own "no answer"
class that matches no gold.

Each scorer holds per-unit sufficient statistics, so the same object gives the point value, the
value on a subset, one value per group (annotator) and bootstrap replicates for all metrics.
Which metrics exist, and the function computing each from a scorer's statistics, is the
registry's (`annotate.metric_registry`); a scorer computes the ones a task names.
"""

from __future__ import annotations

import copy
import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from annotate.metric_registry import metric
from annotate.scoring.intervals import Resampling, bootstrap, bootstrap_sums, group_sums
from annotate.scoring.units import NO_DECISION

Values = dict[str, np.ndarray]


def functions(metrics: Sequence[str]) -> dict[str, Callable[..., Any]]:
    """Each metric's function, by name."""
    return {m: metric(m).load() for m in metrics}


def _finish_with(computed: dict[str, Callable[..., Any]]) -> Callable[[np.ndarray], Values]:
    """A SumScorer's `finish` for metrics that are functions of the sums alone."""

    def finish(sums: np.ndarray) -> Values:
        return {m: f(sums) for m, f in computed.items()}

    return finish


def task_score(values: dict[str, float | None]) -> float | None:
    """Mean of a task's metrics; None when any metric is undefined."""
    if not values or any(v is None or not np.isfinite(v) for v in values.values()):
        return None
    return float(np.mean(list(values.values())))


def _as_floats(values: Values) -> dict[str, float | None]:
    """A point estimate per metric: None where undefined, or the value the metric takes there
    (MCC's 0: the registry's `undefined_point`)."""
    out: dict[str, float | None] = {}
    for key, value in values.items():
        v = float(np.asarray(value).reshape(-1)[0]) if np.size(value) else float("nan")
        out[key] = v if np.isfinite(v) else metric(key).undefined_point
    return out


# --- scorers ---------------------------------------------------------------------------------


class Scorer:
    """Metrics over resampling units (items, or AX-g minimal pairs)."""

    metrics: list[str]

    @property
    def n_units(self) -> int:
        raise NotImplementedError

    def point(self) -> dict[str, float | None]:
        raise NotImplementedError

    def replicates(self, n: int, rng: np.random.Generator) -> Values:
        raise NotImplementedError

    def subset(self, mask: np.ndarray) -> Scorer:
        raise NotImplementedError

    def by_group(self, group: np.ndarray, n_groups: int) -> list[dict[str, float | None]]:
        raise NotImplementedError

    def resampled_rows(self, n_inputs: int) -> np.ndarray:
        """For each input unit, the index of its row among the rows `replicates` resamples
        (the columns of its weight matrices); -1 for a unit that is not resampled."""
        raise NotImplementedError

    def weighted(self, weights: np.ndarray) -> Values:
        """The metrics under each row of `weights` (m x n_units): draw counts of the
        resampled rows, as one replicate of `replicates` draws them."""
        raise NotImplementedError


def paired_replicates(scorers: Sequence[Scorer], n: int, rng: np.random.Generator) -> list[Values]:
    """Each scorer's replicates, every replicate the same resample of their common units (the
    scorers resample the same units in the same order: a model's and the humans' answers on
    the items both answered), for a paired difference. Drawn unit by unit, each scorer gets
    the very replicates `replicates(n, rng)` gives it alone; a large study drawn per pattern
    (`Resampling`) is drawn per pattern of all their statistics together, since apart each
    would be drawn over its own patterns, independently of the others."""
    if n <= 0 or not scorers:
        return [s.replicates(n, copy.deepcopy(rng)) for s in scorers]
    sums_of = [s for s in scorers if isinstance(s, SumScorer | CellScorer)]
    if len(sums_of) < len(scorers) or len({s.n_units for s in scorers}) != 1:
        # Ratings are drawn unit by unit: the same generator state, the same resamples.
        return [s.replicates(n, copy.deepcopy(rng)) for s in scorers]
    stats = [s.unit_stats() for s in sums_of]
    if scorers[0].n_units == 0:
        return [{m: np.zeros(0) for m in s.metrics} for s in scorers]
    resampling = Resampling(np.column_stack(stats), n, rng)
    return [s.finish(resampling.sums(x)) for s, x in zip(sums_of, stats, strict=True)]


def _active_index(active: np.ndarray) -> np.ndarray:
    return np.where(active, np.cumsum(active) - 1, -1)


@dataclass
class SumScorer(Scorer):
    """Metrics that are functions of sums of per-row statistics.

    A row is a resampling unit: usually one input unit (an item, an annotator's answer), but a
    MultiRC question gathers its candidate answers and an AX-g minimal pair its two items.
    `rows[u]` is the row of input unit u; `subset` and `by_group` take per-input-unit arrays."""

    metrics: list[str]
    stats: np.ndarray
    finish: Callable[[np.ndarray], Values]
    rows: np.ndarray | None = None

    def __post_init__(self) -> None:
        # Rows that carry any statistics (units without gold or without an answer carry none
        # and are not resampled).
        self.active = self.stats.any(axis=1)

    @property
    def n_units(self) -> int:
        return int(self.active.sum())

    def _row_of(self, n_inputs: int) -> np.ndarray:
        return np.arange(n_inputs) if self.rows is None else self.rows

    def point(self) -> dict[str, float | None]:
        if self.n_units == 0:
            return dict.fromkeys(self.metrics)
        return _as_floats(self.finish(self.stats.sum(axis=0)[None, :]))

    def replicates(self, n: int, rng: np.random.Generator) -> Values:
        sums = bootstrap_sums(self.stats[self.active], n, rng)
        if len(sums) == 0:
            return {m: np.zeros(0) for m in self.metrics}
        return self.finish(sums)

    def resampled_rows(self, n_inputs: int) -> np.ndarray:
        return _active_index(self.active)[self._row_of(n_inputs)]

    def weighted(self, weights: np.ndarray) -> Values:
        return self.finish(np.asarray(weights, dtype=float) @ self.stats[self.active])

    def unit_stats(self) -> np.ndarray:
        """The statistics of the resampled rows, whose sums `finish` turns into metrics."""
        return self.stats[self.active]

    def subset(self, mask: np.ndarray) -> SumScorer:
        mask = np.asarray(mask, dtype=bool)
        keep = np.zeros(len(self.stats), dtype=bool)
        keep[self._row_of(len(mask))[mask]] = True
        return SumScorer(self.metrics, self.stats[keep], self.finish)

    def by_group(self, group: np.ndarray, n_groups: int) -> list[dict[str, float | None]]:
        group = np.asarray(group, dtype=np.int64)
        # Rows outside any group or without statistics go to an extra group, dropped after.
        row_group = np.full(len(self.stats), n_groups, dtype=np.int64)
        row_group[self._row_of(len(group))] = group
        row_group[~self.active] = n_groups
        sums = group_sums(self.stats, row_group, n_groups + 1)[:n_groups]
        values = self.finish(sums)
        has = np.bincount(row_group, minlength=n_groups + 1)[:n_groups] > 0
        out = []
        for g in range(n_groups):
            if not has[g]:
                out.append(dict.fromkeys(self.metrics))
                continue
            out.append(_as_floats({m: values[m][g : g + 1] for m in self.metrics}))
        return out


@dataclass
class CellScorer(Scorer):
    """A SumScorer whose per-unit statistics are one-hot: each unit adds 1 to one cell of a
    table (a confusion matrix), or nothing (cell -1). Sums are counts, so no dense matrix is
    built except for the bootstrap."""

    metrics: list[str]
    cells: np.ndarray
    width: int
    finish: Callable[[np.ndarray], Values]

    def __post_init__(self) -> None:
        self.cells = np.asarray(self.cells, dtype=np.int64)
        self.active = self.cells >= 0

    @property
    def n_units(self) -> int:
        return int(self.active.sum())

    def point(self) -> dict[str, float | None]:
        if self.n_units == 0:
            return dict.fromkeys(self.metrics)
        counts = np.bincount(self.cells[self.active], minlength=self.width)
        return _as_floats(self.finish(counts[None, :].astype(float)))

    def unit_stats(self) -> np.ndarray:
        """The resampled units' cells one-hot, whose sums `finish` turns into metrics."""
        cells = self.cells[self.active]
        onehot = np.zeros((len(cells), self.width))
        onehot[np.arange(len(cells)), cells] = 1.0
        return onehot

    def replicates(self, n: int, rng: np.random.Generator) -> Values:
        sums = bootstrap_sums(self.unit_stats(), n, rng)
        if len(sums) == 0:
            return {m: np.zeros(0) for m in self.metrics}
        return self.finish(sums)

    def resampled_rows(self, n_inputs: int) -> np.ndarray:
        return _active_index(self.active)

    def weighted(self, weights: np.ndarray) -> Values:
        weights = np.asarray(weights, dtype=float)
        cells = self.cells[self.active]
        sums = np.zeros((len(weights), self.width))
        for r in range(len(weights)):
            sums[r] = np.bincount(cells, weights=weights[r], minlength=self.width)
        return self.finish(sums)

    def subset(self, mask: np.ndarray) -> CellScorer:
        return CellScorer(
            self.metrics, self.cells[np.asarray(mask, dtype=bool)], self.width, self.finish
        )

    def by_group(self, group: np.ndarray, n_groups: int) -> list[dict[str, float | None]]:
        group = np.asarray(group, dtype=np.int64)
        a = self.active
        sums = np.bincount(group[a] * self.width + self.cells[a], minlength=n_groups * self.width)
        sums = sums.reshape(n_groups, self.width).astype(float)
        values = self.finish(sums)
        has = sums.sum(axis=1) > 0
        return [
            _as_floats({m: values[m][g : g + 1] for m in self.metrics})
            if has[g]
            else dict.fromkeys(self.metrics)
            for g in range(n_groups)
        ]


# --- classification --------------------------------------------------------------------------


def undecided_as_wrong(gold: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Two classes (codes 0 and 1): `pred` with each undecided unit (NO_DECISION) that has gold
    given the other class, the wrong answer (module docstring)."""
    return np.where((pred == NO_DECISION) & (gold >= 0), 1 - gold, pred)


def classification_scorer(
    metrics: Sequence[str],
    n_classes: int,
    gold: np.ndarray,
    pred: np.ndarray,
    positive: int | None = None,
    pair: np.ndarray | None = None,
) -> Scorer:
    """Score predicted class codes against gold codes (one per unit).

    `pred` NO_DECISION (-2) means no answer: counted wrong. Units without gold (code < 0) or
    without any answer (pred -1) are not scored. `pair` (ints, -1 for none) groups units that
    form a minimal pair: gender parity is computed over them and they are resampled together."""
    gold = np.asarray(gold, dtype=np.int64)
    pred = np.asarray(pred, dtype=np.int64)
    scored = (gold >= 0) & (pred != -1)
    k = n_classes + 1
    decided = undecided_as_wrong(gold, pred) if n_classes == 2 else pred
    cells = np.where(
        scored, np.where(scored, gold, 0) * k + np.where(decided >= 0, decided, n_classes), -1
    )
    metrics = list(metrics)
    over_pairs = functions([m for m in metrics if metric(m).family == "minimal_pairs"])
    over_confusion = functions([m for m in metrics if m not in over_pairs])

    def finish(sums: np.ndarray) -> Values:
        cm = sums[:, : k * k].reshape(-1, k, k)
        out = {m: f(cm, n_classes, positive) for m, f in over_confusion.items()}
        for m, f in over_pairs.items():
            if sums.shape[1] > k * k:
                out[m] = f(sums[:, k * k], sums[:, k * k + 1])
            else:  # not scored in pairs: no pair to compare
                out[m] = np.full(len(sums), np.nan)
        return {m: out[m] for m in metrics}

    if pair is None:
        return CellScorer(metrics, cells, k * k, finish)
    onehot = np.zeros((len(gold), k * k))
    onehot[np.flatnonzero(scored), cells[scored]] = 1.0
    stats, rows = _pair_clusters(onehot, np.where(scored, pred, -1), scored, np.asarray(pair))
    return SumScorer(metrics, stats, finish, rows)


def _pair_clusters(
    onehot: np.ndarray, pred: np.ndarray, scored: np.ndarray, pair: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sum the units of each minimal pair into one row, adding two columns: [is a pair (two or
    more scored units), all of them predicted alike]. Returns (stats, row of each unit)."""
    n = len(pred)
    pair = np.asarray(pair, dtype=np.int64)
    singles = pair < 0
    rows = np.empty(n, dtype=np.int64)
    _, pair_rows = np.unique(pair[~singles], return_inverse=True)
    n_pairs = int(pair_rows.max()) + 1 if len(pair_rows) else 0
    rows[~singles] = pair_rows
    rows[singles] = n_pairs + np.arange(int(singles.sum()))
    n_rows = n_pairs + int(singles.sum())
    stats = np.zeros((n_rows, onehot.shape[1] + 2))
    stats[:, : onehot.shape[1]] = group_sums(onehot, rows, n_rows)
    size = np.bincount(rows, weights=scored, minlength=n_rows)
    decided = scored & (pred >= 0)
    big = np.iinfo(np.int64).max
    low = np.full(n_rows, big)
    high = np.full(n_rows, -big)
    np.minimum.at(low, rows[scored], pred[scored])
    np.maximum.at(high, rows[scored], pred[scored])
    all_decided = np.bincount(rows, weights=decided, minlength=n_rows) == size
    is_pair = size >= 2
    stats[:, -2] = is_pair
    stats[:, -1] = is_pair & all_decided & (low == high)
    return stats, rows


# --- MultiRC ---------------------------------------------------------------------------------


def multi_answer_scorer(
    gold: np.ndarray,
    pred: np.ndarray,
    question: np.ndarray,
    n_questions: int,
    positive: int,
    metrics: Sequence[str] = ("f1a", "em"),
) -> SumScorer:
    """F1a over all candidate answers and EM per question. One unit = one candidate answer;
    `question` maps it to its question (the row, resampled as a whole). Answers without gold
    or without any judgement are not scored; an undecided answer (tie) counts as wrong."""
    gold = np.asarray(gold, dtype=np.int64)
    pred = undecided_as_wrong(gold, np.asarray(pred, dtype=np.int64))
    question = np.asarray(question, dtype=np.int64)
    scored = (gold >= 0) & (pred != -1)
    right = scored & (pred == gold)
    tp = scored & (gold == positive) & (pred == positive)
    fp = scored & (gold != positive) & (pred == positive)
    fn = scored & (gold == positive) & (pred != positive)
    wrong = scored & ~right
    per_q = np.zeros((n_questions, 5))
    for col, values in enumerate((tp, fp, fn, wrong, scored)):
        per_q[:, col] = np.bincount(question, weights=values, minlength=n_questions)
    has = per_q[:, 4] > 0
    stats = np.column_stack([per_q[:, :3], has & (per_q[:, 3] == 0), has.astype(float)])

    return SumScorer(list(metrics), stats, _finish_with(functions(metrics)), question)


# --- ReCoRD ----------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD / ReCoRD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def record_scores(prediction: str | None, golds: Sequence[str]) -> tuple[float, float]:
    """(token F1, exact match), each the max over the gold answers; no answer scores 0."""
    if prediction is None or not golds:
        return 0.0, 0.0
    f1 = max(token_f1(prediction, g) for g in golds)
    em = max(float(normalize_answer(prediction) == normalize_answer(g)) for g in golds)
    return f1, em


NO_ANSWER = object()
"""A ReCoRD prediction that exists but is no answer (an unsettled tie): scored 0."""


def entity_scorer(
    predictions: Sequence[object],
    golds: Sequence[Sequence[str] | None],
    metrics: Sequence[str] = ("record_f1", "record_em"),
) -> SumScorer:
    """ReCoRD: one unit per query. A prediction is an entity text, NO_ANSWER (scored 0) or
    None (nobody answered: not scored); queries without gold are not scored."""
    stats = np.zeros((len(predictions), 3))
    for i, (p, g) in enumerate(zip(predictions, golds, strict=True)):
        if g and p is not None and p is not NO_ANSWER:
            stats[i] = (*record_scores(p, g), 1.0)
        elif g and p is NO_ANSWER:
            stats[i, 2] = 1.0

    return SumScorer(list(metrics), stats, _finish_with(functions(metrics)))


# --- regression (STS-B) ----------------------------------------------------------------------


@dataclass
class RegressionScorer(Scorer):
    """Pearson and Spearman between gold and predicted ratings, over units with both."""

    metrics: list[str]
    gold: np.ndarray
    pred: np.ndarray

    @property
    def active(self) -> np.ndarray:
        return np.isfinite(self.gold) & np.isfinite(self.pred)

    @property
    def n_units(self) -> int:
        return int(self.active.sum())

    def point(self) -> dict[str, float | None]:
        a = self.active
        return _correlations(self.gold[a], self.pred[a], self.metrics)

    def replicates(self, n: int, rng: np.random.Generator) -> Values:
        a = self.active
        gold, pred = self.gold[a], self.pred[a]
        computed = functions(self.metrics)

        def statistic(w: np.ndarray) -> Values:
            return {m: f(gold, pred, w) for m, f in computed.items()}

        result = bootstrap(len(gold), n, rng, statistic)
        return result or {m: np.zeros(0) for m in self.metrics}

    def subset(self, mask: np.ndarray) -> RegressionScorer:
        mask = np.asarray(mask, dtype=bool)
        return RegressionScorer(self.metrics, self.gold[mask], self.pred[mask])

    def by_group(self, group: np.ndarray, n_groups: int) -> list[dict[str, float | None]]:
        group = np.asarray(group, dtype=np.int64)
        a = self.active
        return [
            _correlations(self.gold[a & (group == g)], self.pred[a & (group == g)], self.metrics)
            for g in range(n_groups)
        ]


def _correlations(
    gold: np.ndarray, pred: np.ndarray, metrics: Sequence[str]
) -> dict[str, float | None]:
    """Each metric's point value (scipy's pearsonr / spearmanr); None when undefined (fewer
    than 2 units, or constant)."""
    if len(gold) < 2 or np.ptp(gold) == 0 or np.ptp(pred) == 0:
        return dict.fromkeys(metrics)
    return {m: f(gold, pred, None) for m, f in functions(metrics).items()}
