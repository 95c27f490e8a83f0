"""Issue 4 acceptance: the report's numbers equal an independent computation from the exported
long-format labels (majority vote, accuracy, Krippendorff's α, Fleiss' κ), and every interval
contains its point estimate."""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict

import krippendorff
import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from annotate.simulate import simulate
from tests.engine_helpers import rte_rows, rte_study


def test_report_equals_an_independent_computation_from_exported_labels(cli, workspace, tmp_path):
    # 5 annotators on a 2-way task: a majority of 5 never ties, so the vote is unambiguous
    rte_study(workspace.engine, tmp_path, name="indep", train=4, test=40, annotators_per_item=5)
    simulate(workspace.engine, "indep", 5, 0.8, seed=4)
    exported = cli("export", "indep", "--to", tmp_path / "out", "--format", "labels")
    assert exported.code == 0, exported.stderr
    with (tmp_path / "out" / "indep-labels.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["phase"] == "test"]
    assert rows and set(rows[0]) >= {"study", "item_id", "annotator", "value"}
    gold = {str(r["idx"]): r["label"] for r in rte_rows(40, 1000)}

    votes: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        votes[r["item_id"]].append(r["value"])
    majority = {i: Counter(v).most_common(1)[0][0] for i, v in votes.items()}
    accuracy = np.mean([majority[i] == gold[i] for i in majority])

    items = sorted(votes)
    annotators = sorted({r["annotator"] for r in rows})
    classes = ["entailment", "not_entailment"]
    matrix = np.full((len(annotators), len(items)), np.nan)
    for r in rows:
        matrix[annotators.index(r["annotator"]), items.index(r["item_id"])] = classes.index(
            r["value"]
        )
    alpha = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    complete = [[classes.index(v) for v in votes[i]] for i in items if len(votes[i]) == 5]
    kappa = fleiss_kappa(aggregate_raters(np.array(complete))[0])

    report = cli("report", "indep", "--format", "json", "--bootstrap", "200", "--seed", "1")
    assert report.code == 0, report.stderr
    r = json.loads(report.stdout)
    assert r["n_items"] == len(items) == 40 and r["n_annotators"] == len(annotators)
    assert r["scores"]["accuracy"]["value"] == pytest.approx(accuracy, abs=1e-9)
    assert r["agreement"]["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-9)
    assert r["agreement"]["fleiss_kappa"]["value"] == pytest.approx(kappa, abs=1e-9)
    for estimate in [*r["scores"].values(), r["agreement"]["krippendorff_alpha"]]:
        assert estimate["ci_low"] <= estimate["value"] <= estimate["ci_high"]
