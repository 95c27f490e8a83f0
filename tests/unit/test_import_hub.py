"""`annotate import` reads the layouts the Hugging Face Hub and `datasets` leave on disk, and
the task zips GLUE and SuperGLUE distributed; every item's gold equals the original file's,
with integer labels mapped by the file's own class names (CB's Hub order is entailment,
contradiction, neutral; the task lists entailment, neutral, contradiction)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate import specs
from annotate.formats.readers import FileSummary, read_items
from annotate.store.models import Dataset, Item
from tests import fixtures as fx
from tests import hub_fixtures as hub
from tests.conftest import shared_file

pytest.importorskip("datasets")


@pytest.fixture(autouse=True)
def _quiet_datasets():
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()


def stored(db_url: str) -> dict[tuple[str, str], dict[str, object]]:
    """(split, file name) -> {id: gold} of every dataset in the store."""
    from annotate.workspace import open_workspace

    with Session(open_workspace(db_url).engine) as s:
        out: dict[tuple[str, str], dict[str, object]] = {}
        for d in s.exec(select(Dataset)).all():
            items = s.exec(select(Item).where(Item.dataset_id == d.id)).all()
            out[(d.split, Path(d.path).name)] = {i.source_id: i.gold for i in items}
        return out


def original_gold(records: list[dict], task: str) -> dict[str, object]:
    """{idx: gold} as the original records give it, normalised the way the store keeps it."""
    spec = specs.load_task(task)
    gold = {}
    for r in records:
        label = r.get("label")
        gold[str(r["idx"])] = None if label is None else spec.label_for_name(str(label))
    return gold


CB, RTE = hub.SUPER_GLUE["cb"], hub.SUPER_GLUE["rte"]


def test_cb_order_differs_from_the_task(cli):
    """The premise of the whole issue: position would give the wrong gold."""
    task_order = specs.load_task("superglue/cb").label_values()
    assert CB.names != task_order and sorted(CB.names) == sorted(task_order)


def test_a_hub_parquet_file_keeps_every_gold(cli, db_url, tmp_path):
    path = hub.write_parquet(
        hub.hub_dataset(hub.CB_VAL, CB), tmp_path / "cb" / "validation-00000-of-00001.parquet"
    )
    result = cli("import", "superglue/cb", path)
    assert result.code == 0, result.stderr
    assert "superglue/cb dev, 6 items with gold labels" in result.stdout
    assert stored(db_url)[("dev", path.name)] == original_gold(hub.CB_VAL, "superglue/cb")


def test_a_hub_file_without_its_id_column_is_refused_as_the_json_lines_one_is(
    cli, db_url, tmp_path
):
    """Numbered by row, the items of a file in another order would take other items' ids, and
    every score or comparison by id would pair the wrong items."""
    dataset = hub.hub_dataset(hub.CB_VAL, CB).remove_columns("idx")
    path = hub.write_parquet(dataset, tmp_path / "validation-00000-of-00001.parquet")
    result = cli("import", "superglue/cb", path)
    assert result.code == 1
    assert f"{path}:1: missing column 'idx', the item's id" in result.stderr
    assert stored(db_url) == {}


def test_a_csv_of_another_layout_is_named_as_maybe_another_tasks_file(cli, db_url, tmp_path):
    """An MTurk batch given to `import` said only "missing column 'idx', the item's id": the
    line names the file's columns and asks, as a missing text column's does."""
    path = tmp_path / "batch.csv"
    path.write_text("HITId,WorkerId,Input.idx_0,Answer.rating0\n3HIT,A1,0,91\n")
    result = cli("import", "superglue/cb", path, "--split", "dev")
    assert result.code == 1
    assert (
        "missing column 'idx', the item's id; the file has Answer.rating0, HITId, Input.idx_0, "
        "WorkerId (is this a file of another task than superglue/cb?)"
    ) in result.stderr


@pytest.mark.parametrize(
    ("column", "reason"),
    [
        ("premise", "column 'premise' is empty (null): the item would have no premise"),
        ("idx", "the item's id, 'idx', is empty (null)"),
    ],
)
def test_a_null_in_a_hub_column_is_named_as_null_not_as_a_missing_column(
    cli, db_url, tmp_path, column, reason
):
    """The column is there; its value on the second row is not. The error said "missing
    column 'premise'; the file has hypothesis, idx, label, premise"."""
    dataset = hub.hub_dataset(hub.CB_VAL[:2], CB).map(
        lambda row, i: {column: None if i == 1 else row[column]}, with_indices=True
    )
    path = hub.write_parquet(dataset, tmp_path / "validation-00000-of-00001.parquet")
    result = cli("import", "superglue/cb", path)
    assert result.code == 1
    assert f"{path}:2: {reason}" in " ".join(result.stderr.split())
    assert "missing column" not in result.stderr
    assert stored(db_url) == {}


