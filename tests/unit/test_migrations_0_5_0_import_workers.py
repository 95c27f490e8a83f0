"""A store made by annotate 0.5.0 (schema 15; tests/migration/store-0.5.0-import-workers.db,
built by the 0.5.0 code with tests/migration/build_0_5_0_import_workers_store.py) keeps each
imported worker's platform id twice: on the annotator row and in the import's record
(`labelimport.detail["workers"]`). Schema 20 keeps it on the annotator row only, where payment
files, allow-lists and `annotator show` read it; what the commands print is unchanged. A new
import writes no platform id into its record."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from annotate.cli import app
from annotate.store import schema
from tests import label_fixtures as lf
from tests.label_fixtures import BINS
from tests.migration_stores import earlier_store

FIXTURES = Path(__file__).resolve().parents[1] / "migration"
STORE = FIXTURES / "store-0.5.0-import-workers.db"
BATCH = FIXTURES / "batch-0.4.2.csv"  # the batch the store imported, byte for byte
EXPECTED = json.loads((FIXTURES / "expected-0.5.0-import-workers.json").read_text())
TABLES = (  # on PostgreSQL, every table the fixture has rows in, in the order of their keys
    "dataset",
    "item",
    "annotator",
    "study",
    "studyitem",
    "label",
    "labelimport",
    "visit",
    "gatedecision",
    "payment",
)
BATCH_IDS = {
    "w01": "A4CAREFULREADR",
    "w02": "A5NIGHTSHIFT00",
    "w03": "A2ZZTOPW0RK3R9",
    "w04": "A1B2C3D4E5F6G7",
}
LONG_IDS = {"w05": "ana", "w06": "ben", "w07": "cai"}


def run(url: str, *args: object) -> str:
    result = CliRunner().invoke(app, ["--db", url, *map(str, args)])
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.stdout


def details(url: str) -> list[tuple[str, dict[str, Any]]]:
    """Each import's record as stored: its text (what a dump of the store shows) and as JSON."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(text("SELECT detail FROM labelimport ORDER BY id")).scalars()
            # SQLite gives the text back, PostgreSQL the parsed value.
            return [(d, json.loads(d)) if isinstance(d, str) else (json.dumps(d), d) for d in found]
    finally:
        engine.dispose()


