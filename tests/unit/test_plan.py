"""`annotate plan`: study size for a target interval half-width (issue 16)."""

from __future__ import annotations

import itertools
import math
import re
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from sqlmodel import Session, select

from annotate.cli.plan import _render
from annotate.report.build import study_report
from annotate.scoring.plan import (
    items_for_half_width,
    majority_accuracy,
    make_plan,
    pool_majority_accuracy,
    pool_vote_outcome,
    verify,
    vote_outcome,
    wilson_half_width,
)
from annotate.simulate import simulate
from annotate.store.models import Label
from tests.engine_helpers import rte_study


def test_majority_accuracy_is_the_binomial_tail():
    assert majority_accuracy([0.85], 2) == pytest.approx(0.85)
    # 3 annotators: all right or exactly two right
    assert majority_accuracy([0.85] * 3, 2) == pytest.approx(0.85**3 + 3 * 0.85**2 * 0.15)
    # 2 annotators, 2 classes: a 1-1 split is a coin toss
    assert majority_accuracy([0.8, 0.8], 2) == pytest.approx(0.64 + 0.32 / 2)
    # 3 classes, 3 annotators: wrong votes split over two classes, so 1-1-1 happens
    p, q = 0.6, 0.2
    exact = p**3 + 3 * p**2 * 0.4 + 6 * p * q * q / 3  # 3 right, 2 right, 1-1-1 with a third
    assert majority_accuracy([p] * 3, 3) == pytest.approx(exact)


def test_pool_accuracy_averages_every_subset_of_the_pilot():
    pool = [0.9, 0.8, 0.7]
    value, how = pool_majority_accuracy(pool, 2, 2)
    pairs = [(0.9, 0.8), (0.9, 0.7), (0.8, 0.7)]
    assert value == pytest.approx(np.mean([majority_accuracy(p, 2) for p in pairs]))
    assert "all 3 sets" in how


@pytest.mark.parametrize("rule", ["random", "abstain", "extra-annotator"])
def test_pool_outcome_is_exact_over_every_subset_under_each_tie_rule(rule):
    pool = [0.95, 0.9, 0.8, 0.7, 0.65, 0.6]
    subsets = list(itertools.combinations(pool, 4))
    each = [vote_outcome(s, 3, rule, float(np.mean(pool))) for s in subsets]
    value, how, extra = pool_vote_outcome(pool, 4, 3, tie_rule=rule)
    assert value == pytest.approx(np.mean([v for v, _ in each]), abs=1e-12)
    assert extra == pytest.approx(np.mean([e for _, e in each]), abs=1e-12)
    assert "all 15 sets of 4" in how


def _pilot_plan(
    right, answers, *, seed=0, half_width=0.03, k=5, assurance=0.8, task="superglue/rte", classes=2
):
    """A plan from a pilot of these counts (annotator i: right[i] of answers[i])."""
    return make_plan(
        task=task,
        n_classes=classes,
        k=k,
        half_width=half_width,
        accuracies=[r / n for r, n in zip(right, answers, strict=True)],
        seconds_per_item=10,
        seconds_source="assumed",
        annotators=k,
        training_items=6,
        hourly_rate=None,
        interval_method="Wilson",
        pilot="pilot",
        pilot_names=[f"a{i}" for i in range(len(right))],
        pilot_right=right,
        pilot_answers=answers,
        seed=seed,
        assurance=assurance,
    )


