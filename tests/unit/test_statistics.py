"""The statistics of scoring and report (metrics, intervals, aggregation, agreement) against
the reference implementations (sklearn, scipy, statsmodels, krippendorff) and hand-made cases:
what a report states must be what the standard scorers would say."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score, matthews_corrcoef
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss
from statsmodels.stats.proportion import proportion_confint

from annotate.report.aggregation.majority import (
    NO_DECISION,
    LabelSampler,
    aggregate_ratings,
    majority_vote,
    unit_votes,
)
from annotate.report.stats import agreement as agr
from annotate.scoring.intervals import percentile_interval, rng_for, weight_chunks, wilson_interval
from annotate.scoring.metrics import (
    RegressionScorer,
    classification_scorer,
    multi_answer_scorer,
    normalize_answer,
    record_scores,
)

CLASSES = ["entailment", "neutral", "contradiction"]


def votes(*units: list[int]):
    """Votes from lists of class codes, one list per unit."""
    unit = np.concatenate([[u] * len(c) for u, c in enumerate(units)]).astype(int)
    code = np.concatenate(units).astype(int)
    return unit_votes(unit, code, len(units))


# --- metrics ---------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_r3_accuracy_and_macro_f1_equal_sklearn_on_random_3_class_data(seed):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, 200)
    pred = np.where(rng.random(200) < 0.6, gold, rng.integers(0, 3, 200))
    scorer = classification_scorer(["accuracy", "macro_f1", "r3"], 3, gold, pred)
    point = scorer.point()
    assert point["r3"] == pytest.approx(matthews_corrcoef(gold, pred))
    assert point["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    assert point["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))


def test_binary_f1_and_mcc_equal_sklearn_for_the_positive_label():
    rng = np.random.default_rng(7)
    gold = rng.integers(0, 2, 150)
    pred = np.where(rng.random(150) < 0.7, gold, 1 - gold)
    point = classification_scorer(["f1", "mcc"], 2, gold, pred, positive=0).point()
    assert point["f1"] == pytest.approx(f1_score(gold, pred, pos_label=0))
    assert point["mcc"] == pytest.approx(matthews_corrcoef(gold, pred))


def test_an_unsettled_tie_counts_as_a_wrong_answer_of_its_own():
    gold = np.array([0, 1, 2, 0, 1])
    pred = np.array([0, 1, NO_DECISION, NO_DECISION, 1])
    point = classification_scorer(["accuracy", "mcc"], 3, gold, pred).point()
    assert point["accuracy"] == pytest.approx(3 / 5)
    as_text = ["e", "n", "none", "none", "n"]
    assert point["mcc"] == pytest.approx(matthews_corrcoef(["e", "n", "c", "e", "n"], as_text))


def test_with_two_classes_an_unsettled_tie_counts_as_the_wrong_answer():
    """Abstaining never scores better than answering wrong: an undecided negative is a false
    positive for F1 (as its own class it was a true negative), for MCC and MultiRC's F1a."""
    rng = np.random.default_rng(11)
    gold = rng.integers(0, 2, 120)
    pred = np.where(rng.random(120) < 0.75, gold, 1 - gold)
    undecided = rng.random(120) < 0.15
    wrong = np.where(undecided, 1 - gold, pred)
    point = classification_scorer(
        ["accuracy", "f1", "mcc"], 2, gold, np.where(undecided, NO_DECISION, pred), positive=1
    ).point()
    assert point["accuracy"] == pytest.approx(accuracy_score(gold, wrong))
    assert point["f1"] == pytest.approx(f1_score(gold, wrong, pos_label=1))
    assert point["mcc"] == pytest.approx(matthews_corrcoef(gold, wrong))
    question = np.arange(120) // 4
    f1a = multi_answer_scorer(
        gold, np.where(undecided, NO_DECISION, pred), question, 30, positive=1
    ).point()["f1a"]
    assert f1a == pytest.approx(f1_score(gold, wrong, pos_label=1))


def test_a_bootstrap_replicate_where_mcc_is_undefined_is_left_out_not_zero():
    # Six items all right, one of them negative: a resample without it has one class only.
    gold = np.array([0, 1, 1, 1, 1, 1])
    scorer = classification_scorer(["mcc"], 2, gold, gold)
    assert scorer.point()["mcc"] == 1.0
    reps = scorer.replicates(500, rng_for(3, "mcc"))["mcc"]
    assert np.isnan(reps).any() and not (reps == 0).any()
    assert percentile_interval(reps) == (1.0, 1.0)  # the defined resamples: every one is 1


@pytest.mark.filterwarnings("ignore:A single label was found")
def test_mcc_is_zero_when_undefined_as_sklearn_says():
    gold = np.array([0, 0, 0])
    assert classification_scorer(["mcc"], 2, gold, gold).point()["mcc"] == 0.0
    assert matthews_corrcoef(gold, gold) == 0.0


