"""`export --format hf`: a folder `datasets.load_dataset` loads as it is, with the task's label
names, the hard and soft answers, each annotator's answer and a card whose YAML parses; and
`export --format parquet` files of two studies that load together."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from annotate.store.models import Label
from tests.unit.test_export import simulated_study

datasets = pytest.importorskip("datasets")


def _card_header(folder: Path) -> dict:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_hf_export_loads_with_datasets_and_carries_the_labels(cli, workspace, tmp_path: Path):
    simulated_study(workspace.engine, tmp_path, "superglue/cb", name="cb", sample="all")
    out = tmp_path / "cb-hf"
    result = cli("export", "cb", "--to", out, "--format", "hf")
    assert result.code == 0, result.stderr
    loaded = datasets.load_dataset(str(out), split="test")
    names = ["entailment", "neutral", "contradiction"]  # the task's order (tasks/superglue/cb)
    assert loaded.features["label"].names == names
    assert loaded.features["gold"].names == names
    assert loaded.features["annotator_labels"].feature.names == names
    labels = cli("export", "cb", "--to", tmp_path / "l", "--format", "labels").code
    assert labels == 0
    soft = cli("export", "cb", "--to", tmp_path / "s", "--format", "soft")
    assert soft.code == 0
    import csv

    rows = {r["item_id"]: r for r in csv.DictReader((tmp_path / "s" / "cb-soft.csv").open())}
    long = list(csv.DictReader((tmp_path / "l" / "cb-labels.csv").open()))
    assert len(loaded) == len(rows) == 10
    for row in loaded:
        soft_row = rows[row["item_id"]]
        counts = [int(soft_row[f"count_{n}"]) for n in names]
        assert row["n_labels"] == sum(counts) == 5
        assert row["soft_label"] == pytest.approx([c / sum(counts) for c in counts])
        assert names[row["label"]] == soft_row["majority"]
        assert names[row["gold"]] == soft_row["gold"]
        given = Counter(
            (r["annotator"], r["value"]) for r in long if r["item_id"] == row["item_id"]
        )
        assert (
            Counter(
                zip(row["annotators"], (names[a] for a in row["annotator_labels"]), strict=True)
            )
            == given
        )
    header = _card_header(out)
    assert header["configs"][0]["data_files"] == [{"split": "test", "path": "data/test-*"}]
    assert header["dataset_info"]["splits"][0]["num_examples"] == 10
    features = {f["name"]: f for f in header["dataset_info"]["features"]}
    assert features["label"]["dtype"]["class_label"]["names"] == dict(enumerate(names)) or (
        features["label"]["dtype"]["class_label"]["names"]
        == {str(i): n for i, n in enumerate(names)}
    )
    assert header["license"] == "unknown"
    card = (out / "README.md").read_text(encoding="utf-8")
    report = cli("report", "cb", "--format", "json").json()
    head = report["headline_interval"]
    score = f"**{report['task_score']['value'] * 100:.1f}** [{head['low'] * 100:.1f}, {head['high'] * 100:.1f}]"
    assert score in card
    for section in ("## Effective protocol", "## Licence", "## Columns"):
        assert section in card
    assert "Time on task" in card or "time on task" in card.lower()


def test_two_studies_parquet_exports_load_together(cli, workspace, tmp_path: Path):
    """`comment` is a string column even when every comment is empty."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="a", sample="all")
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="b", sample="all", seed=4)
    from sqlalchemy import update

    with workspace.engine.begin() as conn:  # one comment in study a, none in b
        first = conn.execute(Label.__table__.select().limit(1)).first()
        conn.execute(update(Label).where(Label.id == first.id).values(comment="unsure"))
    out = tmp_path / "pq"
    for name in ("a", "b"):
        assert cli("export", name, "--to", out, "--format", "parquet").code == 0
    both = datasets.load_dataset(
        "parquet", data_files=[str(out / "b-labels.parquet"), str(out / "a-labels.parquet")]
    )["train"]
    assert both.features["comment"].dtype == "string"
    assert sum(c is not None for c in both["comment"]) == 1
    files = []
    for name in ("a", "b"):  # the dataset folders of both studies, too
        assert cli("export", name, "--to", tmp_path / name, "--format", "hf").code == 0
        files.append(str(tmp_path / name / "data" / "test-00000-of-00001.parquet"))
    together = datasets.load_dataset("parquet", data_files=files)["train"]
    assert together.features["label"].names == ["entailment", "not_entailment"]


def test_answers_has_one_row_per_item_with_models_and_ties(cli, workspace, tmp_path: Path):
    from annotate.api import open_store

    simulated_study(
        workspace.engine, tmp_path, "superglue/cb", name="cb", sample="all", k=4, accuracy=0.5
    )
    result = cli("export", "cb", "--to", tmp_path / "a", "--format", "answers", "--jsonl")
    assert result.code == 0, result.stderr
    # --help named only labels and soft for --jsonl, which answers takes too
    assert "answers: JSON lines" in " ".join(cli("export", "--help").stdout.split())
    rows = [json.loads(x) for x in (tmp_path / "a" / "cb-answers.jsonl").read_text().splitlines()]
    report = cli("report", "cb", "--format", "json", "--bootstrap", "0").json()
    assert len(rows) == 10
    ties = [r for r in rows if r["tied"]]
    assert ties and len(ties) == report["ties"]["n_tied"]
    assert {r["item_id"] for r in ties} == {t["item"] for t in report["ties"]["items"]}
    picks = {t["item"]: t["result"] for t in report["ties"]["items"]}
    for r in ties:
        assert r["tie_pick"] == picks[r["item_id"]] and r["tie_rule"] == "random"
        assert r["tie_pick"] in r["tied_answers"].split("|") and r["tie_pick"] == r["majority"]
    disagree = {d["item"]: d for d in report["model_aggregation"]["disagreements"]}
    for r in rows:
        assert 0 < r["dawid_skene_posterior"] <= 1 and 0 < r["mace_posterior"] <= 1
        if r["item_id"] in disagree:
            d = disagree[r["item_id"]]
            assert d["answers"]["dawid_skene"] == r["dawid_skene"]
            assert d["answers"]["mace"] == r["mace"]
        else:
            assert r["dawid_skene"] == r["mace"] == r["majority"]
    with open_store(workspace.url) as store:
        frame = store.study("cb").answers()
    assert frame["item_id"].tolist() == [r["item_id"] for r in rows]
    assert frame["dawid_skene"].tolist() == [r["dawid_skene"] for r in rows]