def test_the_pilots_posterior_interval_holds_the_point_and_narrows_with_more_items():
    """The majority accuracy's interval from a pilot of 20 answers each holds the point
    estimate; ten times the answers at the same accuracies gives a narrower interval."""
    right = [17, 15, 16, 18, 14, 19]
    small = _pilot_plan(right, [20] * 6)
    large = _pilot_plan([10 * r for r in right], [200] * 6)
    assert small.majority_accuracy == pytest.approx(large.majority_accuracy)  # same point
    for plan in (small, large):
        spread = plan.pilot_uncertainty
        assert spread is not None and spread.prior.startswith("Jeffreys")
        assert spread.majority_accuracy_low <= plan.majority_accuracy
        assert plan.majority_accuracy <= spread.majority_accuracy_high
    width = {
        name: p.pilot_uncertainty.majority_accuracy_high - p.pilot_uncertainty.majority_accuracy_low
        for name, p in (("small", small), ("large", large))
    }
    assert width["large"] < width["small"] / 2
    # each annotator's own interval narrows too, and holds their point accuracy
    pairs = zip(small.pilot_uncertainty.annotators, large.pilot_uncertainty.annotators, strict=True)
    for a, b in pairs:
        assert a.interval_low <= a.accuracy <= a.interval_high
        assert b.interval_high - b.interval_low < a.interval_high - a.interval_low


def test_the_docs_pilot_figures():
    """docs/guide/protocols.md quotes the plan of its example's pilot (the page's own run
    checks 196 and 118), at 97.5% assurance, and of ten times its answers."""
    right = [19, 15, 16, 19, 16]
    plan = _pilot_plan(right, [20] * 5)
    spread = plan.pilot_uncertainty
    assert (plan.items, spread.point_items) == (196, 118)
    assert _pilot_plan(right, [20] * 5, assurance=0.975).items == 325
    assert round(plan.majority_accuracy * 100, 1) == 97.8
    assert [
        round(x * 100, 1) for x in (spread.majority_accuracy_low, spread.majority_accuracy_high)
    ] == [91.8, 99.3]
    tenfold = _pilot_plan([10 * r for r in right], [200] * 5)
    low, high = (
        tenfold.pilot_uncertainty.majority_accuracy_low,
        tenfold.pilot_uncertainty.majority_accuracy_high,
    )
    assert [round(low * 100, 1), round(high * 100, 1)] == [96.7, 98.6]
    assert tenfold.items == 133


def test_a_small_pilot_plans_at_least_the_point_plans_items():
    """A pilot of ten answers each is sized for 80% assurance: more items than its point
    estimate alone asks for, which are still stated; at 97.5% assurance, at the lower end of
    its 95% interval, more still."""
    plan = _pilot_plan([9, 8, 9, 7, 8], [10] * 5)
    point = items_for_half_width(plan.majority_accuracy, 0.03)
    assert plan.pilot_uncertainty.point_items == point
    assert plan.items > point
    surer = _pilot_plan([9, 8, 9, 7, 8], [10] * 5, assurance=0.975)
    assert surer.items > plan.items
    low = surer.pilot_uncertainty.majority_accuracy_low
    assert surer.planning_accuracy == pytest.approx(low, abs=1e-3)
    assert plan.half_width <= 0.03
    assert plan.test_labels == plan.items * 5
    # a pilot whose every annotator was always right: the point (1.0) is outside the
    # interval, and still no fewer items than it would plan
    perfect = _pilot_plan([10] * 5, [10] * 5)
    assert perfect.majority_accuracy == pytest.approx(1.0)
    assert perfect.items >= perfect.pilot_uncertainty.point_items


def test_a_pilot_near_chance_is_sized_at_its_point_estimate_and_says_so(capsys):
    """Near 50% the point estimate can be nearer 50% than the assured accuracy: the items are
    then sized at the point estimate itself, on its own side of 50% (here below it, where the
    draws' median is above), and the plan says so instead of naming the assurance."""
    right = [2, 3, 2, 0, 4, 4]  # of 6 each, on a 3-class task: majority of 5 at 48%
    plan = _pilot_plan(right, [6] * 6, half_width=0.05, task="superglue/cb", classes=3)
    spread = plan.pilot_uncertainty
    assert plan.majority_accuracy < 0.5 < spread.majority_accuracy_median
    assert plan.planning_accuracy == plan.majority_accuracy
    assert spread.sized_at == "the point estimate, nearer 50% than 80% assurance asks"
    assert plan.items == spread.point_items
    row = next(row for row in plan.width_table if row.items == plan.items)
    assert row.interval_low < plan.majority_accuracy < row.interval_high
    _render(plan, None)
    said = " ".join(capsys.readouterr().out.split())
    assert "Items sized at 48.0% (the point estimate" in said
    assert "or farther with at least 80% probability" in said


