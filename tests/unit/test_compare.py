"""`annotate compare STUDY --model FILE`: a model and the study's humans on exactly the same
items; scores agree with the report, McNemar's p with statsmodels on the same table, and the
item lists with the files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from annotate.simulate import simulate
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_rows, rte_study
from tests.unit.test_export import ram_store, read_official, simulated_study

N_TEST = 20


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One store for the module (overrides conftest's): the RTE study is simulated once."""
    with ram_store(tmp_path_factory.mktemp("compare")) as url:
        yield url


@pytest.fixture(scope="module")
def rte(db_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A finished RTE study of 20 labelled test items (ids 1000..1019) and its gold."""
    ws = open_workspace(db_url, create=True)
    rte_study(ws.engine, tmp_path_factory.mktemp("rte"), test=N_TEST)
    simulate(ws.engine, "pilot", 5, 0.75, seed=2)
    ws.engine.dispose()
    return {str(r["idx"]): r["label"] for r in rte_rows(N_TEST, 1000)}


def model_file(path: Path, gold: dict[str, str], wrong: set[int], ids: range | None = None) -> Path:
    """A model right on every item but those in `wrong`."""
    flip = {"entailment": "not_entailment", "not_entailment": "entailment"}
    lines = []
    for i in ids if ids is not None else range(1000, 1000 + N_TEST):
        label = gold[str(i)]
        lines.append(json.dumps({"idx": i, "label": flip[label] if i in wrong else label}))
    path.write_text("\n".join(lines) + "\n")
    return path


def compare_json(cli, *args: Any) -> dict[str, Any]:
    result = cli("compare", *args, "--format", "json", "--bootstrap", "300")
    assert result.code == 0, result.stderr
    return result.json()


def test_compare_scores_both_on_the_same_items_as_the_report(cli, rte, tmp_path: Path):
    model = model_file(tmp_path / "RTE.jsonl", rte, wrong={1001, 1004, 1007, 1010, 1013})
    result = compare_json(cli, "pilot", "--model", model)
    report = cli("report", "pilot", "--format", "json", "--bootstrap", "0", "--model", model).json()
    assert result["n_items"] == N_TEST
    assert result["human"]["task_score"]["value"] == pytest.approx(report["task_score"]["value"])
    assert result["single_annotator"]["task_score"] == pytest.approx(
        report["individual"]["task_score"]["mean"]
    )
    assert result["model_scores"]["task_score"]["value"] == pytest.approx(15 / 20)
    assert result["model_scores"]["task_score"]["value"] == pytest.approx(
        report["models"][0]["task_score"]["value"]
    )
    diff = result["difference"]
    assert diff["value"] == pytest.approx(15 / 20 - report["task_score"]["value"])
    assert diff["ci_low"] <= diff["ci_high"]

    # Which items each gets right, checked against the exported human file and the model file.
    assert cli("export", "pilot", "--to", tmp_path / "out", "--format", "superglue").code == 0
    human = read_official(tmp_path / "out" / "RTE.jsonl")
    model_labels = read_official(model)
    items = result["items"]
    assert sorted(i for ids in items.values() for i in ids) == sorted(rte)
    for key, ids in items.items():
        for i in ids:
            h, m = human[i] == rte[i], model_labels[i] == rte[i]
            assert (
                key
                == {
                    (True, True): "both_right",
                    (True, False): "human_only_right",
                    (False, True): "model_only_right",
                    (False, False): "neither_right",
                }[(h, m)]
            )

    table = [
        [len(items["both_right"]), len(items["human_only_right"])],
        [len(items["model_only_right"]), len(items["neither_right"])],
    ]
    expected = mcnemar(table, exact=True)
    assert result["mcnemar"]["p_value"] == pytest.approx(expected.pvalue)
    assert result["mcnemar"]["statistic"] == pytest.approx(expected.statistic)


def test_compare_on_the_items_the_model_covers(cli, rte, tmp_path: Path):
    model = model_file(tmp_path / "RTE.jsonl", rte, wrong=set(), ids=range(1000, 1010))
    result = compare_json(cli, "pilot", "--model", model)
    assert result["n_items"] == 10
    assert result["model_scores"]["task_score"]["value"] == 1.0
    assert result["coverage"] == {
        "sample": 20,
        "human_scored": 20,
        "model_scored": 10,
        "common": 10,
    }
    assert any("scored on the 10 items" in n for n in result["notes"])
    assert cli("export", "pilot", "--to", tmp_path / "out", "--format", "superglue").code == 0
    human = read_official(tmp_path / "out" / "RTE.jsonl")
    right = sum(human[str(i)] == rte[str(i)] for i in range(1000, 1010))
    assert result["human"]["task_score"]["value"] == pytest.approx(right / 10)


def test_compare_table_prints_both_scores_and_mcnemar(cli, rte, tmp_path: Path):
    (tmp_path / "roberta").mkdir()
    model = model_file(tmp_path / "roberta" / "RTE.jsonl", rte, wrong={1002, 1003})
    result = cli("compare", "pilot", "--model", model, "--bootstrap", "0")
    assert result.code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "human majority" in text and "model roberta" in text and "mean single annotator" in text
    assert "McNemar's test (exact)" in text and "p = " in text
    assert "the same 20 items" in text


def test_a_leaderboard_file_is_named_after_its_folder_as_in_the_benchmark_row(
    cli, rte, tmp_path: Path
):
    """`RTE.jsonl` names the task, not the model: two models' files are named after their
    folders (as `report --benchmark --model DIR` names them), in `compare` and in the report's
    rows; a file of another name keeps its own, and jiant's `RTE_test.jsonl` is a leaderboard
    name too."""
    for folder in ("roberta", "bert", "t5"):
        (tmp_path / folder).mkdir()
    roberta = model_file(tmp_path / "roberta" / "RTE.jsonl", rte, wrong={1002})
    bert = model_file(tmp_path / "bert" / "RTE_test.jsonl", rte, wrong={1003})
    own = model_file(tmp_path / "t5" / "t5-rte.jsonl", rte, wrong=set())
    compared = compare_json(cli, "pilot", "--model", roberta, "--model", bert, "--model", own)
    assert [m["model"]["name"] for m in compared["models"]] == ["roberta", "bert", "t5-rte"]
    args = ("--bootstrap", "0", "--model", roberta, "--model", bert, "--model", own)
    report = cli("report", "pilot", "--format", "json", *args).json()
    assert [m["name"] for m in report["models"]] == ["roberta", "bert", "t5-rte"]


def test_compare_table_on_one_item_says_item_not_items(cli, rte, tmp_path: Path):
    model = model_file(tmp_path / "RTE.jsonl", rte, wrong=set(), ids=range(1000, 1001))
    result = cli("compare", "pilot", "--model", model, "--bootstrap", "0")
    assert result.code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "the same 1 item (x100)" in text


def test_compare_ratings_has_a_difference_but_no_mcnemar(cli, rte, workspace, tmp_path: Path):
    _, data = simulated_study(workspace.engine, tmp_path, "glue/stsb", sample="all")
    lines = ["index\tprediction"]
    for line in data.read_text().splitlines()[1:]:
        cells = line.split("\t")
        lines.append(f"{cells[0]}\t{min(5.0, float(cells[-1]) + 0.5):.3f}")
    model = tmp_path / "STS-B.tsv"
    model.write_text("\n".join(lines) + "\n")
    result = compare_json(cli, "s", "--model", model)
    assert result["mcnemar"] is None and result["items"] is None
    assert result["difference"]["value"] == pytest.approx(
        result["model_scores"]["task_score"]["value"] - result["human"]["task_score"]["value"]
    )
    assert any("ratings have no right or wrong" in n for n in result["notes"])


def test_compare_mistakes(cli, rte, workspace, tmp_path: Path):
    stray = tmp_path / "RTE.jsonl"
    stray.write_text('{"idx": 5, "label": "entailment"}\n')
    result = cli("compare", "pilot", "--model", stray)
    assert (
        result.code == 1 and "no prediction for any labelled item of study 'pilot'" in result.stderr
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"idx": 1000, "label": "maybe"}\n')
    result = cli("compare", "pilot", "--model", bad)
    assert result.code == 1 and f"{bad}:1: unknown prediction 'maybe'" in result.stderr
    assert cli("compare", "nope", "--model", bad).code == 1


def test_a_multirc_answer_given_twice_in_a_long_table_is_refused(tmp_path: Path):
    """The last row would win without a word, scoring whichever came last."""
    from annotate import specs
    from annotate.errors import DataFileError
    from annotate.scoring.long_predictions import read_long

    path = tmp_path / "dup.csv"
    path.write_text("id,prediction\n0/1,1\n0/2,0\n0/1,0\n")
    with pytest.raises(DataFileError, match=r"dup\.csv:4: duplicate id '0/1'"):
        read_long(path, specs.load_task("superglue/multirc"), {})


def test_the_report_and_compare_write_the_same_mcnemar_p(cli, rte, tmp_path: Path):
    # a model wrong on every item: compare said "p = 7.629e-06", the report "p = 0.000"
    (tmp_path / "m").mkdir()
    model = model_file(tmp_path / "m" / "RTE.jsonl", rte, wrong=set(range(1000, 1020)))
    said = cli("compare", "pilot", "--model", model, "--bootstrap", "0").stdout
    p = said.split("; p = ")[1].split()[0]
    report = cli("report", "pilot", "--model", model, "--format", "markdown", "--bootstrap", "0")
    row = next(line for line in report.stdout.splitlines() if line.startswith("| m |"))
    assert row.endswith(f", p = {p} |") and float(p) > 0


@pytest.mark.parametrize(
    ("task", "name", "text"),
    [
        ("glue/sst2", "preds.jsonl", '{"idx": 0, "label": 1}\n'),
        ("glue/sst2", "preds.csv", "idx,label\n0,1\n"),
        ("superglue/cb", "preds.csv", "idx,label\n0,neutral\n"),
        ("superglue/cb", "preds.tsv", "idx\tlabel\n0\tneutral\n"),
    ],
)
def test_a_table_without_its_columns_is_named_a_table_not_a_submission(
    tmp_path: Path, task: str, name: str, text: str
):
    """A file of another suffix than the task's submission file (GLUE's .tsv, SuperGLUE's
    .jsonl) is a table: without `id`/`prediction` it is refused naming its columns and
    `--map`, not as a submission file of another layout ("not valid JSON", "expected the
    header 'index<TAB>prediction'")."""
    from annotate import specs
    from annotate.errors import DataFileError
    from annotate.scoring.model_sources import read_models

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataFileError, match=r"the columns are idx, label; --map id=COLUMN"):
        read_models(path, specs.load_task(task))
    mapped = read_models(path, specs.load_task(task), {"id": "idx", "prediction": "label"})
    assert list(mapped[0].predictions) == ["0"]


