"""Fleiss' κ needs the same number of raters on every item it rests on: the items rated k
times, or more where more items share a larger number (labels imported with `--k` below
what most items have, all of which are counted)."""

from __future__ import annotations

import numpy as np

from annotate.report.stats import agreement as agr


def test_fleiss_kappa_rests_on_the_largest_group_of_items_rated_k_or_more_times():
    """Labels imported with --k 3 where most items have 5: every label counts, and Fleiss' κ
    rests on the 20 items rated five times, not on the 10 rated three times. Items with fewer
    than k labels never count, and k keeps a tie."""
    rng = np.random.default_rng(4)
    table = np.vstack(
        [rng.multinomial(3, [0.5, 0.5], size=10), rng.multinomial(5, [0.5, 0.5], size=20)]
    )
    _, used, raters = agr.fleiss_kappa(table, 3)
    assert (used, raters) == (20, 5)
    _, used, raters = agr.fleiss_kappa(table[:20], 3)  # 10 items of each
    assert (used, raters) == (10, 3)
    early = np.vstack([rng.multinomial(2, [0.5, 0.5], size=25), table[:5]])
    _, used, raters = agr.fleiss_kappa(early, 3)  # a study under way: complete items only
    assert (used, raters) == (5, 3)


def test_the_report_of_labels_imported_with_a_smaller_k_counts_the_items_most_have(cli, tmp_path):
    rows = ["item,annotator,label"]
    for i in range(30):
        for r in range(3 if i < 10 else 5):
            rows.append(f"it{i},w{r},{'entailment' if (i + r) % 3 else 'not_entailment'}")
    path = tmp_path / "labels.csv"
    path.write_text("\n".join(rows) + "\n")
    assert cli("init").code == 0
    made = cli(
        "import-labels",
        path,
        "--task",
        "superglue/rte",
        "--map",
        "premise=item,hypothesis=item",
        "--k",
        "3",
    )
    assert made.code == 0, made.stderr
    report = cli("report", "labels", "--format", "json", "--bootstrap", "0").json()
    fleiss = report["agreement"]["fleiss_kappa"]
    assert (fleiss["n_items"], fleiss["raters_per_item"]) == (20, 5), fleiss
    assert "20 complete items x 5 raters" in cli("report", "labels", "--bootstrap", "0").stdout