def test_the_posterior_figures_are_seeded():
    a = _pilot_plan([9, 8, 9, 7, 8, 6], [10] * 6, seed=4)
    b = _pilot_plan([9, 8, 9, 7, 8, 6], [10] * 6, seed=4)
    other = _pilot_plan([9, 8, 9, 7, 8, 6], [10] * 6, seed=5)
    assert a == b
    assert verify(a, 30, seed=4) == verify(b, 30, seed=4)
    assert (
        a.pilot_uncertainty.majority_accuracy_low != other.pilot_uncertainty.majority_accuracy_low
    )
    assert a.pilot_uncertainty.seed == 4


def test_verify_draws_each_studys_accuracies_from_the_pilots_posterior():
    """Each simulated study has its own annotators' accuracies, drawn from the posterior,
    and its interval is checked against its own majority accuracy."""
    plan = _pilot_plan([9, 8, 9, 7, 8], [10] * 5, half_width=0.05)
    drawn = verify(plan, 200, seed=1)
    fixed = verify(plan, 200, seed=1, accuracies=list(plan.pilot_accuracies.values()),
                   posterior=False)  # fmt: skip
    assert drawn.posterior and not fixed.posterior
    assert fixed.true_majority_accuracy == plan.majority_accuracy
    # the posterior's mean majority accuracy sits below the point estimate of 8.2/10 each
    assert drawn.true_majority_accuracy < plan.majority_accuracy
    assert drawn.coverage >= 0.9
    # sized for 80% assurance: most studies come in at or under the target
    assert drawn.share_within_target >= 0.6


@pytest.mark.parametrize("assurance", [0.6, 0.8, 0.95])
def test_the_assurance_is_the_share_of_draws_the_items_suffice_for(assurance):
    """Items sized for assurance A reach the target half-width at the majority accuracy of
    (about) a share A of the posterior's draws, recomputed here from the draws themselves
    with the Wilson half-width's closed form: no more, no fewer (one item less misses it)."""
    import numpy as np

    from annotate.scoring.plan import (
        POSTERIOR_DRAWS,
        _posterior_rng,
        pool_outcome_draws,
        posterior_accuracies,
    )

    right, answers = [9, 8, 9, 7, 8], [10] * 5
    plan = _pilot_plan(right, answers, assurance=assurance, half_width=0.04)
    pools = posterior_accuracies(right, answers, POSTERIOR_DRAWS, _posterior_rng(0))
    majority, _ = pool_outcome_draws(pools, 5, 2)

    def reached(n: int) -> float:
        z = 1.959963984540054
        p = majority
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return float(np.mean(half <= 0.04 + 1e-12))

    assert reached(plan.items) >= assurance - 0.005
    assert reached(plan.items - 1) < assurance + 0.005


def test_items_are_the_smallest_n_that_reach_the_half_width():
    n = items_for_half_width(0.97, 0.03)
    assert wilson_half_width(0.97, n) <= 0.03 < wilson_half_width(0.97, n - 1)


def test_acceptance_rte_plan_and_its_verification(cli):
    r = cli(
        "plan",
        "--task",
        "superglue/rte",
        "--accuracy",
        "0.85",
        "--k",
        "5",
        "--half-width",
        "0.03",
        "--format",
        "json",
        "--verify",
        "200",
    )
    assert r.code == 0, r.stderr
    plan = r.json()
    assert plan["items"] > 0 and plan["half_width"] <= 0.03
    assert plan["test_labels"] == plan["items"] * 5
    assert plan["majority_accuracy"] == pytest.approx(majority_accuracy([0.85] * 5, 2))
    assert plan["items"] in [row["items"] for row in plan["width_table"]]
    check = plan["verify"]
    assert check["studies"] == 200
    assert abs(check["mean_half_width"] - 0.03) <= 0.003  # within 10% of the target
    assert check["coverage"] >= 0.94


