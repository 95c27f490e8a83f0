"""One process of bench_concurrency: an admitted annotator (or a raw sqlite3 writer) working
flat out until a deadline, then one JSON line with what it did.

    python -m bench.concurrency_worker session URL STUDY ANNOTATOR START END
    python -m bench.concurrency_worker raw PATH WORKER START END
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from typing import Any

from annotate.store.engine import SQLITE_PRAGMAS


def _wait_until(start: float) -> None:
    # Every process starts at the same moment, whatever its import time was.
    while (left := start - time.time()) > 0:
        time.sleep(min(left, 0.05))


def run_session(url: str, study: str, annotator: str, start: float, end: float) -> dict[str, Any]:
    from sqlalchemy import event

    from annotate.protocol.session import AnnotatorSession, ItemTaken
    from annotate.workspace import open_workspace

    engine = open_workspace(url).engine
    lock_wait = 0.0
    if engine.dialect.name == "postgresql":
        # Time spent queueing for the study's advisory lock: the share of the cycle that is
        # waiting for other annotators rather than working.
        @event.listens_for(engine, "before_cursor_execute")
        def _before(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
            conn.info["t0"] = time.perf_counter()

        @event.listens_for(engine, "after_cursor_execute")
        def _after(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
            nonlocal lock_wait
            if "pg_advisory_xact_lock" in statement:
                lock_wait += time.perf_counter() - conn.info["t0"]

    session = AnnotatorSession.open(engine, study, annotator)
    _wait_until(start)
    cycles: list[float] = []
    errors: list[str] = []
    item = session.next_item()
    while item is not None and time.time() < end:
        t0 = time.perf_counter()
        try:
            item = session.submit_and_next(item, "entailment")
        except ItemTaken:
            item = session.next_item()
        except Exception as exc:  # every failure is a figure of the benchmark
            errors.append(f"{type(exc).__name__}: {exc}"[:200])
            item = session.next_item()
        cycles.append(time.perf_counter() - t0)
    session.release()
    return {"cycles": cycles, "errors": errors, "lock_wait": lock_wait}


def run_raw(path: str, worker: str, start: float, end: float) -> dict[str, Any]:
    """The baseline: one-row write transactions with the store's pragmas, nothing else."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=5)
    for pragma in SQLITE_PRAGMAS:
        conn.execute(pragma)
    _wait_until(start)
    cycles: list[float] = []
    errors: list[str] = []
    n = 0
    while time.time() < end:
        t0 = time.perf_counter()
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO raw (worker, n) VALUES (?, ?)", (worker, n))
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            errors.append(str(exc))
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        n += 1
        cycles.append(time.perf_counter() - t0)
    return {"cycles": cycles, "errors": errors, "lock_wait": 0.0}


def main(argv: list[str]) -> None:
    mode, *args = argv
    start, end = float(args[-2]), float(args[-1])
    if mode == "session":
        result = run_session(args[0], args[1], args[2], start, end)
    else:
        result = run_raw(args[0], args[1], start, end)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