@pytest.mark.parametrize(
    "task", ["superglue/multirc", "superglue/record", "glue/stsb", "superglue/boolq"]
)
def test_every_kind_of_task_loads(cli, workspace, tmp_path: Path, task: str):
    """Candidate answers (MultiRC), entities (ReCoRD), ratings (STS-B), booleans (BoolQ)."""
    simulated_study(workspace.engine, tmp_path, task, name="s", sample="all")
    out = tmp_path / "hf"
    result = cli("export", "s", "--to", out, "--format", "hf")
    assert result.code == 0, result.stderr
    loaded = datasets.load_dataset(str(out), split="test")
    soft = cli("export", "s", "--to", tmp_path / "soft", "--format", "soft", "--jsonl")
    assert soft.code == 0
    rows = [json.loads(x) for x in (tmp_path / "soft" / "s-soft.jsonl").read_text().splitlines()]
    assert sorted(loaded["item_id"]) == sorted(r["item_id"] for r in rows)
    assert all(
        len(a) == len(b)
        for a, b in zip(loaded["annotators"], loaded["annotator_labels"], strict=True)
    )
    assert _card_header(out)["dataset_info"]["splits"][0]["num_examples"] == len(rows)


def test_a_study_of_val_items_publishes_a_validation_split(cli, workspace, tmp_path: Path):
    from annotate import specs
    from annotate.formats.importer import import_file
    from annotate.protocol.studies import create_study
    from annotate.simulate import simulate
    from tests.engine_helpers import rte_rows, write_jsonl

    val = write_jsonl(tmp_path / "RTE" / "val.jsonl", rte_rows(12))
    dataset = import_file(workspace.engine, specs.load_task("superglue/rte"), val)
    overrides = {"training_items": 0, "gate_min_items": 0, "test_sample": "all"}
    create_study(
        workspace.engine,
        "v",
        "superglue/rte",
        "quick",
        test_dataset_id=dataset.dataset_id,
        overrides={**overrides, "annotators_per_item": 3},
    )
    simulate(workspace.engine, "v", 3, 0.8, seed=1)
    out = tmp_path / "hf"
    assert cli("export", "v", "--to", out, "--format", "hf").code == 0
    assert (out / "data" / "validation-00000-of-00001.parquet").is_file()
    assert len(datasets.load_dataset(str(out), split="validation")) == 12
    assert 'split="validation"' in (out / "README.md").read_text(encoding="utf-8")


def test_the_cards_code_spans_show_a_studys_name_as_it_is(cli, workspace, tmp_path: Path):
    """A code span parses nothing: an escape in it (`&lt;`, `\\|`) would show as typed."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="F<b>|`x")
    out = tmp_path / "hf"
    assert cli("export", "F<b>|`x", "--to", out, "--format", "hf").code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "The labels of study ``F<b>|`x``, written by" in card
    assert "&lt;b>" not in card.split("The labels of study", 1)[1].split("\n", 1)[0]


def test_the_card_of_a_study_without_labels_says_so_not_that_gold_is_missing(
    cli, workspace, tmp_path: Path
):
    """The card said "No score: the test items have no gold labels" of items with gold."""
    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="pilot", k=0)
    out = tmp_path / "hf"
    assert cli("export", "pilot", "--to", out, "--format", "hf").code == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "No score: the study has no test labels yet." in card
    assert "no gold labels" not in card
    # An item without labels has no shares of its answers (they were [0.0, 0.0]).
    import pyarrow.parquet as pq

    [data] = (out / "data").glob("*.parquet")
    rows = pq.read_table(data).to_pylist()
    assert rows and all(r["soft_label"] is None and r["n_labels"] == 0 for r in rows)


def test_answers_keep_the_model_columns_where_no_model_could_be_fitted(
    cli, workspace, tmp_path: Path
):
    """A study without labels (or with one answer only) had no dawid_skene or mace columns:
    a script reading them stopped with a KeyError on a pilot."""
    import annotate

    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="pilot", k=0)
    assert cli("export", "pilot", "--to", tmp_path / "out", "--format", "answers").code == 0
    header = (tmp_path / "out" / "pilot-answers.csv").read_text(encoding="utf-8").split("\n")[0]
    models = ["dawid_skene", "dawid_skene_posterior", "mace", "mace_posterior"]
    assert header.endswith(",".join([*models, "gold"]))
    with annotate.open_store(workspace.url) as store:
        answers = store.study("pilot").answers()
    assert answers[models].isna().all().all()
    assert answers["mace_posterior"].dtype == "float64"