def test_annotators_at_or_below_chance_are_warned_of(cli):
    """A majority of annotators at chance is no better than one (below chance, worse): the
    plan still sizes the study, and says why its figures are doubtful."""
    base = ("plan", "--half-width", "0.05")
    at = cli(*base, "--task", "superglue/rte", "--accuracy", "0.5")
    assert at.code == 0, at.stderr
    assert "warning: annotators at accuracy 0.500 are at or below chance for 2 classes" in (
        at.stderr
    )
    below = cli(*base, "--task", "superglue/cb", "--accuracy", "0.3", "--format", "json")
    plan = below.json()
    assert plan["majority_accuracy"] < 0.3 and len(plan["warnings"]) == 1
    assert "a majority of 5 (0.279) is no better than one annotator" in plan["warnings"][0]
    above = cli(*base, "--task", "superglue/cb", "--accuracy", "0.34", "--format", "json")
    assert above.json()["warnings"] == []


def test_hours_and_cost(cli):
    r = cli(
        "plan",
        "--task",
        "superglue/rte",
        "--accuracy",
        "0.9",
        "--half-width",
        "0.05",
        "--seconds-per-item",
        "36",
        "--set",
        "hourly_rate=20",
        "--format",
        "json",
    )
    plan = r.json()
    labels = plan["test_labels"] + plan["training_labels"]
    assert plan["annotator_hours"] == pytest.approx(labels * 36 / 3600)
    assert plan["cost"] == pytest.approx(plan["annotator_hours"] * 20)
    assert plan["training_labels"] == 5 * 30  # superglue-2019: k = 5 annotators x 30 items


def test_a_time_that_is_not_a_number_is_refused(cli):
    """`--seconds-per-item inf` printed "Annotator-hours: inf" (a rate of nan or inf: below)."""
    base = ("plan", "--task", "superglue/rte", "--accuracy", "0.9", "--half-width", "0.05")
    r = cli(*base, "--seconds-per-item", "inf")
    assert r.code == 1 and "--seconds-per-item must be a number of seconds, not inf" in r.stderr


def test_the_table_view_names_items_and_the_verification(cli):
    r = cli(
        "plan",
        "--task",
        "superglue/rte",
        "--accuracy",
        "0.85",
        "--half-width",
        "0.03",
        "--verify",
        "50",
    )
    assert r.code == 0, r.stderr
    assert "134 test items for ±3.0 points" in r.stdout
    assert "Verified by 50 seeded studies of 134 items" in r.stdout
    assert "aggregation layer" in r.stdout


def pilot_protocol(workspace) -> str:
    from annotate.protocol.studies import load_study

    return load_study(workspace.engine, "pilot").protocol.name


def test_plan_from_a_pilot_study(cli, workspace, tmp_path):
    rte_study(workspace.engine, tmp_path, name="pilot", test=40, gate_threshold=0.0)
    simulate(
        workspace.engine, "pilot", 6, 0.8, seed=3, accuracies=[0.95, 0.9, 0.85, 0.8, 0.75, 0.7]
    )
    r = cli(
        "plan", "--pilot", "pilot", "--half-width", "0.04", "--format", "json", "--verify", "20"
    )
    assert r.code == 0, r.stderr
    plan = r.json()
    assert plan["task"] == "superglue/rte"
    assert set(plan["pilot_accuracies"]) == {f"sim{i}" for i in range(1, 7)}
    assert "all 6 sets of 5" in plan["majority_accuracy_method"]
    # simulate times both phases: training labels take the pilot's training median
    assert plan["seconds_source"].startswith("medians of pilot pilot: per test answer")
    assert plan["annotator_accuracy"] == pytest.approx(
        np.mean(list(plan["pilot_accuracies"].values()))
    )
    # the protocol planned with is named, and the pilot's own where it ran another
    (named,) = [a for a in plan["assumptions"] if a.startswith("the study follows protocol")]
    assert named.startswith("the study follows protocol superglue-2019 (30 training items")
    assert named.endswith(f"; the pilot ran {pilot_protocol(workspace)}")


