"""Faults: a writer killed with kill -9 in the middle of a transaction, a lease left behind by a
killed session (both backends); a SQLite store on a full disk or a read-only file.

After each fault the store is checked: everything acknowledged is there, nothing half-written
is, `check_store` (SQLite: with its integrity check) finds nothing, and work goes on.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from annotate.errors import UserError
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.store.check import check_store
from annotate.store.engine import retry_transient, write_session
from annotate.store.models import Label, utcnow
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study

pytestmark = pytest.mark.slow

READ_TIMEOUT_S = 120
"""Bound on waiting for a worker's next line (it prints within seconds)."""

# A worker that answers test items and prints each item id once submit() has returned (the
# acknowledgement), then, on its PAUSE_AFTER-th answer, stops inside the commit of that answer:
# the label row and the item's counter are written but not committed. It waits there for the
# kill. The pause wraps the engine's own step after a test label is stored (`settle`, on both
# backends), so the real code path runs.
WORKER = """
import sys
import annotate.protocol.assignment as assignment
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.workspace import open_workspace

url, study, pause_after = sys.argv[1], sys.argv[2], int(sys.argv[3])
ws = open_workspace(url)
s = AnnotatorSession.open(ws.engine, study, "ana", create_annotator=True)
while s.phase() is Phase.TRAINING:
    s.submit(s.next_item(), "entailment")
answered = 0
settle = assignment.settle

def settle_then_pause(conn, ctx, item_id):
    settle(conn, ctx, item_id)
    if answered == pause_after:
        print("mid", item_id, flush=True)
        sys.stdin.read()  # inside the transaction, until killed

assignment.settle = settle_then_pause
while (item := s.next_item()) is not None:
    if pause_after < 0:
        print("holding", item.item_id, flush=True)  # on the screen, never answered
        sys.stdin.read()
    s.submit(item, "entailment")
    answered += 1
    print("ack", item.item_id, flush=True)
"""


