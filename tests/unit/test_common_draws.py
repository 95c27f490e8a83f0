"""Paired, common resampling: every system of a study (the humans' majority, each model) and
every front end (the report, `compare`, `agreement --study`) draws the same bootstrap
resamples of the study's items for a seed, so identical answers get identical intervals and
a model's interval does not depend on its name."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from annotate.scoring.diagnostics import diagnostics
from annotate.scoring.intervals import percentile_interval, rng_for
from annotate.scoring.metrics import classification_scorer, paired_replicates
from annotate.scoring.scorers import HEADLINE_DRAWS
from tests.unit import test_compare
from tests.unit.test_compare import model_file
from tests.unit.test_export import simulated_study

# test_compare's simulated RTE study of 20 items, in one store for the module.
db_url = test_compare.db_url
rte = test_compare.rte

SEED = ["--seed", "11", "--bootstrap", "300"]


def report_json(cli, *args: Any) -> dict[str, Any]:
    result = cli("report", "pilot", "--format", "json", *SEED, *args)
    assert result.code == 0, result.stderr
    return result.json()


def bounds(estimate: dict[str, Any]) -> tuple[float, float]:
    return estimate["ci_low"], estimate["ci_high"]


def majority_file(cli, tmp_path: Path) -> Path:
    """The humans' majority answers, as `export` writes them: a model file."""
    assert cli("export", "pilot", "--to", tmp_path / "out", "--format", "superglue").code == 0
    return tmp_path / "out" / "RTE.jsonl"


def test_the_same_predictions_under_two_names_get_the_same_interval(cli, rte, tmp_path):
    model = model_file(tmp_path / "RTE.jsonl", rte, wrong={1001, 1004, 1007, 1010, 1013})
    (tmp_path / "b").mkdir()
    renamed = shutil.copy(model, tmp_path / "b" / "roberta-large.jsonl")
    # 20 items: a percentile bound often falls on the same k/20 whatever the draws; of a few
    # seeds, at least one told the two names apart when a name chose the draws.
    for seed in ("1", "2", "3"):
        drawn = ["--seed", seed, "--bootstrap", "300"]
        report = cli(
            "report", "pilot", "--format", "json", *drawn, "--model", model, "--model", renamed
        ).json()
        first, second = report["models"]
        assert first["name"] != second["name"]
        assert bounds(first["task_score"]) == bounds(second["task_score"])
        assert first["scores"] == second["scores"]
        one = cli("compare", "pilot", "--model", model, "--format", "json", *drawn).json()
        other = cli("compare", "pilot", "--model", renamed, "--format", "json", *drawn).json()
        assert one["model_scores"] == other["model_scores"]
        assert one["difference"] == other["difference"]


def test_a_model_answering_as_the_majority_gets_the_humans_interval(cli, rte, tmp_path):
    model = majority_file(cli, tmp_path)
    report = report_json(cli, "--model", model)
    [row] = report["models"]
    assert row["task_score"]["value"] == report["task_score"]["value"]
    assert bounds(row["task_score"]) == bounds(report["task_score"])
    assert row["scores"] == {
        m: {k: v for k, v in e.items() if k in row["scores"][m]}
        for m, e in report["scores"].items()
    }
    compared = cli("compare", "pilot", "--model", model, "--format", "json", *SEED).json()
    human, machine = compared["human"]["task_score"], compared["model_scores"]["task_score"]
    assert bounds(human) == bounds(machine) == bounds(report["task_score"])
    # The same answers differ by nothing on these items, which does not make the difference
    # on the task's other items nothing: quoted as the accuracies are (Wilson's, never
    # zero-wide), the difference has Newcombe's paired interval about 0, not the bootstrap's
    # [0, 0] (every resample of the same answers differs by nothing).
    low, high = bounds(compared["difference"])
    assert compared["difference"]["value"] == 0.0 and low == -high < -0.05
    assert compared["difference"]["method"].startswith("Newcombe's hybrid score interval")


def test_the_report_prints_the_same_for_a_seed(cli, rte, tmp_path):
    model = model_file(tmp_path / "RTE.jsonl", rte, wrong={1002, 1003})
    first = cli("report", "pilot", *SEED, "--model", model).stdout
    assert first == cli("report", "pilot", *SEED, "--model", model).stdout


