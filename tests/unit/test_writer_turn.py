"""The writers' turn on a SQLite store (filelock's native lock beside it): one writer at a
time, the turn freed when its holder is killed, and writes still work where fcntl cannot be
imported (as on Windows)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from annotate.store.engine import make_engine, write_connection
from annotate.store.turn import WRITER_LOCK_SUFFIX, writer_turn

ROOT = Path(__file__).resolve().parents[2]
try:
    import fcntl  # noqa: F401

    NATIVE_LOCK = True
except ImportError:  # .ci/run's run without fcntl: SQLite's busy_timeout alone orders writers
    NATIVE_LOCK = os.name == "nt"
needs_native_lock = pytest.mark.skipif(not NATIVE_LOCK, reason="no native file lock here")


@needs_native_lock
def test_a_second_writer_waits_for_the_first(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 's.db'}")
    order: list[str] = []
    first_in = threading.Event()
    release = threading.Event()

    def first() -> None:
        with writer_turn(engine):
            order.append("first in")
            first_in.set()
            release.wait(10)
            order.append("first out")

    def second() -> None:
        first_in.wait(10)
        with writer_turn(engine):
            order.append("second in")

    a, b = threading.Thread(target=first), threading.Thread(target=second)
    a.start()
    b.start()
    first_in.wait(10)
    b.join(0.2)  # the second is still waiting for its turn
    assert b.is_alive() and order == ["first in"]
    release.set()
    a.join(10)
    b.join(10)
    assert order == ["first in", "first out", "second in"]
    assert Path(f"{tmp_path / 's.db'}{WRITER_LOCK_SUFFIX}").exists()


@needs_native_lock
def test_a_killed_holder_frees_the_turn(tmp_path):
    db = tmp_path / "s.db"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
                import sys, time
                from annotate.store.engine import make_engine
                from annotate.store.turn import writer_turn
                with writer_turn(make_engine("sqlite:///{db}")):
                    print("holding", flush=True)
                    time.sleep(60)
            """),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        got = threading.Event()

        def take() -> None:
            with writer_turn(make_engine(f"sqlite:///{db}")):
                got.set()

        taker = threading.Thread(target=take, daemon=True)
        taker.start()
        assert got.wait(10)
    finally:
        holder.kill()
        holder.wait(10)


def test_writes_work_without_fcntl(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        from sqlalchemy import text
        from annotate.store.engine import make_engine, write_connection
        engine = make_engine("sqlite:///{tmp_path / "s.db"}")
        for n in range(3):
            with write_connection(engine) as conn:
                conn.execute(text("create table if not exists t (n integer)"))
                conn.execute(text("insert into t values (:n)"), {{"n": n}})
        with engine.connect() as conn:
            print(conn.execute(text("select count(*) from t")).scalar(), "fcntl" in sys.modules)
    """)
    shim = ROOT / "tests" / "no_fcntl"
    run = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": f"{shim}{os.pathsep}{ROOT}"},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["3", "False"]
    assert run.stderr == ""


def test_writes_through_the_turn_are_committed(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 's.db'}")
    with write_connection(engine) as conn:
        conn.execute(text("create table t (n integer)"))
        conn.execute(text("insert into t values (1)"))
    with engine.connect() as conn:
        assert conn.execute(text("select n from t")).scalar() == 1