def test_the_pilot_plans_json_has_the_uncertainty_beside_the_point_figures(
    cli, workspace, tmp_path
):
    rte_study(workspace.engine, tmp_path, name="pilot", test=20, gate_threshold=0.0)
    simulate(workspace.engine, "pilot", 5, 0.8, seed=3, accuracies=[0.9, 0.85, 0.8, 0.8, 0.75])
    args = ("plan", "--pilot", "pilot", "--half-width", "0.04", "--seed", "2")
    r = cli(*args, "--format", "json", "--verify", "30")
    assert r.code == 0, r.stderr
    plan = r.json()
    # 20 answers each leave the majority accuracy uncertain: more items than the point's
    assert plan["items"] > items_for_half_width(plan["majority_accuracy"], 0.04)
    spread = plan["pilot_uncertainty"]
    assert spread["prior"] == "Jeffreys Beta(1/2, 1/2)"
    assert spread["draws"] == 10_000 and spread["seed"] == 2 and spread["level"] == 0.95
    assert spread["majority_accuracy_low"] <= spread["majority_accuracy_median"]
    assert spread["majority_accuracy_median"] <= spread["majority_accuracy_high"]
    assert spread["majority_accuracy_low"] < plan["planning_accuracy"]
    assert plan["planning_accuracy"] <= plan["majority_accuracy"]
    assert plan["items"] >= spread["point_items"]
    assert spread["assurance"] == 0.8 and spread["sized_at"] == "for 80% assurance"
    people = {a["name"]: a for a in spread["annotators"]}
    assert set(people) == set(plan["pilot_accuracies"])
    for name, a in people.items():
        assert a["answers"] == 20 and a["accuracy"] == plan["pilot_accuracies"][name]
        assert a["right"] == round(a["accuracy"] * 20)
    assert plan["verify"]["posterior"] is True
    assert 0 <= plan["verify"]["share_within_target"] <= 1
    # the table says the same, with the point estimate named as such
    table = cli(*args).stdout
    assert f"{plan['items']} test items" in table
    assert "the point estimate alone would plan" in table
    assert "Pilot annotators (Jeffreys posterior)" in table


def test_training_labels_take_the_pilots_training_median(cli, workspace, tmp_path):
    """A pilot whose training answers took twice as long as its test answers: the plan's
    hours count training labels at the training median, and say so."""
    rte_study(workspace.engine, tmp_path, name="pilot", test=20, gate_threshold=0.0)
    simulate(workspace.engine, "pilot", 5, 0.8, seed=3)
    with Session(workspace.engine) as session:
        for label in session.exec(select(Label)).all():
            seconds = 20 if label.phase == "training" else 10
            label.answered_at = label.shown_at + timedelta(seconds=seconds)
            session.add(label)
        session.commit()
    r = cli("plan", "--pilot", "pilot", "--half-width", "0.05", "--format", "json")
    assert r.code == 0, r.stderr
    plan = r.json()
    # (SQLite's julianday times answers to about a millisecond)
    assert plan["annotator_hours"] == pytest.approx(
        (plan["test_labels"] * 10 + plan["training_labels"] * 20) / 3600, rel=1e-3
    )
    assert plan["seconds_per_item"] == pytest.approx(10, abs=0.01)
    assert plan["training_seconds_per_item"] == pytest.approx(20, abs=0.01)
    assert "per training answer for training labels" in plan["seconds_source"]
    table = cli("plan", "--pilot", "pilot", "--half-width", "0.05").stdout
    assert "at 10 s per test answer and 20 s per training answer" in table


def test_a_pilot_without_timed_training_answers_times_training_by_the_test_median(
    cli, workspace, tmp_path
):
    rte_study(workspace.engine, tmp_path, name="pilot", test=20, gate_threshold=0.0)
    simulate(workspace.engine, "pilot", 5, 0.8, seed=3)
    with Session(workspace.engine) as session:
        for label in session.exec(select(Label).where(Label.phase == "training")).all():
            label.answered_at = None  # as an import without times
            session.add(label)
        session.commit()
    plan = cli("plan", "--pilot", "pilot", "--half-width", "0.05", "--format", "json").json()
    assert plan["training_seconds_per_item"] == plan["seconds_per_item"]
    assert "for training labels too" in plan["seconds_source"]


