"""Build the 0.5.0 store kept as a migration fixture for MNLI's halves (schema 15).

Run from a checkout of release 0.5.0, with that checkout first on the path, in an environment
with the `datasets` library (the test extra):

    PYTHONPATH=/path/to/annotate-0.5.0 python tests/migration/build_0_5_0_mnli_store.py tests/migration

It writes `store-0.5.0-mnli.db` (SQLite, journal folded in): the Hub's combined `mnli` folder
(five splits side by side, made-up pairs written here) imported as MNLI-m and as MNLI-mm.
0.5.0 stored each half's own splits as `dev_matched`, `test_matched` (MNLI-m) and
`dev_mismatched`, `test_mismatched` (MNLI-mm), so a study found no dev or test set; it also
stored the other half's splits under each task. An MNLI-mm study made with the datasets named
by id (the way round it 0.5.0 offered) is labelled by simulated annotators.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

import annotate
from annotate.formats.importer import import_path
from annotate.protocol.studies import create_study
from annotate.simulate import simulate
from annotate.specs import load_task
from annotate.workspace import open_workspace
from tests import hub_fixtures as hub

MNLI = hub.HubConfig(
    {"premise": "premise", "hypothesis": "hypothesis"}, ["entailment", "neutral", "contradiction"]
)


def pairs(tag: str, n: int, labelled: bool = True) -> list[dict]:
    labels = MNLI.names
    return [
        {
            "premise": f"The {tag} premise number {i} is about a walk.",
            "hypothesis": f"Someone walked ({tag} {i}).",
            "label": labels[i % 3] if labelled else None,
            "idx": i,
        }
        for i in range(n)
    ]


def main(out: Path) -> None:
    assert annotate.__version__ == "0.5.0", annotate.__version__
    store = out / "store-0.5.0-mnli.db"
    store.unlink(missing_ok=True)
    engine = open_workspace(f"sqlite:///{store}", create=True).engine
    with tempfile.TemporaryDirectory() as tmp:
        folder = hub.write_config(
            Path(tmp) / "glue" / "mnli",
            {
                split: hub.hub_dataset(rows, MNLI)
                for split, rows in {
                    "train": pairs("train", 8),
                    "validation_matched": pairs("matched dev", 12),
                    "validation_mismatched": pairs("mismatched dev", 10),
                    "test_matched": pairs("matched test", 9, labelled=False),
                    "test_mismatched": pairs("mismatched test", 7, labelled=False),
                }.items()
            },
        )
        found = {}
        for task in ("glue/mnli-m", "glue/mnli-mm"):
            for result in import_path(engine, load_task(task), folder):
                found[task, result.split] = result.dataset_id
    assert found["glue/mnli-mm", "test_mismatched"], found
    create_study(
        engine,
        "mm-by-id",
        "glue/mnli-mm",
        "quick",
        train_dataset_id=found["glue/mnli-mm", "dev_mismatched"],
        test_dataset_id=found["glue/mnli-mm", "test_mismatched"],
        overrides={"training_items": 4, "test_sample": 7, "annotators_per_item": 3},
    )
    simulate(engine, "mm-by-id", 3, 0.8, seed=5)
    engine.dispose()
    with sqlite3.connect(store) as conn:  # one self-contained file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