@pytest.mark.parametrize("seed", [None, "5"])
def test_agreement_of_a_study_has_the_reports_alpha_interval(cli, rte, seed):
    chosen = [] if seed is None else ["--seed", seed]
    args = ["--format", "json", "--bootstrap", "300", *chosen]
    report = cli("report", "pilot", *args).json()
    alone = cli("agreement", "--study", "pilot", *args)
    assert alone.code == 0, alone.stderr
    alpha = alone.json()["krippendorff_alpha"]
    reported = report["agreement"]["krippendorff_alpha"]
    assert alpha["value"] == pytest.approx(reported["value"])
    assert bounds(alpha) == bounds(reported)


def test_the_diagnostics_score_every_model_on_the_humans_resamples():
    rng = np.random.default_rng(3)
    n = 80
    gold = rng.integers(0, 3, n)
    human = np.where(rng.random(n) < 0.7, gold, rng.integers(0, 3, n))
    other = np.where(rng.random(n) < 0.6, gold, rng.integers(0, 3, n))
    tags = [{"Logic": ["Negation" if i % 2 else "Quantifiers"]} for i in range(n)]
    table = diagnostics(
        tags, gold, human, {"roberta": other, "t5": other, "as-humans": human}, 3, replicates=300
    )
    assert table is not None
    for entry in (table["all_tagged"], table["fine"]["Logic"]["Negation"]):
        models = entry["models"]
        assert bounds(models["roberta"]) == bounds(models["t5"])
        assert bounds(models["as-humans"]) == bounds(entry)


def test_a_tag_on_the_items_of_its_category_gets_the_categorys_interval():
    """Logic and its only tag Negation hold the same items: one interval, not two (they read
    [-0.77, 0.77] and [-0.75, 0.60])."""
    rng = np.random.default_rng(5)
    n = 40
    gold = rng.integers(0, 2, n)
    human = np.where(rng.random(n) < 0.7, gold, 1 - gold)
    tags = [
        {"Logic": ["Negation"]} if i % 3 == 0 else {"Knowledge": ["Common sense"]} for i in range(n)
    ]
    table = diagnostics(tags, gold, human, {}, 2, replicates=300, seed=2)
    assert table is not None
    assert bounds(table["coarse"]["Logic"]) == bounds(table["fine"]["Logic"]["Negation"])
    assert bounds(table["coarse"]["Knowledge"]) == bounds(
        table["fine"]["Knowledge"]["Common sense"]
    )


def test_agreement_of_a_multirc_study_resamples_its_questions_as_the_report(
    cli, workspace, tmp_path
):
    # Candidate answers are the units, each question is resampled whole, in both.
    simulated_study(workspace.engine, tmp_path, "superglue/multirc", name="mrc", k=3)
    args = ["--format", "json", "--bootstrap", "300", "--seed", "4"]
    reported = cli("report", "mrc", *args).json()["agreement"]["krippendorff_alpha"]
    alone = cli("agreement", "--study", "mrc", *args).json()["krippendorff_alpha"]
    assert alone["value"] == pytest.approx(reported["value"])
    assert bounds(alone) == bounds(reported)


def test_a_large_studys_paired_difference_is_drawn_on_common_resamples():
    # 5,000 items x 1,000 replicates: each score alone is drawn per pattern of its own answers
    # (`Resampling`); the difference must still be paired, as narrow as at 3,000 items or
    # narrower, not that of two independent draws.
    rng = np.random.default_rng(0)
    widths = []
    for n in (3000, 5000):
        gold = rng.integers(0, 2, n)
        human = np.where(rng.random(n) < 0.85, gold, 1 - gold)
        model = np.where(rng.random(n) < 0.05, 1 - human, human)
        scorers = [classification_scorer(["accuracy"], 2, gold, p) for p in (human, model)]
        human_reps, model_reps = paired_replicates(scorers, 1000, rng_for(1, HEADLINE_DRAWS))
        alone = scorers[0].replicates(1000, rng_for(1, HEADLINE_DRAWS))["accuracy"]
        if n == 3000:  # drawn unit by unit: the very replicates of the score alone
            assert np.array_equal(human_reps["accuracy"], alone)
        low, high = percentile_interval(model_reps["accuracy"] - human_reps["accuracy"])
        assert low is not None and high is not None
        widths.append(high - low)
    assert widths[1] < widths[0]