def test_a_pilot_of_another_task_is_refused(cli, workspace, tmp_path):
    rte_study(workspace.engine, tmp_path, name="pilot", test=20, gate_threshold=0.0)
    simulate(workspace.engine, "pilot", 5, 0.8, seed=3)
    r = cli("plan", "--pilot", "pilot", "--task", "glue/mnli-m", "--half-width", "0.04")
    assert r.code == 1
    assert "pilot pilot is a study of superglue/rte, not glue/mnli-m" in r.stderr
    assert "Traceback" not in r.stderr
    same = cli("plan", "--pilot", "pilot", "--task", "superglue/rte", "--half-width", "0.04")
    assert same.code == 0, same.stderr
    # Five pilot annotators and k=5: one set of them, said as such; seconds to three figures.
    assert "exact for the pilot's 5 annotators" in same.stdout
    assert "all 1 sets" not in same.stdout
    seconds = re.search(r"at ([0-9.]+) s per test answer", same.stdout)
    assert seconds is not None and len(seconds[1].replace(".", "").lstrip("0")) <= 3


def test_ties_follow_the_protocols_tie_rule():
    """abstain scores a tie as wrong; extra-annotator adds labels until it breaks."""
    # 2 annotators, 2 classes: 0.64 both right, 0.32 a 1-1 split
    assert majority_accuracy([0.8, 0.8], 2, "abstain") == pytest.approx(0.64)
    value, extra = vote_outcome([0.8, 0.8], 2, "extra-annotator")
    assert value == pytest.approx(0.64 + 0.32 * 0.8) and extra == pytest.approx(0.32)
    assert majority_accuracy([0.8, 0.8], 2, "dev-majority-class") == pytest.approx(0.8)


@pytest.mark.parametrize("rule", ["abstain", "extra-annotator"])
def test_plan_and_verify_use_the_protocols_tie_rule(cli, tmp_path, rule):
    preset = Path(__file__).parents[2] / "protocols" / "quick.toml"
    protocol = tmp_path / f"{rule}.toml"
    protocol.write_text(
        preset.read_text()
        .replace('tie_rule = "random"', f'tie_rule = "{rule}"')
        .replace("annotators_per_item = 5", "annotators_per_item = 4")
    )
    args = ["--task", "glue/mnli-m", "--accuracy", "0.7", "--half-width", "0.03"]
    r = cli("plan", *args, "--protocol", str(protocol), "--format", "json", "--verify", "100")
    assert r.code == 0, r.stderr
    plan = r.json()
    expected, extra = vote_outcome([0.7] * 4, 3, rule)
    assert plan["tie_rule"] == rule
    assert plan["majority_accuracy"] == pytest.approx(expected)
    assert plan["majority_accuracy"] != pytest.approx(majority_accuracy([0.7] * 4, 3))
    assert plan["test_labels"] == plan["items"] * 4 + math.ceil(plan["items"] * extra)
    assert any(f"tie_rule {rule}" in note for note in plan["assumptions"])
    # the simulated studies vote with the same rule: their interval holds the planned value
    assert abs(plan["verify"]["mean_half_width"] - 0.03) <= 0.003
    assert plan["verify"]["coverage"] >= 0.9


@pytest.mark.parametrize(
    "args, message",
    [
        (["--task", "superglue/rte", "--half-width", "0.03"], "give --accuracy P or --pilot STUDY"),
        (["--accuracy", "0.8", "--half-width", "0.03"], "name the task"),
        (["--task", "glue/stsb", "--accuracy", "0.8", "--half-width", "0.03"], "classification"),
        (
            [
                "--task",
                "superglue/rte",
                "--accuracy",
                "0.8",
                "--half-width",
                "0.05",
                "--set",
                "rate=2",
            ],
            "hourly_rate",
        ),
        (
            [
                "--task",
                "superglue/rte",
                "--accuracy",
                "0.8",
                "--half-width",
                "0.03",
                "--assurance",
                "0.9",
            ],
            "--assurance goes with --pilot",
        ),
    ],
)
def test_bad_input_is_one_line(cli, args, message):
    r = cli("plan", *args)
    assert r.code == 1
    assert message in r.stderr


