"""Build the 0.4.2 store kept as a migration fixture, with the 0.4.2 code (schema 11).

Run from a checkout of release 0.4.2, with that checkout first on the path:

    PYTHONPATH=/path/to/annotate-0.4.2 python tests/migration/build_0_4_2_store.py tests/migration

It writes `store-0.4.2.db` (SQLite, journal folded in): a study labelled in annotate (its
labels have times) and two studies made by `import-labels` from long CSV files written here,
one with times (`seconds`) and one without. 0.4.2 stored the moment of the import as both
times of each label of the second; schema 13 clears them. Only demo text written for this
project is in it.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import annotate
from annotate.demo import DEMO_DATA
from annotate.formats.importer import import_file
from annotate.formats.label_import import import_labels
from annotate.protocol.studies import create_study
from annotate.simulate import simulate
from annotate.specs import load_task
from annotate.workspace import open_workspace


def labels_csv(path: Path, ids: list[str], with_seconds: bool) -> Path:
    header = "item,annotator,label" + (",seconds" if with_seconds else "")
    rows = [header]
    for n, item in enumerate(ids):
        for w, worker in enumerate(("w1", "w2", "w3")):
            label = "entailment" if (n + w) % 3 else "not_entailment"
            rows.append(f"{item},{worker},{label}" + (f",{4 + n + w}" if with_seconds else ""))
    path.write_text("\n".join(rows) + "\n")
    return path


def main(out: Path) -> None:
    assert annotate.__version__ == "0.4.2", annotate.__version__
    store = out / "store-0.4.2.db"
    store.unlink(missing_ok=True)
    engine = open_workspace(f"sqlite:///{store}", create=True).engine
    spec = load_task("superglue/rte")
    dev = import_file(engine, spec, DEMO_DATA / "rte" / "val.jsonl", split="dev")
    test = import_file(engine, spec, DEMO_DATA / "rte" / "test.jsonl", split="test")
    create_study(
        engine,
        "live",
        "superglue/rte",
        "quick",
        train_dataset_id=dev.dataset_id,
        test_dataset_id=test.dataset_id,
        overrides={"test_sample": 10, "annotators_per_item": 3},
    )
    simulate(engine, "live", 4, 0.8, seed=5, close_gate=True)
    ids = [str(i) for i in range(12)]
    scratch = out / "scratch-0.4.2"
    scratch.mkdir(exist_ok=True)
    import_labels(
        engine,
        labels_csv(scratch / "timed.csv", ids, True),
        study="timed",
        dataset_id=dev.dataset_id,
    )
    import_labels(
        engine,
        labels_csv(scratch / "untimed.csv", ids, False),
        study="untimed",
        dataset_id=dev.dataset_id,
    )
    engine.dispose()
    for f in scratch.iterdir():
        f.unlink()
    scratch.rmdir()
    with sqlite3.connect(store) as conn:  # fold the WAL journal into the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
