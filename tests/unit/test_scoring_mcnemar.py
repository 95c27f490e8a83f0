"""The one McNemar test: statsmodels' exact test, and the two-sided binomial p it stands for."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from annotate.scoring.mcnemar import mcnemar_exact


@pytest.mark.parametrize(("b", "c"), [(5, 1), (0, 3), (4, 4), (12, 2)])
def test_exact_p_is_the_two_sided_binomial_on_the_discordant_items(b: int, c: int):
    human = np.array([True] * 7 + [True] * b + [False] * c + [False] * 2)
    model = np.array([True] * 7 + [False] * b + [True] * c + [False] * 2)
    test = mcnemar_exact(human, model)
    assert (test.both_right, test.human_only_right, test.model_only_right) == (7, b, c)
    assert test.neither_right == 2 and test.discordant == b + c
    assert test.statistic == min(b, c)
    assert test.p_value == pytest.approx(min(1.0, 2 * stats.binom.cdf(min(b, c), b + c, 0.5)))


def test_no_discordant_item_gives_p_one():
    right = np.array([True, False, True])
    test = mcnemar_exact(right, right)
    assert test.discordant == 0 and test.p_value == 1.0