def test_groups_score_each_annotator_on_their_own_items():
    gold = np.array([0, 1, 0, 1, 1, 0])
    pred = np.array([0, 1, 1, 1, 0, 0])
    group = np.array([0, 0, 0, 1, 1, 1])
    per = classification_scorer(["accuracy"], 2, gold, pred).by_group(group, 3)
    assert [p["accuracy"] for p in per] == [pytest.approx(2 / 3), pytest.approx(2 / 3), None]


def test_gender_parity_counts_minimal_pairs_predicted_alike():
    gold = np.array([0, 0, 1, 1, 0, 0])
    pred = np.array([0, 0, 1, 0, 1, 1])
    pair = np.array([1, 1, 2, 2, 3, -1])  # item 4's partner is missing; item 5 has none
    point = classification_scorer(["gender_parity", "accuracy"], 2, gold, pred, pair=pair).point()
    assert point["gender_parity"] == pytest.approx(1 / 2)
    assert point["accuracy"] == pytest.approx(3 / 6)


def test_regression_point_and_bootstrap_match_scipy():
    rng = np.random.default_rng(3)
    gold = rng.uniform(0, 5, 40).round(1)
    pred = np.clip(gold + rng.normal(0, 1, 40), 0, 5).round(0)  # ties in the ratings
    scorer = RegressionScorer(["pearson", "spearman"], gold, pred)
    point = scorer.point()
    assert point["pearson"] == pytest.approx(stats.pearsonr(gold, pred)[0])
    assert point["spearman"] == pytest.approx(stats.spearmanr(gold, pred)[0])
    reps = scorer.replicates(5, rng_for(9, "scores"))
    weights = next(weight_chunks(40, 5, rng_for(9, "scores")))
    for b in range(5):
        idx = np.repeat(np.arange(40), weights[b].astype(int))
        assert reps["pearson"][b] == pytest.approx(stats.pearsonr(gold[idx], pred[idx])[0])
        assert reps["spearman"][b] == pytest.approx(stats.spearmanr(gold[idx], pred[idx])[0])


def test_constant_ratings_have_no_correlation_rather_than_a_crash():
    scorer = RegressionScorer(
        ["pearson", "spearman"], np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])
    )
    assert scorer.point() == {"pearson": None, "spearman": None}


def test_record_normalisation_and_max_over_gold_answers():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert record_scores("Beatles", ["The Beatles"]) == (1.0, 1.0)
    f1, em = record_scores("Paul McCartney", ["Sir Paul", "McCartney"])
    assert (f1, em) == (pytest.approx(2 / 3), 0.0)
    assert record_scores(None, ["x"]) == (0.0, 0.0)


# --- aggregation -----------------------------------------------------------------------------


def test_majority_without_ties_ignores_the_rule():
    v = votes([0, 0, 1], [2, 2, 2, 1, 0])
    for rule in ("random", "abstain", "dev-majority-class", "extra-annotator"):
        result = majority_vote(v, rule, np.random.default_rng(0))
        assert result.pred.tolist() == [0, 2] and not result.tied.any()


def test_tie_rule_abstain_and_extra_annotator_leave_the_tie_undecided():
    v = votes([0, 0, 1, 1, 2])
    abstain = majority_vote(v, "abstain", np.random.default_rng(0))
    assert abstain.pred.tolist() == [NO_DECISION] and abstain.resolution.tolist() == ["abstain"]
    extra = majority_vote(v, "extra-annotator", np.random.default_rng(0))
    assert extra.pred.tolist() == [NO_DECISION] and extra.resolution.tolist() == ["open"]


def test_tie_rule_dev_majority_class_prefers_the_commoner_dev_class():
    v = votes([0, 0, 1, 1, 2], [2, 2, 1, 1, 0])
    dev = np.array([10.0, 40.0, 5.0])  # neutral is the most common gold label in dev
    result = majority_vote(v, "dev-majority-class", np.random.default_rng(0), dev)
    assert (
        result.pred.tolist() == [1, 1] and result.resolution.tolist() == ["dev-majority-class"] * 2
    )
    # without dev counts: the first tied class in the task's label order
    fallback = majority_vote(v, "dev-majority-class", np.random.default_rng(0), None)
    assert fallback.pred.tolist() == [0, 1]


def test_tie_rule_random_picks_a_tied_class_reproducibly():
    v = votes(*([[0, 0, 1, 1, 2]] * 200))
    a = majority_vote(v, "random", np.random.default_rng(5))
    b = majority_vote(v, "random", np.random.default_rng(5))
    assert a.pred.tolist() == b.pred.tolist()
    assert set(a.pred.tolist()) == {0, 1}  # never the class with one vote
    assert 60 < (a.pred == 0).sum() < 140


def test_ratings_are_averaged_by_mean_or_median():
    unit = np.array([0, 0, 0, 1, 1, 1, 1])
    values = np.array([1.0, 2.0, 5.0, 0.0, 4.0, 3.0, 1.0])
    assert aggregate_ratings(unit, values, 3, "mean")[:2].tolist() == [pytest.approx(8 / 3), 2.0]
    median = aggregate_ratings(unit, values, 3, "median")
    assert median[:2].tolist() == [2.0, 2.0] and np.isnan(median[2])


