"""McNemar's exact test: are the humans and a model right on the same items, or does one of
them win on the items where exactly one is right? The one implementation behind `compare` and
the report's model rows."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class McNemar:
    """The paired right/wrong table of two answerers on the same items, and the test."""

    both_right: int
    human_only_right: int
    model_only_right: int
    neither_right: int
    statistic: float
    """The smaller discordant count (the exact test's statistic)."""
    p_value: float
    """Two-sided exact p; 1.0 when no item is discordant."""

    @property
    def discordant(self) -> int:
        return self.human_only_right + self.model_only_right


METHOD = "exact (binomial on the discordant items), statsmodels"


def mcnemar_exact(human_right: np.ndarray, model_right: np.ndarray) -> McNemar:
    """McNemar's exact test (statsmodels) on per-item right/wrong of the humans and a model;
    both arrays cover the same items (those both answered)."""
    from statsmodels.stats.contingency_tables import mcnemar  # heavy: only with a model

    human_right = np.asarray(human_right, dtype=bool)
    model_right = np.asarray(model_right, dtype=bool)
    both = int((human_right & model_right).sum())
    human_only = int((human_right & ~model_right).sum())
    model_only = int((model_right & ~human_right).sum())
    neither = int((~human_right & ~model_right).sum())
    result = mcnemar([[both, human_only], [model_only, neither]], exact=True)
    return McNemar(
        both_right=both,
        human_only_right=human_only,
        model_only_right=model_only,
        neither_right=neither,
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
    )