def test_a_fractional_id_is_named_on_its_own_row(cli, db_url, tmp_path):
    """One idx of 1.5 makes the column float: the error named the first row's id ("1: id 0.0
    is not an integer or text"), a whole number; it names the row of 1.5 now."""
    dataset = hub.hub_dataset(hub.CB_VAL[:3], CB).map(
        lambda row, i: {"idx": 1.5 if i == 1 else float(i)}, with_indices=True
    )
    path = hub.write_parquet(dataset, tmp_path / "validation-00000-of-00001.parquet")
    result = cli("import", "superglue/cb", path)
    assert result.code == 1
    assert f"{path}:2: id 1.5 is not an integer or text" in result.stderr
    assert "0.0" not in result.stderr
    assert stored(db_url) == {}


@pytest.mark.parametrize(
    ("mapping", "reason"),
    [
        ("premise=context", "missing column 'context'"),
        ("id=pair_id", "missing column 'pair_id', the item's id"),
    ],
)
def test_a_map_to_a_column_the_hub_file_lacks_is_refused_not_ignored(
    cli, db_url, tmp_path, mapping, reason
):
    """--map premise=context read the Hub's own `premise` column when the file had no
    `context`, and imported as if the flag had not been given (the JSON-lines file refuses)."""
    path = hub.write_parquet(
        hub.hub_dataset(hub.CB_VAL, CB), tmp_path / "validation-00000-of-00001.parquet"
    )
    result = cli("import", "superglue/cb", path, "--map", mapping)
    assert result.code == 1
    assert f"{path}:1: {reason}" in result.stderr
    assert stored(db_url) == {}


def test_a_test_split_has_no_gold(cli, db_url, tmp_path):
    path = hub.write_parquet(
        hub.hub_dataset(hub.CB_TEST, CB), tmp_path / "test-00000-of-00001.parquet"
    )
    assert cli("import", "superglue/cb", path).code == 0
    assert set(stored(db_url)[("test", path.name)].values()) == {None}


def test_a_sharded_config_folder_is_one_dataset_per_split(cli, db_url, tmp_path):
    records = hub.read_jsonl(fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE))
    folder = hub.write_config(
        tmp_path / "rte",
        {
            "train": hub.hub_dataset(records, RTE),
            "validation": hub.hub_dataset(hub.CB_VAL[:0] or records[:2], RTE),
        },
        shards={"train": 2},
    )
    assert sorted(p.name for p in folder.iterdir())[:2] == [
        "train-00000-of-00002.parquet",
        "train-00001-of-00002.parquet",
    ]
    result = cli("import", "superglue/rte", folder, "--format", "json")
    assert result.code == 0, result.stderr
    rows = {r["split"]: r for r in json.loads(result.stdout)}
    assert rows["train"]["items"] == len(records) and rows["train"]["detail"]["shards"] == 2
    assert stored(db_url)[("train", "train-00000-of-00002.parquet")] == original_gold(
        records, "superglue/rte"
    )


def test_a_split_with_a_shard_missing_is_refused_not_imported_as_the_whole(cli, db_url, tmp_path):
    """A download stopped half-way leaves train-00000-of-00002 without its second half: the
    split is refused, naming the missing shard, as is that shard imported alone."""
    assert cli("init").code == 0
    records = hub.read_jsonl(fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE))
    folder = hub.write_config(
        tmp_path / "rte", {"train": hub.hub_dataset(records, RTE)}, shards={"train": 2}
    )
    (folder / "train-00001-of-00002.parquet").unlink()
    result = cli("import", "superglue/rte", folder)
    assert result.code == 1
    assert result.stderr == (
        f"error: {folder / 'train-00000-of-00002.parquet'}: 1 of the 2 shards of its split "
        "(train-00001-of-00002.parquet missing): alone, they hold part of the split; give the "
        "folder that holds them all\n"
    )
    alone = cli("import", "superglue/rte", folder / "train-00000-of-00002.parquet")
    assert alone.code == 1 and "(train-00001-of-00002.parquet missing)" in alone.stderr
    assert stored(db_url) == {}


@pytest.mark.parametrize(
    ("second", "reason"),
    [
        ([0, 5], "1: duplicate id '0' (first on validation-00000-of-00002.parquet row 1)"),
        ([4, None], "2: the item's id, 'idx', is empty (null)"),
    ],
)
def test_a_fault_in_the_second_shard_names_that_shard_and_its_row(
    cli, db_url, tmp_path, second, reason
):
    """Shards are read as one; a fault in the second named the first shard, at a row number
    counted on from it (its 5th row of 4)."""
    folder = tmp_path / "cb"
    first = hub.hub_dataset(hub.CB_VAL[:4], CB)
    hub.write_parquet(first, folder / "validation-00000-of-00002.parquet")
    ids = iter(second)
    rest = hub.hub_dataset(hub.CB_VAL[4:6], CB).map(lambda row: {"idx": next(ids)})
    path = hub.write_parquet(rest, folder / "validation-00001-of-00002.parquet")
    result = cli("import", "superglue/cb", folder)
    assert result.code == 1
    assert f"error: {path}:{reason}" in " ".join(result.stderr.split())
    assert stored(db_url) == {}