def test_agreement_of_a_study_leaves_out_the_items_its_report_excludes(cli, workspace, tmp_path):
    """`agreement --study` read every test label, an item the researcher excluded (`flags
    --exclude`) too, where the report's α leaves it out: their α differed on the same labels."""
    from sqlmodel import Session, select

    from annotate.store.models import Item, Study, StudyItem

    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="ex", accuracy=0.7)
    with Session(workspace.engine) as session:
        first = session.exec(
            select(Item.source_id)
            .join(StudyItem, StudyItem.item_id == Item.id)
            .join(Study, Study.id == StudyItem.study_id)
            .where(Study.name == "ex")
            .limit(1)
        ).one()
    excluded = cli("flags", "ex", "--exclude", first, "--reason", "garbled", "--by", "me")
    assert excluded.code == 0, excluded.stderr
    args = ["--format", "json", "--bootstrap", "300"]
    reported = cli("report", "ex", *args).json()["agreement"]["krippendorff_alpha"]
    alone = cli("agreement", "--study", "ex", *args)
    assert alone.code == 0, alone.stderr
    alpha = alone.json()
    assert alpha["n_items"] == reported_items(cli) - 1
    assert alpha["krippendorff_alpha"]["value"] == pytest.approx(reported["value"])
    assert bounds(alpha["krippendorff_alpha"]) == bounds(reported)


def reported_items(cli) -> int:
    """The test items of study `ex` that have labels (the one excluded among them)."""
    return cli("status", "ex", "--format", "json").json()["items_total"]


def test_agreement_of_a_study_under_way_has_the_reports_fleiss_kappa(cli, workspace, tmp_path):
    """Eight items, seven with their 5 labels and one with 4: the report gives Fleiss' κ on the
    seven complete items; `agreement --study` said "not computed" for the same labels."""
    rows = ["item,annotator,label,gold,premise,hypothesis"]
    for i in range(8):
        gold = "entailment" if i % 2 else "not_entailment"
        other = "not_entailment" if i % 2 else "entailment"
        for a in range(4 if i == 7 else 5):
            label = other if (i + a) % 4 == 0 else gold
            rows.append(f"{i},w{a},{label},{gold},The lamp {i} is lit.,A lamp is on.")
    path = tmp_path / "crowd.csv"
    path.write_text("\n".join(rows) + "\n")
    imported = cli(
        "import-labels", path, "--task", "superglue/rte", "--study", "crowd", "--k", "5",
        "--map", "item=item,annotator=annotator,label=label,gold=gold,premise=premise,"
        "hypothesis=hypothesis",
    )  # fmt: skip
    assert imported.code == 0, imported.stderr
    args = ["--format", "json", "--bootstrap", "300"]
    reported = cli("report", "crowd", *args).json()["agreement"]["fleiss_kappa"]
    assert reported["n_items"] == 7 and reported["value"] is not None
    kappa = cli("agreement", "--study", "crowd", *args).json()["fleiss_kappa"]
    assert (kappa["value"], kappa["n_items"]) == (pytest.approx(reported["value"]), 7)
    assert bounds(kappa) == bounds(reported)


def test_agreement_of_a_stop_when_decided_study_gives_fleiss_as_its_report_does(
    cli, workspace, tmp_path
):
    """Under way, a stop_when_decided study's report has κ on its complete items while
    `agreement --study` said "not computed: items have 1 to 3 labels" (the file rule); once an
    item stopped early, the report skips κ with its reason and `agreement` must too."""
    from tests.engine_helpers import rte_study
    from tests.tui.console_support import StepClock, label_as

    rte_study(
        workspace.engine,
        tmp_path,
        name="early",
        test=10,
        annotators_per_item=3,
        stop_when_decided=True,
        gate_threshold=0.5,
    )
    label_as(workspace.engine, "early", "ann", test_items=10, clock=StepClock())
    label_as(workspace.engine, "early", "bo", test_items=4, wrong_every=1, clock=StepClock())
    label_as(workspace.engine, "early", "cy", test_items=2, clock=StepClock())
    args = ["--format", "json", "--bootstrap", "300"]

    def both() -> tuple[dict[str, Any], dict[str, Any]]:
        reported = cli("report", "early", *args).json()["agreement"]["fleiss_kappa"]
        return reported, cli("agreement", "--study", "early", *args).json()["fleiss_kappa"]

    reported, kappa = both()
    assert reported["value"] is not None and reported["n_items"] == 2  # no item stopped early
    assert (kappa["value"], kappa["n_items"]) == (pytest.approx(reported["value"]), 2)
    assert bounds(kappa) == bounds(reported)
    label_as(workspace.engine, "early", "di", test_items=3, clock=StepClock())  # one stops early
    reported, kappa = both()
    assert reported["value"] is None and reported["note"].startswith("not computed")
    assert kappa["value"] is None and kappa["note"] == reported["note"]