def start_worker(url: str, study: str, pause_after: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, url, study, str(pause_after)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def read_until(proc: subprocess.Popen[str], word: str) -> tuple[list[int], int]:
    """Item ids acknowledged before the first line starting with `word`, and that line's id."""
    assert proc.stdout is not None
    acknowledged = []
    while True:
        line = proc.stdout.readline()
        assert line, f"worker ended before printing {word!r}"
        kind, item_id = line.split()
        if kind == word:
            return acknowledged, int(item_id)
        acknowledged.append(int(item_id))


def kill_9(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=READ_TIMEOUT_S)


def test_kill_9_mid_transaction_loses_nothing_acknowledged(tmp_path: Path, store_url: str):
    ws = open_workspace(store_url, create=True)
    rte_study(
        ws.engine,
        tmp_path,
        name="crash",
        train=2,
        test=60,
        annotators_per_item=2,
        gate_threshold=0.0,
    )
    worker = start_worker(store_url, "crash", pause_after=20)
    acknowledged, in_flight = read_until(worker, "mid")
    kill_9(worker)

    with Session(ws.engine) as s:
        mine = set(s.exec(select(Label.item_id).where(Label.phase == "test")))
    assert len(acknowledged) == 20 and set(acknowledged) == mine  # all kept, nothing half-done
    assert in_flight not in mine
    assert check_store(ws.engine).ok  # the item's counter rolled back with the label

    # The killed writer held the write lock (SQLite) or its item's row and its own advisory lock
    # (PostgreSQL): they went with it, so another annotator is served at once.
    other = AnnotatorSession.open(ws.engine, "crash", "bob", create_annotator=True)
    while other.phase() is Phase.TRAINING:
        other.submit(other.next_item(), "entailment")
    other.submit(other.next_item(), "entailment")
    # The restarted annotator resumes with the item that was on the screen (its lease).
    resumed = AnnotatorSession.open(ws.engine, "crash", "ana")
    assert resumed.next_item().item_id == in_flight
    assert check_store(ws.engine).ok
    ws.engine.dispose()


def test_a_killed_sessions_lease_expires_and_the_item_goes_to_someone_else(
    tmp_path: Path, store_url: str
):
    ws = open_workspace(store_url, create=True)
    ctx = rte_study(
        ws.engine,
        tmp_path,
        name="lease",
        train=2,
        test=1,
        annotators_per_item=1,
        gate_threshold=0.0,
        lease_minutes=5,
    )
    worker = start_worker(store_url, "lease", pause_after=-1)
    _, held = read_until(worker, "holding")
    kill_9(worker)

    now = [utcnow()]
    bob = AnnotatorSession.open(
        ws.engine, "lease", "bob", create_annotator=True, clock=lambda: now[0]
    )
    while bob.phase() is Phase.TRAINING:
        bob.submit(bob.next_item(), "entailment")
    assert bob.next_item() is None  # the only item is still reserved for the killed session
    now[0] += timedelta(minutes=ctx.protocol.lease_minutes + 1)
    item = bob.next_item()
    assert item is not None and item.item_id == held
    bob.submit(item, "not_entailment")
    assert check_store(ws.engine).ok
    ws.engine.dispose()


# --- SQLite: a full disk, a read-only file ---------------------------------------------------


@pytest.fixture
def small_disk() -> Iterator[Path]:
    """A 16 MB filesystem (tmpfs), as root; skipped where mounting is not allowed."""
    point = Path(tempfile.mkdtemp(prefix="annotate-small-disk-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(point)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        point.rmdir()
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.strip()}")
    yield point
    subprocess.run(["umount", "-l", str(point)], check=False)
    point.rmdir()


def fill(folder: Path) -> Path:
    """Take every free byte of the filesystem holding `folder`."""
    filler = folder / "filler"
    try:
        with filler.open("wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:
        pass  # ENOSPC: full
    return filler


def answer_until_refused(session: AnnotatorSession, limit: int = 2000) -> tuple[list[int], str]:
    """Answer test items until the store refuses one; the acknowledged ids and the error."""
    acknowledged = []
    for _ in range(limit):
        try:
            item = session.next_item()
            assert item is not None, "ran out of items before the store refused a write"
            session.submit(item, "entailment")
        except UserError as exc:
            return acknowledged, str(exc)
        acknowledged.append(item.item_id)
    raise AssertionError("the store never refused a write")


def stored_test_items(engine) -> set[int]:
    with Session(engine) as s:
        return set(s.exec(select(Label.item_id).where(Label.phase == "test")))


def admitted_session(tmp_path: Path, url: str, test: int) -> AnnotatorSession:
    ws = open_workspace(url, create=True)
    rte_study(
        ws.engine,
        tmp_path,
        name="disk",
        train=1,
        test=test,
        annotators_per_item=1,
        gate_threshold=0.0,
    )
    session = AnnotatorSession.open(ws.engine, "disk", "ana", create_annotator=True)
    while session.phase() is Phase.TRAINING:
        session.submit(session.next_item(), "entailment")
    return session


def test_full_disk_is_a_clear_error_and_the_store_survives(tmp_path: Path, small_disk: Path):
    url = f"sqlite:///{small_disk / 'store.db'}"
    session = admitted_session(tmp_path, url, test=1500)
    filler = fill(small_disk)
    acknowledged, error = answer_until_refused(session)
    assert "disk is full" in error and "store is intact" in error
    assert "Traceback" not in error

    filler.unlink()  # space again: everything acknowledged is there and work goes on
    assert set(acknowledged) <= stored_test_items(session.engine)
    assert check_store(session.engine).ok
    session.submit(session.next_item(), "entailment")
    assert check_store(session.engine).ok
    session.engine.dispose()


def test_store_at_its_size_limit_is_a_clear_error_and_survives(tmp_path: Path):
    """The same as a full disk, without mounting anything: SQLite's max_page_count makes the
    database unable to grow, which SQLite reports exactly as a full disk (SQLITE_FULL)."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    session = admitted_session(tmp_path, url, test=400)
    engine = session.engine
    with engine.connect() as conn:
        pages = conn.execute(text("PRAGMA page_count")).scalar_one()
    engine.dispose()

    @event.listens_for(engine, "connect")
    def _limit(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages + 2}")

    acknowledged, error = answer_until_refused(session)
    assert "disk is full" in error
    event.remove(engine, "connect", _limit)
    engine.dispose()
    assert set(acknowledged) <= stored_test_items(engine)
    assert check_store(engine).ok
    session.submit(session.next_item(), "entailment")
    assert check_store(engine).ok
    engine.dispose()


def test_read_only_filesystem_is_a_clear_error_and_the_store_survives(
    tmp_path: Path, small_disk: Path
):
    url = f"sqlite:///{small_disk / 'store.db'}"
    session = admitted_session(tmp_path, url, test=20)
    for _ in range(5):
        session.submit(session.next_item(), "entailment")
    before = stored_test_items(session.engine)
    # Linux refuses to remount while a file is open for writing: close the pool's connections
    # first (as between two answers); the session's next write opens a new one.
    session.engine.dispose()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        with pytest.raises(UserError, match="read-only|cannot be opened"):
            session.submit(session.next_item(), "entailment")
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    session.engine.dispose()
    assert stored_test_items(session.engine) == before
    assert check_store(session.engine).ok
    session.submit(session.next_item(), "entailment")
    session.engine.dispose()


READ_ONLY_WRITER = """
import sys
from annotate.errors import UserError
from annotate.protocol.session import AnnotatorSession
from annotate.workspace import open_workspace
try:
    ws = open_workspace(sys.argv[1])
    AnnotatorSession.open(ws.engine, "disk", "newcomer", create_annotator=True)
except UserError as exc:
    print(exc)
    sys.exit(1)
"""


def without_root_override() -> list[str]:
    """A command prefix under which file permissions bind: root normally writes any file
    (CAP_DAC_OVERRIDE), so as root the writer runs with that capability dropped."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a file read-only for root")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]


def store_with_an_answer(folder: Path) -> tuple[Path, bytes]:
    """A store in `folder` with one test answer, closed; its path and its bytes."""
    db = folder / "store.db"
    session = admitted_session(folder, f"sqlite:///{db}", test=5)
    session.submit(session.next_item(), "entailment")
    session.engine.dispose()
    return db, db.read_bytes()


def test_read_only_store_file_is_a_clear_error_and_is_left_unchanged(tmp_path: Path):
    """A store file the user may read but not write (its folder stays writable)."""
    db, before = store_with_an_answer(tmp_path)
    db.chmod(0o444)
    try:
        result = subprocess.run(
            [*without_root_override(), sys.executable, "-c", READ_ONLY_WRITER, f"sqlite:///{db}"],
            capture_output=True,
            text=True,
        )
    finally:
        db.chmod(0o644)
    assert result.returncode == 1, result.stderr
    assert "read-only" in result.stdout and "Traceback" not in result.stderr
    assert db.read_bytes() == before
    engine = open_workspace(f"sqlite:///{db}").engine
    assert check_store(engine).ok
    engine.dispose()


# --- PostgreSQL: transactions it aborts are run again ------------------------------------------


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
@pytest.mark.parametrize("sqlstate", ["40001", "40P01"])
def test_serialization_failures_and_deadlocks_are_retried(store_url: str, sqlstate: str):
    """PostgreSQL aborts a transaction that lost a serialization conflict (40001) or a deadlock
    (40P01); running it again is the remedy. Anything else (a unique violation) is not retried."""
    engine = open_workspace(store_url, create=True).engine
    attempts = []

    def work(code: str):
        def attempt() -> str:
            attempts.append(code)
            with write_session(engine) as session:
                if len(attempts) == 1:  # the first run is aborted by the server
                    session.execute(
                        text(
                            f"DO $$ BEGIN RAISE EXCEPTION 'aborted' USING ERRCODE = '{code}'; END $$"
                        )
                    )
                return "done"

        return attempt

    assert retry_transient(work(sqlstate)) == "done" and len(attempts) == 2
    attempts.clear()
    with pytest.raises(IntegrityError):
        retry_transient(work("23505"))
    assert len(attempts) == 1
    engine.dispose()


def as_a_user(db: Path, *args: str) -> subprocess.CompletedProcess:
    """`annotate --db DB ARGS` as a user whom file permissions bind (root's override dropped)."""
    command = [*without_root_override(), sys.executable, "-m", "annotate", "--db", str(db)]
    return subprocess.run([*command, *args], capture_output=True, text=True)


def test_reading_commands_work_on_a_store_in_a_read_only_folder(tmp_path: Path):
    """Read-only media or a folder the user may not write: commands that only read still work
    (SQLite opened read-only); one that writes says "read-only" and changes nothing."""
    folder = tmp_path / "ro"
    folder.mkdir()
    db, before = store_with_an_answer(folder)
    db.chmod(0o444)
    folder.chmod(0o555)
    try:
        runs = {
            args: as_a_user(db, *args)
            for args in [
                ("datasets",),
                ("status", "disk"),
                ("check",),
                ("report", "disk"),
                ("annotator", "add", "zed"),
            ]
        }
    finally:
        folder.chmod(0o755)
        db.chmod(0o644)
    for args, done in runs.items():
        if args[0] == "annotator":
            assert done.returncode == 1 and "read-only" in done.stderr, done.stderr
        else:
            assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert "no violation" in runs[("check",)].stdout
    assert db.read_bytes() == before
    assert not [p for p in folder.iterdir() if p.name.startswith("store.db-")]  # no -wal, -shm


def test_reading_a_read_only_store_file_leaves_no_wal_or_shm_beside_it(tmp_path: Path):
    """A store file nobody may write (`chmod a-w`) in a folder one may: SQLite's `mode=ro` made
    an index (-shm) and an empty -wal beside it at every read, which it may not remove when it
    closes; a command that writes (with `create`) opened it for writing and left them too. It
    is opened `immutable` (nothing written) while no -wal shows that someone writes it."""
    db, before = store_with_an_answer(tmp_path)
    db.chmod(0o444)
    try:
        runs = {
            args: as_a_user(db, *args)
            for args in [("status", "disk"), ("report", "disk"), ("annotator", "add", "zed")]
        }
    finally:
        db.chmod(0o644)
    for args, done in runs.items():
        assert done.returncode == (1 if args[0] == "annotator" else 0), (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert "read-only" in runs[("annotator", "add", "zed")].stderr
    assert db.read_bytes() == before
    assert not list(tmp_path.glob("store.db-*"))  # no -wal, -shm