def test_a_snapshot_imports_the_tasks_config(cli, db_url, tmp_path):
    root = hub.super_glue_snapshot(tmp_path / "super_glue")
    assert cli("import", "superglue/cb", root).code == 0
    assert cli("import", "superglue/rte", root).code == 0
    got = stored(db_url)
    assert got[("dev", "validation-00000-of-00001.parquet")] in (
        original_gold(hub.CB_VAL, "superglue/cb"),
        original_gold(hub.read_jsonl(hub.RTE_DEMO / "val.jsonl"), "superglue/rte"),
    )
    with Session(__import__("annotate.workspace").workspace.open_workspace(db_url).engine) as s:
        paths = sorted((d.task, Path(d.path).parent.name, d.split) for d in s.exec(select(Dataset)))
    assert paths == [
        ("superglue/cb", "cb", "dev"),
        ("superglue/cb", "cb", "test"),
        ("superglue/rte", "rte", "dev"),
        ("superglue/rte", "rte", "test"),
    ]


def test_the_hub_caches_snapshot_is_named_by_its_links_not_its_blobs(cli, db_url, tmp_path):
    """In the cache a data file is a link to `blobs/<sha256>`: the datasets say the snapshot's
    `cb/validation-….parquet`, and a study finds its test set by that file's name."""
    snapshot = hub.in_hub_cache(
        hub.super_glue_snapshot(tmp_path / "download"), tmp_path / "hub", "aps/super_glue"
    )
    assert cli("import", "superglue/cb", snapshot).code == 0
    result = cli("import", "superglue/cb", snapshot / "cb" / "test-00000-of-00001.parquet")
    assert f"{snapshot / 'cb' / 'test-00000-of-00001.parquet'}, imported before" in result.stderr
    with Session(__import__("annotate.workspace").workspace.open_workspace(db_url).engine) as s:
        paths = sorted((d.split, d.path) for d in s.exec(select(Dataset)))
    assert paths == [
        ("dev", str(snapshot / "cb" / "validation-00000-of-00001.parquet")),
        ("test", str(snapshot / "cb" / "test-00000-of-00001.parquet")),
    ]
    created = cli(
        "study", "create", "cb-cache", "--task", "superglue/cb", "--protocol", "quick",
        "--train", "validation", "--test", "test-00000-of-00001.parquet",
    )  # fmt: skip
    assert created.code == 0, created.stderr


def test_the_caches_repository_folder_reads_the_revision_refs_main_names(cli, db_url, tmp_path):
    """`datasets--aps--super_glue/` with two revisions: the one `refs/main` names is read (as
    `load_dataset` does), not the first in hash order; with no refs/main, refused, naming them."""
    cache = tmp_path / "hub"
    old = {"cb": {"validation": hub.hub_dataset(hub.CB_VAL[:2], CB)}}
    new = {"cb": {"validation": hub.hub_dataset(hub.CB_VAL, CB)}}
    hub.in_hub_cache(hub.write_snapshot(tmp_path / "a", old), cache, "aps/super_glue", "0" * 40)
    main = hub.in_hub_cache(
        hub.write_snapshot(tmp_path / "b", new), cache, "aps/super_glue", "f" * 40
    )
    repo = cache / "datasets--aps--super_glue"
    assert cli("import", "superglue/cb", repo).code == 0
    with Session(__import__("annotate.workspace").workspace.open_workspace(db_url).engine) as s:
        stored = [(d.path, d.n_items) for d in s.exec(select(Dataset))]
    assert stored == [(str(main / "cb" / "validation-00000-of-00001.parquet"), len(hub.CB_VAL))]
    (repo / "refs" / "main").unlink()
    refused = cli("import", "superglue/cb", repo)
    assert refused.code == 1 and "Traceback" not in refused.stderr
    assert f"2 revisions in snapshots/ ({'0' * 40}, {'f' * 40}) and no refs/main" in refused.stderr
    predictions = fx.write_jsonl(tmp_path / "out" / "CB.jsonl", hub.CB_VAL)
    scored = cli("score", predictions, "--gold", repo)
    assert scored.code == 1 and "Traceback" not in scored.stderr
    # `score --gold` said "no labelled superglue/cb file found (looked for dev.jsonl, …)"
    assert f"2 revisions in snapshots/ ({'0' * 40}, {'f' * 40}) and no refs/main" in scored.stderr


