"""Build the 0.1.0 store kept as a migration fixture, with the 0.1.0 code, and record what
0.1.0 printed about it (the numbers every later release must still give after `migrate`).

Run from a checkout of the 0.1.0 release (commit 776212e), with that checkout first on the path:

    git worktree add /tmp/annotate-0.1.0 776212e
    PYTHONPATH=/tmp/annotate-0.1.0 python tests/migration/build_0_1_0_store.py tests/migration

It writes `store-0.1.0.db` (SQLite, journal folded in) and `expected-0.1.0.json`. The store
holds: two studies (a threshold gate with a human annotator who flagged and revised answers,
and a median gate closed on 11 simulated annotators, some refused), a token hash, and a
curation set imported from the demo diagnostic with reviews, an adjudication, an edit and a
retirement. Only demo text written for this project is in it.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

import annotate
from annotate.cli import app
from annotate.curation.examples import edit_example, set_retired
from annotate.curation.review import settle, submit_review
from annotate.demo import DEMO_DATA
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.simulate import simulate
from annotate.workspace import open_workspace

# Outputs compared before and after migration: (name, command line after `annotate --db DB`).
OUTPUTS = {
    "datasets": ["datasets", "--format", "json"],
    "studies": ["study", "list", "--format", "json"],
    "status rte": ["status", "old-rte", "--format", "json"],
    "status sst2": ["status", "old-sst2", "--format", "json"],
    "report rte": ["report", "old-rte", "--format", "json", "--seed", "3"],
    "report sst2": ["report", "old-sst2", "--format", "json", "--seed", "3"],
    "gate sst2": ["gate", "old-sst2", "--format", "json"],
    "curation stats": ["curate", "diag", "--stats", "--format", "json"],
}


def run(db: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--db", str(db), *args])
    if result.exit_code != 0:
        raise SystemExit(f"annotate {' '.join(args)} failed: {result.output}{result.exception}")
    return result.stdout


def human_annotator(engine, study: str) -> None:
    """ana: trains, is admitted by the threshold, answers test items with a flag and a
    comment, then revises one answer (a LabelRevision row). Fixed clock: stable seconds."""
    t0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
    ticks = iter(t0 + timedelta(seconds=7 * i) for i in range(10_000))
    s = AnnotatorSession.open(engine, study, "ana", clock=lambda: next(ticks))
    while s.phase() is Phase.TRAINING:
        item = s.next_item()
        assert item is not None
        s.submit(item, "entailment")
    assert s.phase() is Phase.TEST, s.phase()
    for n in range(6):
        item = s.next_item()
        if item is None:
            break
        flagged = n == 2
        s.submit(
            item,
            "not_entailment" if n % 3 else "entailment",
            flag=flagged,
            comment="the premise seems cut off [sic]" if flagged else None,
        )
    last = s.last_answer()
    assert last is not None
    s.revise(last[0], "entailment")


def curation(db: Path, engine) -> None:
    run(db, "curate", "diag", "--import", str(DEMO_DATA / "diagnostic" / "diagnostic-full.tsv"))
    rows = json.loads(run(db, "curate", "diag", "--list", "--format", "json"))
    examples = rows if isinstance(rows, list) else rows["examples"]
    ids = [e["id"] for e in examples]
    labels = {e["id"]: e["label"] for e in examples}
    tags = {e["id"]: e["fine_tags"] if "fine_tags" in e else e["tags"] for e in examples}
    flat = {
        i: (t if isinstance(t, list) else [x for v in t.values() for x in v])
        for i, t in tags.items()
    }
    others = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    for i in ids[:6]:
        label = labels[i] if i != ids[1] else others[labels[i]]
        submit_review(engine, "diag", "sam", i, label, flat[i], note="second opinion")
    settle(engine, "diag", ids[1], "lea", labels[ids[1]], flat[ids[1]], note="kept the original")
    edit_example(engine, "diag", ids[3], "lea", {"note": "edited in 0.1.0"}, note="a note")
    set_retired(engine, "diag", ids[4], "lea", True, note="too close to another pair")


def fold(db: Path) -> None:
    """One self-contained file (the CLI's engines still hold the live one open): an online
    backup, switched out of WAL so that no -wal/-shm files are needed beside it."""
    folded = db.with_suffix(".folded")
    folded.unlink(missing_ok=True)
    with sqlite3.connect(db) as live, sqlite3.connect(folded) as copy:
        live.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")
        copy.execute("VACUUM")
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    folded.replace(db)


def main(out: Path) -> None:
    assert annotate.__version__ == "0.1.0", (
        f"run this with the 0.1.0 code, not {annotate.__version__}"
    )
    out.mkdir(parents=True, exist_ok=True)
    db = out / "store-0.1.0.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    run(db, "init")
    rte, sst2 = DEMO_DATA / "rte", DEMO_DATA / "sst2"
    run(db, "import", "superglue/rte", str(rte / "val.jsonl"), "--split", "dev")
    run(db, "import", "superglue/rte", str(rte / "test.jsonl"), "--split", "test")
    run(db, "import", "glue/sst2", str(sst2 / "dev.tsv"), "--split", "dev")
    run(db, "import", "glue/sst2", str(sst2 / "test.tsv"), "--split", "test")
    run(
        db,
        "study",
        "create",
        "old-rte",
        "--task",
        "superglue/rte",
        "--protocol",
        "quick",
        "--sample",
        "12",
        "--seed",
        "5",
    )
    run(
        db,
        "study",
        "create",
        "old-sst2",
        "--task",
        "glue/sst2",
        "--protocol",
        "glue-2019",
        "--sample",
        "15",
        "--seed",
        "5",
        "--set",
        "training_items=8",
    )
    run(db, "annotator", "add", "ana", "--token")
    ws = open_workspace(str(db))
    human_annotator(ws.engine, "old-rte")
    simulate(ws.engine, "old-rte", 5, 0.8, seed=11, prefix="rte-sim-")
    simulate(ws.engine, "old-sst2", 11, 0.8, seed=12, prefix="sst-sim-")
    curation(db, ws.engine)
    ws.engine.dispose()
    expected = {name: json.loads(run(db, *args)) for name, args in OUTPUTS.items()}
    expected["_commands"] = OUTPUTS
    fold(db)
    (out / "expected-0.1.0.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {db} ({db.stat().st_size} bytes) and {out / 'expected-0.1.0.json'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
