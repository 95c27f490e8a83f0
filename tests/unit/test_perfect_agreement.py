"""Agreement coefficients where every item agreed (issue 39, item 10): every bootstrap resample
of units that all agree agrees too, so the percentile interval is [1, 1]. α, κ and AC1 are then
quoted with the score-type interval built from Wilson's bound on the share of agreeing units,
chance agreement held fixed (report/stats/agreement.py:perfect_agreement_interval): never an
interval of width zero. A single item, whose every resample is itself, gets none.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from annotate.report.stats import agreement as agr
from annotate.report.stats.gwet import gwet_ac1

N_ITEMS, RATERS = 60, 5


@pytest.fixture
def unanimous(tmp_path):
    """60 items, 5 raters each, all agreeing: 36 'entailment' items and 24 'not'."""
    path = tmp_path / "unanimous.csv"
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["item", "annotator", "label"])
        for i in range(N_ITEMS):
            label = "entailment" if i < 36 else "not_entailment"
            for r in range(RATERS):
                out.writerow([f"ax-{i}", f"r{r}", label])
    return path


def wilson_low(n: int) -> float:
    return float(proportion_confint(n, n, alpha=0.05, method="wilson")[0])


def test_the_file_report_never_quotes_a_zero_width_interval(cli, unanimous):
    report = cli("agreement", unanimous, "--format", "json", "--bootstrap", "200").json()
    # Chance disagreement: two of the 300 labels (180 and 120 of each value) drawn at random
    # differ; for κ and AC1 their own chance agreement.
    n, a, b = 300, 180, 120
    alpha_chance = (n * n - a * a - b * b) / (n * (n - 1))
    pi = np.array([a, b]) / n
    expected = {
        "krippendorff_alpha": 1 - (1 - wilson_low(N_ITEMS)) / alpha_chance,
        "fleiss_kappa": 1 - (1 - wilson_low(N_ITEMS)) / (1 - (pi * pi).sum()),
        "gwet_ac1": 1 - (1 - wilson_low(N_ITEMS)) / (1 - (pi * (1 - pi)).sum()),
    }
    for name, low in expected.items():
        c = report[name]
        assert c["value"] == pytest.approx(1.0), name
        assert c["ci_high"] == 1.0 and c["ci_low"] == pytest.approx(low), name
        assert c["ci_low"] < 0.95, name  # 60 items cannot pin agreement to 1
        assert "score interval over 60 units" in c["note"], name
    text = cli("agreement", unanimous, "--bootstrap", "200").stdout
    assert "[1.00, 1.00]" not in text and "[1.000, 1.000]" not in text
    assert "all agree" in text


def test_more_items_narrow_it_and_clusters_are_the_units():
    def alpha_low(items: int, cluster: np.ndarray | None = None) -> float:
        unit = np.repeat(np.arange(items), 3)
        code = unit % 2
        e = agr.krippendorff_alpha(
            unit, code, items, replicates=100, rng=np.random.default_rng(0), cluster=cluster
        )
        assert e.value == 1.0 and e.ci_high == 1.0 and e.ci_low is not None
        return e.ci_low

    assert alpha_low(40) < alpha_low(400) < 1.0
    # 400 units in 40 questions of 10: Wilson's bound over 40 resampled units, not 400
    # (chance: two of the 1,200 labels, 600 of each value, differ).
    questions = np.arange(400) // 10
    chance = (1200 * 1200 - 2 * 600 * 600) / (1200 * 1199)
    assert alpha_low(400, questions) == pytest.approx(1 - (1 - wilson_low(40)) / chance)


def test_imperfect_agreement_keeps_the_bootstrap():
    rng = np.random.default_rng(3)
    table = np.zeros((50, 2), dtype=int)
    table[:, 0] = 3
    table[:5] = [1, 2]  # five split items
    e, _ = gwet_ac1(table, replicates=300, rng=rng)
    fk, _, _ = agr.fleiss_kappa(table, 3, replicates=300, rng=np.random.default_rng(3))
    for est in (e, fk):
        assert est.value < 1 and est.note is None
        assert est.ci_low < est.value < est.ci_high < 1.0


def split_3_to_2(items: int) -> list[agr.Estimate]:
    """α, Fleiss' κ and AC1 with 200 bootstrap replicates of `items` items, each labelled
    3 to 2 by five raters."""
    unit = np.repeat(np.arange(items), 5)
    code = np.tile([0, 0, 0, 1, 1], items)
    table = np.tile([3, 2], (items, 1))
    alpha = agr.krippendorff_alpha(unit, code, items, replicates=200, rng=np.random.default_rng(0))
    fk, _, _ = agr.fleiss_kappa(table, 5, replicates=200, rng=np.random.default_rng(0))
    ac1, _ = gwet_ac1(table, replicates=200, rng=np.random.default_rng(0))
    return [alpha, fk, ac1]


def test_one_item_gets_no_interval_rather_than_one_of_width_zero(cli, tmp_path):
    """A single item split 3 to 2: every resample is that item again, so the bootstrap's
    interval has width zero; no interval is quoted, and the note says why."""
    for est in split_3_to_2(items=1):
        assert est.value is not None and est.value < 1
        assert (est.ci_low, est.ci_high) == (None, None)
        assert "one item" in est.note
    path = tmp_path / "one.csv"
    path.write_text(
        "item,annotator,label\n" + "".join(f"x,r{r},{'a' if r < 3 else 'b'}\n" for r in range(5))
    )
    report = cli("agreement", path, "--format", "json", "--bootstrap", "200").json()
    for name in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        assert report[name]["ci_low"] is None and "one item" in report[name]["note"], name


def test_items_all_labelled_alike_get_no_interval_rather_than_one_of_width_zero(cli, tmp_path):
    """Forty items, each split 3 to 2 the same way: every resample is the same table, so the
    bootstrap's interval has width zero; no interval is quoted, and the note says why. One
    item labelled otherwise brings the bootstrap back."""
    table = np.tile([3, 2], (40, 1))
    for est in split_3_to_2(items=40):
        assert est.value is not None and est.value < 1
        assert (est.ci_low, est.ci_high) == (None, None)
        assert "all 40 items have the same labels" in est.note
    # Questions of alike items, as many in each, are alike too; unequal questions are not.
    assert agr.units_alike(table, np.ones(40, bool), np.arange(40) // 4)
    assert not agr.units_alike(table, np.ones(40, bool), np.r_[np.zeros(10), np.arange(30)])

    path = tmp_path / "alike.csv"
    rows = [f"x{i},r{r},{'a' if r < 3 else 'b'}\n" for i in range(40) for r in range(5)]
    path.write_text("item,annotator,label\n" + "".join(rows))
    report = cli("agreement", path, "--format", "json", "--bootstrap", "200").json()
    for name in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        assert report[name]["ci_low"] is None, name
        assert "same labels" in report[name]["note"], name
    assert "same labels" in cli("agreement", path, "--bootstrap", "200").stdout
    path.write_text(path.read_text() + "".join(f"y,r{r},a\n" for r in range(4)) + "y,r4,b\n")
    report = cli("agreement", path, "--format", "json", "--bootstrap", "200").json()
    for name in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        c = report[name]
        assert c["ci_low"] < c["value"] < c["ci_high"] and "note" not in c, name