def test_a_save_to_disk_folder_and_its_arrow_file(cli, db_url, tmp_path):
    folder = hub.write_save_to_disk(
        tmp_path / "cb_saved",
        {"validation": hub.hub_dataset(hub.CB_VAL, CB), "test": hub.hub_dataset(hub.CB_TEST, CB)},
    )
    assert {"dataset_dict.json", "validation", "test"} <= {p.name for p in folder.iterdir()}
    assert cli("import", "superglue/cb", folder).code == 0
    assert stored(db_url)[("dev", "data-00000-of-00001.arrow")] == original_gold(
        hub.CB_VAL, "superglue/cb"
    )
    # one arrow file alone: its split from its folder, its names from dataset_info.json
    arrow = folder / "validation" / "data-00000-of-00001.arrow"
    again = cli("import", "superglue/cb", arrow)
    assert again.code == 0 and "identical (same sha256)" in again.stderr


@pytest.mark.parametrize(
    ("split", "task", "stored_as"),
    [("validation", "superglue/cb", "dev"), ("validation_matched", "glue/mnli-m", "dev")],
)
def test_one_split_saved_alone_keeps_the_split_its_state_records(
    cli, db_url, tmp_path, split, task, stored_as
):
    """`load_dataset(…, split="validation").save_to_disk("cb_val")`: the folder's name is the
    user's, and state.json's `_split` says which split it holds, for the folder and for its
    Arrow file alone."""
    from datasets import Dataset

    config = CB if task == "superglue/cb" else hub.GLUE["mnli"]
    records = hub.CB_VAL if config is CB else [{**r, "label": "neutral"} for r in hub.CB_VAL]
    built = hub.hub_dataset(records, config)
    folder = tmp_path / "my_copy"
    Dataset(built.data, info=built.info, split=split).save_to_disk(str(folder))
    assert json.loads((folder / "state.json").read_text())["_split"] == split
    result = cli("import", task, folder, "--format", "json")
    assert result.code == 0, result.stderr
    assert [r["split"] for r in json.loads(result.stdout)] == [stored_as]
    alone = cli("import", task, folder / "data-00000-of-00001.arrow")
    assert alone.code == 0 and "identical (same sha256)" in alone.stderr


def test_an_arrow_file_alone_reads_its_schemas_names(cli, db_url, tmp_path):
    folder = hub.write_save_to_disk(
        tmp_path / "saved", {"validation": hub.hub_dataset(hub.CB_VAL, CB)}
    )
    arrow = folder / "validation" / "data-00000-of-00001.arrow"
    moved = tmp_path / "elsewhere" / "validation" / arrow.name
    moved.parent.mkdir(parents=True)
    arrow.rename(moved)  # no dataset_info.json beside it now
    assert cli("import", "superglue/cb", moved).code == 0
    assert stored(db_url)[("dev", moved.name)] == original_gold(hub.CB_VAL, "superglue/cb")


def test_a_dataset_info_of_another_config_is_refused(cli, db_url, tmp_path):
    """CB's three names are MNLI's in another order: read for MNLI's file, they would swap
    two of its labels, and no check of the names could tell."""
    jsonl = hub.write_to_json(
        tmp_path / "json", "validation.jsonl", hub.hub_dataset(hub.CB_VAL, CB)
    )
    info = jsonl.parent / "dataset_info.json"
    described = json.loads(info.read_text())
    info.write_text(json.dumps({**described, "config_name": "cb"}))
    assert cli("import", "superglue/cb", jsonl).code == 0  # its own task: taken
    result = cli("import", "glue/mnli-m", jsonl)
    assert result.code == 1
    assert f"{info}: describes the config 'cb', not mnli_matched" in result.stderr
    assert list(stored(db_url)) == [("dev", "validation.jsonl")]


def test_to_json_with_dataset_info_and_to_csv_with_label_names(cli, db_url, tmp_path):
    data = hub.hub_dataset(hub.CB_VAL, CB)
    jsonl = hub.write_to_json(tmp_path / "json", "validation.jsonl", data)
    assert (jsonl.parent / "dataset_info.json").is_file()
    assert cli("import", "superglue/cb", jsonl).code == 0
    csv = hub.write_to_json(tmp_path / "csv", "cb.csv", data, csv=True, info=False)
    result = cli(
        "import",
        "superglue/cb",
        csv,
        "--split",
        "validation",
        "--label-names",
        ",".join(CB.names),
    )
    assert result.code == 0, result.stderr
    got = stored(db_url)
    assert got[("dev", "validation.jsonl")] == got[("dev", "cb.csv")]
    assert got[("dev", "cb.csv")] == original_gold(hub.CB_VAL, "superglue/cb")


