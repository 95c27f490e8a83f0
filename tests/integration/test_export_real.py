"""Export, score and compare on the real GLUE/SuperGLUE files in ../shared/data (skipped on a
fresh clone, where they are absent): the issue's acceptance checks."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from annotate import specs
from annotate.formats.importer import import_file
from annotate.protocol.studies import create_study
from annotate.simulate import simulate
from tests.conftest import shared_file
from tests.unit.test_export import ram_store


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    """Overrides conftest's `db_url` with a store on a RAM disk (700 simulated answers)."""
    with ram_store(tmp_path) as url:
        yield url


RTE_LINE = re.compile(r'\{"idx": (0|[1-9][0-9]*), "label": "(entailment|not_entailment)"\}')


def _study(engine, task: str, data: Path, name: str, sample: int) -> None:
    dataset = import_file(engine, specs.load_task(task), data)
    create_study(
        engine,
        name,
        task,
        "quick",
        train_dataset_id=dataset.dataset_id,
        test_dataset_id=dataset.dataset_id,
        overrides={"test_sample": sample},
    )
    simulate(engine, name, 5, 0.85)


def test_rte_val_exports_rte_jsonl_that_scores_as_the_report(cli, workspace, tmp_path: Path):
    val = shared_file("superglue/RTE/val.jsonl")
    _study(workspace.engine, "superglue/rte", val, "rte-val", 100)
    out = tmp_path / "out"
    assert cli("export", "rte-val", "--to", out, "--format", "superglue", "--zip").code == 0
    lines = (out / "RTE.jsonl").read_text().splitlines()
    assert len(lines) == 100
    assert all(RTE_LINE.fullmatch(line) for line in lines)
    manifest = json.loads((out / "superglue.manifest.json").read_text())
    sampled = set(manifest["files"][0]["human_ids"])
    val_ids = {str(json.loads(line)["idx"]) for line in val.read_text().splitlines()}
    assert {str(json.loads(line)["idx"]) for line in lines} == sampled and sampled <= val_ids

    report = cli("report", "rte-val", "--format", "json", "--bootstrap", "0").json()
    for target in (out / "RTE.jsonl", out / "superglue.zip"):
        scored = cli("score", target, "--gold", val, "--format", "json")
        assert scored.code == 0, scored.stderr
        [task] = scored.json()["tasks"]
        assert task["scores"]["accuracy"]["value"] == report["scores"]["accuracy"]["value"]
        assert task["coverage"]["scored"] == 100 and task["coverage"]["gold"] == 277

    # A model on the same items: both scores and McNemar's p.
    model = tmp_path / "model" / "RTE.jsonl"
    model.parent.mkdir()
    rows = [json.loads(line) for line in val.read_text().splitlines()]
    model.write_text(
        "".join(
            json.dumps({"idx": r["idx"], "label": r["label"] if r["idx"] % 5 else "entailment"})
            + "\n"
            for r in rows
        )
    )
    compared = cli("compare", "rte-val", "--model", model, "--format", "json", "--bootstrap", "200")
    assert compared.code == 0, compared.stderr
    result = compared.json()
    assert result["n_items"] == 100
    assert result["human"]["task_score"]["value"] == report["task_score"]["value"]
    t = result["mcnemar"]["table"]
    table = [[t["both_right"], t["human_only_right"]], [t["model_only_right"], t["neither_right"]]]
    assert result["mcnemar"]["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue)
    printed = cli("compare", "rte-val", "--model", model, "--bootstrap", "0")
    assert "McNemar's test (exact)" in printed.stdout and "p = " in printed.stdout

    # With the model filling the rest, the file has all 277 items, 100 of them human.
    full = tmp_path / "full"
    result = cli("export", "rte-val", "--to", full, "--format", "superglue", "--fill-from", model)
    assert result.code == 0, result.stderr
    assert len((full / "RTE.jsonl").read_text().splitlines()) == 277
    entry = json.loads((full / "superglue.manifest.json").read_text())["files"][0]
    assert (entry["human_rows"], entry["model_rows"], entry["missing_rows"]) == (100, 177, 0)


def test_stsb_dev_exports_three_decimal_scores_and_scores_like_scipy(
    cli, workspace, tmp_path: Path
):
    dev = shared_file("glue/STS-B/dev.tsv")
    _study(workspace.engine, "glue/stsb", dev, "sts-dev", 40)
    out = tmp_path / "out"
    assert cli("export", "sts-dev", "--to", out, "--format", "glue").code == 0
    lines = (out / "STS-B.tsv").read_text().split("\n")
    assert lines[0] == "index\tprediction" and lines[-1] == ""
    pred = {}
    for line in lines[1:-1]:
        index, value = line.split("\t")
        assert re.fullmatch(r"[0-5]\.[0-9]{3}", value) and 0 <= float(value) <= 5
        pred[index] = float(value)
    assert len(pred) == 40

    gold = {}
    for line in dev.read_text().splitlines()[1:]:
        cells = line.split("\t")
        gold[cells[0]] = float(cells[-1])
    ids = sorted(pred)
    g, p = [gold[i] for i in ids], [pred[i] for i in ids]
    scored = cli("score", out / "STS-B.tsv", "--gold", dev.parent, "--format", "json").json()
    [task] = scored["tasks"]
    assert task["scores"]["pearson"]["value"] == pytest.approx(stats.pearsonr(g, p)[0], abs=1e-12)
    assert task["scores"]["spearman"]["value"] == pytest.approx(stats.spearmanr(g, p)[0], abs=1e-12)
    report = cli("report", "sts-dev", "--format", "json", "--bootstrap", "0").json()
    assert task["scores"]["pearson"]["value"] == pytest.approx(report["scores"]["pearson"]["value"])
