"""What the engine's completion rule makes of the loaded labels: the labels each item still
takes and the items `stop_when_decided` stopped before k. Below the report's sections and its
statistics, so the report and `annotate agreement --study` follow one rule for Fleiss' κ."""

from __future__ import annotations

import numpy as np

from annotate import completion
from annotate.report.aggregation.study import Aggregated
from annotate.report.data.coding import CodedStudy

KAPPA_NOTE = (
    "not computed: Fleiss' κ needs k labels on every item, and with stop_when_decided only "
    "the contested items reach k, so κ over them would describe a biased subset"
)


def items_wanting(coded: CodedStudy, final: Aggregated, rule: completion.Rule) -> np.ndarray:
    """Labels each sampled item still takes, per the engine's rule, from the labels loaded
    (0: complete). The shared definition, so the report, `status` and `check` agree."""
    n = np.bincount(coded.row_item, minlength=coded.n_items)
    wanted = np.maximum(rule.k - n, 0)
    if not rule.needs_votes or final.votes is None:
        return wanted
    units_of: list[list[int]] = [[] for _ in range(coded.n_items)]
    for u, i in enumerate(coded.unit_item.tolist()):
        units_of[i].append(u)
    counts = final.votes.counts
    return np.array(
        [
            completion.labels_wanted([counts[u].tolist() for u in units], int(n[i]), rule)
            for i, units in enumerate(units_of)
        ],
        dtype=np.int64,
    )


def decided_early(coded: CodedStudy, wanted: np.ndarray, rule: completion.Rule) -> int:
    """Items complete with fewer than k labels (`wanted`: items_wanting): stopped early, which
    leaves Fleiss' κ uncomputed (KAPPA_NOTE)."""
    n = np.bincount(coded.row_item, minlength=coded.n_items)
    return int(((n > 0) & (wanted == 0) & (n < rule.k)).sum())
