"""`annotate plan`: study size for a target interval half-width (issue 16)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from annotate.report.build import study_report
from annotate.scoring.plan import (
    items_for_half_width,
    majority_accuracy,
    make_plan,
    pool_majority_accuracy,
    verify,
    vote_outcome,
    wilson_half_width,
)
from annotate.simulate import simulate
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
    assert plan["seconds_source"] == "median of pilot pilot"
    assert plan["annotator_accuracy"] == pytest.approx(
        np.mean(list(plan["pilot_accuracies"].values()))
    )


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
    seconds = re.search(r"at ([0-9.]+) s per answer", same.stdout)
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
