"""`annotate export --format labels` against a raw dump of the same join, at 500,000 labels.

    python -m bench.bench_export [--labels 500000] [--rounds 2]

The raw dump streams the SQL join (label x item x annotator) through `csv.writer` in a plain
script. Both run as fresh processes (imports included), alternated round by round; peak
resident memory is each process's own (`resource.getrusage(RUSAGE_CHILDREN)` of a wrapper).
Targets: time and peak RSS <= 2x the raw dump's. The store is the report benchmark's
(`bench.bench_report.store_for`, built once under /tmp/statsperf-bench).
"""

from __future__ import annotations

import argparse
import csv
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_report import STUDY, store_for
from bench.common import peak_rss_mb, print_rows


def raw_dump(db: Path, out: Path) -> None:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT s.name, i.source_id, a.name, l.phase, l.value, l.shown_at, l.answered_at, "
        "l.flag, l.comment FROM label l JOIN item i ON i.id = l.item_id "
        "JOIN annotator a ON a.id = l.annotator_id JOIN study s ON s.id = l.study_id "
        "WHERE l.phase = 'test' ORDER BY i.dataset_id, i.position, a.name"
    )
    with out.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["study", "item_id", "annotator", "phase", "value", "shown_at"])
        for row in rows:
            writer.writerow(row)
    conn.close()


def child(args: list[str]) -> dict[str, float]:
    """Run a measurement in a fresh process; its time and peak RSS."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "bench.bench_export", "--child", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_rss_mb": json.loads(out.strip().splitlines()[-1])["rss"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs="*")
    args = parser.parse_args()
    if args.child is not None:
        what, db, out = args.child
        if what == "raw":
            raw_dump(Path(db), Path(out) / "raw.csv")
        else:
            from annotate.cli import main as annotate_main

            sys.argv = ["annotate", "--db", db, "export", STUDY, "--to", out, "--format", "labels"]
            try:
                annotate_main()
            except SystemExit as exit_:
                if exit_.code:
                    raise
        print(json.dumps({"rss": peak_rss_mb()}))
        return
    db = store_for(args.labels)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            raw = child(["raw", str(db), tmp])
            ours = child(["ours", str(db), tmp])
            rows += [
                (
                    f"round {r + 1}: raw dump",
                    f"{raw['seconds']:.2f} s, {raw['peak_rss_mb']:.0f} MB",
                ),
                (
                    f"round {r + 1}: annotate export --format labels",
                    f"{ours['seconds']:.2f} s ({ours['seconds'] / raw['seconds']:.2f}x), "
                    f"{ours['peak_rss_mb']:.0f} MB ({ours['peak_rss_mb'] / raw['peak_rss_mb']:.2f}x)",
                ),
            ]
    print_rows(f"label export, {args.labels:,} labels (targets <= 2x time and memory)", rows)


if __name__ == "__main__":
    main()
