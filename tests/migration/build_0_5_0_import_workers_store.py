"""Build the 0.5.0 store kept as a migration fixture for the worker ids of imported labels, with
the 0.5.0 code (schema 15), and record what 0.5.0 printed about it.

Run from a checkout of release 0.5.0, with that checkout first on the path:

    git archive 7a5d3f4 | tar -x -C /tmp/annotate-0.5.0
    PYTHONPATH=/tmp/annotate-0.5.0 python tests/migration/build_0_5_0_import_workers_store.py \
        tests/migration

It writes `store-0.5.0-import-workers.db` (SQLite, journal folded in) and
`expected-0.5.0-import-workers.json`; the MTurk-like batch it imports is `batch-0.4.2.csv`'s
twin (the same made-up file, byte for byte). 0.5.0 kept
each imported worker's platform id twice: on their annotator row and in the import's record
(`labelimport.detail["workers"]`: pseudonym -> id); schema 20 keeps it on the annotator row
only. The store holds a CB dataset, a study imported from the batch, one from a long CSV, and
an MTurk crowd study on RTE that one worker of the batch (the same annotator, found by their
WorkerId) took by link, so the bonus file names them.
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from build_0_1_0_store import fold, run

import annotate
from annotate.protocol import crowd
from annotate.protocol.crowd_config import CrowdConfig, with_codes
from annotate.protocol.session import AnnotatorSession
from annotate.workspace import open_workspace
from tests import label_fixtures as lf
from tests.crowd_helpers import CODES, gold
from tests.engine_helpers import rte_study

MTURK_LINK = {
    "workerId": "A4CAREFULREADR",  # a worker of the batch (lf.MTURK_WORKERS)
    "assignmentId": "3K4J6M3CXES74RFXQAPR431QHPQAGV",
    "hitId": "3PMBY0YE272GIWPNWIF8IH5RBHQ9C1",
    "turkSubmitTo": "https://workersandbox.mturk.com",
}
OUTPUTS = {
    "studies": ["study", "list", "--format", "json"],
    "report mturk": ["report", "old-mturk", "--format", "json", "--bootstrap", "0"],
    "report long": ["report", "old-long", "--format", "json", "--bootstrap", "0"],
    "status mturk": ["status", "old-mturk", "--format", "json"],
    "report crowd": ["report", "rte-mturk", "--format", "json", "--bootstrap", "0"],
}


def main(out: Path) -> None:
    assert annotate.__version__ == "0.5.0", annotate.__version__
    db = out / "store-0.5.0-import-workers.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    work = out / "build-0.5.0"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    items = lf.nli_items(40)
    run(db, "import", "superglue/cb", str(lf.write_jsonl(work / "val.jsonl", items)))
    batch = lf.mturk_batch(work / "batch.csv", items)
    assert batch.read_bytes() == (out / "batch-0.4.2.csv").read_bytes()
    run(
        db, "import-labels", str(batch), "--dataset", "1", "--values", lf.BINS,
        "--study", "old-mturk",
    )  # fmt: skip
    long = lf.long_csv(work / "long.csv", items[:10])
    run(
        db, "import-labels", str(long), "--dataset", "1", "--study", "old-long",
        "--map", "item=pair,annotator=coder,label=verdict,seconds=secs,comment=note",
    )  # fmt: skip

    # One worker of the batch takes an MTurk crowd study by link, at fixed times.
    engine = open_workspace(f"sqlite:///{db}").engine
    ctx = rte_study(engine, work, name="rte-mturk", train=4, test=6, gate_threshold=0.5)
    config = {"platform": "mturk", "study_ids": [], "codes": CODES}
    crowd.set_config(engine, "rte-mturk", with_codes(CrowdConfig.model_validate(config)))
    moments = iter(
        datetime(2026, 5, 4, 10, 0, tzinfo=UTC) + timedelta(seconds=40 * n) for n in range(99)
    )

    def clock() -> datetime:
        return next(moments)

    ctx = crowd.load_study(engine, "rte-mturk")
    arrival = crowd.enter_by_link(
        engine, "rte-mturk", crowd.parse_link(ctx, MTURK_LINK), clock=clock
    )
    session = AnnotatorSession.open(engine, "rte-mturk", arrival.annotator, clock=clock)
    session.attach_window(arrival.visit_id)
    while (item := session.next_item()) is not None:
        session.submit(item, gold(engine, item) if item.phase == "training" else "entailment")
    left = crowd.exit_for(engine, "rte-mturk", arrival.annotator, clock=clock)
    assert left is not None and left.outcome == "completed", left
    engine.dispose()

    expected = {name: json.loads(run(db, *args)) for name, args in OUTPUTS.items()}
    for name in ("report mturk", "report long", "report crowd"):
        expected[name].pop("generated_at", None)
    expected["crowd worker"] = arrival.annotator
    bonus = work / "bonus.csv"
    run(db, "pay", "rte-mturk", "--hourly-rate", "12", "--format", "mturk", "--to", str(bonus))
    expected["bonus mturk"] = bonus.read_text()
    names = [a["name"] for a in json.loads(run(db, "annotator", "list", "--format", "json"))]
    expected["annotators"] = {
        name: json.loads(run(db, "annotator", "show", name, "--format", "json")) for name in names
    }
    path = out / "expected-0.5.0-import-workers.json"
    path.write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(work)
    fold(db)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
