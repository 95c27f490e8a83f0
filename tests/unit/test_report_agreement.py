"""`annotate agreement FILE`: agreement statistics of any long-format label file, checked
against published reference values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotate.report.build import study_report
from annotate.report.render.markdown import render_markdown
from annotate.simulate import simulate
from tests.engine_helpers import rte_study

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders x 12 units, "."
# is a missing value.
KRIPPENDORFF_2011 = {
    "A": "1 2 3 3 2 1 4 1 2 . . .",
    "B": "1 2 3 3 2 2 4 1 2 5 . 3",
    "C": ". 3 3 3 2 3 4 2 2 5 1 .",
    "D": "1 2 3 3 2 4 4 1 2 5 1 .",
}

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters each, counts per category 1..5.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def krippendorff_csv(path: Path) -> Path:
    """The example as long-format CSV, missing values kept as rows with an empty label."""
    lines = ["item,annotator,label"]
    for coder, row in KRIPPENDORFF_2011.items():
        for unit, value in enumerate(row.split(), start=1):
            lines.append(f"u{unit},{coder},{'' if value == '.' else value}")
    path.write_text("\n".join(lines) + "\n")
    return path


def fleiss_jsonl(path: Path) -> Path:
    """The table rebuilt as labels: subject s gets n_sj labels of category j, from 14 raters."""
    rows = []
    for subject, counts in enumerate(FLEISS_TABLE, start=1):
        rater = 0
        for category, n in enumerate(counts, start=1):
            for _ in range(n):
                rater += 1
                rows.append({"item_id": f"s{subject}", "annotator": f"r{rater}", "value": category})
        assert rater == 14
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_example(cli, tmp_path: Path, level: str, expected: float):
    data = krippendorff_csv(tmp_path / "k2011.csv")
    result = cli("agreement", data, "--level", level, "--format", "json", "--bootstrap", "200")
    assert result.code == 0, result.stderr
    r = result.json()
    alpha = r["krippendorff_alpha"]
    assert round(alpha["value"], 3) == expected
    assert alpha["ci_low"] <= alpha["value"] <= alpha["ci_high"]
    assert (r["n_items"], r["n_annotators"], r["n_labels"], r["n_missing"]) == (12, 4, 41, 7)
    assert alpha["n_items"] == 11  # unit 12 has one value: not pairable


def test_fleiss_kappa_of_the_wikipedia_table(cli, tmp_path: Path):
    data = fleiss_jsonl(tmp_path / "fleiss.jsonl")
    r = cli("agreement", data, "--format", "json", "--bootstrap", "0").json()
    fleiss = r["fleiss_kappa"]
    assert round(fleiss["value"], 3) == 0.210
    assert (fleiss["n_items"], fleiss["raters_per_item"]) == (10, 14)
    assert r["item_agreement_histogram"]["14/14"] == 1


def test_ac1_on_one_class_counts_the_items_it_would_be_on(cli, tmp_path: Path):
    """Every label alike: AC1 is undefined for want of a second class, not of items (it read
    "0 items with 2+ labels" beside 2 items labelled twice)."""
    data = tmp_path / "labels.tsv"
    data.write_text(
        "item_id\tannotator\tlabel\n1\tann\tyes\n1\tbob\tyes\n2\tann\tyes\n2\tbob\tyes\n"
    )
    r = cli("agreement", data, "--format", "json").json()
    assert r["gwet_ac1"]["value"] is None and r["gwet_ac1"]["n_items"] == 2
    assert "two classes" in r["gwet_ac1"]["note"]
    row = next(line for line in cli("agreement", data).stdout.splitlines() if "AC1" in line)
    assert "(2 items with 2+ labels)" in row and "0 items" not in row


def test_pairwise_kappa_undefined_on_every_pair_says_why(cli, tmp_path: Path):
    data = tmp_path / "labels.tsv"
    data.write_text(
        "item_id\tannotator\tlabel\n1\tann\tyes\n1\tbob\tyes\n2\tann\tyes\n2\tbob\tyes\n"
    )
    row = next(line for line in cli("agreement", data).stdout.splitlines() if "Cohen" in line)
    assert "mean – over 1 pair (min –, max –) (undefined for every pair: on the items" in row


def test_table_view_and_pairwise_kappa(cli, tmp_path: Path):
    data = tmp_path / "labels.tsv"
    data.write_text(
        "item_id\tannotator\tlabel\n"
        "1\tann\tyes\n1\tbob\tyes\n2\tann\tno\n2\tbob\tno\n3\tann\tyes\n3\tbob\tno\n4\tann\tno\n4\tbob\tno\n"
    )
    krippendorff = pytest.importorskip("krippendorff")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    ann, bob = ["yes", "no", "yes", "no"], ["yes", "no", "no", "no"]
    codes = {"no": 0, "yes": 1}
    alpha = krippendorff.alpha(
        reliability_data=[[codes[v] for v in ann], [codes[v] for v in bob]],
        level_of_measurement="nominal",
    )
    counts, _ = inter_rater.aggregate_raters(
        [[codes[a], codes[b]] for a, b in zip(ann, bob, strict=True)]
    )
    fleiss = inter_rater.fleiss_kappa(counts)
    both = [
        [sum(1 for a, b in zip(ann, bob, strict=True) if (a, b) == (x, y)) for y in codes]
        for x in codes
    ]
    cohen = inter_rater.cohens_kappa(both).kappa
    result = cli("agreement", data)
    assert result.code == 0, result.stderr

    def row(name: str) -> str:  # the table view's row for one statistic
        return next(line for line in result.stdout.splitlines() if name in line)

    assert f"{alpha:.3f}" in row("Krippendorff's α (nominal)")
    assert f"{fleiss:.3f}" in row("Fleiss' κ")
    # one pair of raters in words: it read "over 1 pairs ...; on 1 pairs of raters"
    assert f"mean {cohen:.3f} over 1 pair (" in row("Cohen's κ, pairwise")
    assert "on 1 pair of raters, each" in row("Cohen's κ, pairwise")
    assert "8 (0 missing) on 4 items by 2 annotators" in row("Labels")
    assert row("2/2").split()[-1] == "3" and row("1/2").split()[-1] == "1"  # items agreeing
    r = cli("agreement", data, "--format", "json").json()
    assert r["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    assert r["fleiss_kappa"]["value"] == pytest.approx(fleiss)
    assert r["pairwise_cohen_kappa"] == [
        {"a": "w01", "b": "w02", "n": 4, "kappa": pytest.approx(cohen)}
    ]  # ann and bob by pseudonym, in the order the file first names them


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ("item,coder\n1,a\n", [], ":1: no label column: expected one of label, value"),
        (
            "item,annotator,label\n1,a,x\n1,a,y\n",
            [],
            ":3: the annotator of this line labels item '1' twice (first on line 2)",
        ),
        (
            "item,annotator,label\n1,a,2\n1,b,high\n",
            ["--level", "interval"],
            ":3: label 'high' is not a number",
        ),
        ("item,annotator,label\n1,a,x,y\n", [], ":2: row has 4 fields, expected 3"),
        ("item,annotator,label\n1\n", [], ":2: missing annotator"),
        ("item,annotator,label\n1,a,\n", [], "every label in the file is missing"),
    ],
)
def test_bad_files_name_the_file_and_line(
    cli, tmp_path: Path, content: str, args: list[str], message: str
):
    data = tmp_path / "bad.csv"
    data.write_text(content)
    result = cli("agreement", data, *args)
    assert result.code == 1
    assert f"error: {data}" in result.stderr and message in result.stderr


def test_an_export_of_both_phases_says_why_an_item_is_labelled_twice(cli, tmp_path: Path):
    """`export --phase all` writes training and test labels under the datasets' own ids, and
    a dev item may share its id with a test item: "labels item '4' twice" named two items.
    The message says the file mixes phases and how to keep one."""
    data = tmp_path / "s-labels.csv"
    data.write_text(
        "study,item_id,annotator,phase,value\n"
        "s,4,ana,training,entailment\ns,4,ana,test,not_entailment\n"
    )
    result = cli("agreement", data)
    assert result.code == 1
    assert (
        ":3: the annotator of this line labels item '4' twice (first on line 2): the file "
        "holds training and test labels (its phase column); read one phase with "
        "--skip-when phase=training, or export --phase test"
    ) in result.stderr
    kept = cli("agreement", data, "--skip-when", "phase=training", "--bootstrap", "0")
    assert kept.code == 0, kept.stderr


def test_a_study_name_given_as_the_file_is_pointed_to_study(cli, tmp_path: Path, monkeypatch):
    """`annotate agreement rte-2026` (a study's name where the file goes) said "no such file"
    alone: it says how a study's labels are read. A missing file is still just that."""
    monkeypatch.chdir(tmp_path)
    named = cli("agreement", "rte-2026")
    assert named.code == 1
    assert named.stderr == (
        "error: rte-2026: no such file; a study's labels are read with --study rte-2026\n"
    )
    missing = cli("agreement", "labels.csv")
    assert missing.code == 1 and "--study" not in missing.stderr
    assert "labels.csv: no such file" in missing.stderr


def test_degenerate_files_give_messages_not_crashes(cli, tmp_path: Path):
    data = tmp_path / "same.csv"
    data.write_text("item,annotator,label\n1,a,x\n1,b,x\n2,a,x\n3,b,x\n")
    r = cli("agreement", data, "--format", "json").json()
    assert (
        r["krippendorff_alpha"]["value"] is None and "same value" in r["krippendorff_alpha"]["note"]
    )
    assert r["fleiss_kappa"]["value"] is None
    assert r["pairwise_cohen_kappa"][0]["kappa"] is None
    assert cli("agreement", data).code == 0


def test_quoted_comment_with_a_line_break_keeps_rows_and_line_numbers(cli, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(
        'item,annotator,label,comment\n1,a,x,"first line\nsecond line"\n1,b,x,\n2,a,y,\n2,b,,\n3\n'
    )
    result = cli("agreement", path, "--format", "json")
    assert result.code == 1 and "labels.csv:7: missing annotator" in result.stderr
    path.write_text(path.read_text().replace("3\n", "3,a,y,\n3,b,y,\n"))
    assert cli("agreement", path, "--format", "json").code == 0


# --- ragged and graded files: κ only where it applies (issue 27) -----------------------------


def test_a_ragged_file_gets_alpha_and_no_fleiss_kappa_on_a_subset(cli, tmp_path: Path):
    """Items with 3 labels and items with 2 (someone skipped them): Fleiss' κ would need the
    same number of raters everywhere, so it is not computed on the 3-rater subset."""
    rows = ["item,annotator,label,Approve,Reject"]  # MTurk's empty trailing columns
    for item in range(12):
        for a in ("a", "b", "c")[: 3 if item % 2 else 2]:
            rows.append(f"{item},{a},{'x' if (item + ord(a)) % 3 else 'y'}")  # rows 2 cells short
    path = tmp_path / "ragged.csv"
    path.write_text("\n".join(rows) + "\n")
    r = cli("agreement", path, "--format", "json", "--bootstrap", "0").json()
    assert r["n_labels"] == 30 and r["n_items"] == 12
    assert r["fleiss_kappa"]["value"] is None
    assert "same number of raters" in r["fleiss_kappa"]["note"]
    assert r["krippendorff_alpha"]["value"] is not None
    assert r["computed_on"]["krippendorff_alpha"].startswith("12 of 12 items")
    assert "2 to 3 raters per item" in r["computed_on"]["krippendorff_alpha"]
    table = cli("agreement", path, "--bootstrap", "0").stdout
    assert "not computed" in table and "2 to 3 raters per item" in table

    even = tmp_path / "even.csv"
    even.write_text(
        "\n".join(r for r in rows if not r.startswith(("1,", "3,", "5,", "7,", "9,", "11,"))) + "\n"
    )
    r = cli("agreement", even, "--format", "json", "--bootstrap", "0").json()
    assert r["fleiss_kappa"]["value"] is not None
    assert (r["fleiss_kappa"]["n_items"], r["fleiss_kappa"]["raters_per_item"]) == (6, 2)
    assert r["computed_on"]["fleiss_kappa"] == "6 items x 2 raters (every item)"


def test_a_slider_at_interval_level_gets_no_nominal_statistics(cli, tmp_path: Path):
    rows = ["item,annotator,label"]
    for item in range(10):
        for n, a in enumerate("abcd"):
            rows.append(f"{item},{a},{min(100, item * 10 + n * 3)}")
    path = tmp_path / "slider.csv"
    path.write_text("\n".join(rows) + "\n")
    r = cli("agreement", path, "--level", "interval", "--format", "json", "--bootstrap", "0").json()
    assert r["krippendorff_alpha"]["level"] == "interval" and r["krippendorff_alpha"]["value"] > 0.9
    assert r["fleiss_kappa"]["value"] is None and "interval level" in r["fleiss_kappa"]["note"]
    assert "item_agreement_histogram" not in r and "gwet_ac1" not in r
    assert r["pairwise_weights"] == "quadratic"
    table = cli("agreement", path, "--level", "interval", "--bootstrap", "0").stdout
    assert "Per-item agreement" not in table and "/4" not in table


def test_a_kappa_that_rounds_to_zero_is_shown_without_a_sign(cli, tmp_path: Path):
    """Fleiss' κ of this file is 0, computed as -2.5e-16: the table said "-0.000"."""
    data = tmp_path / "labels.csv"
    data.write_text(
        "item,annotator,label\n1,a,y\n1,b,y\n1,c,y\n2,a,x\n2,b,x\n2,c,y\n3,a,x\n3,b,y\n3,c,y\n"
    )
    assert (
        cli("agreement", data, "--format", "json", "--bootstrap", "0").json()["fleiss_kappa"][
            "value"
        ]
        < 0
    )
    table = cli("agreement", data, "--bootstrap", "0").stdout
    (line,) = [row for row in table.splitlines() if "Fleiss' κ" in row]
    assert " 0.000 " in line and "-0.000" not in line, line


@pytest.mark.parametrize(
    ("value", "digits", "sign", "shown"),
    [
        (-0.0003, 3, False, "0.000"),
        (-2.5e-16, 3, False, "0.000"),
        (-0.0, 1, False, "0.0"),
        (-0.0006, 3, False, "-0.001"),
        (-12.0, 3, False, "-12.000"),
        (0.4125, 2, False, "0.41"),
        (-0.04, 1, True, "+0.0"),
        (0.04, 1, True, "+0.0"),
        (-1.26, 1, True, "-1.3"),
        (1.26, 1, True, "+1.3"),
    ],
)
def test_a_number_that_rounds_to_zero_has_no_sign(value, digits, sign, shown):
    from annotate.wording import fixed

    assert fixed(value, digits, sign=sign) == shown


def test_the_reports_cells_write_numbers_through_the_one_helper():
    from annotate.report.cells import coef, interval, pct

    assert coef(-0.0003) == "0.000" and pct(-0.0000004) == "0.0"
    assert interval(-0.0000004, 0.5) == "[0.0, 50.0]"


def test_a_study_of_two_annotators_says_one_pair(workspace, tmp_path):
    # k = 2: the pairwise κ is over one pair of annotators, and the report said "mean of 1 pairs"
    rte_study(workspace.engine, tmp_path, name="two", test=10, annotators_per_item=2)
    simulate(workspace.engine, "two", 2, 0.85, seed=3)
    text = render_markdown(study_report(workspace.engine, "two", bootstrap=0))
    row = next(line for line in text.splitlines() if line.startswith("| Cohen's κ, pairwise"))
    assert "mean of 1 pair;" in row


def test_fleiss_undefined_detail_has_no_stray_space(cli, tmp_path: Path):
    """One label per item: the report's Fleiss' κ detail is the reason alone, in the terminal
    table and in Markdown, not " (undefined: …)" with a leading space and brackets."""
    rows = ["item,annotator,label,gold,premise,hypothesis"]
    for i in range(6):
        gold = "entailment" if i % 2 else "not_entailment"
        rows.append(f"{i},w{i},{gold},{gold},The kettle {i} is hot.,A kettle is warm.")
    path = tmp_path / "single.csv"
    path.write_text("\n".join(rows) + "\n")
    imported = cli(
        "import-labels", path, "--task", "superglue/rte", "--study", "solo", "--k", "5",
        "--map", "item=item,annotator=annotator,label=label,gold=gold,premise=premise,"
        "hypothesis=hypothesis",
    )  # fmt: skip
    assert imported.code == 0, imported.stderr
    reason = "undefined: no item has two or more labels"
    markdown = cli("report", "solo", "--format", "markdown").stdout
    assert f"| Fleiss' κ | – |  | {reason} |" in markdown
    [line] = [x for x in cli("report", "solo").stdout.splitlines() if "Fleiss' κ" in x]
    assert f"│ {reason}" in line and f"({reason})" not in line
