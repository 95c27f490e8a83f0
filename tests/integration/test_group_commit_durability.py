"""Group commit keeps every acknowledged write: threads of one process write to a SQLite store
(their commits grouped), and the store as it stands at random moments (the files copied while
the process is stopped, as after a crash) or after `kill -9` holds every write the process had
acknowledged by then."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
THREADS = 8

WRITER = textwrap.dedent("""
    import sys, threading
    from sqlalchemy import text
    from annotate.store import group_commit
    from annotate.store.engine import make_engine, write_connection

    engine = make_engine("sqlite:///" + sys.argv[1])
    with write_connection(engine) as conn:
        conn.execute(text("create table t (n integer primary key, pad text)"))
    print("ready", flush=True)
    out = threading.Lock()

    def writer(w: int) -> None:
        for i in range(100_000):
            n = w * 1_000_000 + i
            with write_connection(engine) as conn:
                conn.execute(text("insert into t values (:n, :pad)"), {"n": n, "pad": "x" * 200})
            with out:
                print(n, group_commit.commits(engine), flush=True)

    for w in range({threads}):
        threading.Thread(target=writer, args=(w,), daemon=True).start()
    threading.Event().wait()
""").replace("{threads}", str(THREADS))


def start_writers(db: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def read_acks(proc: subprocess.Popen[str], count: int) -> tuple[set[int], int]:
    """The next `count` acknowledged writes, and the process's commits so far."""
    assert proc.stdout is not None
    acked: set[int] = set()
    commits = 0
    for _ in range(count):
        n, commits = map(int, proc.stdout.readline().split())
        acked.add(n)
    return acked, commits


def stored(db: Path) -> set[int]:
    with sqlite3.connect(db) as conn:
        return {n for (n,) in conn.execute("select n from t")}


def test_the_store_copied_at_random_moments_holds_every_acknowledged_write(tmp_path: Path):
    db = tmp_path / "s.db"
    proc = start_writers(db)
    acked: set[int] = set()
    rng = random.Random(38)
    try:
        for moment in range(8):
            more, commits = read_acks(proc, rng.randint(20, 300))
            acked |= more
            proc.send_signal(signal.SIGSTOP)  # the files as a crash would leave them
            copy = tmp_path / f"copy{moment}"
            copy.mkdir()
            for suffix in ("", "-wal"):
                if Path(f"{db}{suffix}").exists():
                    shutil.copy(f"{db}{suffix}", copy / f"s.db{suffix}")
            proc.send_signal(signal.SIGCONT)
            assert acked <= stored(copy / "s.db")
        assert commits < len(acked)  # the threads' writes were grouped
    finally:
        proc.kill()
        proc.wait(10)


def test_kill_9_loses_no_acknowledged_write(tmp_path: Path):
    db = tmp_path / "s.db"
    proc = start_writers(db)
    try:
        acked, commits = read_acks(proc, 400)
        time.sleep(random.Random(9).uniform(0, 0.05))  # mid-batch, most likely
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert proc.stdout is not None
        for line in proc.stdout:  # acknowledged before the kill, still in the pipe
            acked.add(int(line.split()[0]))
    finally:
        proc.kill()
        proc.wait(10)
    assert acked <= stored(db)
    assert commits < 400