def test_a_glue_task_from_the_hub(cli, db_url, tmp_path):
    """GLUE's Hub columns differ from its TSV (idx, not index; SST-2's names are negative/
    positive, the TSV's 0/1)."""
    rows = hub.read_tsv(
        fx.write_text(tmp_path / "dev.tsv", "sentence\tlabel\nit works .\t1\nit fails .\t0\n")
    )
    for n, row in enumerate(rows):
        row["idx"] = n
    data = hub.hub_dataset(rows, hub.GLUE["sst2"], tsv=hub.GLUE_TSV_LABELS["sst2"])
    path = hub.write_parquet(data, tmp_path / "sst2" / "validation-00000-of-00001.parquet")
    assert cli("import", "SST-2", path).code == 0
    assert stored(db_url)[("dev", path.name)] == {"0": "1", "1": "0"}


@pytest.mark.parametrize("task", ["superglue/multirc", "superglue/record"])
def test_to_csv_of_multirc_or_record_is_refused_saying_why(cli, tmp_path, task):
    """`to_csv` writes the Hub's nested idx as Python's text of a dict: the refusal says so and
    what to save instead, not that idx.paragraph is missing."""
    records = fx.SG_MULTIRC if task.endswith("multirc") else fx.SG_RECORD
    data = (hub.multirc_dataset if task.endswith("multirc") else hub.record_dataset)(records)
    path = hub.write_to_json(tmp_path / "csv", "validation.csv", data, csv=True)
    result = cli("import", task, path)
    assert result.code == 1
    assert re.search(rf"{re.escape(str(path))}:\d+: idx is text", result.stderr)
    assert "as `to_csv` writes the Hub's nested MultiRC/ReCoRD ids" in result.stderr
    assert "`to_json` or `to_parquet`" in result.stderr and "missing idx" not in result.stderr


@pytest.mark.parametrize("task", ["superglue/multirc", "superglue/record"])
def test_multirc_and_record_rows_become_the_original_items(cli, db_url, tmp_path, task):
    """The Hub flattens MultiRC to one row per answer and ReCoRD to one row per query; the
    items (and their gold) are the ones the original files give."""
    records = fx.SG_MULTIRC if task.endswith("multirc") else fx.SG_RECORD
    original = fx.write_jsonl(tmp_path / "val.jsonl", records)
    data = (hub.multirc_dataset if task.endswith("multirc") else hub.record_dataset)(records)
    path = hub.write_parquet(data, tmp_path / "hub" / "validation-00000-of-00001.parquet")
    assert cli("import", task, original).code == 0
    result = cli("import", task, path)
    assert result.code == 0, result.stderr
    from annotate.workspace import open_workspace

    with Session(open_workspace(db_url).engine) as s:
        by_dataset = {}
        for item in s.exec(select(Item).order_by(Item.position)).all():
            fields = dict(item.fields)
            fields.pop("source", None)  # the Hub's ReCoRD drops the news source
            by_dataset.setdefault(item.dataset_id, []).append((item.source_id, fields, item.gold))
    assert by_dataset[1] == by_dataset[2]


@pytest.mark.parametrize("with_spans", [True, False], ids=["entity_spans", "entities only"])
def test_record_entities_come_in_the_passages_order(cli, db_url, tmp_path, with_spans):
    """The Hub lists a query's entities as a sorted set; annotators pick from them in the
    passage's order, as the original file gives them (from `entity_spans` where the row has
    them, else from each entity's first place in the passage)."""
    data = hub.record_dataset(fx.SG_RECORD, with_spans=with_spans)
    assert data[0]["entities"] == ["Harbor City", "Lena Ortiz", "Pine Falls"]
    path = hub.write_parquet(data, tmp_path / "hub" / "validation-00000-of-00001.parquet")
    assert cli("import", "superglue/record", path).code == 0
    from annotate.workspace import open_workspace

    with Session(open_workspace(db_url).engine) as s:
        (item,) = s.exec(select(Item)).all()
    assert item.fields["entities"] == ["Lena Ortiz", "Harbor City", "Pine Falls"]


# --- WSC from the Hub's `wsc.fixed` config ------------------------------------------------------


def wsc_rows(n: int, text: str = "Mara thanked Ines because she had helped.") -> list[dict]:
    """WSC rows as in SuperGLUE's files ("Mara" is word 0, "she" word 4 of the text)."""
    target = {"span2_index": 4, "span1_index": 0, "span1_text": "Mara", "span2_text": "she"}
    return [{"text": text, "target": target, "idx": i, "label": i % 2 == 0} for i in range(n)]


def test_a_snapshot_with_the_wsc_fixed_config_imports_it_as_wsc(cli, tmp_path: Path):
    """The Hub's `super_glue` has a `wsc.fixed` config (the lm-evaluation-harness's `wsc`
    task loads it); a snapshot holding it beside a config of no task is WSC's."""
    wsc, other = hub.SUPER_GLUE["wsc"], hub.SUPER_GLUE["rte"]
    fixed = wsc_rows(3)
    root = hub.write_snapshot(
        tmp_path / "super_glue",
        {
            "wsc.fixed": {
                "train": hub.hub_dataset(fixed, wsc),
                "validation": hub.hub_dataset(fixed[:2], wsc),
            },
            "extra": {"validation": hub.hub_dataset(fx.SG_RTE, other)},
        },
    )
    result = cli("import", "WSC", root, "--format", "json")
    assert result.code == 0, result.stderr
    got = {(r["split"], Path(r["path"]).parent.name, r["items"]) for r in result.json()}
    assert got == {("train", "wsc.fixed", 3), ("dev", "wsc.fixed", 2)}