def test_label_sampler_draws_k_distinct_labels_of_each_item():
    group = np.array([0, 0, 0, 0, 0, 1, 1, 1, 2, 2])
    sampler = LabelSampler(group)
    chosen, spare = sampler.draw(3, np.random.default_rng(1), extra=True)
    assert np.bincount(group[chosen], minlength=3).tolist() == [3, 3, 0]  # item 2 has only 2
    assert np.bincount(group[spare], minlength=3).tolist() == [1, 0, 0]
    assert not (chosen & spare).any()
    seen = {tuple(np.flatnonzero(sampler.draw(1, np.random.default_rng(s))[0])) for s in range(30)}
    assert len(seen) > 5  # different draws pick different labels


# --- agreement -------------------------------------------------------------------------------


def random_reliability(rng, coders=4, units=30, values=5, missing=0.25):
    data = rng.integers(1, values + 1, (coders, units)).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    coder, unit = np.nonzero(~np.isnan(data))
    return data, coder, unit, data[coder, unit]


@pytest.mark.parametrize("level", agr.LEVELS)
def test_alpha_and_its_bootstrap_sums_equal_the_krippendorff_package(level):
    rng = np.random.default_rng(11)
    data, _, unit, value = random_reliability(rng)
    code = value.astype(int)
    estimate = agr.krippendorff_alpha(unit, code, data.shape[1], level, value)
    assert estimate.value == pytest.approx(krippendorff.alpha(data, level_of_measurement=level))
    domain, index = agr._domain_and_index(code, value, level)
    stats_, finish = agr._alpha_stats(
        agr.counts_table(unit, index, data.shape[1], len(domain)), domain, level
    )
    assert finish(stats_.sum(axis=0)[None, :])[0] == pytest.approx(estimate.value)


def test_fleiss_bootstrap_sums_equal_statsmodels():
    rng = np.random.default_rng(2)
    table = rng.multinomial(6, [0.5, 0.3, 0.2], size=25)
    estimate, used, raters = agr.fleiss_kappa(table, 6, replicates=100, rng=rng_for(1, "f"))
    assert estimate.value == pytest.approx(sm_fleiss(table))
    assert (used, raters) == (25, 6)
    sums = agr._fleiss_stats(table, 6).sum(axis=0)[None, :]
    assert agr._fleiss_from_sums(sums, 6)[0] == pytest.approx(sm_fleiss(table))
    assert estimate.ci_low < estimate.value < estimate.ci_high


def test_pairwise_cohen_kappa_equals_sklearn_nominal_and_quadratic():
    rng = np.random.default_rng(8)
    n_items, names = 60, ["a", "b", "c"]
    labels = rng.integers(0, 6, (3, n_items))
    labels[1] = np.where(rng.random(n_items) < 0.6, labels[0], labels[1])
    present = rng.random((3, n_items)) < 0.8
    ann, unit = np.nonzero(present)
    code = labels[ann, unit]
    nominal = {(p["a"], p["b"]): p for p in agr.pairwise_cohen_kappa(unit, ann, code, names)}
    weighted = {
        (p["a"], p["b"]): p
        for p in agr.pairwise_cohen_kappa(unit, ann, code, names, code.astype(float))
    }
    for x, y in [(0, 1), (0, 2), (1, 2)]:
        both = present[x] & present[y]
        key = (names[x], names[y])
        assert nominal[key]["n"] == both.sum()
        assert nominal[key]["kappa"] == pytest.approx(
            cohen_kappa_score(labels[x][both], labels[y][both])
        )
        expected = cohen_kappa_score(
            labels[x][both], labels[y][both], labels=list(range(6)), weights="quadratic"
        )
        assert weighted[key]["kappa"] == pytest.approx(expected)


def test_histogram_orders_most_labels_and_strongest_agreement_first():
    top = np.array([5, 3, 4, 5, 2, 3, 1])
    n = np.array([5, 5, 5, 5, 5, 4, 1])
    assert agr.item_agreement_histogram(top, n) == {
        "5/5": 2,
        "4/5": 1,
        "3/5": 1,
        "2/5": 1,
        "3/4": 1,
        "1/1": 1,
    }


# --- intervals -------------------------------------------------------------------------------


def test_wilson_interval_equals_statsmodels():
    assert wilson_interval(93, 100) == pytest.approx(proportion_confint(93, 100, method="wilson"))
    assert wilson_interval(0, 0) == (None, None)


def test_bootstrap_draws_depend_only_on_the_seed():
    a = np.vstack(list(weight_chunks(50, 300, rng_for(4, "scores"))))
    b = np.vstack(list(weight_chunks(50, 300, rng_for(4, "scores"))))
    c = np.vstack(list(weight_chunks(50, 300, rng_for(5, "scores"))))
    assert a.shape == (300, 50) and (a.sum(axis=1) == 50).all()
    assert (a == b).all() and not (a == c).all()
    assert percentile_interval(np.array([np.nan, np.nan])) == (None, None)