def platform_ids(url: str) -> dict[str, tuple[str | None, str | None]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT name, platform, platform_id FROM annotator"))
            return {name: (platform, pid) for name, platform, pid in rows}
    finally:
        engine.dispose()


def test_a_0_5_0_store_keeps_imported_worker_ids_on_the_annotator_rows_only(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    url = earlier_store(STORE, "0015", TABLES, backend, new_store_url, tmp_path)
    before = details(url)
    assert [d["workers"] for _, d in before] == [BATCH_IDS, LONG_IDS]  # as 0.5.0 stored them

    out = " ".join(run(url, "migrate").split())
    assert f"from schema 15 to {int(schema.SCHEMA_HEAD)}" in out
    assert "label imports: 7 worker ids removed from 2 import records" in out

    after = details(url)
    assert [d["annotators"] for _, d in after] == [list(BATCH_IDS), list(LONG_IDS)]
    for (stored, detail), (_, then) in zip(after, before, strict=True):
        assert "workers" not in detail
        for worker in {**BATCH_IDS, **LONG_IDS}.values():
            assert f'"{worker}"' not in stored
        # Nothing else in the record changed.
        assert {k: v for k, v in detail.items() if k != "annotators"} == {
            k: v for k, v in then.items() if k != "workers"
        }
    # The annotator rows keep every id, as payment reads them.
    ids = platform_ids(url)
    assert {n: ids[n] for n in BATCH_IDS} == {n: ("mturk", i) for n, i in BATCH_IDS.items()}
    assert {n: ids[n] for n in LONG_IDS} == {n: ("long", i) for n, i in LONG_IDS.items()}

    # The commands that read the workers say what 0.5.0 said.
    again = json.loads(
        run(url, "import-labels", BATCH, "--dataset", "1", "--values", BINS, "--output", "json")
    )
    assert again["already_imported"] and again["study"] == "old-mturk"
    assert again["n_annotators"] == 4 and again["n_items"] == 40
    for name, study in (("report mturk", "old-mturk"), ("report long", "old-long")):
        report = json.loads(run(url, "report", study, "--format", "json", "--bootstrap", "0"))
        then = EXPECTED[name]
        for key in ("n_labels", "n_items", "n_annotators", "scores", "individual"):
            assert report[key] == then[key], key
        assert report["agreement"]["krippendorff_alpha"] == then["agreement"]["krippendorff_alpha"]
        assert report["datasheet"]["collected"] == then["datasheet"]["collected"]
    status = json.loads(run(url, "status", "old-mturk", "--format", "json"))
    then = EXPECTED["status mturk"]
    assert [(a["name"], a["test_done"]) for a in status["annotators"]] == [
        (a["name"], a["test_done"]) for a in then["annotators"]
    ]
    for name, shown in EXPECTED["annotators"].items():
        now = json.loads(run(url, "annotator", "show", name, "--format", "json"))
        assert (now["platform"], now["platform_id"]) == (shown["platform"], shown["platform_id"])
    # w01 of the batch took the MTurk crowd study too: the bonus file names them as before.
    bonus = tmp_path / "bonus.csv"
    run(url, "pay", "rte-mturk", "--hourly-rate", "12", "--format", "mturk", "--to", bonus)
    assert bonus.read_text() == EXPECTED["bonus mturk"]
    assert bonus.read_text().splitlines()[1].startswith("A4CAREFULREADR,")
    # The allow-list of an imported worker admitted by hand reads their annotator row.
    run(url, "gate", "old-mturk", "--admit", "w02", "--reason", "careful in the batch")
    allow = tmp_path / "allow.txt"
    run(url, "gate", "old-mturk", "--export", "mturk", allow)
    assert allow.read_text() == "A5NIGHTSHIFT00\n"
    if backend == "sqlite":  # the backup `migrate` wrote keeps the records as 0.5.0 had them
        [backup] = tmp_path.glob(f"{STORE.stem}-schema15-backup*.db")
        assert [d["workers"] for _, d in details(f"sqlite:///{backup}")] == [BATCH_IDS, LONG_IDS]


def test_an_import_records_its_annotators_pseudonyms_and_no_worker_id(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    url = new_store_url()
    run(url, "import", "superglue/cb", lf.write_jsonl(tmp_path / "val.jsonl", lf.nli_items(40)))
    made = json.loads(
        run(url, "import-labels", BATCH, "--dataset", "1", "--values", BINS, "--output", "json")
    )
    assert made["n_annotators"] == 4
    [(stored, detail)] = details(url)
    assert "workers" not in detail and detail["annotators"] == list(BATCH_IDS)
    for worker in BATCH_IDS.values():
        assert worker not in stored
    ids = platform_ids(url)
    assert {n: ids[n] for n in BATCH_IDS} == {n: ("mturk", i) for n, i in BATCH_IDS.items()}
    again = json.loads(
        run(url, "import-labels", BATCH, "--dataset", "1", "--values", BINS, "--output", "json")
    )
    assert again["already_imported"] and again["n_annotators"] == 4


def test_an_id_no_annotator_row_holds_is_not_lost(
    backend: str, new_store_url: Callable[[], str], tmp_path: Path
):
    """An annotator whose platform id was cleared gets the record's back before the record
    drops it; a pseudonym no annotator bears keeps its id in the record (the only copy)."""
    url = earlier_store(STORE, "0015", TABLES, backend, new_store_url, tmp_path)
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE annotator SET platform = NULL, platform_id = NULL WHERE name = 'w03'")
        )
        conn.execute(text("UPDATE annotator SET name = 'x06' WHERE name = 'w06'"))
    engine.dispose()

    out = " ".join(run(url, "migrate").split())
    assert "label imports: 6 worker ids removed from 2 import records" in out
    assert "1 annotator without a platform id given the one its import recorded" in out
    assert "worker ids kept in import record(s) 2 (w06)" in out
    assert platform_ids(url)["w03"] == ("mturk", BATCH_IDS["w03"])
    (_, batch), (_, long) = details(url)
    assert "workers" not in batch and batch["annotators"] == list(BATCH_IDS)
    assert long["workers"] == {"w06": "ben"} and long["annotators"] == list(LONG_IDS)