@pytest.mark.slow
def test_the_aggregation_layer_agrees_with_the_real_engine(workspace, tmp_path):
    """Seeded studies of the planned size through the engine (simulate, then the report's
    headline interval) give the half-widths and coverage the fast verification predicts."""
    plan = make_plan(
        task="superglue/rte",
        n_classes=2,
        k=5,
        half_width=0.08,
        accuracies=[0.8],
        seconds_per_item=30,
        seconds_source="assumed",
        annotators=5,
        training_items=6,
        hourly_rate=None,
        interval_method="Wilson",
    )
    fast = verify(plan, 400, seed=1)
    halves, covered = [], 0
    studies = 16
    for seed in range(studies):
        rte_study(
            workspace.engine,
            tmp_path / str(seed),
            name=f"v{seed}",
            test=plan.items,
            gate_threshold=0.0,
            seed=seed,
        )
        simulate(workspace.engine, f"v{seed}", 5, 0.8, seed=seed, accuracies=[0.8] * 5)
        h = study_report(workspace.engine, f"v{seed}", bootstrap=0).headline_interval
        halves.append((h.high - h.low) / 2)
        covered += h.low <= plan.majority_accuracy <= h.high
    assert math.isclose(np.mean(halves), fast.mean_half_width, rel_tol=0.15)
    assert covered >= studies - 2


@pytest.mark.parametrize("rate", ["nan", "inf", "-inf"])
@pytest.mark.parametrize(
    "command", [("plan", "--accuracy", "0.9", "--half-width", "0.05"), ("report", "any-study")]
)
def test_an_hourly_rate_that_is_no_amount_is_refused(cli, command, rate):
    """float() reads "nan" and "inf": the datasheet and the plan printed a cost of nan or inf."""
    r = cli(*command, "--set", f"hourly_rate={rate}")
    assert r.code == 1
    assert (
        r.stderr.strip() == f"error: --set hourly_rate={rate}: hourly_rate must be a finite number"
    )


def test_a_negative_seed_draws_as_its_32_low_bits(cli, tmp_path):
    """A study's seed may be negative (`--seed -1`): its report stopped in numpy with a
    traceback (the label models' draws); it now draws as the seed's 32 low bits, as the
    bootstrap always did, and so does the planner's `--verify`."""
    from tests.engine_helpers import rte_rows, write_jsonl

    for name, rows in (("val", rte_rows(6)), ("test", rte_rows(20, 1000))):
        assert (
            cli("import", "superglue/rte", write_jsonl(tmp_path / f"{name}.jsonl", rows)).code == 0
        )
    made = cli(
        "study", "create", "minus", "--task", "superglue/rte", "--protocol", "quick",
        "--train", "val", "--test", "test", "--seed", "-1",
    )  # fmt: skip
    assert made.code == 0, made.stderr
    simulated = cli("simulate", "minus", "--annotators", "5", "--accuracy", "0.8")
    assert simulated.code == 0, simulated.stderr
    report = cli("report", "minus", "--format", "json")
    assert report.code == 0, report.stderr
    data = report.json()
    assert data["protocol"]["seed"] == -1 and data["task_score"]["value"] is not None
    fitted = {e["method"] for e in data["model_aggregation"]["estimators"]}
    assert {"dawid_skene", "mace"} <= fitted  # the label models drew from the seed
    verified = cli(
        "plan", "--task", "superglue/rte", "--accuracy", "0.9", "--half-width", "0.1",
        "--verify", "3", "--seed", "-1",
    )  # fmt: skip
    assert verified.code == 0, verified.stderr