def test_a_snapshot_with_wsc_and_wsc_fixed_takes_wsc(cli, tmp_path: Path):
    """Both configs hold the same rows; WSC's own is read, as before `wsc.fixed` was known."""
    wsc = hub.SUPER_GLUE["wsc"]
    rows = wsc_rows(3)
    root = hub.write_snapshot(
        tmp_path / "super_glue",
        {
            "wsc": {"validation": hub.hub_dataset(rows[:2], wsc)},
            "wsc.fixed": {"validation": hub.hub_dataset(rows, wsc)},
        },
    )
    result = cli("import", "WSC", root, "--format", "json")
    assert result.code == 0, result.stderr
    (row,) = result.json()
    assert (Path(row["path"]).parent.name, row["items"]) == ("wsc", 2)
    # Its own folder given, `wsc.fixed` is read.
    result = cli("import", "WSC", root / "wsc.fixed", "--format", "json")
    assert result.code == 0, result.stderr
    (row,) = result.json()
    assert (Path(row["path"]).parent.name, row["items"]) == ("wsc.fixed", 3)


def test_the_wsc_fixed_config_folder_in_the_hubs_converted_layout(cli, tmp_path: Path):
    """`wsc.fixed/validation/0000.parquet` (the Hub's parquet conversion), in a folder with
    another config of no task."""
    wsc = hub.SUPER_GLUE["wsc"]
    data = hub.hub_dataset(wsc_rows(2), wsc)
    hub.write_parquet(data, tmp_path / "sg" / "wsc.fixed" / "validation" / "0000.parquet")
    hub.write_parquet(data, tmp_path / "sg" / "other" / "validation" / "0000.parquet")
    result = cli("import", "WSC", tmp_path / "sg", "--format", "json")
    assert result.code == 0, result.stderr
    (row,) = result.json()
    assert (row["split"], row["items"]) == ("dev", 2)
    assert Path(row["path"]).parts[-3:] == ("wsc.fixed", "validation", "0000.parquet")


def test_the_wsc_fixed_config_is_no_other_tasks(cli, tmp_path: Path):
    """A snapshot holding `wsc.fixed` only has no RTE in it: refused as such, not read as
    RTE's rows (which failed on WSC's columns)."""
    wsc = hub.SUPER_GLUE["wsc"]
    root = hub.write_snapshot(
        tmp_path / "super_glue", {"wsc.fixed": {"validation": hub.hub_dataset(wsc_rows(2), wsc)}}
    )
    assert cli("init").code == 0
    told = fx.refused_import(cli, "superglue/rte", root)
    assert "a Hub snapshot without a superglue/rte config" in told
    assert "its data files are in other tasks' folders (wsc.fixed)" in told


# --- refusals: each names the file and says what was expected ----------------------------------


@pytest.mark.parametrize("name", ["val.jsonl", "val.csv"])
def test_ints_without_names_name_the_flag(cli, tmp_path, name):
    """`to_csv` writes the class numbers as digits: they are class numbers all the same (the
    CSV said "unknown label '1'", with no word of the flag)."""
    data = hub.hub_dataset(hub.CB_VAL, CB)
    path = hub.write_to_json(tmp_path, name, data, csv=name.endswith(".csv"), info=False)
    result = cli("import", "superglue/cb", path)
    assert result.code == 1
    assert str(path) in result.stderr and "--label-names" in result.stderr


def test_a_name_the_task_does_not_have(cli, tmp_path):
    path = hub.write_parquet(hub.hub_dataset(hub.CB_VAL, CB), tmp_path / "validation.parquet")
    result = cli("import", "superglue/rte", path)
    assert result.code == 1
    assert "'contradiction'" in result.stderr and "entailment, not_entailment" in result.stderr


def test_a_binary_file_is_never_read_as_text(cli, tmp_path):
    path = tmp_path / "val.jsonl"
    path.write_bytes(b"\x89\x00\x01binary\x00junk" * 10)
    result = cli("import", "superglue/rte", path)
    assert result.code == 1 and "UTF-8" not in result.stderr
    assert str(path) in result.stderr and "a binary file" in result.stderr
    # a Parquet file under a text name is read as the Parquet file it is
    parquet = tmp_path / "dev" / "val.jsonl"
    hub.write_parquet(hub.hub_dataset(hub.CB_VAL, CB), parquet)
    assert cli("import", "superglue/cb", parquet).code == 0


