"""The Python API (annotate.open_store) and the exports for analysis: labels with item text,
Parquet, file names that carry the study, excluded items marked."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import sys
from pathlib import Path

import pandas as pd
import pytest

import annotate
from annotate.errors import UserError
from tests import label_fixtures as lf

API_PAGE = Path(__file__).resolve().parents[2] / "docs" / "api.md"


@pytest.fixture
def mturk_study(cli, tmp_path: Path):
    """An imported CB dataset and an MTurk batch imported on it as study `cb-mturk`, with one
    item excluded from scoring and one label comment."""
    items = lf.nli_items(50)
    assert cli("import", "superglue/cb", lf.write_jsonl(tmp_path / "val.jsonl", items)).code == 0
    batch = lf.mturk_batch(tmp_path / "batch.csv", items)
    result = cli(
        "import-labels",
        batch,
        "--dataset",
        "1",
        "--values",
        lf.BINS,
        "--study",
        "cb-mturk",
        "--map",
        "comment=comments",
    )
    assert result.code == 0, result.stderr
    excluded = cli(
        "flags", "cb-mturk", "--exclude", "7", "--reason", "premise garbled", "--by", "me"
    )
    assert excluded.code == 0, excluded.stderr
    return items


def _read_export(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype={"item_id": str})
    for column in ("shown_at", "answered_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


def _plain(frame: pd.DataFrame) -> list[list[object]]:
    """Rows as plain values, a missing cell as None (CSV has no None/NaN difference)."""
    return [[None if pd.isna(v) else v for v in row] for row in frame.itertuples(index=False)]


def test_study_labels_equal_the_export_with_text_row_for_row(cli, mturk_study, tmp_path, db_url):
    out = tmp_path / "out"
    assert cli("export", "cb-mturk", "--format", "labels", "--with-text", "--to", out).code == 0
    exported = _read_export(out / "cb-mturk-labels.csv")
    with annotate.open_store(db_url) as store:
        assert [s.name for s in store.studies()] == ["cb-mturk"]
        labels = store.study("cb-mturk").labels()
    assert list(labels.columns) == list(exported.columns)
    assert list(labels.columns)[:5] == ["study", "item_id", "premise", "hypothesis", "gold"]
    assert _plain(labels) == _plain(exported)
    gold = {str(i["idx"]): i["label"] for i in mturk_study}
    assert all(gold[i] == g for i, g in zip(labels["item_id"], labels["gold"], strict=True))
    assert set(labels.loc[labels["excluded"], "item_id"]) == {"7"}
    assert labels["comment"].eq("took care").any()


def test_exports_mark_the_labels_of_excluded_items(cli, mturk_study, tmp_path):
    out = tmp_path / "out"
    assert cli("export", "cb-mturk", "--format", "labels", "--to", out).code == 0
    rows = pd.read_csv(out / "cb-mturk-labels.csv", dtype={"item_id": str})
    assert "excluded" in rows.columns
    assert rows.loc[rows["item_id"] == "7", "excluded"].all()
    assert not rows.loc[rows["item_id"] != "7", "excluded"].any()
    assert "premise" not in rows.columns  # the text only with --with-text
    assert cli("export", "cb-mturk", "--format", "soft", "--to", out).code == 0
    soft = pd.read_csv(out / "cb-mturk-soft.csv", dtype={"item_id": str})
    assert len(soft) == 50 and set(soft.loc[soft["excluded"], "item_id"]) == {"7"}


def test_the_report_of_the_api_is_the_report_of_the_cli(cli, mturk_study, db_url):
    with annotate.open_store(db_url) as store:
        report = store.study("cb-mturk").report(bootstrap=30, seed=5)
    printed = cli(
        "report", "cb-mturk", "--format", "json", "--bootstrap", "30", "--seed", "5"
    ).json()
    assert json.loads(json.dumps(report.to_json(), default=str)) == printed
    assert report.datasheet.collected.startswith("collected outside annotate: MTurk batch")


def test_items_annotators_and_agreement_frames(cli, mturk_study, tmp_path, db_url):
    with annotate.open_store(db_url) as store:
        study = store.study("cb-mturk")
        items = study.items()
        annotators = study.annotators()
        labels = study.labels(with_text=False)
        ours = annotate.agreement(labels, level="nominal", bootstrap=0)
    assert len(items) == 50 and items["n_labels"].sum() == len(labels)
    assert items.loc[items["item_id"] == "7", "excluded"].item()
    assert list(annotators["annotator"]) == sorted(set(labels["annotator"]))
    assert annotators["n_test"].sum() == len(labels)
    out = tmp_path / "out"
    assert cli("export", "cb-mturk", "--format", "labels", "--to", out).code == 0
    theirs = cli(
        "agreement", out / "cb-mturk-labels.csv", "--format", "json", "--bootstrap", "0"
    ).json()
    mine = json.loads(json.dumps(ours.to_json(), default=str))
    assert mine["krippendorff_alpha"] == theirs["krippendorff_alpha"]
    assert mine["fleiss_kappa"] == theirs["fleiss_kappa"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"bootstrap": -5}, "bootstrap=-5: a number of replicates, 0 or more"),
        ({"bootstrap": 2.5}, "bootstrap=2.5: a number of replicates, 0 or more"),
        ({"hourly_rate": -3.0}, "hourly_rate=-3.0: a pay per hour of 0 or more"),
        ({"hourly_rate": float("nan")}, "hourly_rate=nan: a pay per hour of 0 or more"),
    ],
)
def test_a_report_option_the_cli_refuses_is_refused_not_read_otherwise(
    mturk_study, db_url, options, message
):
    """A negative bootstrap was drawn as none (the intervals gone without a word) and a
    negative rate gave a negative cost, where `annotate report` refuses both."""
    with annotate.open_store(db_url) as store:
        study = store.study("cb-mturk")
        with pytest.raises(UserError) as raised:
            study.report(**options)
        assert str(raised.value) == message
        if "bootstrap" in options:
            with pytest.raises(UserError) as raised:
                annotate.agreement(study.labels(), **options)
            assert str(raised.value) == message


def test_a_folder_is_named_as_a_folder_not_a_failing_disk(tmp_path):
    with pytest.raises(UserError) as raised:
        annotate.open_store(tmp_path)
    assert (
        str(raised.value)
        == f"no annotate store at sqlite:///{tmp_path.as_posix()}: a folder, not a file"
    )


def test_no_store_in_the_current_folder_names_the_folder(tmp_path, monkeypatch):
    """`open_store()` run in the wrong folder said "no annotate store at
    sqlite:///annotate.db", as the command line did: both now name the folder."""
    monkeypatch.delenv("ANNOTATE_DB", raising=False)
    monkeypatch.delenv("ANNOTATE_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as raised:
        annotate.open_store()
    assert str(raised.value) == (
        f"no annotate store at sqlite:///annotate.db in {Path.cwd()}; "
        "run `annotate init` (or import data)"
    )


def test_a_store_that_cannot_be_opened_keeps_no_connection(tmp_path, monkeypatch):
    """An older store was refused with its connection left in the engine's pool: the file
    stayed open until the garbage collector found the engine."""
    from annotate.store import engine as store_engine

    make_engine, made = store_engine.make_engine, []

    def recording(*args, **kwargs):
        made.append(make_engine(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(store_engine, "make_engine", recording)
    old = tmp_path / "study.db"
    shutil.copy(Path(__file__).parents[1] / "migration" / "store-0.1.0.db", old)
    with pytest.raises(UserError, match="annotate migrate"):
        annotate.open_store(old)
    assert made and all(e.pool.checkedin() == 0 for e in made)


def test_a_study_without_labels_has_the_column_types_of_one_with_labels(workspace, tmp_path):
    """Its seconds, flags and counts were object columns (its times in seconds, not
    microseconds), and so became those of every frame concatenated with it."""
    from tests.unit.test_export import simulated_study

    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="done")
    simulated_study(workspace.engine, tmp_path / "p", "superglue/rte", name="pilot", k=0)
    with annotate.open_store(workspace.url) as store:
        done, pilot = store.study("done"), store.study("pilot")
        for frames in (
            (done.labels("all"), pilot.labels("all")),
            (done.annotators(), pilot.annotators()),
        ):
            labelled, empty = frames
            assert len(labelled) and empty.empty
            numbers = labelled.select_dtypes(exclude=["object", "string"]).dtypes
            assert empty.dtypes[numbers.index].to_dict() == numbers.to_dict()
        joined = pd.concat([done.labels(), pilot.labels()])
    assert joined["seconds"].dtype == "float64" and joined["excluded"].dtype == "bool"


def test_a_closed_store_is_not_read_again(cli, mturk_study, db_url):
    """After close() (or the with block) a study read on, opening a connection that stayed
    open until the garbage collector found the engine."""
    with annotate.open_store(db_url) as store:
        study = store.study("cb-mturk")
    for read in (study.labels, study.items, store.studies, lambda: store.study("cb-mturk")):
        with pytest.raises(UserError) as raised:
            read()
        assert str(raised.value) == (
            "this store was closed: open it again with annotate.open_store()"
        )
    assert store.engine.pool.checkedin() == 0


def test_agreement_of_something_else_than_a_frame_says_what_it_reads():
    rows = [{"item_id": 1, "annotator": "a", "value": "x"}]
    with pytest.raises(UserError) as raised:
        annotate.agreement(rows)  # type: ignore[arg-type]
    assert str(raised.value) == "agreement reads a pandas DataFrame, not list"


def test_info_gives_the_state_and_effective_protocol_the_report_gives(workspace, tmp_path):
    """info() said it gave the state and the effective protocol: it had no state, and its
    protocol had catch_min_accuracy None where the report and `study show` give the
    threshold in force."""
    from tests.unit.test_export import simulated_study

    simulated_study(workspace.engine, tmp_path, "superglue/rte", name="done")
    with annotate.open_store(workspace.url) as store:
        study = store.study("done")
        info, report = study.info(), study.report(bootstrap=0)
    assert info["state"] == report.state
    assert info["protocol"] == report.protocol
    assert info["protocol"]["catch_min_accuracy"] is not None


def test_a_label_that_is_no_number_is_named_by_its_row():
    """It said "DataFrame:2: label 'y' is not a number", as of a file's line."""
    frame = pd.DataFrame({"item_id": [1, 1], "annotator": ["a", "b"], "value": [3, "y"]})
    with pytest.raises(UserError) as raised:
        annotate.agreement(frame, level="interval")
    assert str(raised.value).startswith("row 2: label 'y' is not a number")


def test_an_unknown_agreement_level_lists_the_levels():
    frame = pd.DataFrame({"item_id": [1, 1], "annotator": ["a", "b"], "value": ["x", "y"]})
    with pytest.raises(UserError) as raised:
        annotate.agreement(frame, level="bogus")  # type: ignore[arg-type]
    assert str(raised.value) == "unknown level 'bogus': one of nominal, ordinal, interval, ratio"


def test_the_api_never_writes_the_store(cli, mturk_study, db_url):
    from sqlalchemy import text

    from annotate.store.engine import StorageError

    with (
        annotate.open_store(db_url) as store,
        pytest.raises(StorageError, match="read-only"),
        store.engine.begin() as conn,
    ):
        conn.execute(text("DELETE FROM label"))
    with annotate.open_store(db_url) as store:
        assert len(store.study("cb-mturk").labels()) > 0


def test_reading_the_store_leaves_no_wal_files_behind(cli, mturk_study, tmp_path):
    """Reading opened the file `mode=ro`, which may not remove SQLite's -wal and -shm files
    on closing: every read left two files in the user's folder that were not there before."""
    folder = tmp_path / "copy"
    folder.mkdir()
    store = folder / "store.db"
    assert cli("backup", store).code == 0  # a WAL store that nobody has open
    before = sorted(p.name for p in folder.iterdir())
    assert before == ["store.db"]
    with annotate.open_store(store) as opened:
        assert len(opened.study("cb-mturk").labels()) > 0
    assert sorted(p.name for p in folder.iterdir()) == before
    with sqlite3.connect(store) as plain:
        assert plain.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_parquet_and_file_names_that_carry_the_study(cli, mturk_study, tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    assert cli("export", "cb-mturk", "--format", "parquet", "--with-text", "--to", out).code == 0
    assert cli("export", "cb-mturk", "--format", "labels", "--with-text", "--to", out).code == 0
    assert cli("export", "cb-mturk", "--format", "soft", "--to", out).code == 0
    parquet = pd.read_parquet(out / "cb-mturk-labels.parquet")
    csv_rows = _read_export(out / "cb-mturk-labels.csv")
    for column in ("shown_at", "answered_at"):
        parquet[column] = pd.to_datetime(parquet[column], utc=True, format="ISO8601")
    assert list(parquet.columns) == list(csv_rows.columns)
    assert _plain(parquet) == _plain(csv_rows)
    assert sorted(p.name for p in out.iterdir()) == [
        "cb-mturk-labels.csv",
        "cb-mturk-labels.parquet",
        "cb-mturk-soft.csv",
    ]


def test_parquet_without_pyarrow_names_the_extra(cli, mturk_study, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    result = cli("export", "cb-mturk", "--format", "parquet", "--to", tmp_path / "out")
    assert result.code == 1
    assert "pip install 'annotate-baselines[parquet]'" in result.stderr


def test_the_api_page_example_runs(cli, mturk_study, db_url, monkeypatch, capsys):
    section = API_PAGE.read_text()
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.setenv("ANNOTATE_DB", db_url)
    code = code.replace('"rte-crowd"', '"cb-mturk"')
    exec(compile(code, "docs/api.md", "exec"), {})
    assert "collected outside annotate" in capsys.readouterr().out


def test_import_and_the_api_on_each_backend(store_url, tmp_path):
    """The import's one transaction and the API's read-only session, on SQLite and PostgreSQL."""
    from sqlalchemy import text

    from annotate.formats.importer import import_file
    from annotate.formats.label_import import import_labels
    from annotate.specs import load_task
    from annotate.workspace import open_workspace

    items = lf.nli_items(50)
    ws = open_workspace(store_url, create=True)
    try:
        dataset = import_file(
            ws.engine,
            load_task("superglue/cb"),
            lf.write_jsonl(tmp_path / "val.jsonl", items),
            split="dev",
        )
        batch = lf.mturk_batch(tmp_path / "batch.csv", items)
        result = import_labels(
            ws.engine, batch, study="cb", dataset_id=dataset.dataset_id, values=lf.BINS
        )
        assert result.n_labels == 170 and result.k == 3
    finally:
        ws.engine.dispose()
    with annotate.open_store(store_url) as store:
        study = store.study("cb")
        labels = study.labels()
        assert len(labels) == 170 and labels["shown_at"].dt.tz is not None
        assert study.report(bootstrap=0).datasheet.collected.startswith("collected outside")
        with pytest.raises(Exception, match="(?i)read.only"), store.engine.begin() as conn:
            conn.execute(text("DELETE FROM label"))
