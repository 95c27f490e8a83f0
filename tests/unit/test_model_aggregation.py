"""Model-based aggregation (Dawid–Skene, MACE) beside the majority, and Gwet's AC1 (issue 16)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from annotate.report.build import study_report
from annotate.report.model.schema import AggregationScore, Estimate, ModelAggregation
from annotate.report.render.markdown import render_markdown
from annotate.report.sections.model_aggregation import model_aggregation_sections
from annotate.report.stats.gwet import gwet_ac1
from annotate.simulate import simulate
from tests.engine_helpers import rte_study


def _table_of_two_raters(cross: list[list[int]]) -> np.ndarray:
    """(units x classes) counts from a 2-rater contingency table (rows: rater A, cols: B)."""
    q = len(cross)
    rows = []
    for a in range(q):
        for b in range(q):
            rows += [[int(a == k) + int(b == k) for k in range(q)]] * cross[a][b]
    return np.array(rows)


def test_gwet_ac1_of_the_two_rater_abstractors_table():
    # Gwet, Handbook of Inter-Rater Reliability (4th ed., 2014) and the irrCAC package's
    # `cont3x3abstractors` (100 pregnancies, 2 abstractors, Ectopic/AIU/NIU):
    # gwet.ac1.table gives AC1 = 0.8493.
    table = _table_of_two_raters([[13, 0, 0], [0, 20, 7], [0, 4, 56]])
    estimate, n = gwet_ac1(table)
    assert n == 100
    assert round(estimate.value, 4) == 0.8493


def test_gwet_ac1_of_four_raters_with_missing_ratings():
    # Gwet (2014), irrCAC's `cac.raw4raters` (4 raters x 12 subjects, 5 categories, missing
    # ratings; the same data as Krippendorff's 2011 example): gwet.ac1.raw gives AC1 = 0.7754
    # (percent agreement 0.8182; chance agreement 0.1903).
    raters = [
        "1 2 3 3 2 1 4 1 2 . . .",
        "1 2 3 3 2 2 4 1 2 5 . 3",
        ". 3 3 3 2 3 4 2 2 5 1 .",
        "1 2 3 3 2 4 4 1 2 5 1 .",
    ]
    table = np.zeros((12, 5), dtype=int)
    for rater in raters:
        for unit, value in enumerate(rater.split()):
            if value != ".":
                table[unit, int(value) - 1] += 1
    estimate, n = gwet_ac1(table, 5)
    assert n == 11
    assert round(estimate.value, 4) == 0.7754


def test_ac1_stays_high_when_one_class_dominates_where_kappa_collapses():
    # Two raters agree on 118 of 125 items, nearly all "yes": κ is about 0, AC1 near agreement.
    table = _table_of_two_raters([[118, 5], [2, 0]])
    estimate, _ = gwet_ac1(table, replicates=200, rng=np.random.default_rng(0))
    assert estimate.value > 0.9
    assert estimate.ci_low <= estimate.value <= estimate.ci_high


CROWD = [0.95, 0.9, 0.8, 0.5, 0.75]
"""Four good annotators of different skill and one spammer (sim4 guesses)."""


def spammer_study(workspace, tmp_path: Path, seed: int):
    rte_study(
        workspace.engine,
        tmp_path,
        name=f"spam{seed}",
        test=120,
        gate_threshold=0.0,
        seed=seed,
    )
    simulate(
        workspace.engine,
        f"spam{seed}",
        5,
        0.85,
        seed=seed,
        accuracies=CROWD,
    )
    return study_report(workspace.engine, f"spam{seed}", bootstrap=0)


def test_dawid_skene_beats_the_majority_and_finds_the_spammer(workspace, tmp_path):
    # Four seeded studies through the real engine. Per study, EM on 120 items can lose an item
    # or two to the majority by chance (in 20 simulated studies of this crowd outside the
    # engine, Dawid–Skene scored at least the majority in 19, 2 points higher on average); over
    # the four it must score at least as high, and find the spammer in each.
    totals = {"majority": 0.0, "dawid_skene": 0.0}
    for seed in (1, 2, 3, 4):
        report = spammer_study(workspace, tmp_path / str(seed), seed)
        m = report.model_aggregation
        assert m is not None and m.available
        score = {e.method: e.task_score.value for e in m.estimators}
        assert score["majority"] == report.task_score.value
        for method in totals:
            totals[method] += score[method]
        ds = {a.annotator: a.competence["dawid_skene"] for a in m.annotators}
        mace = {a.annotator: a.competence["mace"] for a in m.annotators}
        assert min(ds, key=ds.get) == "sim4"
        assert min(mace, key=mace.get) == "sim4"
    assert totals["dawid_skene"] >= totals["majority"]


def test_the_report_shows_model_aggregation_and_ac1_in_every_format(workspace, tmp_path):
    report = spammer_study(workspace, tmp_path, 5)
    m = report.model_aggregation
    # each annotator's confusion matrix: truth -> answer -> probability, rows summing to 1
    for a in m.annotators:
        for row in a.confusion["dawid_skene"].values():
            assert sum(row.values()) == pytest.approx(1.0)
    # every disagreement listed is one where a model's answer differs from the majority's
    for d in m.disagreements:
        assert d.majority != d.answers["dawid_skene"] or d.majority != d.answers["mace"]
    changed = next(e for e in m.estimators if e.method == "dawid_skene").n_changed
    assert changed <= len(m.disagreements)
    data = report.to_json()
    methods = [e["method"] for e in data["model_aggregation"]["estimators"]]
    assert methods == ["majority", "dawid_skene", "mace"]
    wilson = data["model_aggregation"]["estimators"][1]["interval"]
    assert wilson["low"] < data["model_aggregation"]["estimators"][1]["task_score"]["value"]
    assert set(data["agreement"]["gwet_ac1"]) == {"value", "ci_low", "ci_high", "n_items"}
    text = render_markdown(report)
    assert "## Model-based aggregation" in text
    assert "## Estimated annotator competence" in text
    assert "| Gwet's AC1 |" in text


def test_a_third_model_reaches_every_table_through_the_one_interface(
    workspace, tmp_path, monkeypatch
):
    # A model added to `ESTIMATORS` gets its score row, its competence column and its answer
    # column in the disagreements, with nothing else changed: here a deliberately contrary one
    # (the runner-up answer, and each annotator's share of labels as "competence").
    from annotate.report.aggregation import estimators

    def contrary(given: estimators.FitInput) -> estimators.Fitted:
        coded = given.coded
        pred = np.where(given.final.pred >= 0, 1 - given.final.pred, given.final.pred)
        counts = given.frame["worker"].value_counts()
        share = {int(w): int(n) / len(given.frame) for w, n in counts.items()}
        assert len(coded.classes) == 2
        return estimators.Fitted(pred, share)

    third = estimators.Estimator("contrary", "Contrary", "Contrary share", contrary)
    monkeypatch.setattr(estimators, "ESTIMATORS", (*estimators.ESTIMATORS, third))
    report = spammer_study(workspace, tmp_path, 6)
    m = report.model_aggregation
    assert [e.method for e in m.estimators] == ["majority", "dawid_skene", "mace", "contrary"]
    assert m.competence_titles["contrary"] == "Contrary share"
    assert sum(a.competence["contrary"] for a in m.annotators) == pytest.approx(1.0)
    assert all(d.answers["contrary"] != d.majority for d in m.disagreements)
    text = render_markdown(report)
    assert (
        "| Annotator | Labels | Dawid–Skene accuracy | MACE competence | Contrary share |" in text
    )
    assert "| Item | Votes | Majority | Dawid–Skene | MACE | Contrary | Gold |" in text
    assert "| Contrary |" in text


def test_annotate_agreement_gives_ac1_of_the_four_rater_example(cli, tmp_path: Path):
    # The same 4 raters x 12 subjects as above, as a long-format file: AC1 0.7754 (irrCAC).
    from tests.unit.test_report_agreement import krippendorff_csv

    data = krippendorff_csv(tmp_path / "gwet.csv")
    result = cli("agreement", data, "--format", "json", "--bootstrap", "200")
    assert result.code == 0, result.stderr
    ac1 = result.json()["gwet_ac1"]
    assert round(ac1["value"], 4) == 0.7754
    assert ac1["n_items"] == 11
    assert ac1["ci_low"] <= ac1["value"] <= ac1["ci_high"]
    table = cli("agreement", data)
    assert "Gwet's AC1" in table.stdout and "0.775" in table.stdout
    ordinal = cli("agreement", data, "--level", "ordinal", "--format", "json").json()
    assert "gwet_ac1" not in ordinal  # a nominal statistic


def test_the_detail_of_each_model_counts_its_units_in_words():
    # "1 items differ" in every format: one unit takes the singular, and its verb agrees
    def row(method: str, n_changed: int) -> AggregationScore:
        score = Estimate(value=0.9)
        return AggregationScore(
            method=method,
            title=method,
            scores={"accuracy": score},
            task_score=score,
            interval=None,
            n_changed=n_changed,
        )

    m = ModelAggregation(
        available=True,
        estimators=[row("majority", 0), row("dawid_skene", 1), row("mace", 2)],
    )
    _, _, rows = model_aggregation_sections(m)[0]
    assert [r[-1] for r in rows] == ["the study's rule", "1 item differs", "2 items differ"]
