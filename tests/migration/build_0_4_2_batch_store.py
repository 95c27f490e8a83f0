"""Build the 0.4.2 store kept as a migration fixture (schema 11, before the answer as given was
kept and before one file could make two studies), with the 0.4.2 code, and record what 0.4.2
printed about it.

Run from a checkout of the 0.4.2 release, with that checkout first on the path:

    git worktree add /tmp/annotate-0.4.2 be6973f
    PYTHONPATH=/tmp/annotate-0.4.2 python tests/migration/build_0_4_2_batch_store.py tests/migration

It writes `store-0.4.2-batch.db` (SQLite, journal folded in), the MTurk-like batch it imported
(`batch-0.4.2.csv`, made-up text) and `expected-0.4.2.json`: a CB dataset, a study imported
from the batch with --values bins (a flagged comment column mapped), and a study from a long
CSV.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from build_0_1_0_store import fold, run

import annotate
from tests import label_fixtures as lf

OUTPUTS = {
    "studies": ["study", "list", "--format", "json"],
    "report mturk": ["report", "old-mturk", "--format", "json", "--bootstrap", "0"],
    "report long": ["report", "old-long", "--format", "json", "--bootstrap", "0"],
}


def main(out: Path) -> None:
    assert annotate.__version__ == "0.4.2", (
        f"run this with the 0.4.2 code, not {annotate.__version__}"
    )
    out.mkdir(parents=True, exist_ok=True)
    db = out / "store-0.4.2-batch.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    work = out / "build-0.4.2"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    items = lf.nli_items(40)
    run(db, "import", "superglue/cb", str(lf.write_jsonl(work / "val.jsonl", items)))
    batch = lf.mturk_batch(out / "batch-0.4.2.csv", items)
    run(
        db, "import-labels", str(batch), "--dataset", "1", "--values", lf.BINS,
        "--map", "comment=comments", "--study", "old-mturk",
    )  # fmt: skip
    long = lf.long_csv(work / "long.csv", items[:10])
    run(
        db, "import-labels", str(long), "--dataset", "1", "--study", "old-long",
        "--map", "item=pair,annotator=coder,label=verdict,seconds=secs,comment=note",
    )  # fmt: skip
    expected = {name: json.loads(run(db, *args)) for name, args in OUTPUTS.items()}
    for report in (expected["report mturk"], expected["report long"]):
        report.pop("generated_at", None)
    (out / "expected-0.4.2.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    shutil.rmtree(work)
    fold(db)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
