"""`annotate compare STUDY --model A --model B` with lm-evaluation-harness sample logs
(`--log_samples`) and long id,prediction tables: each model beside the human majority, its
predictions matched to the items by the dataset's idx, McNemar's figures those of statsmodels.

The logs are written as the harness writes them (lm_eval/evaluator.py, `--log_samples`): a
folder per model (`org__name`) with `results_<date>.json` and `samples_<task>_<date>.jsonl`,
one object per document with doc_id, doc (the dataset's row: `idx`, the integer label),
target, arguments, resps, filtered_resps (one [loglikelihood, is_greedy] per choice of the
task's `doc_to_choice`) and the metric values. The harness logs a task's validation split, so
the studies here are made of validation items."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.contingency_tables import mcnemar

from annotate.simulate import simulate
from tests.engine_helpers import rte_rows, rte_study
from tests.unit.test_export import read_official, simulated_study

N_TEST = 40
DATE = "2026-03-01T10-11-12.345678"
# The Hub's ClassLabel orders (aps/super_glue): CB's is not the order of tasks/superglue/cb.toml.
RTE_NAMES = ["entailment", "not_entailment"]
CB_NAMES = ["entailment", "contradiction", "neutral"]


def _document(doc_id: int, doc: dict[str, Any], names: list[str], answer: str, as_text: bool):
    """One logged document whose highest-loglikelihood choice is `answer`."""
    scores = [-0.25 if n == answer else -1.5 - i for i, n in enumerate(names)]
    resps = [[str(s), "False"] if as_text else [s, False] for s in scores]
    target = names.index(doc["label"])
    hub_doc = {**doc, "label": target}  # the Hub's integer label
    return {
        "doc_id": doc_id,
        "doc": hub_doc,
        "target": target,
        "arguments": [[f"{doc.get('premise', '')}\nQuestion:", f" {n}"] for n in names],
        "resps": [[r] for r in resps],
        "filtered_resps": resps,
        "doc_hash": "0" * 64,
        "prompt_hash": "1" * 64,
        "target_hash": "2" * 64,
        "acc": float(answer == doc["label"]),
    }


def write_log(
    folder: Path,
    task: str,
    rows: list[dict[str, Any]],
    names: list[str],
    wrong: set[int],
    as_text: bool = False,
) -> Path:
    """samples_<task>_<date>.jsonl of a model right on every row but those whose idx is in
    `wrong` (there it answers the next class of the Hub's order)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(d) for d in _documents(rows, names, wrong, as_text)]
    path = folder / f"samples_{task}_{DATE}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _documents(rows, names, wrong, as_text) -> list[dict[str, Any]]:
    documents = []
    for n, row in enumerate(rows):
        right = row["label"]
        answer = names[(names.index(right) + 1) % len(names)] if row["idx"] in wrong else right
        documents.append(_document(n, row, names, answer, as_text))
    return documents


def write_array_log(
    folder: Path,
    task: str,
    rows: list[dict[str, Any]],
    names: list[str],
    wrong: set[int],
    model_args: str,
    as_text: bool = False,
) -> Path:
    """The same documents as harness 0.4.0 to 0.4.2 logged them (their lm_eval/__main__.py):
    `<model_args>_<task>.jsonl` (`/` and `=` written `__`) in the --output_path folder, one
    JSON array written with indent=2, beside `results.json`; no hashes in the documents."""
    folder.mkdir(parents=True, exist_ok=True)
    documents = _documents(rows, names, wrong, as_text)
    for d in documents:
        for key in ("doc_hash", "prompt_hash", "target_hash"):
            del d[key]
    name = "{}_{}".format(re.sub("/|=", "__", model_args), task)
    path = folder / f"{name}.jsonl"
    path.write_text(json.dumps(documents, indent=2))
    results = folder / "results.json"
    configs = json.loads(results.read_text())["configs"] if results.exists() else {}
    config = {"model": "hf", "model_args": model_args}
    results.write_text(
        json.dumps({"results": {}, "configs": {**configs, task: {}}, "config": config}, indent=2)
    )
    return path


def write_results(folder: Path, model_name: str) -> None:
    (folder / f"results_{DATE}.json").write_text(
        json.dumps({"results": {}, "model_name": model_name, "config": {"model": "hf"}})
    )


@pytest.fixture
def studies(workspace, tmp_path: Path) -> dict[str, Any]:
    """An RTE study of 40 items (idx 1000..1039) and a CB study of 10 (idx 200..209)."""
    rte_study(workspace.engine, tmp_path / "rte", test=N_TEST, test_split="dev")
    simulate(workspace.engine, "pilot", 5, 0.75, seed=2)
    _, cb_file = simulated_study(
        workspace.engine, tmp_path, "superglue/cb", name="cb", sample="all", split="dev"
    )
    cb_rows = [json.loads(line) for line in cb_file.read_text().splitlines()]
    return {"rte": rte_rows(N_TEST, 1000), "cb": cb_rows}


@pytest.fixture
def results(studies, tmp_path: Path) -> Path:
    """A harness results folder: two models, each with logs of two tasks."""
    root = tmp_path / "results"
    a, b = root / "org__model-a", root / "model-b"
    write_log(a, "sglue_rte", studies["rte"], RTE_NAMES, wrong={1001, 1004, 1007, 1010, 1013})
    write_log(a, "cb", studies["cb"], CB_NAMES, wrong={201})
    write_results(a, "org/model-a")
    wrong_b = {1000, 1002, 1005, 1009, 1011, 1020, 1021, 1022, 1030}
    write_log(b, "sglue_rte", studies["rte"], RTE_NAMES, wrong=wrong_b, as_text=True)
    write_log(b, "cb", studies["cb"], CB_NAMES, wrong={200, 202, 203}, as_text=True)
    return root


def _right(answers: dict[str, str], gold: dict[str, str]) -> list[bool]:
    return [answers[i] == gold[i] for i in sorted(gold)]


def test_a_results_folder_gives_each_model_beside_the_humans(cli, studies, results, tmp_path):
    out = cli("compare", "pilot", "--model", results, "--format", "json", "--bootstrap", "200")
    assert out.code == 0, out.stderr
    data = out.json()
    assert [m["model"]["name"] for m in data["models"]] == ["model-b", "org/model-a"]
    gold = {str(r["idx"]): r["label"] for r in studies["rte"]}
    assert cli("export", "pilot", "--to", tmp_path / "h", "--format", "superglue").code == 0
    human = read_official(tmp_path / "h" / "RTE.jsonl")
    flip = {"entailment": "not_entailment", "not_entailment": "entailment"}
    wrong = {
        "org/model-a": {1001, 1004, 1007, 1010, 1013},
        "model-b": {1000, 1002, 1005, 1009, 1011, 1020, 1021, 1022, 1030},
    }
    for result in data["models"]:
        name = result["model"]["name"]
        model = {i: flip[g] if int(i) in wrong[name] else g for i, g in gold.items()}
        assert result["matching"]["matched"] == N_TEST
        assert result["matching"]["sample_items_without_prediction"] == 0
        assert result["model_scores"]["task_score"]["value"] == pytest.approx(
            1 - len(wrong[name]) / N_TEST
        )
        h, m = _right(human, gold), _right(model, gold)
        pairs = list(zip(h, m, strict=True))
        table = [
            [sum(a and b for a, b in pairs), sum(a and not b for a, b in pairs)],
            [sum(b and not a for a, b in pairs), sum(not a and not b for a, b in pairs)],
        ]
        expected = mcnemar(table, exact=True)
        test = result["mcnemar"]
        assert [
            [test["table"]["both_right"], test["table"]["human_only_right"]],
            [test["table"]["model_only_right"], test["table"]["neither_right"]],
        ] == table
        assert test["p_value"] == pytest.approx(expected.pvalue)
        assert test["statistic"] == pytest.approx(expected.statistic)
        assert result["model_scores"]["task_score"]["interval"]["method"].startswith("Wilson")
    printed = cli("compare", "pilot", "--model", results, "--bootstrap", "0")
    text = " ".join(printed.stdout.split())
    assert "model org/model-a" in text and "model model-b" in text and "human majority" in text


def test_cb_labels_are_named_by_the_hubs_order_not_the_tasks(cli, studies, results):
    """CB's choice 1 is contradiction on the Hub, neutral in tasks/superglue/cb.toml."""
    out = cli("compare", "cb", "--model", results, "--format", "json", "--bootstrap", "0")
    assert out.code == 0, out.stderr
    scores = {m["model"]["name"]: m["model_scores"] for m in out.json()["models"]}
    n = len(studies["cb"])
    assert scores["org/model-a"]["scores"]["accuracy"]["value"] == pytest.approx((n - 1) / n)
    assert scores["model-b"]["scores"]["accuracy"]["value"] == pytest.approx((n - 3) / n)


def test_one_sample_log_and_a_long_table_side_by_side(cli, studies, results, tmp_path):
    log = results / "org__model-a" / f"samples_sglue_rte_{DATE}.jsonl"
    table = tmp_path / "preds.csv"
    rows = ["item,answer,system"]
    for r in studies["rte"][:30]:  # the table covers 30 of the 40 items
        rows.append(f"{r['idx']},{r['label']},gpt-x")
    table.write_text("\n".join(rows) + "\n")
    out = cli(
        "compare", "pilot", "--model", log, "--model", table,
        "--map", "id=item", "--map", "prediction=answer", "--map", "model=system",
        "--format", "json", "--bootstrap", "0",
    )  # fmt: skip
    assert out.code == 0, out.stderr
    a, gpt = out.json()["models"]
    assert a["model"]["name"] == "org/model-a" and gpt["model"]["name"] == "gpt-x"
    assert gpt["model_scores"]["task_score"]["value"] == 1.0
    assert gpt["n_items"] == 30 and gpt["matching"]["sample_items_without_prediction"] == 10
    assert gpt["matching"]["without_prediction"] == [str(i) for i in range(1030, 1040)]


def test_what_matches_no_item_is_counted_and_named(cli, studies, tmp_path):
    folder = tmp_path / "run" / "m"
    rows = [*studies["rte"][:35], {**studies["rte"][0], "idx": 5000}]
    log = write_log(folder, "sglue_rte", rows, RTE_NAMES, wrong=set())
    lines = log.read_text().splitlines()
    stray = json.loads(lines[1])
    del stray["doc"]["idx"]
    lines[1] = json.dumps(stray)
    log.write_text("\n".join(lines) + "\n")
    out = cli("compare", "pilot", "--model", log, "--bootstrap", "0")
    assert out.code == 0, out.stderr
    text = " ".join((out.stdout + out.stderr).split())
    assert "35 of 35 predictions matched an item" not in text
    assert "34 of 35 predictions matched an item" in text
    assert "6 sample items without a prediction: 1001, 1035, 1036, 1037, 1038, 1039" in text
    assert "1 document without an idx, not matched: doc_id 1" in text
    data = cli("compare", "pilot", "--model", log, "--bootstrap", "0", "--format", "json").json()
    assert data["matching"]["not_in_sample"] == 1 and data["matching"]["not_in_sample_ids"] == [
        "5000"
    ]


def test_mistakes_are_one_line(cli, studies, results, tmp_path):
    cb_log = results / "model-b" / f"samples_cb_{DATE}.jsonl"
    out = cli("compare", "pilot", "--model", cb_log)
    assert out.code == 1
    assert "harness task 'cb'; study task superglue/rte is logged as: sglue_rte" in out.stderr
    empty = tmp_path / "empty"
    (empty / "m").mkdir(parents=True)
    (empty / "m" / f"samples_boolq_{DATE}.jsonl").write_text("{}\n")
    out = cli("compare", "pilot", "--model", empty)
    assert out.code == 1 and "no sample log of superglue/rte" in out.stderr
    assert "the logs here are of: boolq" in out.stderr
    out = cli("compare", "pilot", "--model", cb_log, "--map", "colour=x")
    assert out.code == 1 and "--map colour: a prediction table maps id, prediction, model" in (
        out.stderr
    )
    broken = tmp_path / "m2" / f"samples_sglue_rte_{DATE}.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"doc_id": 0, "doc": {"idx": 1000}, "filtered_resps": [["x", "y"]]}\n')
    out = cli("compare", "pilot", "--model", broken)
    assert out.code == 1 and f"{broken}:1: filtered_resps are not loglikelihoods" in out.stderr
    # A string where the harness writes a list was refused as "empty": the line says what.
    broken.write_text('{"doc_id": 0, "doc": {"idx": 1000}, "filtered_resps": "x"}\n')
    out = cli("compare", "pilot", "--model", broken)
    assert out.code == 1 and "Traceback" not in out.stderr
    assert f'{broken}:1: filtered_resps is a string ("x") where the harness writes a list' in (
        out.stderr
    )
    assert "empty" not in out.stderr


def test_the_report_takes_a_sample_log_as_a_model_row(cli, studies, results):
    out = cli("report", "pilot", "--model", results, "--format", "json", "--bootstrap", "0")
    assert out.code == 0, out.stderr
    names = {m["name"]: m for m in out.json()["models"]}
    assert names["org/model-a"]["task_score"]["value"] == pytest.approx(35 / 40)


def _log_lines(docs: list[tuple[dict[str, Any], int, int]]) -> str:
    """Sample-log lines of (doc, number of choices, the choice of highest loglikelihood)."""
    lines = []
    for n, (doc, n_choices, best) in enumerate(docs):
        resps = [[-0.2 if c == best else -2.0 - c, False] for c in range(n_choices)]
        lines.append(
            json.dumps(
                {
                    "doc_id": n,
                    "doc": doc,
                    "target": 0,
                    "arguments": [],
                    "resps": [[r] for r in resps],
                    "filtered_resps": resps,
                    "acc": 0.0,
                }
            )
        )
    return "\n".join(lines) + "\n"


def test_multirc_documents_are_candidate_answers(cli, workspace, tmp_path):
    """One document per candidate answer, idx {paragraph, question, answer}; the model is right
    on every answer but one, so one question of ten misses its exact match."""
    _, data = simulated_study(
        workspace.engine, tmp_path, "superglue/multirc", name="m", sample="all", split="dev"
    )
    docs = []
    for line in data.read_text().splitlines():
        paragraph = json.loads(line)
        for q in paragraph["passage"]["questions"]:
            for a in q["answers"]:
                idx = {"paragraph": paragraph["idx"], "question": q["idx"], "answer": a["idx"]}
                best = a["label"] if a["idx"] != 0 else 1 - a["label"]
                docs.append(({"idx": idx, "label": a["label"]}, 2, best))
    log = tmp_path / "lm" / f"samples_multirc_{DATE}.jsonl"
    log.parent.mkdir()
    log.write_text(_log_lines(docs))
    out = cli("compare", "m", "--model", log, "--format", "json", "--bootstrap", "0")
    assert out.code == 0, out.stderr
    result = out.json()
    assert result["matching"]["matched"] == 10
    assert result["model_scores"]["scores"]["em"]["value"] == pytest.approx(9 / 10)


def test_record_answers_are_the_entity_of_highest_loglikelihood(cli, workspace, tmp_path):
    _, data = simulated_study(
        workspace.engine, tmp_path, "superglue/record", name="r", sample="all", split="dev"
    )
    docs = []
    for line in data.read_text().splitlines():
        passage = json.loads(line)
        text = passage["passage"]["text"]
        entities = [text[e["start"] : e["end"] + 1] for e in passage["passage"]["entities"]]
        for q in passage["qas"]:
            right = entities.index(q["answers"][0]["text"])
            best = right if q["idx"] % 2 == 0 else (right + 1) % len(entities)
            idx = {"passage": passage["idx"], "query": q["idx"]}
            docs.append(({"idx": idx, "entities": entities}, len(entities), best))
    log = tmp_path / "lm" / f"samples_record_{DATE}.jsonl"
    log.parent.mkdir()
    log.write_text(_log_lines(docs))
    out = cli("compare", "r", "--model", log, "--format", "json", "--bootstrap", "0")
    assert out.code == 0, out.stderr
    result = out.json()
    assert result["matching"]["matched"] == 10
    assert result["model_scores"]["scores"]["record_em"]["value"] == pytest.approx(5 / 10)


def test_a_log_or_file_of_another_split_than_the_studys_items_is_refused(cli, workspace, tmp_path):
    """The same idx on another split is another item: scored, it would be a number about
    nothing. A harness log is of the validation split; `RTE_val.jsonl` says it is too."""
    rte_study(workspace.engine, tmp_path / "rte", name="t", test=N_TEST)  # test items
    simulate(workspace.engine, "t", 5, 0.75, seed=2)
    log = write_log(
        tmp_path / "lm" / "org__m", "sglue_rte", rte_rows(N_TEST, 1000), RTE_NAMES, set()
    )
    val_file = tmp_path / "RTE_val.jsonl"
    val_file.write_text(
        "".join(
            json.dumps({"idx": r["idx"], "label": r["label"]}) + "\n"
            for r in rte_rows(N_TEST, 1000)
        )
    )
    for model in (log, val_file):
        refused = cli("compare", "t", "--model", model, "--bootstrap", "0")
        assert refused.code == 1, refused.stdout
        assert "its predictions are on the dev split; the study's items are from test" in (
            refused.stderr
        )
        report = cli("report", "t", "--model", model, "--bootstrap", "0")
        assert report.code == 1 and "on the dev split" in report.stderr


def test_a_folder_gives_the_file_of_the_studys_split_where_it_has_one(cli, workspace, tmp_path):
    """jiant writes `RTE_val.jsonl` beside the test file `RTE.jsonl`: given the folder, a study
    of validation items scored the test predictions on them by idx (other items), with no
    word; `compare` and the benchmark row now take the file named for the study's split."""
    rte_study(workspace.engine, tmp_path / "rte", name="v", test=N_TEST, test_split="dev")
    simulate(workspace.engine, "v", 5, 0.75, seed=2)
    folder = tmp_path / "jiant"
    folder.mkdir()
    rows = rte_rows(N_TEST, 1000)
    flip = {"entailment": "not_entailment", "not_entailment": "entailment"}
    for name, right in (("RTE.jsonl", False), ("RTE_val.jsonl", True)):
        lines = [
            {"idx": r["idx"], "label": r["label"] if right else flip[r["label"]]} for r in rows
        ]
        (folder / name).write_text("".join(json.dumps(line) + "\n" for line in lines))
    compared = cli("compare", "v", "--model", folder, "--format", "json", "--bootstrap", "0")
    assert compared.code == 0, compared.stderr
    assert compared.json()["model_scores"]["task_score"]["value"] == pytest.approx(1.0)
    row = cli(
        "report",
        "--benchmark",
        "superglue",
        "--study",
        "v",
        "--model",
        folder,
        "--format",
        "json",
        "--bootstrap",
        "0",
    )
    assert row.code == 0, row.stderr
    (task,) = row.json()["tasks"]
    assert task["models"]["jiant"]["value"] == pytest.approx(1.0)


@pytest.mark.parametrize("task", ["glue/qqp", "glue/mrpc"])
def test_a_qqp_or_mrpc_log_is_refused_against_items_of_glues_own_files(
    cli, workspace, tmp_path, task
):
    """The Hub numbers QQP's rows, and MRPC's as they stand in msr_paraphrase_train.txt; the
    harness's documents keep that idx. GLUE's dev.tsv gives Quora's pair id (QQP) or its own
    row numbers (MRPC): matched by idx, a document met another item (here the log's idx 100..
    are the file's ids of other rows). Items imported from the Hub's rows match."""
    _, tsv = simulated_study(
        workspace.engine, tmp_path, task, name="tsv", sample="all", split="dev"
    )
    header, *lines = [line.split("\t") for line in tsv.read_text().splitlines()]
    rows = [dict(zip(header, cells, strict=True)) for cells in lines]
    label, file_id = header[-1], header[0]
    shift = 3  # the Hub's idx of the file's rows: other numbers than the file's ids
    hub = [
        {
            **{k: v for k, v in row.items() if k not in (file_id, label)},
            "label": int(row[label]),
            "idx": int(row[file_id]) + shift,
        }
        for row in rows
    ]
    harness_task = task.removeprefix("glue/")
    log = tmp_path / "lm" / f"samples_{harness_task}_{DATE}.jsonl"
    log.parent.mkdir()
    log.write_text(_log_lines([(doc, 2, doc["label"]) for doc in hub]))  # right on every row
    older = tmp_path / "lm-0.4.2" / f"pretrained__org__m_{harness_task}.jsonl"  # one array
    older.parent.mkdir()
    older.write_text(json.dumps([json.loads(line) for line in log.read_text().splitlines()]))
    for command, model in [(c, m) for c in ("compare", "report") for m in (log, older)]:
        refused = cli(command, "tsv", "--model", model, "--bootstrap", "0")
        assert refused.code == 1, refused.stdout
        assert f"{model}: the harness's {harness_task} documents carry the Hugging Face" in (
            refused.stderr
        )
        assert "read from dev.tsv" in refused.stderr and "Traceback" not in refused.stderr
    hub_file = tmp_path / "hub" / "validation.jsonl"
    hub_file.parent.mkdir()
    hub_file.write_text("".join(json.dumps(doc) + "\n" for doc in hub))
    assert cli("import", task, hub_file).code == 0
    hub_study = ["--task", task, "--protocol", "quick", "--sample", "all"]
    created = cli("study", "create", "hub", *hub_study, "--test", hub_file.name)
    assert created.code == 0, created.stderr
    simulate(workspace.engine, "hub", 5, 0.8, seed=2)
    out = cli("compare", "hub", "--model", log, "--format", "json", "--bootstrap", "0")
    assert out.code == 0, out.stderr
    result = out.json()
    assert result["matching"]["matched"] == len(hub)
    assert result["model_scores"]["scores"]["accuracy"]["value"] == 1.0


def test_a_nan_loglikelihood_is_the_harness_choice(cli, studies, tmp_path):
    """The harness takes `np.argmax` of the loglikelihoods, so a choice whose loglikelihood is
    nan (a model run in half precision) is its answer; the model is scored on that answer."""
    log = write_log(tmp_path / "lm" / "org__half", "sglue_rte", studies["rte"], RTE_NAMES, set())
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    first = lines[0]
    wrong = 1 - first["doc"]["label"]  # the Hub's integer label
    first["filtered_resps"] = [["-0.1", "False"], ["-0.1", "False"]]
    first["filtered_resps"][wrong] = ["nan", "False"]  # the right choice is the other
    first["acc"] = 0.0
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = cli("compare", "pilot", "--model", log, "--format", "json", "--bootstrap", "0")
    assert out.code == 0, out.stderr
    result = out.json()
    harness_acc = sum(line["acc"] for line in lines) / len(lines)
    assert result["model_scores"]["scores"]["accuracy"]["value"] == pytest.approx(harness_acc)
    assert str(first["doc"]["idx"]) in (
        result["items"]["human_only_right"] + result["items"]["neither_right"]
    )


WRONG_A = {1001, 1004, 1007, 1010, 1013}
WRONG_B = {1000, 1002, 1005, 1009, 1011, 1020, 1021, 1022, 1030}


def _same_result(result: dict[str, Any]) -> dict[str, Any]:
    """What a comparison finds, without where the predictions were read from."""
    return {k: result[k] for k in ("model_scores", "items", "matching", "mcnemar", "n_items")}


def test_an_older_harness_log_scores_as_the_same_documents_in_todays_layout(
    cli, studies, results, tmp_path
):
    """Harness 0.4.0 to 0.4.2 wrote one JSON array per task, `<model_args>_<task>.jsonl`,
    all models in the --output_path folder: a file and the folder give the same answers."""
    old = tmp_path / "old-results"
    a_log = write_array_log(
        old, "sglue_rte", studies["rte"], RTE_NAMES, WRONG_A, "pretrained=org/model-a"
    )
    write_array_log(old, "cb", studies["cb"], CB_NAMES, {201}, "pretrained=org/model-a")
    write_array_log(
        old, "sglue_rte", studies["rte"], RTE_NAMES, WRONG_B, "pretrained=model-b,dtype=float16",
        as_text=True,
    )  # fmt: skip
    assert a_log.name == "pretrained__org__model-a_sglue_rte.jsonl"
    new_log = results / "org__model-a" / f"samples_sglue_rte_{DATE}.jsonl"
    compare = ("compare", "pilot", "--format", "json", "--bootstrap", "0")
    from_new = cli(*compare, "--model", new_log)
    from_old = cli(*compare, "--model", a_log)
    assert from_old.code == 0, from_old.stderr
    assert from_old.json()["model"]["name"] == "org/model-a"
    assert _same_result(from_old.json()) == _same_result(from_new.json())
    new_folder = cli(*compare, "--model", results).json()["models"]
    old_folder = cli(*compare, "--model", old)
    assert old_folder.code == 0, old_folder.stderr
    models = old_folder.json()["models"]
    assert [m["model"]["name"] for m in models] == ["model-b", "org/model-a"]
    assert [_same_result(m) for m in models] == [_same_result(m) for m in new_folder]
    cb = cli("compare", "cb", "--model", old, "--format", "json", "--bootstrap", "0")
    assert cb.code == 0, cb.stderr
    assert cb.json()["model"]["name"] == "org/model-a"  # model-b logged no CB
    report = cli("report", "pilot", "--model", old, "--format", "json", "--bootstrap", "0")
    assert report.code == 0, report.stderr
    rows = {m["name"]: m for m in report.json()["models"]}
    assert rows["org/model-a"]["task_score"]["value"] == pytest.approx(35 / 40)


def test_an_older_logs_mistakes_name_the_record(cli, workspace, tmp_path):
    """Its documents span many lines each: a mistake is named by its record number; what
    today's layout refuses (several filters, another split) it refuses too. The study is of
    test items: the documents are read, and refused for their split, only once readable."""
    rte_study(workspace.engine, tmp_path / "rte", name="t", test=N_TEST)
    simulate(workspace.engine, "t", 5, 0.75, seed=2)
    rows = rte_rows(N_TEST, 1000)
    log = write_array_log(tmp_path / "lm", "sglue_rte", rows, RTE_NAMES, set(), "pretrained=org/m")
    documents = json.loads(log.read_text())
    broken = [dict(d) for d in documents]
    del broken[6]["filtered_resps"]
    log.write_text(json.dumps(broken, indent=2))
    out = cli("compare", "t", "--model", log)
    assert out.code == 1 and "Traceback" not in out.stderr
    assert f"{log}: record 7: expected the harness's 'doc' and 'filtered_resps'" in out.stderr
    broken = [dict(d) for d in documents]
    broken[2]["filtered_resps"] = [["x", "y"], ["x", "y"]]
    log.write_text(json.dumps(broken, indent=2))
    out = cli("compare", "t", "--model", log)
    assert f"{log}: record 3: filtered_resps are not loglikelihoods" in out.stderr
    log.write_text(json.dumps([*documents, documents[4]], indent=2))  # two filters' documents
    out = cli("compare", "t", "--model", log)
    assert f"{log}: record 41: a second document with idx 1004" in out.stderr
    log.write_text(json.dumps(documents, indent=2)[:-40])  # cut short
    out = cli("compare", "t", "--model", log)
    assert out.code == 1 and "not valid JSON" in out.stderr
    assert f"{log}:" in out.stderr and f"{log}:1:" not in out.stderr  # where it breaks
    log.write_text(json.dumps(documents, indent=2))
    for command in ("compare", "report"):
        refused = cli(command, "t", "--model", log, "--bootstrap", "0")
        assert refused.code == 1 and "its predictions are on the dev split" in refused.stderr
    neither = tmp_path / "lm" / "pretrained__org__x_sglue_rte.jsonl"  # neither layout
    neither.write_text(json.dumps([{"idx": 1000}], indent=2))
    out = cli("compare", "t", "--model", neither)
    assert out.code == 1 and "Traceback" not in out.stderr and str(neither) in out.stderr


def test_a_model_logged_by_both_harness_layouts_takes_the_dated_log(cli, studies, tmp_path):
    """A model's folder given to an older harness as --output_path and then to a newer one
    holds both layouts: the dated log is the newer run (no harness writing the older layout
    wrote a dated one), as the newest of several dated logs is taken; a folder of older logs
    only gives its models."""
    root = tmp_path / "results"
    twice = root / "org__model-a"
    write_array_log(
        twice, "sglue_rte", studies["rte"], RTE_NAMES, WRONG_B, "pretrained=org/model-a"
    )
    write_log(twice, "sglue_rte", studies["rte"], RTE_NAMES, WRONG_A)
    write_results(twice, "org/model-a")
    write_array_log(root / "older", "sglue_rte", studies["rte"], RTE_NAMES, set(), "pretrained=c")
    out = cli("compare", "pilot", "--model", root, "--format", "json", "--bootstrap", "0")
    assert out.code == 0, out.stderr
    scores = {
        m["model"]["name"]: m["model_scores"]["task_score"]["value"] for m in out.json()["models"]
    }
    assert scores == {"c": 1.0, "org/model-a": pytest.approx(1 - len(WRONG_A) / N_TEST)}


def test_a_log_is_told_by_its_head_however_long_its_first_document(tmp_path: Path):
    """A ReCoRD document runs to kilobytes: the first line is read whole, an older log's array
    by how it starts; a file of plain predictions is no log."""
    from annotate.scoring.harness import is_sample_log

    doc = {"doc_id": 0, "doc": {"passage": "word " * 3000, "idx": 0}, "filtered_resps": [[-1.0]]}
    lines = tmp_path / "long.jsonl"
    lines.write_text(json.dumps(doc) + "\n" + json.dumps({**doc, "doc_id": 1}) + "\n")
    array = tmp_path / "pretrained__m_record.jsonl"
    array.write_text(json.dumps([doc, {**doc, "doc_id": 1}], indent=2))
    plain = tmp_path / "RTE.jsonl"
    plain.write_text('{"idx": 0, "label": "entailment"}\n{"idx": 1, "label": "entailment"}\n')
    assert [is_sample_log(p) for p in (lines, array, plain)] == [True, True, False]


def test_a_task_no_harness_task_logs_says_so_and_what_to_give(cli, workspace, tmp_path):
    """AX-b has no harness task: the refusal says so and names the files that do work, where
    it read "harness task none" and "is logged as: none"."""
    simulated_study(workspace.engine, tmp_path, "superglue/axb", name="axb", split="dev")
    log = write_log(tmp_path / "res" / "org__lm", "axb", rte_rows(4), RTE_NAMES, wrong=set())
    for given in (log, tmp_path / "res"):
        out = cli("compare", "axb", "--model", given)
        assert out.code == 1
        text = " ".join(out.stderr.split())
        assert "none" not in text
        assert "lm-evaluation-harness has no task for superglue/axb" in text
        assert "its submission file (AX-b.jsonl) or an id,prediction table" in text
        assert str(given) in text