def test_a_folder_of_submission_files_is_read_as_report_benchmark_reads_it(
    cli, rte, tmp_path: Path
):
    """`--model roberta/` (the folder `report --benchmark --model` takes) was refused as "no
    lm-evaluation-harness sample logs in it": the task's file in it is the model, named after
    the folder; a folder without it says which file it lacks."""
    folder = tmp_path / "roberta run"
    folder.mkdir()
    model_file(folder / "RTE.jsonl", rte, wrong={1002})
    (folder / "CB.jsonl").write_text('{"idx": 0, "label": "neutral"}\n')
    compared = compare_json(cli, "pilot", "--model", folder)
    assert compared["model"]["name"] == "roberta run"
    assert compared["matching"]["matched"] == N_TEST
    (folder / "RTE.jsonl").unlink()
    result = cli("compare", "pilot", "--model", folder)
    assert result.code == 1 and "nor RTE.jsonl, the task's submission file" in result.stderr


def test_a_caveat_of_the_gold_is_said_once(cli, rte, workspace, tmp_path: Path):
    """A model of one AX-b item: R3's "undefined on one class (the gold labels are all …)"
    was printed twice, once for the humans and once for the model, word for word."""
    _, data = simulated_study(
        workspace.engine, tmp_path, "superglue/axb", name="axb1", sample="all"
    )
    first = json.loads(data.read_text().splitlines()[0])
    model = tmp_path / "AX-b.jsonl"
    model.write_text(json.dumps({"idx": first["idx"], "label": first["label"]}) + "\n")
    result = cli("compare", "axb1", "--model", model, "--bootstrap", "0")
    assert result.code == 0, result.stderr
    text = " ".join((result.stdout + result.stderr).split())
    assert text.count("is undefined on one class (the gold labels are all") == 1
