"""`annotate export` as a researcher uses it: a simulated study of every built-in task is
exported to its leaderboard file, which is read back with a strict reader of the official
layout (FORMATS.md section 3, written out here independently of the task specs) and scored
with `annotate score` to the report's numbers; labels and soft exports, determinism, fill from
a model, benchmark folders, and gold never leaking into a submission."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, select

from annotate import specs
from annotate.formats.importer import import_file
from annotate.protocol.studies import create_study
from annotate.simulate import simulate
from annotate.store.models import Item, Study, StudyItem

# --- stores on a RAM disk -------------------------------------------------------------------

RAM_DISK = Path("/dev/shm")


@contextmanager
def ram_store(fallback: Path) -> Iterator[str]:
    """A SQLite store URL on a RAM disk when the machine has one, else in `fallback`. These
    tests simulate hundreds of answers, each a commit the store syncs to disk; durability is
    tested elsewhere (tests/integration/test_processes.py), here it only costs time."""
    if RAM_DISK.is_dir() and os.access(RAM_DISK, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="annotate-test-", dir=RAM_DISK))
        try:
            yield f"sqlite:///{folder / 'store.db'}"
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        yield f"sqlite:///{fallback / 'store.db'}"


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    """Overrides conftest's `db_url`: the `cli` and `workspace` fixtures use this store."""
    with ram_store(tmp_path) as url:
        yield url


# --- the official layout, as FORMATS.md section 3 states it ----------------------------------

GLUE_VALUES = {
    "CoLA.tsv": {"0", "1"},
    "SST-2.tsv": {"0", "1"},
    "MRPC.tsv": {"0", "1"},
    "QQP.tsv": {"0", "1"},
    "WNLI.tsv": {"0", "1"},
    "STS-B.tsv": None,  # a float with 3 decimals in [0, 5]
    "MNLI-m.tsv": {"entailment", "neutral", "contradiction"},
    "MNLI-mm.tsv": {"entailment", "neutral", "contradiction"},
    "AX.tsv": {"entailment", "neutral", "contradiction"},
    "QNLI.tsv": {"entailment", "not_entailment"},
    "RTE.tsv": {"entailment", "not_entailment"},
}
SUPERGLUE_VALUES: dict[str, set[Any] | None] = {
    "BoolQ.jsonl": {"true", "false"},
    "WiC.jsonl": {"true", "false"},
    "WSC.jsonl": {"True", "False"},
    "CB.jsonl": {"entailment", "contradiction", "neutral"},
    "COPA.jsonl": {0, 1},
    "RTE.jsonl": {"entailment", "not_entailment"},
    "AX-b.jsonl": {"entailment", "not_entailment"},
    "AX-g.jsonl": {"entailment", "not_entailment"},
    "ReCoRD.jsonl": None,  # entity text
    "MultiRC.jsonl": None,  # nested
}
STSB_CELL = re.compile(r"[0-9]\.[0-9]{3}")


def read_official(path: Path) -> dict[str, Any]:
    """Read a submission file as the evaluation server would: exact name, header, label strings
    and types; returns {id: label} (MultiRC: {question id: {answer id: label}})."""
    raw = path.read_bytes()
    assert b"\r" not in raw, "line endings must be \\n"
    assert raw.endswith(b"\n")
    text = raw.decode("utf-8")
    lines = text.split("\n")[:-1]
    out: dict[str, Any] = {}
    if path.name in GLUE_VALUES:
        assert lines[0] == "index\tprediction"
        for line in lines[1:]:
            index, prediction = line.split("\t")  # exactly two cells
            assert re.fullmatch(r"[0-9]+", index), index
            allowed = GLUE_VALUES[path.name]
            if allowed is None:
                assert STSB_CELL.fullmatch(prediction), prediction
                assert 0.0 <= float(prediction) <= 5.0
            else:
                assert prediction in allowed, prediction
            assert index not in out
            out[index] = prediction
        return out
    assert path.name in SUPERGLUE_VALUES, path.name
    for line in lines:
        obj = json.loads(line)
        if path.name == "MultiRC.jsonl":
            assert list(obj) == ["idx", "passage"] and type(obj["idx"]) is int
            assert list(obj["passage"]) == ["questions"]
            for q in obj["passage"]["questions"]:
                assert list(q) == ["idx", "answers"] and type(q["idx"]) is int
                answers = {}
                for a in q["answers"]:
                    assert list(a) == ["idx", "label"] and type(a["idx"]) is int
                    assert type(a["label"]) is int and a["label"] in {0, 1}
                    answers[str(a["idx"])] = a["label"]
                assert str(q["idx"]) not in out
                out[str(q["idx"])] = answers
            continue
        assert list(obj) == ["idx", "label"], line
        assert type(obj["idx"]) is int, line
        allowed = SUPERGLUE_VALUES[path.name]
        if allowed is None:
            assert isinstance(obj["label"], str) and obj["label"]
        else:
            assert obj["label"] in allowed and type(obj["label"]) is type(next(iter(allowed)))
        assert str(obj["idx"]) not in out
        out[str(obj["idx"])] = obj["label"]
    return out


# --- a small labelled file of every task, in its original layout -----------------------------

WORDS = ["harbor", "lantern", "orchard", "ledger", "meadow", "quarry", "signal", "thimble"]
N_ITEMS = 10
SAMPLE = 7


def _text(i: int, what: str) -> str:
    return f"The {WORDS[i % len(WORDS)]} {what} number {i} stood by the gate."