@pytest.mark.parametrize(
    "layout", ["parquet", "to_json", "snapshot", "config", "hf_cache", "save_to_disk"]
)
def test_score_reads_gold_from_the_hubs_files(cli, tmp_path, layout):
    """A researcher with only the Hub's data scores a submission against its validation split:
    a Parquet file, `to_json` output beside its dataset_info.json, or a folder as the Hub
    ships the task (a repository snapshot, one config's folder, the HF cache's folder of the
    repository, a `save_to_disk` folder; each with the test split, unlabelled, beside it),
    read as import reads them (CB's integers by the file's own class names)."""
    dataset = hub.hub_dataset(hub.CB_VAL, CB)
    if layout == "parquet":
        gold = hub.write_parquet(dataset, tmp_path / "cb" / "validation-00000-of-00001.parquet")
    elif layout == "to_json":
        gold = hub.write_to_json(tmp_path / "exported", "cb-validation.jsonl", dataset)
    elif layout in ("snapshot", "config", "hf_cache"):
        gold = hub.super_glue_snapshot(tmp_path / "super_glue")
        if layout == "config":
            gold = gold / "cb"
        elif layout == "hf_cache":
            hub.in_hub_cache(gold, tmp_path / "hub", "aps/super_glue")
            gold = tmp_path / "hub" / "datasets--aps--super_glue"
    else:
        test = hub.hub_dataset(hub.CB_TEST, CB)
        gold = hub.write_save_to_disk(tmp_path / "cb", {"validation": dataset, "test": test})
    predictions = tmp_path / "out" / "CB.jsonl"
    predictions.parent.mkdir()
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    predictions.write_text(
        "".join(
            json.dumps({"idx": r["idx"], "label": r["label"] if r["idx"] else wrong[r["label"]]})
            + "\n"
            for r in hub.CB_VAL
        ),
        encoding="utf-8",
    )
    result = cli("score", predictions, "--gold", gold, "--format", "json")
    assert result.code == 0, result.stderr
    (task,) = json.loads(result.stdout)["tasks"]
    assert task["coverage"]["scored"] == len(hub.CB_VAL)
    assert task["scores"]["accuracy"]["value"] == pytest.approx(5 / 6)


def test_the_text_readers_refuse_parquet_by_name(tmp_path):
    """The readers of the task's own files name a Parquet file, never decode it as text."""
    path = hub.write_parquet(hub.hub_dataset(hub.CB_VAL, CB), tmp_path / "val.jsonl")
    with pytest.raises(Exception, match="Parquet file"):
        list(read_items(path, specs.load_task("superglue/cb"), FileSummary()))


# --- the distributed zips -----------------------------------------------------------------------


def _zip(path: Path, members: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, text in members.items():
            z.writestr(name, text)
    return path


def test_superglue_and_glue_task_zips_import_as_they_are(cli, db_url, tmp_path):
    val = fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE).read_text()
    sg = _zip(
        tmp_path / "sg" / "RTE.zip",
        {"RTE/": "", "RTE/val.jsonl": val, "RTE/test.jsonl": val.replace("label", "x")},
    )
    result = cli("import", "superglue/rte", sg)
    assert result.code == 0, result.stderr
    assert "superglue/rte dev" in result.stdout and "superglue/rte test" in result.stdout
    assert stored(db_url)[("dev", "val.jsonl")] == original_gold(fx.SG_RTE, "superglue/rte")
    tsv = "index\tsentence1\tsentence2\tlabel\n0\tA cat sat.\tA cat exists.\tentailment\n"
    glue = _zip(tmp_path / "glue" / "RTE.zip", {"RTE/dev.tsv": tsv, "__MACOSX/RTE/._dev.tsv": "x"})
    result = cli("import", "glue/rte", glue)
    assert result.code == 0, result.stderr
    assert stored(db_url)[("dev", "dev.tsv")] == {"0": "entailment"}


def test_a_zip_without_the_tasks_files(cli, tmp_path):
    path = _zip(tmp_path / "CB.zip", {"CB/readme.txt": "hello"})
    result = cli("import", "superglue/rte", path)
    assert result.code == 1
    assert str(path) in result.stderr and "val.jsonl" in result.stderr
    assert "CB/readme.txt" in result.stderr


# --- real sample files, laid out as the Hub has them ---------------------------------------------


def _real_records(task: str, relative: str) -> tuple[list[dict], object]:
    """The real file's records and the Hub's dataset of them (GLUE's TSV: idx = row number)."""
    path = shared_file(relative)
    config = task.split("/")[1]
    if path.suffix == ".tsv":
        records = hub.read_tsv(path)
        for n, record in enumerate(records):
            record["idx"] = n
        data = hub.hub_dataset(records, hub.GLUE[config], tsv=hub.GLUE_TSV_LABELS[config])
        return records, data
    records = hub.read_jsonl(path)
    return records, hub.hub_dataset(records, hub.SUPER_GLUE[config])


