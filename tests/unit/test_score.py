"""`annotate score PRED --gold GOLD`: the standard scorer run locally, on small files written
here in the official layouts, checked against sklearn/scipy and hand counts; folders, zips,
the benchmark score, diagnostics per phenomenon, and every way a file can be wrong."""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

import pytest
from scipy import stats
from sklearn.metrics import f1_score, matthews_corrcoef

from tests import fixtures as fx


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    return fx.write_jsonl(path, rows)


def tsv(path: Path, lines: list[str]) -> Path:
    return fx.write_text(path, "\n".join(lines) + "\n")


def score_json(cli, *args: Any) -> dict[str, Any]:
    result = cli("score", *args, "--format", "json")
    assert result.code == 0, result.stderr
    return result.json()


def rte_gold(path: Path, n: int = 6) -> Path:
    labels = ["entailment", "not_entailment"]
    rows = [
        {"premise": f"p{i}", "hypothesis": f"h{i}", "label": labels[i % 3 == 0], "idx": i}
        for i in range(n)
    ]
    return jsonl(path, rows)


# --- metrics ---------------------------------------------------------------------------------


def test_accuracy_and_coverage_by_id(cli, tmp_path: Path):
    gold = rte_gold(tmp_path / "RTE" / "val.jsonl")  # gold: not, ent, ent, not, ent, ent
    pred = jsonl(
        tmp_path / "RTE.jsonl",
        [
            {"idx": 2, "label": "entailment"},  # right (order does not matter)
            {"idx": 0, "label": "entailment"},  # wrong
            {"idx": 1, "label": "entailment"},  # right
            {"idx": 99, "label": "entailment"},  # not in gold: reported, not scored
        ],
    )
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    assert task["task"] == "superglue/rte"
    assert task["scores"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert task["coverage"] == {
        "unit": "item",
        "scored": 3,
        "gold": 6,
        "fraction": 0.5,
        "predictions": 4,
        "not_in_gold": 1,
        "complete": False,
    }
    # As a leaderboard would score it: the 3 ids left out count wrong, 2 right of 6.
    wrong = task["missing_counted_wrong"]
    assert wrong["scores"]["accuracy"]["value"] == pytest.approx(2 / 6)


def test_a_multirc_file_missing_an_answer_is_incomplete_and_not_exact(cli, tmp_path: Path):
    """One question's answer is left out: coverage counts answers, the answer counts as wrong
    for F1a (gold true: a false negative) and its question is no exact match."""
    paragraph = {
        "text": "Ines planted beans in May and picked them in July.",
        "questions": [
            {
                "idx": 0,
                "question": "When did Ines plant?",
                "answers": [
                    {"idx": 0, "text": "May", "label": 1},
                    {"idx": 1, "text": "July", "label": 0},
                ],
            },
            {
                "idx": 1,
                "question": "What did she pick?",
                "answers": [
                    {"idx": 2, "text": "Beans", "label": 1},
                    {"idx": 3, "text": "Peas", "label": 0},
                ],
            },
        ],
    }
    gold = jsonl(tmp_path / "MultiRC" / "val.jsonl", [{"idx": 0, "passage": paragraph}])
    full = {
        "idx": 0,
        "passage": {
            "questions": [
                {"idx": 0, "answers": [{"idx": 0, "label": 1}, {"idx": 1, "label": 0}]},
                {"idx": 1, "answers": [{"idx": 2, "label": 1}, {"idx": 3, "label": 0}]},
            ]
        },
    }
    [task] = score_json(cli, jsonl(tmp_path / "a" / "MultiRC.jsonl", [full]), "--gold", gold)[
        "tasks"
    ]
    assert task["coverage"]["complete"] and task["coverage"]["answers_missing"] == 0
    assert task["scores"]["em"]["value"] == 1.0 and task["missing_counted_wrong"] is None

    full["passage"]["questions"][1]["answers"] = [{"idx": 3, "label": 0}]  # "Beans" left out
    [task] = score_json(cli, jsonl(tmp_path / "b" / "MultiRC.jsonl", [full]), "--gold", gold)[
        "tasks"
    ]
    cov = task["coverage"]
    assert (cov["scored"], cov["gold"]) == (2, 2)  # every question is there ...
    assert (cov["answers_gold"], cov["answers_given"], cov["answers_missing"]) == (4, 3, 1)
    assert not cov["complete"] and "counts as wrong" in cov["rule"]  # ... but not every answer
    assert task["scores"]["em"]["value"] == pytest.approx(0.5)
    # F1a over all 4 answers: tp 1 (May), fn 1 (Beans, missing), fp 0.
    assert task["scores"]["f1a"]["value"] == pytest.approx(2 * 1 / (2 * 1 + 0 + 1))


def test_a_benchmark_folder_with_an_incomplete_file_is_partial(cli, tmp_path: Path):
    gold = rte_gold(tmp_path / "RTE" / "val.jsonl")  # gold: not, ent, ent, not, ent, ent
    folder = tmp_path / "sub"
    jsonl(
        folder / "RTE.jsonl", [{"idx": 1, "label": "entailment"}, {"idx": 2, "label": "entailment"}]
    )
    data = score_json(cli, folder, "--gold", gold.parent.parent)
    [bench] = data["benchmarks"]
    assert bench["partial"] and bench["incomplete"] == ["superglue/rte"]
    assert "ids missing from superglue/rte" in bench["note"]
    assert bench["tasks"]["superglue/rte"] == pytest.approx(1.0)  # on the ids it answers
    assert bench["score_missing_counted_wrong"] == pytest.approx(2 / 6)
    table = cli("score", folder, "--gold", gold.parent.parent).stdout
    assert "(incomplete)" in table and "counted wrong" in table


def test_stsb_pearson_and_spearman_equal_scipy(cli, tmp_path: Path):
    golds = [4.6, 0.25, 3.8, 1.0, 2.5, 5.0, 0.0, 3.2]
    preds = [4.1, 0.8, 3.9, 2.2, 2.4, 4.75, 0.3, 2.6]
    header = (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    )
    gold = tsv(
        tmp_path / "STS-B" / "dev.tsv",
        [header]
        + [
            f'{i}\tmain\tf\t2012\t{i:04d}\tnone\tnone\ts{i}\t"t{i}\t{g:.3f}'
            for i, g in enumerate(golds)
        ],
    )
    pred = tsv(
        tmp_path / "STS-B.tsv",
        ["index\tprediction"] + [f"{i}\t{p:.3f}" for i, p in enumerate(preds)],
    )
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    assert task["scores"]["pearson"]["value"] == pytest.approx(
        stats.pearsonr(golds, preds)[0], abs=1e-12
    )
    assert task["scores"]["spearman"]["value"] == pytest.approx(
        stats.spearmanr(golds, preds)[0], abs=1e-12
    )


def test_constant_predictions_say_why_the_correlation_is_undefined(cli, tmp_path: Path):
    header = (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    )
    gold = tsv(
        tmp_path / "STS-B" / "dev.tsv",
        [header]
        + [f"{i}\tmain\tf\t2012\t{i:04d}\tnone\tnone\ts{i}\tt{i}\t{i}.0" for i in range(4)],
    )
    pred = tsv(tmp_path / "STS-B.tsv", ["index\tprediction"] + [f"{i}\t2.5" for i in range(4)])
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    assert task["scores"]["pearson"]["value"] is None
    why = "Pearson and Spearman are undefined: the predictions are all 2.5 (no variance)."
    assert task["notes"] == [why]
    assert f"note: glue/stsb: {why}" in cli("score", pred, "--gold", gold).stderr


def test_a_perfect_correlation_gets_an_interval_not_its_rounding_noise(cli, tmp_path: Path):
    """Pearson 1 on every resample differs in the last bits: it read [1.0 - 2e-16, 1.0 + 2e-16],
    above 1 and zero wide; it gets the score-type interval, as Spearman did."""
    golds = [0.2, 1.1, 1.9, 2.6, 3.3, 4.0, 4.4, 0.7]
    header = (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    )
    gold = tsv(
        tmp_path / "STS-B" / "dev.tsv",
        [header]
        + [f"{i}\tm\tf\t2012\t{i:04d}\tnone\tnone\ts{i}\tt{i}\t{g}" for i, g in enumerate(golds)],
    )
    pred = tsv(
        tmp_path / "STS-B.tsv",
        ["index\tprediction"] + [f"{i}\t{g + 0.5:.3f}" for i, g in enumerate(golds)],
    )
    [task] = score_json(cli, pred, "--gold", gold, "--bootstrap", "200")["tasks"]
    pearson, spearman = task["scores"]["pearson"], task["scores"]["spearman"]
    assert pearson["value"] == pytest.approx(1.0)
    assert pearson["ci_high"] <= 1.0 and pearson["ci_low"] < 0.99
    assert (pearson["ci_low"], pearson["ci_high"]) == (spearman["ci_low"], spearman["ci_high"])


def test_multirc_f1a_over_answers_and_exact_match_per_question(cli, tmp_path: Path):
    gold = jsonl(tmp_path / "MultiRC" / "val.jsonl", fx.SG_MULTIRC)  # q0: a0=1 a1=0; q1: 1 0 1
    line = {
        "idx": 0,
        "passage": {
            "questions": [
                {"idx": 0, "answers": [{"idx": 0, "label": 1}, {"idx": 1, "label": 1}]},
                {
                    "idx": 1,
                    "answers": [
                        {"idx": 2, "label": 1},
                        {"idx": 3, "label": 0},
                        {"idx": 4, "label": 1},
                    ],
                },
            ]
        },
    }
    pred = jsonl(tmp_path / "MultiRC.jsonl", [line])
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    gold_flat, pred_flat = [1, 0, 1, 0, 1], [1, 1, 1, 0, 1]
    assert task["scores"]["f1a"]["value"] == pytest.approx(f1_score(gold_flat, pred_flat))
    assert task["scores"]["em"]["value"] == pytest.approx(0.5)
    assert task["coverage"]["unit"] == "question"


def test_record_is_normalised_exact_match(cli, tmp_path: Path):
    gold = jsonl(tmp_path / "ReCoRD" / "val.jsonl", fx.SG_RECORD)
    pred = jsonl(tmp_path / "ReCoRD.jsonl", [{"idx": 5, "label": "the Harbor City!"}])
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    assert task["scores"] == {
        "record_f1": {"value": 1.0, "ci_low": None, "ci_high": None},
        "record_em": {"value": 1.0, "ci_low": None, "ci_high": None},
    }


def axg_rows(n: int) -> list[dict[str, Any]]:
    """The real AX-g layout: rows 2k and 2k+1 share the hypothesis and differ in the premise's
    pronoun; pair_id is unique per row (it groups nothing)."""
    return [
        {
            "premise": f"The nurse said {'she' if i % 2 else 'he'} would call ({i // 2}).",
            "hypothesis": f"The nurse would call ({i // 2}).",
            "idx": i,
            "pair_id": 551646 + 2 * i,
            "label": "entailment" if i % 2 else "not_entailment",
        }
        for i in range(n)
    ]


def gender_parity_as_jiant(preds: list[str], rows: list[dict[str, Any]]) -> float:
    """jiant's GenderParity: walk the rows in order, pair 2k with 2k+1, assert the pair shares
    its hypothesis, count the pairs predicted alike."""
    same = 0
    for k in range(0, len(rows), 2):
        assert rows[k]["hypothesis"] == rows[k + 1]["hypothesis"]
        same += preds[k] == preds[k + 1]
    return same / (len(rows) // 2)


def test_axg_gender_parity_pairs_rows_2k_and_2k_plus_1(cli, tmp_path: Path):
    rows = axg_rows(6)
    gold = jsonl(tmp_path / "AX-g" / "AX-g.jsonl", rows)
    preds = ["entailment", "entailment", "not_entailment", "entailment", "entailment", "entailment"]
    pred = jsonl(tmp_path / "AX-g.jsonl", [{"idx": i, "label": p} for i, p in enumerate(preds)])
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    assert task["scores"]["gender_parity"]["value"] == pytest.approx(2 / 3)  # pairs 0 and 2 alike
    assert task["scores"]["gender_parity"]["value"] == pytest.approx(
        gender_parity_as_jiant(preds, rows)
    )
    assert task["scores"]["accuracy"]["value"] == pytest.approx(4 / 6)


def test_axg_rows_that_share_no_hypothesis_are_refused(cli, tmp_path: Path):
    rows = axg_rows(4)
    rows[3]["hypothesis"] = "Someone else would call."
    gold = jsonl(tmp_path / "AX-g" / "AX-g.jsonl", rows)
    pred = jsonl(tmp_path / "AX-g.jsonl", [{"idx": i, "label": "entailment"} for i in range(4)])
    result = cli("score", pred, "--gold", gold)
    assert result.code == 1
    assert "ids 2 and 3 should form a minimal pair but their hypothesis differs" in result.stderr


def test_axg_gender_parity_on_the_real_file_equals_jiants_pairing(cli, tmp_path: Path):
    from tests.conftest import shared_file

    source = shared_file("superglue/AX-g/AX-g.jsonl")
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    # One label per row, from a seeded coin: some pairs alike, some not.
    rng = random.Random(4)
    preds = [rng.choice(["entailment", "not_entailment"]) for _ in rows]
    pred = jsonl(
        tmp_path / "AX-g.jsonl",
        [{"idx": r["idx"], "label": p} for r, p in zip(rows, preds, strict=True)],
    )
    [task] = score_json(cli, pred, "--gold", source)["tasks"]
    assert task["coverage"]["scored"] == 356
    assert task["scores"]["gender_parity"]["value"] == pytest.approx(
        gender_parity_as_jiant(preds, rows), abs=1e-12
    )


DIAGNOSTIC_ROWS = [
    # lexical, predicate-argument, logic, knowledge, label
    ("Lexical entailment", "", "Negation", "", "contradiction"),
    ("", "", "Negation;Conditionals", "", "neutral"),
    ("Quantifiers", "Active/Passive", "", "", "entailment"),
    ("", "", "Negation", "World knowledge", "entailment"),
    ("Lexical entailment", "", "", "", "neutral"),
    ("", "Active/Passive", "Conditionals", "", "contradiction"),
    ("", "", "Negation", "", "neutral"),
    ("Lexical entailment;Quantifiers", "", "", "Common sense", "entailment"),
]
DIAGNOSTIC_PRED = [
    "contradiction",
    "contradiction",
    "entailment",
    "neutral",
    "neutral",
    "contradiction",
    "neutral",
    "neutral",
]


def test_glue_diagnostic_gives_r3_per_category_and_tag(cli, tmp_path: Path):
    header = "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\tPremise\tHypothesis\tLabel"
    lines = [header] + [
        f"{a}\t{b}\t{c}\t{d}\tNews\tP{i}\tH{i}\t{e}"
        for i, (a, b, c, d, e) in enumerate(DIAGNOSTIC_ROWS)
    ]
    gold = fx.write_text(
        tmp_path / "diagnostic" / "diagnostic-full.tsv", "\r\n".join(lines) + "\r\n"
    )
    pred = tsv(
        tmp_path / "AX.tsv",
        ["index\tprediction"] + [f"{i}\t{p}" for i, p in enumerate(DIAGNOSTIC_PRED)],
    )
    result = score_json(cli, pred, "--gold", gold)
    [task] = result["tasks"]
    assert result["benchmarks"] == []  # the diagnostic is not part of the GLUE score
    golds = [r[4] for r in DIAGNOSTIC_ROWS]
    assert task["scores"]["r3"]["value"] == pytest.approx(matthews_corrcoef(golds, DIAGNOSTIC_PRED))
    diag = task["diagnostics"]
    assert diag["metric"] == "r3"
    assert list(diag["coarse"]) == [
        "Lexical Semantics",
        "Predicate-Argument Structure",
        "Logic",
        "Knowledge",
    ]

    def r3(rows: list[int]) -> float:
        return matthews_corrcoef([golds[i] for i in rows], [DIAGNOSTIC_PRED[i] for i in rows])

    logic = [0, 1, 3, 5, 6]
    assert diag["coarse"]["Logic"]["n"] == len(logic)
    assert diag["coarse"]["Logic"]["value"] == pytest.approx(r3(logic))
    assert diag["fine"]["Logic"]["Negation"]["value"] == pytest.approx(r3([0, 1, 3, 6]))
    assert diag["fine"]["Lexical Semantics"]["Quantifiers"]["n"] == 2
    assert "models" not in diag["coarse"]["Logic"]

    table = cli("score", pred, "--gold", gold)
    assert table.code == 0
    assert "R3 per phenomenon" in table.stdout and "Negation" in table.stdout


def _diagnostic_files(tmp_path: Path) -> tuple[Path, Path]:
    header = "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\tPremise\tHypothesis\tLabel"
    lines = [header] + [
        f"{a}\t{b}\t{c}\t{d}\tNews\tP{i}\tH{i}\t{e}"
        for i, (a, b, c, d, e) in enumerate(DIAGNOSTIC_ROWS)
    ]
    gold = fx.write_text(tmp_path / "diagnostic" / "diagnostic-full.tsv", "\n".join(lines) + "\n")
    pred = tsv(
        tmp_path / "AX.tsv",
        ["index\tprediction"] + [f"{i}\t{p}" for i, p in enumerate(DIAGNOSTIC_PRED)],
    )
    return pred, gold


def _table_rows(stdout: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip("│┃").split("│" if "│" in line else "┃")]
        for line in stdout.splitlines()
        if line.startswith(("│", "┃"))
    ]


def test_score_per_phenomenon_reads_as_the_report_does_and_has_no_empty_ci_column(
    cli, tmp_path: Path
):
    """The same figures in the same words as the report's table (report.sections.diagnostics):
    "All tagged items", "Phenomenon", "(any)", 2 decimals; no interval column without
    intervals, but a line saying how to get them."""
    pred, gold = _diagnostic_files(tmp_path)
    plain = cli("score", pred, "--gold", gold)
    assert plain.code == 0, plain.stderr
    rows = _table_rows(plain.stdout)
    header = ["Category", "Phenomenon", "n", "R3"]
    assert header in rows
    golds = [r[4] for r in DIAGNOSTIC_ROWS]
    everything = f"{matthews_corrcoef(golds, DIAGNOSTIC_PRED):.2f}"
    assert ["All tagged items", "", "8", everything] in rows
    assert rows[rows.index(header) + 2][:2] == ["Lexical Semantics", "(any)"]
    assert "--bootstrap 1000" in plain.stdout

    boot = cli("score", pred, "--gold", gold, "--bootstrap", "200")
    rows = _table_rows(boot.stdout)
    assert [*header, "95% CI"] in rows
    [all_tagged] = [r for r in rows if r[0] == "All tagged items"]
    assert all_tagged[3] == everything and all_tagged[4].startswith("[")
    assert "--bootstrap 1000" not in boot.stdout


def test_axb_gives_mcc_per_tag_and_takes_int_ids_for_string_ones(cli, tmp_path: Path):
    gold = jsonl(tmp_path / "AX-b" / "AX-b.jsonl", fx.SG_AXB)  # "idx": "0", "1"
    pred = jsonl(
        tmp_path / "AX-b.jsonl",
        [{"idx": 0, "label": "entailment"}, {"idx": 1, "label": "entailment"}],
    )
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    assert task["coverage"]["scored"] == 2
    assert task["diagnostics"]["metric"] == "mcc"
    assert set(task["diagnostics"]["fine"]["Logic"]) == {
        "Universal",
        "Upward monotone",
        "Existential",
    }


def test_counted_wrong_scores_the_file_completed_with_wrong_answers(cli, tmp_path: Path):
    """A 12-row AX-b file read "MCC 83.7", then "-98.0" counted wrong, with no word why. The
    score counted wrong is that of the complete file a leaderboard takes, each item left out
    answered wrong, for MCC as for accuracy and F1 (sklearn on that file), and the line says
    why an MCC falls below 0. With three classes an item left out was a 'no answer' class no
    file can hold (R3 and macro-F1 of no actual file): now the next class in label order."""
    axb_gold = [
        {"idx": i, "sentence1": f"s{i}", "sentence2": f"t{i}", "logic": "", "label": label}
        for i, label in enumerate(["entailment", "not_entailment"] * 10)
    ]
    gold = jsonl(tmp_path / "AX-b" / "AX-b.jsonl", axb_gold)
    pred = jsonl(
        tmp_path / "AX-b.jsonl", [{"idx": r["idx"], "label": r["label"]} for r in axb_gold[:4]]
    )
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    other = {"entailment": "not_entailment", "not_entailment": "entailment"}
    golds = [r["label"] for r in axb_gold]
    completed = golds[:4] + [other[g] for g in golds[4:]]
    wrong = task["missing_counted_wrong"]
    assert task["scores"]["mcc"]["value"] == 1.0
    assert wrong["scores"]["mcc"]["value"] == pytest.approx(matthews_corrcoef(golds, completed))
    assert wrong["rule"] == "each item left out has the other class"
    text = " ".join(cli("score", pred, "--gold", gold).stdout.split())
    assert (
        "counting what it leaves out as wrong (each item left out has the other class), as a "
        "leaderboard would score that complete file, the score is -60.0; MCC is below 0 when "
        "most of a file's answers are wrong, near -100 when it leaves out most items"
    ) in text

    # Three classes: R3 (GLUE's diagnostic) and CB's macro-F1 of the file completed with the
    # next class in label order (entailment, neutral, contradiction).
    order = ["entailment", "neutral", "contradiction"]
    following = {c: order[(i + 1) % 3] for i, c in enumerate(order)}
    header = "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\tPremise\tHypothesis\tLabel"
    ax_gold = fx.write_text(
        tmp_path / "diagnostic" / "diagnostic-full.tsv",
        "\n".join(
            [header]
            + [
                f"{a}\t{b}\t{c}\t{d}\tNews\tP{i}\tH{i}\t{e}"
                for i, (a, b, c, d, e) in enumerate(DIAGNOSTIC_ROWS)
            ]
        )
        + "\n",
    )
    golds = [r[4] for r in DIAGNOSTIC_ROWS]
    ax = tsv(
        tmp_path / "AX.tsv",
        ["index\tprediction"] + [f"{i}\t{p}" for i, p in enumerate(DIAGNOSTIC_PRED[:5])],
    )
    [task] = score_json(cli, ax, "--gold", ax_gold)["tasks"]
    completed = DIAGNOSTIC_PRED[:5] + [following[g] for g in golds[5:]]
    assert task["missing_counted_wrong"]["scores"]["r3"]["value"] == pytest.approx(
        matthews_corrcoef(golds, completed)
    )
    assert (
        task["missing_counted_wrong"]["rule"]
        == "each item left out has the next class in label order"
    )

    cb_labels = ["entailment", "contradiction", "neutral", "entailment", "neutral", "contradiction"]
    cb_gold = jsonl(
        tmp_path / "CB" / "val.jsonl",
        [
            {"premise": f"p{i}", "hypothesis": f"h{i}", "label": g, "idx": i}
            for i, g in enumerate(cb_labels)
        ],
    )
    cb = jsonl(
        tmp_path / "CB.jsonl", [{"idx": 0, "label": "entailment"}, {"idx": 1, "label": "neutral"}]
    )
    [task] = score_json(cli, cb, "--gold", cb_gold)["tasks"]
    completed = ["entailment", "neutral"] + [following[g] for g in cb_labels[2:]]
    scores = task["missing_counted_wrong"]["scores"]
    assert scores["accuracy"]["value"] == pytest.approx(1 / 6)
    assert scores["macro_f1"]["value"] == pytest.approx(
        f1_score(cb_labels, completed, average="macro")
    )


# --- folders, zips, the benchmark score ------------------------------------------------------


def test_folder_of_submissions_against_the_download_layout(cli, tmp_path: Path):
    data = tmp_path / "SuperGLUE"
    rte_gold(data / "RTE" / "val.jsonl")
    jsonl(data / "RTE" / "test.jsonl", [{"premise": "p", "hypothesis": "h", "idx": 0}])  # no labels
    jsonl(data / "BoolQ" / "val.jsonl", fx.SG_BOOLQ)
    preds = tmp_path / "preds"
    jsonl(preds / "RTE.jsonl", [{"idx": i, "label": "entailment"} for i in range(6)])
    jsonl(preds / "BoolQ.jsonl", [{"idx": 0, "label": "true"}, {"idx": 1, "label": "true"}])
    fx.write_text(preds / "notes.txt", "not a submission\n")
    result = score_json(cli, preds, "--gold", data)
    tasks = {t["task"]: t for t in result["tasks"]}
    assert tasks["superglue/rte"]["gold"] == str(data / "RTE" / "val.jsonl")
    assert tasks["superglue/rte"]["scores"]["accuracy"]["value"] == pytest.approx(4 / 6)
    assert tasks["superglue/boolq"]["scores"]["accuracy"]["value"] == pytest.approx(1 / 2)
    [bench] = result["benchmarks"]
    assert bench["benchmark"] == "superglue"
    assert bench["score"] == pytest.approx((4 / 6 + 1 / 2) / 2)
    assert bench["partial"] and bench["n_tasks_covered"] == 2 and bench["n_tasks"] == 8
    assert "superglue/cb" in bench["missing"]
    assert result["skipped"] == ["notes.txt"]

    # The same files zipped (as `annotate export --zip` writes them) score the same.
    archive = tmp_path / "superglue.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for p in sorted(preds.iterdir()):
            z.write(p, p.name)
    zipped = score_json(cli, archive, "--gold", data)
    assert [t["task_score"] for t in zipped["tasks"]] == [t["task_score"] for t in result["tasks"]]
    assert zipped["tasks"][0]["file"] == f"{archive}!BoolQ.jsonl"


def test_two_submissions_of_one_task_in_a_folder_or_zip_are_refused(cli, tmp_path: Path):
    """The benchmark's score would take whichever came last, and a zip flattened to one name
    would keep only one of the two files, without a word."""
    data = tmp_path / "SuperGLUE"
    rte_gold(data / "RTE" / "val.jsonl")
    preds = tmp_path / "preds"
    jsonl(preds / "RTE.jsonl", [{"idx": i, "label": "entailment"} for i in range(6)])
    jsonl(preds / "RTE_val.jsonl", [{"idx": i, "label": "not_entailment"} for i in range(6)])
    result = cli("score", preds, "--gold", data)
    assert result.code == 1
    assert "RTE.jsonl and RTE_val.jsonl are both superglue/rte" in result.stderr
    archive = tmp_path / "two.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(preds / "RTE.jsonl", "a/RTE.jsonl")
        z.write(preds / "RTE_val.jsonl", "b/RTE.jsonl")
    result = cli("score", archive, "--gold", data)
    assert result.code == 1
    assert "a/RTE.jsonl and b/RTE.jsonl would be one file RTE.jsonl" in result.stderr


def test_glue_score_averages_mnli_matched_and_mismatched_into_one_task(cli, tmp_path: Path):
    data = tmp_path / "glue_data"
    header = "index\tsentence1\tsentence2\tgold_label"
    tsv(data / "MNLI" / "dev_matched.tsv", [header, "0\ta\tb\tentailment", "1\tc\td\tneutral"])
    tsv(
        data / "MNLI" / "dev_mismatched.tsv", [header, "0\ta\tb\tcontradiction", "1\tc\td\tneutral"]
    )
    tsv(data / "RTE" / "dev.tsv", ["index\tsentence1\tsentence2\tlabel", "0\ta\tb\tentailment"])
    preds = tmp_path / "preds"
    tsv(preds / "MNLI-m.tsv", ["index\tprediction", "0\tentailment", "1\tneutral"])  # 1.0
    tsv(preds / "MNLI-mm.tsv", ["index\tprediction", "0\tneutral", "1\tneutral"])  # 0.5
    tsv(preds / "RTE.tsv", ["index\tprediction", "0\tnot_entailment"])  # 0.0
    [bench] = score_json(cli, preds, "--gold", data)["benchmarks"]
    assert bench["tasks"] == {"glue/mnli": 0.75, "glue/rte": 0.0}
    assert bench["score"] == pytest.approx(0.375)


def test_cola_predictions_in_the_hubs_class_names_score_as_zero_and_one(cli, tmp_path: Path):
    """A model trained on the Hub's glue/cola writes its ClassLabel names, not GLUE's 0/1."""
    gold = fx.write_text(tmp_path / "CoLA" / "dev.tsv", fx.COLA_HEADERLESS)  # gold: 1, 0, 1, 0
    digits = tsv(tmp_path / "a" / "CoLA.tsv", ["index\tprediction", "0\t1", "1\t1", "2\t1", "3\t0"])
    names = tsv(
        tmp_path / "b" / "CoLA.tsv",
        ["index\tprediction", "0\tacceptable", "1\tAcceptable", "2\tacceptable", "3\tunacceptable"],
    )
    expected = matthews_corrcoef([1, 0, 1, 0], [1, 1, 1, 0])
    for pred in (digits, names):
        [task] = score_json(cli, pred, "--gold", gold)["tasks"]
        assert task["scores"]["mcc"]["value"] == pytest.approx(expected)


# The Hub's ClassLabel names in the Hub's order (nyu-mll/glue, aps/super_glue), wherever they
# are not the leaderboard's labels; index i is the harness table's class i.
HUB_CLASS_NAMES = {
    "cola": ("unacceptable", "acceptable"),
    "sst2": ("negative", "positive"),
    "mrpc": ("not_equivalent", "equivalent"),
    "qqp": ("not_duplicate", "duplicate"),
    "wnli": ("not_entailment", "entailment"),
    "boolq": ("False", "True"),
    "copa": ("choice1", "choice2"),
    "multirc": ("False", "True"),
    "wic": ("False", "True"),
    "wsc": ("False", "True"),
}


@pytest.mark.parametrize("hub_task", sorted(HUB_CLASS_NAMES))
def test_every_hub_class_name_decodes_to_the_label_of_its_index(hub_task: str, tmp_path: Path):
    from annotate.scoring.harness import HARNESS_TASKS
    from annotate.scoring.predictions import decode_prediction
    from annotate.specs import load_task

    harness = HARNESS_TASKS[hub_task]
    assert harness.classes is not None
    spec = load_task(harness.task)
    for name, value in zip(HUB_CLASS_NAMES[hub_task], harness.classes, strict=True):
        assert decode_prediction(name, spec, tmp_path / "x", 1) == value


def test_a_gold_file_of_the_other_mnli_half_is_refused(cli, tmp_path: Path):
    """MNLI-mm.tsv against dev_matched.tsv was scored (35 for a file worth 97.5 against its own
    dev_mismatched.tsv): both halves number their rows from 0, so the ids matched other items.
    An import refuses that file for MNLI-mm; the scorer now does too."""
    header = "index\tsentence1\tsentence2\tgold_label"
    matched = tsv(tmp_path / "MNLI" / "dev_matched.tsv", [header, "0\ta\tb\tentailment"])
    mismatched = tsv(tmp_path / "MNLI" / "dev_mismatched.tsv", [header, "0\ta\tb\tneutral"])
    pred_mm = tsv(tmp_path / "preds" / "MNLI-mm.tsv", ["index\tprediction", "0\tneutral"])
    pred_m = tsv(tmp_path / "preds" / "MNLI-m.tsv", ["index\tprediction", "0\tentailment"])
    for pred, gold, owner in [
        (pred_mm, matched, "glue/mnli-m"),
        (pred_m, mismatched, "glue/mnli-mm"),
    ]:
        result = cli("score", pred, "--gold", gold)
        assert result.code == 1, result.stdout
        assert f"{gold}: a file of {owner} by its name" in result.stderr
        assert f"score {owner}'s predictions against it" in result.stderr
    for pred, gold in [(pred_mm, mismatched), (pred_m, matched)]:
        [task] = score_json(cli, pred, "--gold", gold)["tasks"]
        assert task["scores"]["accuracy"]["value"] == 1.0


def test_jiant_split_suffix_and_task_option(cli, tmp_path: Path):
    data = tmp_path / "data"
    rte_gold(data / "RTE" / "val.jsonl")
    pred = jsonl(tmp_path / "RTE_val.jsonl", [{"idx": 0, "label": "not_entailment"}])
    assert score_json(cli, pred, "--gold", data)["tasks"][0]["scores"]["accuracy"]["value"] == 1.0
    odd = jsonl(tmp_path / "my-model.jsonl", [{"idx": 0, "label": "not_entailment"}])
    result = score_json(cli, odd, "--gold", data / "RTE" / "val.jsonl", "--task", "superglue/rte")
    assert result["tasks"][0]["task"] == "superglue/rte"


def test_a_file_named_for_another_split_than_its_gold_file_is_refused(cli, tmp_path: Path):
    """`RTE_val.jsonl` against `train.jsonl` was scored (the same ids there are other items),
    though `compare` refuses such a pair and a gold folder is searched by the split named."""
    train = rte_gold(tmp_path / "RTE" / "train.jsonl")
    named_train = rte_gold(tmp_path / "mine" / "RTE_train_part.jsonl")
    val = rte_gold(tmp_path / "RTE" / "val.jsonl")
    pred = jsonl(tmp_path / "RTE_val.jsonl", [{"idx": i, "label": "entailment"} for i in range(6)])
    for gold in (train, named_train):
        assert _error(cli, pred, "--gold", gold) == (
            f"error: {pred}: its predictions are on the dev split; the items of {gold} are "
            "from train, and the same ids there are other items"
        )
    assert score_json(cli, pred, "--gold", val)["tasks"][0]["gold"] == str(val)
    # A name that says no split is scored against any split, as before.
    plain = jsonl(tmp_path / "RTE.jsonl", [{"idx": 0, "label": "entailment"}])
    assert score_json(cli, plain, "--gold", train)["tasks"][0]["coverage"]["scored"] == 1
    interval = rte_gold(tmp_path / "interval.jsonl")  # "val" inside a word says no split
    assert score_json(cli, pred, "--gold", interval)["tasks"][0]["coverage"]["scored"] == 6


def test_bootstrap_gives_intervals(cli, tmp_path: Path):
    gold = rte_gold(tmp_path / "val.jsonl", n=30)
    pred = jsonl(tmp_path / "RTE.jsonl", [{"idx": i, "label": "entailment"} for i in range(30)])
    [task] = score_json(cli, pred, "--gold", gold, "--bootstrap", "200", "--seed", "4")["tasks"]
    s = task["scores"]["accuracy"]
    assert s["ci_low"] < s["value"] < s["ci_high"]


# --- every way a file can be wrong: one line naming file, line and reason --------------------


def _error(cli, *args: Any) -> str:
    result = cli("score", *args)
    assert result.code == 1, result.stdout
    assert "Traceback" not in result.stderr
    return result.stderr.strip()


def test_malformed_prediction_files(cli, tmp_path: Path):
    gold = rte_gold(tmp_path / "RTE" / "val.jsonl")
    bad_json = fx.write_text(
        tmp_path / "a" / "RTE.jsonl", '{"idx": 0, "label": "entailment"}\n{"idx": 1,\n'
    )
    assert _error(cli, bad_json, "--gold", gold).startswith(f"error: {bad_json}:2: not valid JSON")
    unknown = jsonl(tmp_path / "b" / "RTE.jsonl", [{"idx": 0, "label": "maybe"}])
    assert f"error: {unknown}:1: unknown prediction 'maybe'" in _error(cli, unknown, "--gold", gold)
    dup = jsonl(tmp_path / "c" / "RTE.jsonl", [{"idx": 0, "label": "entailment"}] * 2)
    assert f"error: {dup}:2: duplicate idx '0'" in _error(cli, dup, "--gold", gold)
    keys = jsonl(tmp_path / "d" / "RTE.jsonl", [{"id": 0, "prediction": "entailment"}])
    assert f"{keys}:1: expected keys 'idx' and 'label'" in _error(cli, keys, "--gold", gold)

    glue_gold = tsv(tmp_path / "SST-2" / "dev.tsv", ["sentence\tlabel", "good .\t1"])
    header = tsv(tmp_path / "e" / "SST-2.tsv", ["id\tlabel", "0\t1"])
    assert f"{header}:1: expected the header 'index<TAB>prediction'" in _error(
        cli, header, "--gold", glue_gold
    )
    ragged = tsv(tmp_path / "f" / "SST-2.tsv", ["index\tprediction", "0\t1\tx"])
    assert f"{ragged}:2: row has 3 fields, expected 2" in _error(cli, ragged, "--gold", glue_gold)
    dup_tsv = tsv(tmp_path / "g" / "SST-2.tsv", ["index\tprediction", "0\t1", "0\t0"])
    assert f"{dup_tsv}:3: duplicate index '0'" in _error(cli, dup_tsv, "--gold", glue_gold)

    mrc_gold = jsonl(tmp_path / "MultiRC" / "val.jsonl", fx.SG_MULTIRC)
    line = {
        "idx": 0,
        "passage": {
            "questions": [{"idx": 0, "answers": [{"idx": 0, "label": 1}, {"idx": 0, "label": 0}]}]
        },
    }
    dup_answer = jsonl(tmp_path / "h" / "MultiRC.jsonl", [line])
    assert f"{dup_answer}:1: duplicate answer idx '0'" in _error(
        cli, dup_answer, "--gold", mrc_gold
    )


def test_a_rating_that_is_not_a_finite_number_is_refused(cli, tmp_path: Path):
    """ "nan" or "inf" is no rating: it was taken as no prediction, and the file scored on
    the rest with exit 0."""
    header = (
        "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    )
    gold = tsv(
        tmp_path / "STS-B" / "dev.tsv",
        [header]
        + [f"{i}\tmain\tf\t2012\t{i:04d}\tnone\tnone\ts{i}\tt{i}\t{i}.0" for i in range(3)],
    )
    for n, value in enumerate(["nan", "inf", "-Infinity", "NaN"]):
        pred = tsv(
            tmp_path / str(n) / "STS-B.tsv", ["index\tprediction", "0\t1", f"1\t{value}", "2\t3"]
        )
        assert _error(cli, pred, "--gold", gold) == (
            f"error: {pred}:3: prediction {value!r} is not a finite number"
        )
    table = fx.write_text(tmp_path / "t" / "preds.csv", "id,prediction\n0,1\n1,nan\n")
    from annotate import specs
    from annotate.errors import DataFileError
    from annotate.scoring.long_predictions import read_long

    with pytest.raises(DataFileError, match=r"preds.csv:3: prediction 'nan' is not a finite"):
        read_long(table, specs.load_task("glue/stsb"), {})


def _two_paragraphs() -> list[dict[str, Any]]:
    """Paragraph 0 holds questions 0 (answers 0, 1) and 1 (answers 2, 3, 4) (fx.SG_MULTIRC);
    paragraph 1 holds question 2 (answers 5, 6)."""
    second = {
        "idx": 1,
        "passage": {
            "text": "Tom sold apples at the market on Friday.",
            "questions": [
                {
                    "question": "What did Tom sell?",
                    "idx": 2,
                    "answers": [
                        {"text": "Apples", "idx": 5, "label": 1},
                        {"text": "Pears", "idx": 6, "label": 0},
                    ],
                }
            ],
        },
    }
    return [*fx.SG_MULTIRC, second]


def _multirc_line(paragraph: int, questions: dict[int, list[int]]) -> dict[str, Any]:
    return {
        "idx": paragraph,
        "passage": {
            "questions": [
                {"idx": q, "answers": [{"idx": a, "label": 1} for a in answers]}
                for q, answers in questions.items()
            ]
        },
    }


def test_multirc_ids_that_do_not_fit_the_golds_nesting_are_refused(cli, tmp_path: Path):
    """Paragraph 5 holding question 0 scored as paragraph 0; an answer under the wrong
    question was dropped, and only "answers missing" was said."""
    gold = jsonl(tmp_path / "MultiRC" / "val.jsonl", _two_paragraphs())
    good = _multirc_line(0, {0: [0, 1], 1: [2, 3, 4]})
    cases = {
        "paragraph": (
            [good, _multirc_line(5, {2: [5, 6]})],
            "2: question 2 is given under paragraph 5; in the gold it is a question of paragraph 1",
        ),
        "answer": (
            [_multirc_line(0, {0: [0, 1], 1: [2, 3]}), _multirc_line(1, {2: [5, 4]})],
            "2: answer 4 is given under question 2, whose answers are 5, 6; it is an answer "
            "of question 1",
        ),
        "stranger": (
            [_multirc_line(0, {0: [0, 1, 77]})],
            "1: answer 77 is given under question 0, whose answers are 0, 1",
        ),
        "question": (
            [good, _multirc_line(1, {2: [5, 6], 9: [70]})],
            "2: question 9 is not a question of paragraph 1",
        ),
    }
    for name, (rows, reason) in cases.items():
        pred = jsonl(tmp_path / name / "MultiRC.jsonl", rows)
        assert _error(cli, pred, "--gold", gold) == f"error: {pred}:{reason}"

    # A paragraph the gold does not have is no item of it: counted, as any other id.
    pred = jsonl(tmp_path / "other" / "MultiRC.jsonl", [good, _multirc_line(8, {9: [70]})])
    [task] = score_json(cli, pred, "--gold", gold)["tasks"]
    assert task["coverage"]["not_in_gold"] == 1 and task["coverage"]["scored"] == 2


def test_multirc_answers_under_the_wrong_question_are_refused_beside_a_study(tmp_path: Path):
    """`compare` and `report --model` score a file on a study's questions, whose paragraphs
    they do not know: the answers are checked all the same."""
    from annotate import specs
    from annotate.errors import DataFileError
    from annotate.formats.gold import read_gold
    from annotate.scoring.local_score import code_gold_file
    from annotate.scoring.model_predictions import model_units
    from annotate.scoring.predictions import read_predictions

    spec = specs.load_task("superglue/multirc")
    units = code_gold_file(read_gold(jsonl(tmp_path / "val.jsonl", _two_paragraphs()), spec))
    pred = jsonl(tmp_path / "MultiRC.jsonl", [_multirc_line(0, {0: [0, 2]})])
    with pytest.raises(DataFileError, match="1: answer 2 is given under question 0"):
        model_units(units, read_predictions(pred, spec))


def test_predictions_that_match_no_gold_id(cli, tmp_path: Path):
    gold = rte_gold(tmp_path / "RTE" / "val.jsonl")
    pred = jsonl(
        tmp_path / "RTE.jsonl",
        [{"idx": 500, "label": "entailment"}, {"idx": 501, "label": "entailment"}],
    )
    message = _error(cli, pred, "--gold", gold)
    assert (
        message
        == f"error: {pred}: none of its 2 predictions matches a labelled item of {gold} (is it the gold file of the same task and split?)"
    )


def test_bad_gold_files(cli, tmp_path: Path):
    pred = jsonl(tmp_path / "RTE.jsonl", [{"idx": 0, "label": "entailment"}])
    unlabelled = jsonl(
        tmp_path / "RTE" / "test.jsonl", [{"premise": "p", "hypothesis": "h", "idx": 0}]
    )
    assert _error(cli, pred, "--gold", unlabelled) == (
        f"error: {unlabelled}: no gold labels in this superglue/rte file (a test file?)"
    )
    # A validation file without labels is not "a test file?" (a Hub file written without its
    # label column): it says so.
    bare = jsonl(tmp_path / "RTE" / "val.jsonl", [{"premise": "p", "hypothesis": "h", "idx": 0}])
    assert _error(cli, pred, "--gold", bare) == (
        f"error: {bare}: no gold labels in this superglue/rte file (a dev file with no label "
        "on any row: its label column left out?)"
    )
    broken = jsonl(
        tmp_path / "x" / "val.jsonl",
        [{"premise": "p", "hypothesis": "h", "idx": 0, "label": "yes"}],
    )
    assert f"error: {broken}:1: unknown label 'yes'" in _error(cli, pred, "--gold", broken)
    dup = jsonl(
        tmp_path / "y" / "val.jsonl",
        [{"premise": "p", "hypothesis": "h", "idx": 0, "label": "entailment"}] * 2,
    )
    assert f"error: {dup}:2: duplicate id '0'" in _error(cli, pred, "--gold", dup)
    empty_folder = tmp_path / "empty"
    empty_folder.mkdir()
    assert "no labelled superglue/rte file found" in _error(cli, pred, "--gold", empty_folder)
    mnli = tmp_path / "out" / "MNLI-m.tsv"
    mnli.parent.mkdir(exist_ok=True)
    mnli.write_text("index\tprediction\n0\tentailment\n", encoding="utf-8")
    said = _error(cli, mnli, "--gold", empty_folder)  # every folder it looked in, by name
    assert "in mnli_matched/, MNLI/, MNLI-m/, MNLI-matched/ and the folder itself" in said
    assert "no such file or folder" in _error(cli, pred, "--gold", tmp_path / "nowhere")


def test_names_that_say_no_task(cli, tmp_path: Path):
    gold = rte_gold(tmp_path / "val.jsonl")
    odd = jsonl(tmp_path / "predictions.jsonl", [{"idx": 0, "label": "entailment"}])
    assert "cannot tell the task from the file name" in _error(cli, odd, "--gold", gold)
    folder = tmp_path / "nothing"
    fx.write_text(folder / "readme.txt", "x\n")
    assert "no submission files" in _error(cli, folder, "--gold", gold)
    assert "--task applies to a single prediction file" in _error(
        cli, folder, "--gold", gold, "--task", "RTE"
    )
    not_zip = fx.write_text(tmp_path / "sub.zip", "plain text")
    assert f"error: {not_zip}: not a valid zip file" == _error(cli, not_zip, "--gold", gold)


def test_a_harness_sample_log_is_named_as_one_not_sent_to_task(cli, tmp_path: Path):
    """It said "cannot tell the task from the file name; pass --task", and with --task
    "expected keys 'idx' and 'label'": `--task` could never make it readable."""
    gold = rte_gold(tmp_path / "val.jsonl")
    logs = Path(__file__).resolve().parents[2] / "examples" / "models" / "lm-eval"
    log = next((logs / "EleutherAI__pythia-1b").glob("samples_sglue_rte_*.jsonl"))
    for extra in ((), ("--task", "superglue/rte")):
        said = _error(cli, log, "--gold", gold, *extra)
        assert "an lm-evaluation-harness sample log, not a submission file" in said
        assert "annotate compare STUDY --model" in said


def test_table_output(cli, tmp_path: Path):
    gold = rte_gold(tmp_path / "RTE" / "val.jsonl")
    pred = jsonl(tmp_path / "RTE.jsonl", [{"idx": i, "label": "entailment"} for i in range(3)])
    result = cli("score", pred, "--gold", gold)
    assert result.code == 0
    text = " ".join(result.stdout.split())
    assert "Accuracy 66.7" in text and "3/6 items" in text
    assert "superglue score: 66.7 (partial: 1 of 8 tasks" in text


def test_test_predictions_against_the_hubs_unlabelled_test_split_say_so(cli, tmp_path: Path):
    """`CB_test.jsonl --gold super_glue` said "no labelled superglue/cb file found (looked for
    dev.jsonl, test.jsonl …)", though the snapshot holds the test split: its labels are -1."""
    from tests import hub_fixtures as hub

    gold = hub.super_glue_snapshot(tmp_path / "super_glue")
    pred = jsonl(tmp_path / "CB_test.jsonl", [{"idx": 0, "label": "neutral"}])
    said = _error(cli, pred, "--gold", gold)
    assert "cb/test-00000-of-00001.parquet: the test split's file has no gold labels" in said
    assert "cannot be scored locally" in said