def _label(spec: specs.TaskSpec, i: int) -> str:
    values = spec.label_values()
    return values[(i * 7 + i // 3) % len(values)]


def write_task_file(spec: specs.TaskSpec, folder: Path) -> Path:
    """A labelled file of `spec` with N_ITEMS items (MultiRC: questions), named as the task's
    dev (or, for the diagnostics, test) file."""
    folder.mkdir(parents=True, exist_ok=True)
    split = "dev" if "dev" in spec.source.files else "test"
    path = folder / spec.source.files[split][-1 if spec.name == "glue/ax" else 0]
    if spec.name == "glue/ax":
        return _write_diagnostic(spec, path)
    if spec.source.reader == "tsv":
        return _write_tsv(spec, path)
    if spec.kind == "multi_answer":
        return _write_multirc(path)
    if spec.kind == "entity_choice":
        return _write_record(path)
    return _write_jsonl(spec, path)


def _write_tsv(spec: specs.TaskSpec, path: Path) -> Path:
    if spec.source.headerless_columns:  # CoLA: no header, ids are row numbers
        rows = [f"src{i}\t{_label(spec, i)}\t\t{_text(i, 'sentence')}" for i in range(N_ITEMS)]
        path.write_text("\n".join(rows) + "\n")
        return path
    fields = [f.sources()[0] for f in spec.fields if not f.optional]
    header = [spec.source.id[0], *fields, spec.source.label[0]]
    lines = ["\t".join(header)]
    for i in range(N_ITEMS):
        label = f"{(i * 0.73) % 5:.3f}" if spec.kind == "regression" else _label(spec, i)
        lines.append("\t".join([str(100 + i), *(_text(i, f) for f in fields), label]))
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_diagnostic(spec: specs.TaskSpec, path: Path) -> Path:
    header = "Lexical Semantics\tPredicate-Argument Structure\tLogic\tKnowledge\tDomain\tPremise\tHypothesis\tLabel"
    tags = ["Negation", "Universal;Negation", "", "Universal"]  # Logic's own tags
    lines = [header]
    for i in range(N_ITEMS):
        lex = "Lexical entailment" if i % 3 == 0 else ""
        logic = tags[i % len(tags)]
        lines.append(
            f"{lex}\t\t{logic}\t\tNews\t{_text(i, 'premise')}\t{_text(i, 'hypothesis')}\t{_label(spec, i)}"
        )
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return path


def _nested(key: str, value: Any, obj: dict[str, Any]) -> None:
    head, _, rest = key.partition(".")
    if rest:
        _nested(rest, value, obj.setdefault(head, {}))
    else:
        obj[head] = value


def _json_label(spec: specs.TaskSpec, i: int) -> Any:
    value = _label(spec, i)
    if set(spec.label_values()) == {"true", "false"}:
        return value == "true"
    return int(value) if value.isdigit() else value


def _write_jsonl(spec: specs.TaskSpec, path: Path) -> Path:
    lines = []
    for i in range(N_ITEMS):
        obj: dict[str, Any] = {}
        for f in spec.fields:
            value: Any = _text(i, f.name)
            if f.name in {"start1", "start2", "span1_index"}:
                value = 1
            elif f.name in {"end1", "end2", "span2_index"}:
                value = 3
            elif f.name == "pair_id":
                value = 551646 + 2 * i  # unique per row, as in the real file
            elif spec.minimal_pairs is not None and f.name == spec.minimal_pairs.same:
                value = _text(i // 2, f.name)  # rows 2k and 2k+1 share it
            elif f.name == "question":
                value = "cause" if i % 2 else "effect"
            _nested(f.sources()[0], value, obj)
        obj["idx"] = str(i) if spec.name == "superglue/axb" else 200 + i
        obj["label"] = _json_label(spec, i)
        if spec.source.tag_columns:
            obj["logic"] = "Negation;Conditionals" if i % 2 else "Universal"
            if i % 3 == 0:
                obj["lexical-semantics"] = "Quantifiers"
        lines.append(json.dumps(obj))
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_multirc(path: Path) -> Path:
    lines, question, answer = [], 0, 0
    for p in range(N_ITEMS // 2):
        questions = []
        for _ in range(2):
            answers = []
            for k in range(3):
                answers.append(
                    {"text": f"Answer {answer}", "idx": answer, "label": (answer + k) % 2}
                )
                answer += 1
            questions.append(
                {"question": f"Question {question}?", "answers": answers, "idx": question}
            )
            question += 1
        lines.append(
            json.dumps(
                {
                    "idx": p,
                    "version": 1.1,
                    "passage": {"text": _text(p, "passage"), "questions": questions},
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_record(path: Path) -> Path:
    lines = []
    for p in range(N_ITEMS):
        text = f"Lena Ortiz met Tomas Reyes in Harbor City {p}.\n@highlight\nA meeting"
        entities = [{"start": 0, "end": 9}, {"start": 15, "end": 25}, {"start": 30, "end": 40}]
        answer = entities[p % 3]
        qas = [
            {
                "query": "@placeholder was there.",
                "idx": 300 + p,
                "answers": [{**answer, "text": text[answer["start"] : answer["end"] + 1]}],
            }
        ]
        lines.append(
            json.dumps(
                {
                    "source": "Test",
                    "passage": {"text": text, "entities": entities},
                    "qas": qas,
                    "idx": p,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def simulated_study(
    engine: Any,
    tmp_path: Path,
    task: str,
    *,
    name: str = "s",
    accuracy: float = 0.8,
    sample: int | str = SAMPLE,
    k: int = 5,
    seed: int = 3,
    split: str = "test",
    **settings: Any,
) -> tuple[specs.TaskSpec, Path]:
    """A study of `task` on a small labelled file (of `split`), labelled by k simulated
    annotators (none with k = 0). No training phase: the annotators go straight to the test
    items."""
    spec = specs.load_task(task)
    path = write_task_file(spec, tmp_path / "data" / name)
    dataset = import_file(engine, spec, path, split=split)
    create_study(
        engine,
        name,
        task,
        "quick",
        test_dataset_id=dataset.dataset_id,
        overrides={
            "training_items": 0,
            "gate_min_items": 0,
            "test_sample": sample,
            "annotators_per_item": max(k, 1),
            **settings,
        },
    )
    if k:
        simulate(engine, name, k, accuracy, seed=seed)
    return spec, path


def sampled_ids(engine: Any, study: str) -> set[str]:
    with Session(engine) as s:
        study_id = s.exec(select(Study.id).where(Study.name == study)).one()
        return set(
            s.exec(
                select(Item.source_id)
                .join(StudyItem, StudyItem.item_id == Item.id)
                .where(StudyItem.study_id == study_id, StudyItem.phase == "test")
            ).all()
        )


def report_json(cli, study: str) -> dict[str, Any]:
    result = cli("report", study, "--format", "json", "--bootstrap", "0")
    assert result.code == 0, result.stderr
    return result.json()


ALL_TASKS = sorted(t.name for t in specs.all_tasks())


# --- every task: official file, id set, score == report --------------------------------------


@pytest.mark.parametrize("task", ALL_TASKS)
def test_every_task_exports_the_official_file_that_scores_as_the_report(
    cli, workspace, tmp_path: Path, task: str
):
    # Three annotators: fewer labels to simulate, and 3-way tasks get 1-1-1 ties to settle.
    # STS-B keeps five: the file holds 3 decimals, exact for a mean of 5 whole ratings only.
    k = 5 if task == "glue/stsb" else 3
    seed = ALL_TASKS.index(task)
    spec, data_file = simulated_study(
        workspace.engine, tmp_path, task, k=k, accuracy=0.6, seed=seed
    )
    benchmark = spec.benchmark
    out = tmp_path / "out"
    result = cli("export", "s", "--to", out, "--format", benchmark)
    assert result.code == 0, result.stderr
    target = out / spec.submission.file
    rows = read_official(target)  # SuperGLUE ids are ints, even AX-b's string ids "3"
    sample = sampled_ids(workspace.engine, "s")
    assert set(rows) == sample, "the file has exactly the sampled items, by source id"
    as_numbers = [int(i) for i in rows]
    assert as_numbers == sorted(as_numbers), "rows in source order (ids grow with position)"

    scored = cli("score", target, "--gold", data_file, "--format", "json")
    assert scored.code == 0, scored.stderr
    [entry] = scored.json()["tasks"]
    report = report_json(cli, "s")
    assert entry["task"] == spec.name
    for metric in spec.metrics:
        assert entry["scores"][metric]["value"] == pytest.approx(
            report["scores"][metric]["value"], abs=1e-12
        ), metric
    assert entry["coverage"]["scored"] == report["sample"]["n_items_scored"]
    if task in {"glue/ax", "superglue/axb"}:
        assert entry["diagnostics"]["coarse"].keys() == report["diagnostics"]["coarse"].keys()
        for cat, row in entry["diagnostics"]["coarse"].items():
            assert row["value"] == pytest.approx(report["diagnostics"]["coarse"][cat]["value"])


def test_ties_are_settled_as_the_report_settles_them(cli, workspace, tmp_path: Path):
    """Two annotators on a 3-way task tie often: the random rule's draw must be the report's."""
    _, data_file = simulated_study(
        workspace.engine, tmp_path, "glue/mnli-m", k=2, accuracy=0.5, sample="all", seed=1
    )
    report = report_json(cli, "s")
    assert report["ties"]["resolved_at_random"] >= 2
    assert cli("export", "s", "--to", tmp_path / "out", "--format", "glue").code == 0
    rows = read_official(tmp_path / "out" / "MNLI-m.tsv")
    for tie in report["ties"]["items"]:
        assert rows[tie["item"]] == tie["result"]
    scored = cli("score", tmp_path / "out" / "MNLI-m.tsv", "--gold", data_file, "--format", "json")
    value = scored.json()["tasks"][0]["scores"]["accuracy"]["value"]
    assert value == pytest.approx(report["scores"]["accuracy"]["value"])


def test_ties_left_open_are_left_out_and_listed(cli, workspace, tmp_path: Path):
    simulated_study(
        workspace.engine,
        tmp_path,
        "glue/mnli-m",
        k=2,
        accuracy=0.5,
        sample="all",
        seed=1,
        tie_rule="abstain",
    )
    report = report_json(cli, "s")
    tied = {t["item"] for t in report["ties"]["items"]}
    assert report["ties"]["abstained_counted_wrong"] == len(tied) >= 2
    result = cli("export", "s", "--to", tmp_path / "out", "--format", "glue")
    assert result.code == 0
    assert f"{len(tied)} items whose tie the rule left open have no human answer" in " ".join(
        result.stderr.split()
    )
    rows = read_official(tmp_path / "out" / "MNLI-m.tsv")
    assert set(rows) == {str(100 + i) for i in range(N_ITEMS)} - tied
    [entry] = json.loads((tmp_path / "out" / "glue.manifest.json").read_text())["files"]
    assert set(entry["undecided_ids"]) == tied
    assert entry["rows"] == N_ITEMS - len(tied)


# --- invariants: gold never written, byte-identical exports ----------------------------------


def test_gold_never_appears_in_a_submission(cli, workspace, tmp_path: Path):
    """Annotators who are always wrong: every row of the file must differ from gold, so the file
    can only have come from their answers (the writer is never handed gold)."""
    _, data_file = simulated_study(
        workspace.engine, tmp_path, "superglue/boolq", accuracy=0.0, sample="all"
    )
    assert cli("export", "s", "--to", tmp_path / "out", "--format", "superglue").code == 0
    rows = read_official(tmp_path / "out" / "BoolQ.jsonl")
    gold = {
        str(json.loads(line)["idx"]): json.loads(line)["label"]
        for line in data_file.read_text().splitlines()
    }
    assert len(rows) == N_ITEMS
    assert all(rows[i] != str(gold[i]).lower() for i in rows)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_exports_are_byte_identical_across_runs(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "superglue/multirc", k=3)
    snapshots = []
    for run in ("a", "b"):
        out = tmp_path / run
        for args in (
            ("--format", "superglue", "--zip"),
            ("--format", "labels", "--zip"),
            ("--format", "soft"),
            ("--format", "labels", "--jsonl"),
        ):
            result = cli("export", "s", "--to", out, *args)
            assert result.code == 0, result.stderr
        snapshots.append(_snapshot(out))
    assert snapshots[0] == snapshots[1]
    assert set(snapshots[0]) == {
        "MultiRC.jsonl",
        "superglue.manifest.json",
        "superglue.zip",
        "s-labels.csv",
        "s-labels.jsonl",
        "s-labels.zip",
        "s-soft.csv",
    }
    with zipfile.ZipFile(tmp_path / "a" / "superglue.zip") as z:
        assert z.namelist() == ["MultiRC.jsonl"]
        assert z.read("MultiRC.jsonl") == snapshots[0]["MultiRC.jsonl"]
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}


# --- fill from a model, manifest, benchmark folders ------------------------------------------


def _model_file(path: Path, ids: list[int], label: str = "entailment") -> Path:
    path.write_text("".join(json.dumps({"idx": i, "label": label}) + "\n" for i in ids))
    return path


def test_fill_from_completes_the_file_and_the_manifest_says_whose_rows(
    cli, workspace, tmp_path: Path
):
    simulated_study(workspace.engine, tmp_path, "superglue/rte")
    human = sampled_ids(workspace.engine, "s")
    model = _model_file(
        tmp_path / "model.jsonl", [200 + i for i in range(N_ITEMS)], "not_entailment"
    )
    out = tmp_path / "out"
    result = cli("export", "s", "--to", out, "--format", "superglue", "--fill-from", model)
    assert result.code == 0, result.stderr
    rows = read_official(out / "RTE.jsonl")
    assert set(rows) == {str(200 + i) for i in range(N_ITEMS)}
    manifest = json.loads((out / "superglue.manifest.json").read_text())
    [entry] = manifest["files"]
    assert set(entry["human_ids"]) == human
    assert set(entry["model_ids"]) == set(rows) - human
    assert all(rows[i] == "not_entailment" for i in entry["model_ids"])
    assert (entry["rows"], entry["human_rows"], entry["model_rows"]) == (N_ITEMS, SAMPLE, 3)
    assert entry["filled_from"] == str(model)

    # Without the fill, the human rows are the same answers.
    cli("export", "s", "--to", tmp_path / "plain", "--format", "superglue")
    plain = read_official(tmp_path / "plain" / "RTE.jsonl")
    assert {i: rows[i] for i in human} == plain


def test_fill_from_a_file_of_another_test_set_is_refused(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "superglue/rte", k=0)
    model = _model_file(tmp_path / "RTE.jsonl", [5000, 5001])
    result = cli(
        "export", "s", "--to", tmp_path / "out", "--format", "superglue", "--fill-from", model
    )
    assert result.code == 1
    assert f"error: {model}: 2 of its 2 ids are not items of study 's'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_fill_from_ratings_are_clipped_and_written_with_three_decimals(
    cli, workspace, tmp_path: Path
):
    simulated_study(workspace.engine, tmp_path, "glue/stsb", k=0)
    values = [-0.2, 5.3, 2.0004, -0.0001, 3.14159, 1, 0, 5, 4.9995, 2.5]
    model = tmp_path / "STS-B.tsv"
    model.write_text(
        "index\tprediction\n" + "".join(f"{100 + i}\t{v}\n" for i, v in enumerate(values))
    )
    out = tmp_path / "out"
    assert cli("export", "s", "--to", out, "--format", "glue", "--fill-from", model).code == 0
    rows = read_official(out / "STS-B.tsv")
    assert list(rows.values()) == [
        "0.000",
        "5.000",
        "2.000",
        "0.000",
        "3.142",
        "1.000",
        "0.000",
        "5.000",
        "5.000",
        "2.500",
    ]


def test_benchmark_exports_every_task_into_one_folder_and_zip(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="rte-old", k=0)
    simulated_study(workspace.engine, tmp_path / "b", "superglue/rte", name="rte-new", k=3)
    simulated_study(workspace.engine, tmp_path, "superglue/wsc", name="wsc", k=3)
    simulated_study(workspace.engine, tmp_path, "glue/sst2", name="sst", k=0)
    out = tmp_path / "out"
    # Two RTE studies: refused as `report --benchmark` refuses, in the same words.
    refused = cli("export", "--benchmark", "superglue", "--to", out)
    words = "superglue/rte has 2 studies (rte-old, rte-new): choose one with --study"
    assert refused.code == 1 and words in " ".join(refused.stderr.split())
    reported = cli("report", "--benchmark", "superglue")
    assert reported.code == 1 and words in " ".join(reported.stderr.split())
    assert not out.exists()
    result = cli("export", "--benchmark", "superglue", "--study", "rte-new", "--to", out, "--zip")
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "RTE.jsonl",
        "WSC.jsonl",
        "superglue.manifest.json",
        "superglue.zip",
    ]
    with zipfile.ZipFile(out / "superglue.zip") as z:
        assert z.namelist() == ["RTE.jsonl", "WSC.jsonl"]
    manifest = json.loads((out / "superglue.manifest.json").read_text())
    assert [(f["file"], f["study"]) for f in manifest["files"]] == [
        ("RTE.jsonl", "rte-new"),
        ("WSC.jsonl", "wsc"),
    ]
    assert manifest["passed_over_studies"] == ["rte-old"]
    assert "superglue/boolq" in manifest["missing_tasks"]
    assert "no study of 8 superglue tasks" in " ".join(result.stderr.split())
    # The zip scores as a folder of files would, against the data in the download layout.
    gold = tmp_path / "gold"
    for folder, source in (
        ("RTE", tmp_path / "b" / "data" / "rte-new"),
        ("WSC", tmp_path / "data" / "wsc"),
    ):
        (gold / folder).mkdir(parents=True)
        (gold / folder / "val.jsonl").write_bytes((source / "val.jsonl").read_bytes())
    scored = cli("score", out / "superglue.zip", "--gold", gold, "--format", "json")
    assert scored.code == 0, scored.stderr
    tasks = {t["task"]: t["task_score"]["value"] for t in scored.json()["tasks"]}
    assert tasks == {
        "superglue/rte": pytest.approx(report_json(cli, "rte-new")["task_score"]["value"]),
        "superglue/wsc": pytest.approx(report_json(cli, "wsc")["task_score"]["value"]),
    }
    [bench] = scored.json()["benchmarks"]
    assert bench["partial"] and bench["score"] == pytest.approx(sum(tasks.values()) / 2)


def _stderr(result: Any) -> str:
    return " ".join(result.stderr.split())


def test_a_sample_says_how_many_test_items_the_file_holds_and_the_manifest_records_it(
    cli, workspace, tmp_path: Path
):
    """A study of 7 of 10 test items wrote 7 rows with no word, and the manifest said
    "test_items": null, "missing_rows": 0; only --fill-from said the leaderboard wants all."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte")
    out = tmp_path / "out"
    result = cli("export", "s", "--to", out, "--format", "superglue")
    assert result.code == 0, result.stderr
    assert (
        f"RTE.jsonl: {SAMPLE} of the {N_ITEMS} test items have a row; a leaderboard wants every "
        "test item: complete the file with --fill-from a model's predictions"
    ) in _stderr(result)
    [entry] = json.loads((out / "superglue.manifest.json").read_text())["files"]
    assert (entry["test_split"], entry["test_items"], entry["rows"]) == ("test", N_ITEMS, SAMPLE)
    assert entry["missing_rows"] == N_ITEMS - SAMPLE

    # Filled from a model that answers every test item: the file is whole, nothing to say.
    model = _model_file(tmp_path / "model.jsonl", [200 + i for i in range(N_ITEMS)])
    whole = cli("export", "s", "--to", out, "--format", "superglue", "--fill-from", model)
    assert whole.code == 0 and "leaderboard" not in whole.stderr
    [entry] = json.loads((out / "superglue.manifest.json").read_text())["files"]
    assert (entry["test_items"], entry["rows"], entry["missing_rows"]) == (N_ITEMS, N_ITEMS, 0)


def test_multirc_questions_written_without_every_answer_are_told(cli, workspace, tmp_path: Path):
    """Ties left open (abstain) on some of a question's answers wrote the question with the
    other answers only, a file a leaderboard cannot take whole, with nothing said of it but
    "N items whose tie the rule left open have no human answer" (they were in the file)."""
    simulated_study(
        workspace.engine, tmp_path, "superglue/multirc", k=2, accuracy=0.6, tie_rule="abstain"
    )
    out = tmp_path / "out"
    result = cli("export", "s", "--to", out, "--format", "superglue")
    assert result.code == 0, result.stderr
    [entry] = json.loads((out / "superglue.manifest.json").read_text())["files"]
    incomplete, undecided = len(entry["incomplete_ids"]), len(entry["undecided_ids"])
    assert 0 < incomplete <= undecided  # the seed gives questions with open ties
    written = {
        q["idx"]: len(q["answers"])
        for line in (out / "MultiRC.jsonl").read_text().splitlines()
        for q in json.loads(line)["passage"]["questions"]
    }
    assert sum(n < 3 for n in written.values()) == incomplete  # each question has 3 answers
    told = _stderr(result)
    assert "have no human answer" not in told
    assert (
        f"MultiRC.jsonl: {undecided} questions have a candidate answer whose tie the rule left "
        "open, with no human judgement"
    ) in told
    assert (
        f"MultiRC.jsonl: {incomplete} questions are written without a judgement for every "
        "candidate answer (incomplete_ids in the manifest); a leaderboard wants one for each: "
        "complete them with --fill-from a model's predictions"
    ) in told


def test_a_fill_folder_without_any_tasks_file_is_refused(cli, workspace, tmp_path: Path):
    """`export --benchmark --fill-from` a harness results folder (or any folder without the
    studies' files) wrote the humans' rows alone, "0 model", with no word why."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="rte")
    logs = tmp_path / "lm-eval" / "org__model"
    logs.mkdir(parents=True)
    (logs / "samples_sglue_rte_2026-01-01T00-00-00.jsonl").write_text("{}\n")
    out = tmp_path / "out"
    result = cli("export", "--benchmark", "superglue", "--to", out, "--fill-from", logs.parent)
    assert result.code == 1
    assert (
        f"--fill-from {logs.parent}: no superglue submission file to read in it (looked for "
        "RTE.jsonl); it holds lm-evaluation-harness sample logs"
    ) in result.stderr
    assert not out.exists()


def test_a_fill_folder_without_a_tasks_file_is_named_in_its_note(cli, workspace, tmp_path: Path):
    """`export --benchmark --fill-from FOLDER` where FOLDER had RTE.jsonl but no WSC.jsonl told
    of WSC.jsonl "complete the file with --fill-from a model's predictions", though --fill-from
    was given: the note names the folder and the file it lacks."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="rte")
    simulated_study(workspace.engine, tmp_path, "superglue/wsc", name="wsc")
    fill = tmp_path / "model"
    fill.mkdir()
    _model_file(fill / "RTE.jsonl", [200 + i for i in range(N_ITEMS)])
    out = tmp_path / "out"
    result = cli("export", "--benchmark", "superglue", "--to", out, "--fill-from", fill)
    assert result.code == 0, result.stderr
    told = _stderr(result)
    assert (
        f"WSC.jsonl: {SAMPLE} of the {N_ITEMS} test items have a row; a leaderboard wants every "
        f"test item: {fill} has no WSC.jsonl to complete it from"
    ) in told
    assert "complete the file with --fill-from" not in told
    assert f"RTE.jsonl: {SAMPLE} of" not in told  # filled whole


def test_studies_exported_one_at_a_time_share_the_folders_manifest_and_zip(
    cli, workspace, tmp_path: Path
):
    """`export rte` then `export cb --zip` into one folder left both files, but the manifest
    and the zip had CB only."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="rte")
    simulated_study(workspace.engine, tmp_path, "superglue/cb", name="cb")
    simulated_study(workspace.engine, tmp_path / "b", "superglue/rte", name="rte-2", k=3)
    out = tmp_path / "out"
    assert cli("export", "rte", "--to", out, "--format", "superglue").code == 0
    result = cli("export", "cb", "--to", out, "--format", "superglue", "--zip")
    assert result.code == 0, result.stderr
    assert "superglue.manifest.json also lists RTE.jsonl" in result.stdout
    manifest = json.loads((out / "superglue.manifest.json").read_text())
    assert [(f["file"], f["study"]) for f in manifest["files"]] == [
        ("CB.jsonl", "cb"),
        ("RTE.jsonl", "rte"),
    ]
    assert "superglue/rte" not in manifest["missing_tasks"]
    assert "superglue/boolq" in manifest["missing_tasks"]
    with zipfile.ZipFile(out / "superglue.zip") as z:
        assert z.namelist() == ["CB.jsonl", "RTE.jsonl"]
        assert z.read("RTE.jsonl") == (out / "RTE.jsonl").read_bytes()

    # Another study of the same task replaces its entry; the other task's stays.
    assert cli("export", "rte-2", "--to", out, "--format", "superglue", "--zip").code == 0
    manifest = json.loads((out / "superglue.manifest.json").read_text())
    assert [(f["file"], f["study"]) for f in manifest["files"]] == [
        ("CB.jsonl", "cb"),
        ("RTE.jsonl", "rte-2"),
    ]

    # A listed file changed by hand is no longer listed nor zipped, and the command says so.
    (out / "CB.jsonl").write_text('{"idx": 0, "label": "neutral"}\n')
    result = cli("export", "rte", "--to", out, "--format", "superglue", "--zip")
    assert result.code == 0, result.stderr
    assert "CB.jsonl changed since it was exported" in _stderr(result)
    assert [
        f["file"] for f in json.loads((out / "superglue.manifest.json").read_text())["files"]
    ] == ["RTE.jsonl"]
    with zipfile.ZipFile(out / "superglue.zip") as z:
        assert z.namelist() == ["RTE.jsonl"]

    # A manifest that no export wrote is named, not written over.
    for text, reason in (
        ("{not json", "superglue.manifest.json:1: not valid JSON"),
        ('{"files": [{"file": "../RTE.jsonl"}]}', "files #1 names no file of the folder"),
    ):
        (out / "superglue.manifest.json").write_text(text)
        refused = cli("export", "rte", "--to", out, "--format", "superglue")
        assert refused.code == 1 and "Traceback" not in refused.stderr
        assert reason in refused.stderr and "move it away" in refused.stderr
        assert (out / "superglue.manifest.json").read_text() == text


def test_a_benchmark_zip_of_dev_items_says_a_leaderboard_scores_test_items_only(
    cli, workspace, tmp_path: Path
):
    """`export --benchmark --zip` packed a study whose test items are dev items without a
    word; the manifest now records each study's split."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="rte", split="val")
    simulated_study(workspace.engine, tmp_path, "superglue/cb", name="cb")
    out = tmp_path / "out"
    result = cli("export", "--benchmark", "superglue", "--to", out, "--zip")
    assert result.code == 0, result.stderr
    said = _stderr(result)
    assert (
        "RTE.jsonl: the items of study 'rte' are from the dev split, not test: a leaderboard "
        "scores test items only"
    ) in said
    assert (
        "superglue.zip holds files of items that are not test items (RTE.jsonl: dev): a "
        "leaderboard scores test items only"
    ) in said
    manifest = json.loads((out / "superglue.manifest.json").read_text())
    assert {f["file"]: f["test_split"] for f in manifest["files"]} == {
        "CB.jsonl": "test",
        "RTE.jsonl": "dev",
    }


# --- labels and soft -------------------------------------------------------------------------


def test_labels_round_trip_into_agreement_equals_the_report(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "glue/mnli-m", accuracy=0.7, sample="all")
    out = tmp_path / "out"
    assert cli("export", "s", "--to", out, "--format", "labels").code == 0
    table = list(csv.DictReader(io.StringIO((out / "s-labels.csv").read_text())))
    assert list(table[0]) == [
        "study",
        "item_id",
        "annotator",
        "phase",
        "value",
        "shown_at",
        "answered_at",
        "seconds",
        "flag",
        "comment",
        "excluded",
    ]
    assert len(table) == 5 * N_ITEMS
    assert {r["item_id"] for r in table} == {str(100 + i) for i in range(N_ITEMS)}
    assert {r["value"] for r in table} <= {"entailment", "neutral", "contradiction"}
    assert all(r["phase"] == "test" and r["flag"] == "false" for r in table)
    assert all(math.isclose(float(r["seconds"]), float(r["seconds"])) for r in table)

    agreement = cli("agreement", out / "s-labels.csv", "--format", "json", "--bootstrap", "0")
    assert agreement.code == 0, agreement.stderr
    mine, theirs = agreement.json(), report_json(cli, "s")["agreement"]
    assert mine["krippendorff_alpha"]["value"] == pytest.approx(
        theirs["krippendorff_alpha"]["value"]
    )
    assert mine["fleiss_kappa"]["value"] == pytest.approx(theirs["fleiss_kappa"]["value"])
    assert mine["pairwise_summary"] == pytest.approx(theirs["pairwise_summary"])


def test_stsb_labels_round_trip_at_the_interval_level(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "glue/stsb", sample="all")
    out = tmp_path / "out"
    assert cli("export", "s", "--to", out, "--format", "labels").code == 0
    values = [r["value"] for r in csv.DictReader(io.StringIO((out / "s-labels.csv").read_text()))]
    assert all(re.fullmatch(r"[0-5]\.000", v) for v in values)  # as STS-B files write scores
    agreement = cli(
        "agreement",
        out / "s-labels.csv",
        "--level",
        "interval",
        "--format",
        "json",
        "--bootstrap",
        "0",
    )
    theirs = report_json(cli, "s")["agreement"]["krippendorff_alpha"]
    assert agreement.json()["krippendorff_alpha"]["value"] == pytest.approx(theirs["value"])


def test_multirc_labels_are_one_row_per_candidate_answer(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "superglue/multirc", sample="all", k=3)
    out = tmp_path / "out"
    assert cli("export", "s", "--to", out, "--format", "labels", "--jsonl").code == 0
    rows = [json.loads(line) for line in (out / "s-labels.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * 3 * N_ITEMS  # 3 annotators x 3 candidates x 10 questions
    assert rows[0]["item_id"] == "0/0" and type(rows[0]["value"]) is int
    agreement = cli("agreement", out / "s-labels.jsonl", "--format", "json", "--bootstrap", "0")
    theirs = report_json(cli, "s")["agreement"]["krippendorff_alpha"]
    assert agreement.json()["krippendorff_alpha"]["value"] == pytest.approx(theirs["value"])
    # The study itself, with no export: the same units (it said "has no test labels")
    study = cli("agreement", "--study", "s", "--format", "json", "--bootstrap", "0")
    assert study.code == 0, study.stderr
    assert study.json()["krippendorff_alpha"]["value"] == pytest.approx(theirs["value"])


def test_labels_keep_source_types_and_cb_keeps_the_scale_point(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "superglue/cb", sample="all", k=3)
    out = tmp_path / "out"
    assert (
        cli("export", "s", "--to", out, "--format", "labels", "--jsonl", "--phase", "all").code == 0
    )
    rows = [json.loads(line) for line in (out / "s-labels.jsonl").read_text().splitlines()]
    assert list(rows[0])[-1] == "answer"
    cb = specs.load_task("superglue/cb")
    assert all(r["value"] == cb.collapse(str(r["answer"])) for r in rows)
    agreement = cli("agreement", out / "s-labels.jsonl", "--format", "json", "--bootstrap", "0")
    theirs = report_json(cli, "s")["agreement"]["krippendorff_alpha_collapsed"]
    assert agreement.json()["krippendorff_alpha"]["value"] == pytest.approx(theirs["value"])

    simulated_study(workspace.engine, tmp_path, "superglue/boolq", name="bq", k=2, sample=3)
    assert cli("export", "bq", "--to", out, "--format", "labels", "--jsonl").code == 0
    rows = [json.loads(line) for line in (out / "bq-labels.jsonl").read_text().splitlines()]
    assert {type(r["value"]) for r in rows} == {bool}  # JSON booleans, as in BoolQ's files
    assert type(rows[0]["flag"]) is bool and type(rows[0]["seconds"]) is float


def test_soft_has_counts_majority_and_gold_per_item(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "superglue/rte", sample="all", k=3)
    out = tmp_path / "out"
    assert cli("export", "s", "--to", out, "--format", "soft").code == 0
    assert cli("export", "s", "--to", out, "--format", "superglue").code == 0
    rows = list(csv.DictReader(io.StringIO((out / "s-soft.csv").read_text())))
    assert list(rows[0]) == [
        "item_id",
        "n_labels",
        "count_entailment",
        "count_not_entailment",
        "majority",
        "tie",
        "gold",
        "excluded",
    ]
    submitted = read_official(out / "RTE.jsonl")
    data = {
        str(json.loads(line)["idx"]): json.loads(line)["label"]
        for line in (tmp_path / "data" / "s" / "val.jsonl").read_text().splitlines()
    }
    assert [r["item_id"] for r in rows] == [str(200 + i) for i in range(N_ITEMS)]
    for r in rows:
        assert (
            int(r["count_entailment"]) + int(r["count_not_entailment"]) == int(r["n_labels"]) == 3
        )
        assert r["majority"] == submitted[r["item_id"]]
        assert r["gold"] == data[r["item_id"]]


def test_soft_lists_ratings_for_stsb(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "glue/stsb")
    out = tmp_path / "out"
    assert cli("export", "s", "--to", out, "--format", "soft", "--jsonl").code == 0
    rows = [json.loads(line) for line in (out / "s-soft.jsonl").read_text().splitlines()]
    assert len(rows) == SAMPLE
    for r in rows:
        assert len(r["ratings"]) == r["n_labels"] == 5
        # 26.9: the column is named after what it holds (the protocol's mean), not "majority"
        assert list(r) == ["item_id", "n_labels", "ratings", "mean", "gold"]
        assert r["mean"] == pytest.approx(sum(r["ratings"]) / 5)
        assert isinstance(r["gold"], float)


# --- mistakes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--format", "glue"),
            "study 's' is a superglue task (superglue/rte): export it with --format superglue",
        ),
        (
            ("--format", "labels", "--fill-from", "x.jsonl"),
            "--fill-from completes a leaderboard file",
        ),
        (("--format", "superglue", "--jsonl"), "--jsonl applies to labels and soft"),
        # --phase was ignored outside the labels table: a soft file of test answers only
        (("--format", "soft", "--phase", "all"), "--phase all chooses the labels table's rows"),
        (("--format", "superglue", "--phase", "training"), "--phase training chooses the labels"),
        (("--benchmark", "glue"), "name one study, or pass --benchmark"),
        ((), "pass --format glue, superglue, labels, soft, answers, parquet or hf"),
    ],
)
def test_export_mistakes_are_one_line_errors(cli, workspace, tmp_path: Path, args, message):
    simulated_study(workspace.engine, tmp_path, "superglue/rte", k=0)
    result = cli("export", "s", "--to", tmp_path / "out", *args)
    assert result.code == 1
    assert f"error: {message}" in result.stderr


def test_export_of_an_unknown_study(cli, workspace, tmp_path: Path):
    result = cli("export", "nope", "--to", tmp_path, "--format", "labels")
    assert result.code == 1 and "no study named 'nope'" in result.stderr


def test_csv_cells_that_would_run_as_formulas_are_neutralised(cli, workspace, tmp_path: Path):
    """29.6: comments and names that start a spreadsheet formula (= + - @) come out as text,
    opened with pandas as a spreadsheet would read them; numbers stay numbers."""
    import pandas as pd

    from annotate.protocol.session import AnnotatorSession
    from tests.engine_helpers import rte_study

    rte_study(
        workspace.engine,
        tmp_path,
        name="f",
        train=1,
        test=3,
        annotators_per_item=1,
        training_items=0,
        gate_min_items=0,
    )
    comments = ['=HYPERLINK("http://evil.example","x")', "+1+cmd|' /C calc'!A0", "@SUM(A1)"]
    session = AnnotatorSession.open(workspace.engine, "f", "-ana", create_annotator=True)
    for comment in comments:
        item = session.next_item()
        assert item is not None
        session.submit(item, "entailment", flag=True, comment=comment)
    out = tmp_path / "out"
    assert cli("export", "f", "--to", out, "--format", "labels").code == 0
    table = pd.read_csv(out / "f-labels.csv", dtype=str)
    assert sorted(table["comment"]) == sorted("'" + c for c in comments)
    assert set(table["annotator"]) == {"'-ana"}
    assert all(not str(v).startswith(("=", "+", "-", "@")) for v in table.to_numpy().ravel())
    assert pd.read_csv(out / "f-labels.csv")["seconds"].dtype.kind == "f"  # numbers untouched


@pytest.mark.parametrize(
    ("task", "extra"),
    [
        ("glue/mnli-m", ()),
        ("superglue/cb", ("--with-text",)),  # the 7-point answer column, item text and gold
        ("superglue/multirc", ("--with-text",)),  # one row per candidate answer
    ],
)
def test_the_streamed_label_csv_is_the_label_table_cell_for_cell(
    cli, workspace, tmp_path: Path, task: str, extra: tuple[str, ...]
):
    """The streamed export makes its cells as the rows come; the table `--zip` writes goes
    through the one cell rule (`write_csv`): both files are the same bytes."""
    simulated_study(workspace.engine, tmp_path, task, sample="all", k=3)
    streamed, zipped = tmp_path / "streamed", tmp_path / "zipped"
    assert cli("export", "s", "--to", streamed, "--format", "labels", *extra).code == 0
    assert cli("export", "s", "--to", zipped, "--format", "labels", "--zip", *extra).code == 0
    with zipfile.ZipFile(next(zipped.glob("*.zip"))) as archive:
        in_zip = archive.read("s-labels.csv")
    assert (streamed / "s-labels.csv").read_bytes() == in_zip
    assert len(in_zip.splitlines()) > 3 * N_ITEMS


def test_the_label_export_loads_no_numerical_library(workspace, db_url: str, tmp_path: Path):
    """A streamed export is rows in, rows out: numpy and pandas are not imported."""
    simulated_study(workspace.engine, tmp_path, "glue/mnli-m", sample="all", k=3)
    code = (
        "import sys\n"
        "from annotate.cli import main\n"
        f"sys.argv = ['annotate', '--db', {db_url!r}, 'export', 's', '--to',"
        f" {str(tmp_path / 'out')!r}, '--format', 'labels']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit_:\n"
        "    assert not exit_.code, exit_.code\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'textual'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "out" / "s-labels.csv").exists()


def test_a_lone_carriage_return_in_a_cell_keeps_its_row_whole():
    """Python's writer quotes a cell with a line feed but not one with a carriage return
    alone, which every reader takes for a line break: the row would come back as two."""
    import pandas as pd

    from annotate.formats.writers import csv_cell, write_csv, write_csv_cells

    rows = [{"id": "1", "text": "line one\rline two"}, {"id": "2", "text": "ok, fine"}]
    for write in (
        lambda s: write_csv(s, ["id", "text"], rows),
        lambda s: write_csv_cells(s, ["id", "text"], [[csv_cell(r[c]) for c in r] for r in rows]),
    ):
        stream = io.StringIO()
        write(stream)
        text = stream.getvalue()
        assert list(csv.reader(io.StringIO(text, newline=""))) == [
            ["id", "text"],
            ["1", "line one\rline two"],
            ["2", "ok, fine"],
        ]
        assert pd.read_csv(io.StringIO(text, newline=""))["text"].tolist() == [
            "line one\rline two",
            "ok, fine",
        ]
        assert text.endswith('"ok, fine"\n') and text.count("\n") == 3  # \n line ends kept


def test_the_manifest_of_an_unfinished_study_names_the_committee_its_data_has(
    cli, workspace, tmp_path: Path
):
    """Three of k = 5 annotators on every item: the report says "majority of 3"; the
    manifest said "majority of 5", a committee the submission's answers never had."""
    from tests.engine_helpers import rte_study

    rte_study(
        workspace.engine, tmp_path, name="short", test=6, gate_rule="threshold", gate_threshold=0.0
    )
    simulate(workspace.engine, "short", 3, 0.9, seed=1)
    report = cli("report", "short", "--bootstrap", "0", "--format", "json").json()
    assert "majority of 3 (n=6)" in report["summary"]
    out = tmp_path / "out"
    assert cli("export", "short", "--to", out, "--format", "superglue").code == 0
    [entry] = json.loads((out / "superglue.manifest.json").read_text())["files"]
    assert entry["aggregation"].startswith("majority of 3, ties: ")


def test_the_answers_list_items_in_the_files_order_as_soft_and_labels_do(cli, workspace, tmp_path):
    """`--format answers` listed items in the study's sample order while `soft` and `labels`
    list them in the source file's order: one study, three orders to join by hand."""
    from annotate.api import open_store

    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="r", sample=8, k=1)

    def ids(fmt: str) -> list[str]:
        assert cli("export", "r", "--to", tmp_path / fmt, "--format", fmt).code == 0
        rows = csv.DictReader((tmp_path / fmt / f"r-{fmt}.csv").open(encoding="utf-8"))
        return list(dict.fromkeys(r["item_id"] for r in rows))

    soft = ids("soft")
    assert soft == sorted(soft, key=int)  # the file's order (its idx counts up)
    assert ids("answers") == soft == ids("labels")
    with open_store(workspace.url) as store:
        assert store.study("r").answers(models=False)["item_id"].tolist() == soft
