"""Build the 0.2.0 store kept as a migration fixture, with the 0.2.0 code (schema 8), and record
what 0.2.0 printed about it.

Run from a checkout of the 0.2.0 release (the commit before 0.3.0's first schema change), with
that checkout first on the path:

    git worktree add /tmp/annotate-0.2.0 f9d8060
    PYTHONPATH=/tmp/annotate-0.2.0 python tests/migration/build_0_2_0_store.py tests/migration

It writes `store-0.2.0.db` (SQLite, journal folded in) and `expected-0.2.0.json`. On top of
what the 0.1.0 fixture holds, the store has what schema 2-8 added: synthetic annotators, gate
decisions with reasons (a manual admission of someone with no labels, a forced median close),
flag actions (a resolved flag, an excluded item), catch items, and curation pairs. Only demo
text written for this project is in it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from build_0_1_0_store import fold, human_annotator, run

import annotate
from annotate.curation.examples import edit_example, set_retired
from annotate.curation.review import settle, submit_review
from annotate.demo import DEMO_DATA
from annotate.simulate import simulate
from annotate.workspace import open_workspace

OUTPUTS = {
    "datasets": ["datasets", "--format", "json"],
    "studies": ["study", "list", "--format", "json"],
    "status rte": ["status", "v2-rte", "--format", "json"],
    "status sst2": ["status", "v2-sst2", "--format", "json"],
    "report rte": ["report", "v2-rte", "--format", "json", "--seed", "3"],
    "report sst2": ["report", "v2-sst2", "--format", "json", "--seed", "3"],
    "gate sst2": ["gate", "v2-sst2", "--format", "json"],
    "flags rte": ["flags", "v2-rte", "--format", "json"],
    "curation stats": ["curate", "stats", "diag", "--format", "json"],
}


def curation(db: Path, engine) -> None:
    """The 0.2.0 curation commands: import, blind reviews (one disagreeing), an adjudication
    by someone other than the author, an edit and a retirement."""
    run(db, "curate", "import", "diag", str(DEMO_DATA / "diagnostic" / "diagnostic-full.tsv"))
    examples = json.loads(run(db, "curate", "list", "diag", "--format", "json"))
    others = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    first = examples[:6]
    for e in first:
        tags = [t for ts in e["tags"].values() for t in ts]
        label = e["label"] if e["id"] != first[1]["id"] else others[e["label"]]
        submit_review(engine, "diag", "sam", e["id"], label, tags, note="second opinion")
    disputed = first[1]
    tags = [t for ts in disputed["tags"].values() for t in ts]
    settle(engine, "diag", disputed["id"], "lea", disputed["label"], tags, note="kept the original")
    edit_example(engine, "diag", first[3]["id"], "lea", {"note": "edited in 0.2.0"}, note="a note")
    set_retired(engine, "diag", first[4]["id"], "lea", True, note="too close to another pair")


def main(out: Path) -> None:
    assert annotate.__version__ == "0.2.0", (
        f"run this with the 0.2.0 code, not {annotate.__version__}"
    )
    out.mkdir(parents=True, exist_ok=True)
    db = out / "store-0.2.0.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    run(db, "init")
    rte, sst2 = DEMO_DATA / "rte", DEMO_DATA / "sst2"
    run(db, "import", "superglue/rte", str(rte / "val.jsonl"), "--split", "dev")
    run(db, "import", "superglue/rte", str(rte / "test.jsonl"), "--split", "test")
    run(db, "import", "glue/sst2", str(sst2 / "dev.tsv"), "--split", "dev")
    run(db, "import", "glue/sst2", str(sst2 / "test.tsv"), "--split", "test")
    run(db, "study", "create", "v2-rte", "--task", "superglue/rte", "--protocol", "quick",
        "--sample", "12", "--seed", "5", "--set", "catch_rate=0.2")  # fmt: skip
    run(db, "study", "create", "v2-sst2", "--task", "glue/sst2", "--protocol", "glue-2019",
        "--sample", "15", "--seed", "5", "--set", "training_items=8")  # fmt: skip
    run(db, "annotator", "add", "ana", "--token")
    run(db, "annotator", "add", "bo")
    ws = open_workspace(str(db))
    human_annotator(ws.engine, "v2-rte")
    simulate(ws.engine, "v2-rte", 5, 0.8, seed=11, prefix="rte-sim-")
    # A median gate: eleven trainees, then a manual admission of bo (no labels yet) and a close.
    simulate(ws.engine, "v2-sst2", 11, 0.8, seed=12, prefix="sst-sim-", close_gate=False)
    run(db, "gate", "v2-sst2", "--admit", "bo", "--reason", "lab member, trained in person",
        "--force")  # fmt: skip
    run(db, "gate", "v2-sst2", "--close", "--force")
    simulate(ws.engine, "v2-sst2", 11, 0.8, seed=12, prefix="sst-sim-")
    flags = json.loads(run(db, "flags", "v2-rte", "--format", "json"))
    flag_rows = flags if isinstance(flags, list) else flags["flags"]
    first = flag_rows[0]
    run(db, "flags", "v2-rte", "--resolve", str(first["label_id"]),
        "--reason", "read again: fine", "--by", "lea")  # fmt: skip
    run(db, "flags", "v2-rte", "--exclude", str(first["source_id"]), "--reason", "cut-off premise",
        "--by", "lea")  # fmt: skip
    curation(db, ws.engine)
    ws.engine.dispose()
    expected = {name: json.loads(run(db, *args)) for name, args in OUTPUTS.items()}
    expected["_commands"] = OUTPUTS
    fold(db)
    (out / "expected-0.2.0.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"wrote {db} ({db.stat().st_size} bytes) and {out / 'expected-0.2.0.json'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