@pytest.mark.parametrize(
    ("task", "relative"),
    [
        ("superglue/cb", "superglue/CB/val.jsonl"),
        ("superglue/copa", "superglue/COPA/val.jsonl"),
        ("superglue/wsc", "superglue/WSC/val.jsonl"),
        ("superglue/wic", "superglue/_variants/opencompass_stringified_labels/WiC/val.jsonl"),
        ("superglue/axg", "superglue/AX-g/AX-g.jsonl"),
        ("superglue/rte", "superglue/RTE/val.jsonl"),
        ("glue/sst2", "glue/SST-2/dev.tsv"),
    ],
)
def test_real_files_in_every_layout(cli, db_url, tmp_path, task, relative):
    records, data = _real_records(task, relative)
    config = task.split("/")[1]
    expected = original_gold(records, task)
    paths = [
        hub.write_parquet(data, tmp_path / "file" / "validation-00000-of-00001.parquet"),
        hub.write_config(tmp_path / "sharded" / config, {"validation": data}, {"validation": 3}),
        hub.write_snapshot(tmp_path / "snapshot", {config: {"validation": data}}),
        hub.write_save_to_disk(tmp_path / "saved", {"validation": data}),
        hub.write_to_json(tmp_path / "json", "validation.jsonl", data),
    ]
    for path in paths:
        result = cli("import", task, path, "--format", "json")
        assert result.code == 0, (path, result.stderr)
        (row,) = json.loads(result.stdout)
        from annotate.workspace import open_workspace

        with Session(open_workspace(db_url).engine) as s:
            items = s.exec(select(Item).where(Item.dataset_id == row["id"])).all()
        assert {i.source_id: i.gold for i in items} == expected, path


def test_every_flat_task_finds_its_fields_under_the_hubs_column_names(tmp_path):
    """The Hub renames some columns (GLUE's MNLI premise/hypothesis, WSC's flattened spans)
    and drops others (AX-g's pair_id): each task still finds every field it needs."""
    from annotate.formats.hub.records import flat_items

    hub_columns = {
        "glue/cola": ["sentence"],
        "glue/mnli-m": ["premise", "hypothesis"],
        "glue/stsb": ["sentence1", "sentence2"],
        "glue/qqp": ["question1", "question2"],
        "glue/mrpc": ["sentence1", "sentence2"],
        "glue/qnli": ["question", "sentence"],
        "glue/ax": ["premise", "hypothesis"],
        "superglue/axb": ["sentence1", "sentence2"],
        "superglue/axg": ["premise", "hypothesis"],
        "superglue/wic": ["word", "sentence1", "sentence2", "start1", "start2", "end1", "end2"],
        "superglue/wsc": ["text", "span1_index", "span2_index", "span1_text", "span2_text"],
    }
    for task, columns in hub_columns.items():
        row = {c: "1" for c in columns} | {"idx": 7, "label": -1}
        (item,) = flat_items(
            [(1, row)], tmp_path / "x.parquet", specs.load_task(task), FileSummary(), {}
        )
        assert item.source_id == "7" and item.gold is None, task


def test_without_pyarrow_the_error_names_the_extra(cli, tmp_path, monkeypatch):
    import sys

    path = hub.write_parquet(hub.hub_dataset(hub.CB_VAL, CB), tmp_path / "validation.parquet")
    for module in ("pyarrow", "pyarrow.parquet", "pyarrow.ipc"):
        monkeypatch.setitem(sys.modules, module, None)
    result = cli("import", "superglue/cb", path)
    assert result.code == 1
    assert str(path) in result.stderr and "annotate-baselines[parquet]" in result.stderr


def test_an_arrow_file_in_the_ipc_file_format(cli, db_url, tmp_path):
    """The library writes the stream format; the file format (`ARROW1`) is read as well."""
    import pyarrow as pa

    table = hub.hub_dataset(hub.CB_VAL, CB).data.table
    path = tmp_path / "validation" / "cb.arrow"
    path.parent.mkdir()
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    assert path.read_bytes()[:6] == b"ARROW1"
    assert cli("import", "superglue/cb", path, "--split", "validation").code == 0
    assert stored(db_url)[("dev", path.name)] == original_gold(hub.CB_VAL, "superglue/cb")


def test_utf16_text_is_named_as_such(cli, tmp_path):
    path = fx.write_jsonl(tmp_path / "val.jsonl", fx.SG_RTE)
    path.write_bytes(path.read_text().encode("utf-16"))
    result = cli("import", "superglue/rte", path)
    assert result.code == 1 and "UTF-16 text (save it as UTF-8)" in result.stderr


def test_the_product_never_imports_datasets():
    """Only the tests build fixtures with `datasets`; reading needs pyarrow at most."""
    import re

    root = Path(__file__).resolve().parents[2] / "annotate"
    pattern = re.compile(r"^\s*(import datasets|from datasets\b)", re.MULTILINE)
    assert not [p for p in root.rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))]
