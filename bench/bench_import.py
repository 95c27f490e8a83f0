"""Import a generated 400,000-row GLUE-format TSV with `annotate import`'s code path, and
compare with the same rows parsed and inserted through raw `sqlite3.executemany` into a table
of the same shape (same columns, JSON text, unique index), both with the same pragmas.

    python -m bench.bench_import [--rows N]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
from pathlib import Path

from bench.common import in_subprocess, print_rows, timed

WORDS = [
    "the",
    "a",
    "river",
    "stone",
    "quietly",
    "bright",
    "seven",
    "lamps",
    "over",
    "under",
    "market",
    "harbor",
    "walked",
    "opened",
]


def generate(path: Path, rows: int, seed: int = 1) -> None:
    """A QNLI-shaped file: index, question, sentence, label."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        f.write("index\tquestion\tsentence\tlabel\n")
        for i in range(rows):
            q = " ".join(rng.choices(WORDS, k=8)) + "?"
            s = " ".join(rng.choices(WORDS, k=20)) + "."
            f.write(f"{i}\t{q}\t{s}\t{rng.choice(('entailment', 'not_entailment'))}\n")


def run_annotate(data: Path, db: Path) -> dict[str, float]:
    from annotate import specs
    from annotate.formats.importer import import_file
    from annotate.workspace import open_workspace

    ws = open_workspace(str(db), create=True)
    spec = specs.load_task("glue/qnli")
    return timed(lambda: import_file(ws.engine, spec, data, split="train"))


def run_baseline(data: Path, db: Path) -> dict[str, float]:
    def work() -> None:
        conn = sqlite3.connect(db, isolation_level=None)
        for pragma in (
            "journal_mode=WAL",
            "busy_timeout=5000",
            "synchronous=FULL",
            "foreign_keys=ON",
        ):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute(
            "CREATE TABLE item (id INTEGER PRIMARY KEY, dataset_id INT, position INT, "
            "source_id TEXT, fields JSON, gold JSON, tags JSON, UNIQUE (dataset_id, source_id))"
        )
        conn.execute("CREATE INDEX ix_pos ON item (dataset_id, position)")
        conn.execute("BEGIN IMMEDIATE")
        with data.open(encoding="utf-8") as f:
            next(f)
            batch = []
            for position, line in enumerate(f):
                index, question, sentence, label = line.rstrip("\n").split("\t")
                fields = json.dumps({"question": question, "sentence": sentence})
                batch.append((1, position, index, fields, json.dumps(label), None))
                if len(batch) >= 5000:
                    conn.executemany(
                        "INSERT INTO item (dataset_id, position, source_id, fields, gold, tags) VALUES (?,?,?,?,?,?)",
                        batch,
                    )
                    batch = []
            conn.executemany(
                "INSERT INTO item (dataset_id, position, source_id, fields, gold, tags) VALUES (?,?,?,?,?,?)",
                batch,
            )
        conn.execute("COMMIT")
        conn.close()

    return timed(work)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=400_000)
    parser.add_argument("--run", choices=["annotate", "baseline"])
    parser.add_argument("--data")
    parser.add_argument("--db")
    args = parser.parse_args()
    if args.run:
        runner = run_annotate if args.run == "annotate" else run_baseline
        print(json.dumps(runner(Path(args.data), Path(args.db))))
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "train.tsv"
        generate(data, args.rows)
        base = in_subprocess(
            "bench.bench_import", "--run", "baseline", "--data", str(data), "--db", f"{tmp}/base.db"
        )
        ours = in_subprocess(
            "bench.bench_import", "--run", "annotate", "--data", str(data), "--db", f"{tmp}/ours.db"
        )
    ratio = ours["seconds"] / base["seconds"]
    print_rows(
        f"import of {args.rows:,} GLUE TSV rows",
        [
            (
                "raw sqlite3.executemany",
                f"{base['seconds']:.2f} s, peak {base['peak_rss_mb']:.0f} MB",
            ),
            ("annotate import", f"{ours['seconds']:.2f} s, peak {ours['peak_rss_mb']:.0f} MB"),
            ("ratio (target <= 2x)", f"{ratio:.2f}x"),
            ("memory (target < 1 GB)", "ok" if ours["peak_rss_mb"] < 1024 else "OVER"),
        ],
    )
    print(
        json.dumps(
            {
                "bench": "import",
                "rows": args.rows,
                "baseline": base,
                "annotate": ours,
                "ratio": ratio,
            }
        ),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
