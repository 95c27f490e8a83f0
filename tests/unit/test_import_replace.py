"""`import --replace`: a file imported with the wrong split, mapping or label names is imported
again in place of its earlier dataset, in one transaction, and refused while a study uses it.
Each test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate import specs
from annotate.errors import DataFileError, UserError
from annotate.formats.importer import import_file, import_path
from annotate.protocol.studies import create_study
from annotate.store.models import Dataset, Item
from tests import fixtures as fx
from tests.engine_helpers import rte_study


@pytest.fixture
def db_url(store_url: str) -> str:
    """The `workspace` and `cli` fixtures on each backend in turn."""
    return store_url


def stored(workspace) -> list[tuple]:
    """Every dataset (id, split, items) with its items' (source id, gold)."""
    with Session(workspace.engine) as s:
        datasets = s.exec(select(Dataset).order_by(Dataset.id)).all()
        return [
            (
                d.id,
                d.split,
                d.n_items,
                [
                    (i.source_id, i.gold)
                    for i in s.exec(
                        select(Item).where(Item.dataset_id == d.id).order_by(Item.position)
                    )
                ],
            )
            for d in datasets
        ]


def test_a_file_imported_with_the_wrong_split_is_imported_again_with_replace(
    workspace, tmp_path: Path
):
    spec = specs.load_task("superglue/rte")
    path = fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE)
    wrong = import_file(workspace.engine, spec, path, split="test")
    skipped = import_file(workspace.engine, spec, path, split="dev")
    assert skipped.already_imported and skipped.split == "test"  # without --replace: as before
    again = import_file(workspace.engine, spec, path, split="dev", replace=True)
    assert not again.already_imported and again.replaced == wrong.dataset_id
    assert again.split == "dev" and again.n_items == len(fx.SG_RTE)
    [(dataset_id, split, n, items)] = stored(workspace)  # the earlier dataset and items are gone
    assert (dataset_id, split, n) == (again.dataset_id, "dev", len(fx.SG_RTE))
    assert len(items) == len(fx.SG_RTE)
    assert dataset_id > wrong.dataset_id  # a new id on both backends: the earlier one names none


def test_replace_reads_the_file_with_this_runs_label_names(workspace, tmp_path: Path):
    spec = specs.load_task("superglue/rte")
    rows = [{**r, "label": 0 if r["label"] == "entailment" else 1} for r in fx.SG_RTE]
    path = fx.write_jsonl(tmp_path / "val.jsonl", rows)  # to_json output: class numbers
    wrong = ["not_entailment", "entailment"]
    [first] = import_path(workspace.engine, spec, path, label_names=wrong)
    [again] = import_path(
        workspace.engine, spec, path, label_names=["entailment", "not_entailment"], replace=True
    )
    assert again.replaced == first.dataset_id
    [(_, _, _, items)] = stored(workspace)
    assert [gold for _, gold in items] == [r["label"] for r in fx.SG_RTE]


def test_replace_of_a_file_never_imported_is_a_plain_import(workspace, tmp_path: Path):
    spec = specs.load_task("superglue/rte")
    result = import_file(
        workspace.engine, spec, fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE), replace=True
    )
    assert result.replaced is None and not result.already_imported


def test_replace_is_refused_while_studies_use_the_dataset(workspace, tmp_path: Path):
    context = rte_study(workspace.engine, tmp_path, name="pilot")
    create_study(
        workspace.engine,
        "second",
        "superglue/rte",
        "quick",
        train_dataset_id=context.study.train_dataset_id,
        test_dataset_id=context.study.test_dataset_id,
        overrides={"training_items": 6, "gate_min_items": 6, "test_sample": 20},
    )
    before = stored(workspace)
    spec = specs.load_task("superglue/rte")
    with pytest.raises(UserError) as refused:
        import_file(workspace.engine, spec, tmp_path / "rte" / "test.jsonl", split="dev",
                    replace=True)  # fmt: skip
    message = str(refused.value)
    assert "not replaced" in message and "studies 'pilot', 'second'" in message, message
    assert f"dataset {context.study.test_dataset_id} (superglue/rte test)" in message
    assert "\n" not in message
    assert stored(workspace) == before


def test_a_bad_file_in_a_replacing_import_leaves_the_earlier_dataset(workspace, tmp_path: Path):
    spec = specs.load_task("superglue/rte")
    folder = tmp_path / "rte"
    fx.write_jsonl(folder / "val.jsonl", fx.SG_RTE)
    import_path(workspace.engine, spec, folder)
    before = stored(workspace)
    fx.write_text(folder / "test.jsonl", '{"premise": "a", "hypothesis": "b", "idx": 0}\n{"pr')
    with pytest.raises(DataFileError, match="nothing imported"):
        import_path(workspace.engine, spec, folder, replace=True)
    assert stored(workspace) == before


def test_the_cli_says_replaced_and_refuses_on_one_line(cli, workspace, tmp_path: Path):
    path = fx.write_jsonl(tmp_path / "rte" / "val.jsonl", fx.SG_RTE)
    first = cli("import", "superglue/rte", path, "--split", "test", "--format", "json")
    [dataset] = first.json()
    skipped = cli("import", "superglue/rte", path, "--split", "dev")
    assert skipped.code == 0 and "--replace imports it again" in skipped.stderr, skipped.stderr
    again = cli("import", "superglue/rte", path, "--split", "dev", "--replace", "--format", "json")
    assert again.code == 0, again.stderr
    [row] = again.json()
    assert (row["status"], row["replaced"], row["split"]) == ("replaced", dataset["id"], "dev")
    said = cli("import", "superglue/rte", path, "--split", "dev", "--replace")
    assert f"the earlier import, dataset {row['id']}, removed" in said.stdout, said.stdout
    study = cli("study", "create", "p", "--task", "superglue/rte", "--protocol", "quick",
                "--train", "dev", "--test", "dev", "--sample", "2", "--training-items", "1")  # fmt: skip
    assert study.code == 0, study.stderr
    before = cli("datasets", "--format", "json").json()
    refused = cli("import", "superglue/rte", path, "--split", "test", "--replace")
    assert refused.code == 1 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"error: {path}: not replaced") and "study 'p'" in line, line
    assert "Traceback" not in refused.stderr
    assert cli("datasets", "--format", "json").json() == before
