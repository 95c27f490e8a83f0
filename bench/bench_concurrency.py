"""Many annotators at once: N processes each loop `submit_and_next` as an admitted annotator
on a 100,000-item study (k = 5) for a fixed time. Reported per run: total labels/s, the
keypress cycle's p50/p99/max, errors and failed processes, and whether every item still has at
most k labels from distinct annotators.

Baseline in the same run: N raw sqlite3 writers doing one-row transactions (WAL,
synchronous=FULL, BEGIN IMMEDIATE, the store's pragmas) for the same time; the ratio is
annotate's labels/s over their commits/s. Runs: 5 and 10 annotators; 5 annotators beside 8
busy-loop processes (CPU starvation); 10 annotators on PostgreSQL when a server can be started
(tests/pg.py), with the share of the cycle spent waiting for the study lock.

Targets: 5 annotators >= 1,000 labels/s and >= 25% of raw, p99 <= 30 ms, 0 errors;
10 annotators 0 errors, p99 <= 50 ms; starved: 0 failed processes.

    python -m bench.bench_concurrency [--seconds 10] [--items 100000] [--no-postgres]
                                      [--only-postgres]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text

from bench.common import print_rows
from bench.store_builder import build_study

K = 5
WARM_UP_S = 3.0
"""PostgreSQL: a short run before the measured one, then VACUUM ANALYZE."""
STARTUP_S = 4.0
"""Head start for the workers to import and open the store before the common start time."""


@dataclass
class Run:
    processes: int
    seconds: float
    cycles: list[float]
    errors: list[str]
    failed: int
    lock_wait: float

    @property
    def rate(self) -> float:
        return len(self.cycles) / self.seconds

    def pct(self, q: float) -> float:
        ordered = sorted(self.cycles) or [0.0]
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def _busy_loop() -> None:
    while True:
        pass


def run_workers(argvs: list[list[str]], seconds: float, busy: int = 0) -> Run:
    start = time.time() + STARTUP_S
    end = start + seconds
    hogs = [multiprocessing.Process(target=_busy_loop, daemon=True) for _ in range(busy)]
    for hog in hogs:
        hog.start()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.concurrency_worker", *argv, str(start), str(end)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv in argvs
    ]
    cycles: list[float] = []
    errors: list[str] = []
    failed = 0
    lock_wait = 0.0
    try:
        for proc in procs:
            out, err = proc.communicate(timeout=seconds + STARTUP_S + 300)
            if proc.returncode != 0:
                failed += 1
                errors.append((err.strip().splitlines() or ["?"])[-1])
                continue
            result = json.loads(out.strip().splitlines()[-1])
            cycles += result["cycles"]
            errors += result["errors"]
            lock_wait += result["lock_wait"]
    finally:
        for hog in hogs:
            hog.kill()
    return Run(len(argvs), seconds, cycles, errors, failed, lock_wait)


def run_sessions(url: str, study: str, n: int, seconds: float, busy: int = 0) -> Run:
    argvs = [["session", url, study, f"{study}-a{i}"] for i in range(n)]
    return run_workers(argvs, seconds, busy)


def run_raw(folder: Path, n: int, seconds: float) -> Run:
    path = folder / f"raw{n}.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE raw (id INTEGER PRIMARY KEY, worker TEXT, n INTEGER)")
    conn.close()
    return run_workers([["raw", str(path), f"w{i}"] for i in range(n)], seconds)


def k_check(engine, study: str) -> str:
    """At most k labels per item, from distinct annotators, and n_labels agreeing."""
    with engine.connect() as conn:
        worst = conn.execute(
            text(
                "SELECT max(n), max(n - d) FROM (SELECT count(*) AS n, "
                "count(DISTINCT l.annotator_id) AS d FROM label l JOIN study s ON s.id = "
                "l.study_id WHERE s.name = :s AND l.phase = 'test' GROUP BY l.item_id) AS t"
            ),
            {"s": study},
        ).one()
        mismatched = conn.execute(
            text(
                "SELECT count(*) FROM studyitem si JOIN study s ON s.id = si.study_id "
                "WHERE s.name = :s AND si.n_labels <> (SELECT count(*) FROM label l WHERE "
                "l.study_id = si.study_id AND l.item_id = si.item_id AND l.phase = 'test')"
            ),
            {"s": study},
        ).scalar()
    most, repeats = worst[0] or 0, worst[1] or 0
    ok = most <= K and repeats == 0 and mismatched == 0
    return f"{'yes' if ok else 'NO'} (most {most}, repeated annotators {repeats}, " + (
        f"count mismatches {mismatched})"
    )


def describe(run: Run) -> list[tuple[str, str]]:
    return [
        ("labels/s", f"{run.rate:,.0f}"),
        (
            "cycle p50 / p99 / max",
            f"{run.pct(0.5):.1f} / {run.pct(0.99):.1f} / {run.pct(1):.1f} ms",
        ),
        ("errors / failed processes", f"{len(run.errors)} / {run.failed}"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--only-postgres", action="store_true")
    args = parser.parse_args()
    if args.only_postgres:
        run_postgres(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n, busy in ((5, 0), (10, 0), (5, 8)):
            study = f"c{n}b{busy}"
            engine = build_study(
                str(folder / f"{study}.db"), args.items, k=K, annotators=n, name=study
            )
            url = str(folder / f"{study}.db")
            run = run_sessions(url, study, n, args.seconds, busy)
            rows = describe(run)
            if not busy:
                raw = run_raw(folder, n, args.seconds)
                rows += [
                    (
                        "raw sqlite3 writers (baseline)",
                        f"{raw.rate:,.0f} commits/s, "
                        f"p99 {raw.pct(0.99):.2f} ms, errors {len(raw.errors)}",
                    ),
                    ("ratio labels/s to raw commits/s", f"{run.rate / raw.rate:.2f}x"),
                ]
            rows.append((f"every item <= {K} labels, distinct annotators", k_check(engine, study)))
            engine.dispose()
            title = f"{n} annotators, SQLite, {args.items:,} items, {args.seconds:.0f} s"
            print_rows(title + (f", beside {busy} busy-loop processes" if busy else ""), rows)
            for error in sorted(set(run.errors))[:3]:
                print(f"    e.g. {error}")
        if not args.no_postgres:
            run_postgres(args)


def run_postgres(args: argparse.Namespace) -> None:
    try:
        from tests import pg

        server = pg.start()
    except Exception as exc:  # no server here: say so and skip
        print(f"PostgreSQL: skipped ({exc})")
        return
    try:
        n, study = 10, "pg10"
        engine = build_study(server.url, args.items, k=K, annotators=n, name=study)
        # Steady state, as autovacuum keeps it: statistics taken with leases and labels
        # churning, not of the freshly loaded (lease-less) tables.
        run_sessions(server.url, study, n, WARM_UP_S)
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE"))
        run = run_sessions(server.url, study, n, args.seconds)
        cycle_total = sum(run.cycles) or 1.0
        rows = [
            *describe(run),
            ("lock-wait share of the cycle", f"{run.lock_wait / cycle_total:.0%}"),
            (f"every item <= {K} labels, distinct annotators", k_check(engine, study)),
        ]
        engine.dispose()
        print_rows(f"{n} annotators, PostgreSQL, {args.items:,} items, {args.seconds:.0f} s", rows)
    finally:
        pg.stop(server.folder)


if __name__ == "__main__":
    main()
