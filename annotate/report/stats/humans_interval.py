"""An interval for claims about *humans like these annotators*, not only these annotators.

The report's other intervals resample test items and hold the annotators fixed: they say how
well these particular people would do on more items of the task. A claim about "human
performance" also has to allow that other annotators from the same pool would have voted
differently. This two-stage bootstrap resamples both: test items with replacement (the task),
then, within each drawn item, its annotators' answers with replacement (the people), and
aggregates and scores each replicate with the study's own rules. It is wider, and labelled so.

No library offers a two-stage (hierarchical) bootstrap over a vote aggregation; it is written
here with the report's own vote counting and scorers.
"""

from __future__ import annotations

import numpy as np

from annotate.report.aggregation import majority as agg
from annotate.report.data.coding import CodedStudy
from annotate.scoring.intervals import percentile_interval
from annotate.scoring.metrics import task_score
from annotate.scoring.scorers import scorer_for

METHOD = "two-stage bootstrap, 95%: test items resampled, then each item's annotators resampled"
MAX_LABELS = 200_000
"""Above this many labels the replicates (one aggregation each) take too long to be a default."""


def _rows_by_item(row_item: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(table, sizes): each item's answer rows, padded with -1, and how many it has."""
    order = np.argsort(row_item, kind="stable")
    items = row_item[order]
    starts = np.flatnonzero(np.r_[True, items[1:] != items[:-1]]) if len(items) else np.zeros(0)
    sizes = np.diff(np.r_[starts, len(items)]).astype(np.int64)
    table = np.full((len(starts), int(sizes.max()) if len(sizes) else 0), -1, dtype=np.int64)
    column = np.arange(len(items)) - np.repeat(starts, sizes)
    table[np.repeat(np.arange(len(starts)), sizes), column] = order
    return table, sizes


def humans_interval(
    coded: CodedStudy,
    rule: str,
    how: str,
    priority: np.ndarray | None,
    replicates: int,
    rng: np.random.Generator,
) -> tuple[float | None, float | None]:
    """The two-stage percentile interval of the task score (None, None when not computable)."""
    n_labels = len(coded.label_unit)
    if replicates <= 0 or n_labels == 0 or n_labels > MAX_LABELS:
        return None, None
    table, sizes = _rows_by_item(np.asarray(coded.row_item, dtype=np.int64))
    n_rows = len(coded.row_item)
    totals = np.full(replicates, np.nan)
    for r in range(replicates):
        # Stage 2 (people): each item's answers drawn with replacement, as many as it has.
        draw = np.floor(rng.random(table.shape) * sizes[:, None]).astype(np.int64)
        picked = np.take_along_axis(table, draw, axis=1)[np.arange(table.shape[1]) < sizes[:, None]]
        weight = np.bincount(picked, minlength=n_rows)[coded.label_row]
        labels = np.repeat(np.arange(n_labels), weight)
        if coded.kind == "regression":
            pred = agg.aggregate_ratings(
                coded.label_unit[labels], coded.label_number[labels], coded.n_units, how
            )
        else:
            votes = agg.unit_votes(
                coded.label_unit[labels], coded.label_code[labels], coded.n_units
            )
            pred = agg.majority_vote(votes, rule, rng, priority).pred
        # Stage 1 (items): the scorer's own resampling units (items, questions, minimal pairs).
        values = scorer_for(coded, pred).replicates(1, rng)
        point = {m: (float(v[0]) if len(v) else None) for m, v in values.items()}
        total = task_score(point)
        if total is not None:
            totals[r] = total
    return percentile_interval(totals)
