"""The test keypress leaves SQLite's log checkpoint for when the annotator reads: its commit is
in the log (durable) but the store file is not touched until `idle`, or until DEFER_AT_MOST
keypress commits have waited; every other commit checkpoints as SQLite does.

The store here checkpoints at every commit (wal_autocheckpoint=1), so "the store file did not
change" means "this commit did not checkpoint"."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotate.protocol.session import AnnotatorSession, Phase
from annotate.store import checkpoint
from annotate.store import engine as engine_module
from annotate.store.models import Label
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pragmas = (*engine_module.SQLITE_PRAGMAS, "PRAGMA wal_autocheckpoint=1")
    monkeypatch.setattr(engine_module, "SQLITE_PRAGMAS", pragmas)
    path = tmp_path / "store.db"
    ws = open_workspace(str(path), create=True)
    rte_study(ws.engine, tmp_path, name="cp", train=2, test=20, gate_threshold=0.0)
    session = AnnotatorSession.open(ws.engine, "cp", "ana", create_annotator=True)
    while session.phase() is Phase.TRAINING:
        session.submit(session.next_item(), "entailment")
    yield path, session
    ws.engine.dispose()


def answers_in_store(session: AnnotatorSession) -> int:
    from sqlmodel import Session, func, select

    with Session(session.engine) as s:
        return s.exec(select(func.count()).select_from(Label).where(Label.phase == "test")).one()


def test_keypress_commits_leave_the_checkpoint_until_idle(store):
    path, session = store
    item = session.next_item()
    session.idle()
    before = path.read_bytes()
    for _ in range(3):
        item = session.submit_and_next(item, "entailment")
    assert path.read_bytes() == before  # committed to the log only
    assert answers_in_store(session) == 3  # and there, for every reader
    session.idle()
    after_idle = path.read_bytes()
    assert after_idle != before  # copied into the store file
    session.release()  # an ordinary commit: it checkpoints itself, as SQLite does
    assert path.read_bytes() != after_idle


def test_someone_who_never_pauses_checkpoints_every_so_often(store, monkeypatch):
    monkeypatch.setattr(checkpoint, "DEFER_AT_MOST", 3)
    path, session = store
    item = session.next_item()  # a keypress commit: 1 waiting
    item = session.submit_and_next(item, "entailment")  # 2
    before = path.read_bytes()
    session.submit_and_next(item, "entailment")  # 3: this one checkpoints
    assert path.read_bytes() != before
    assert answers_in_store(session) == 2


def test_idle_with_nothing_waiting_does_nothing(store):
    path, session = store
    session.release()
    before = path.read_bytes()
    session.idle()
    assert path.read_bytes() == before
    assert checkpoint.when_idle(session.engine) is False


def test_a_keypress_sets_no_pragma_and_other_transactions_checkpoint_again(store):
    """SQLite's own checkpoint stays off from one keypress commit to the next (no PRAGMA per
    answer), and is on again for any other transaction on the connection."""
    path, session = store
    item = session.next_item()
    session.progress()  # the status line's figures, which the keypresses then keep
    item = session.submit_and_next(item, "entailment")
    session.progress()
    with session.engine.connect() as conn:  # the pool's one connection: the keypresses'
        sqlite = conn.connection.driver_connection
        assert sqlite is not None
        ran: list[str] = []
        sqlite.set_trace_callback(ran.append)
    try:
        item = session.submit_and_next(item, "entailment")
        session.progress()
    finally:
        sqlite.set_trace_callback(None)
    assert ran and not [s for s in ran if "PRAGMA" in s], ran
    before = path.read_bytes()
    session.release()  # an ordinary commit on that connection: it checkpoints, as SQLite does
    assert path.read_bytes() != before
    with session.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == 1


WRITER = """
import sys
from sqlalchemy import text
from annotate.store.engine import make_engine, write_connection

engine = make_engine(sys.argv[1])
for n in range(int(sys.argv[2])):
    with write_connection(engine, keypress=True) as conn:
        conn.execute(text("INSERT INTO answer (who, body) VALUES (:who, :body)"),
                     {"who": sys.argv[3], "body": "x" * 500})
"""


@pytest.mark.slow
def test_the_log_starts_over_while_several_processes_write_without_pause(tmp_path: Path):
    """Terminal annotators who never pause, in processes of their own: the log's checkpoint
    every DEFER_AT_MOST commits must copy it whole and let it start over. Run beside the
    other processes' commits, it never caught up, and the log grew by every commit (200 MB
    in six seconds at five annotators flat out), each commit slower than the last."""
    import subprocess
    import sys

    from sqlalchemy import text

    store = tmp_path / "store.db"
    engine = engine_module.make_engine(str(store))
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE answer (id INTEGER PRIMARY KEY, who TEXT, body TEXT)"))
        conn.execute(text("CREATE INDEX ix_answer_who ON answer (who, body)"))
    writers, commits = 4, 1500
    # Open (in no transaction) throughout, so the last writer's close leaves the log file as
    # long as it grew: SQLite's files only ever grow, and start over from their beginning.
    with engine.connect() as watching:
        watching.exec_driver_sql("SELECT 1")
        procs = [
            subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(commits), f"w{n}"])
            for n in range(writers)
        ]
        assert [p.wait(timeout=300) for p in procs] == [0] * writers
        log = (tmp_path / "store.db-wal").stat().st_size
        stored = watching.execute(text("SELECT count(*) FROM answer")).scalar()
    engine.dispose()
    assert stored == writers * commits
    # Each commit appends a few pages (the row, the index); one page a commit is 24 MB here,
    # and without the log starting over it grew to 100 MB. Starting over, it stays near
    # what the writers commit between two checkpoints (5-7 MB).
    one_page_a_commit = writers * commits * 4096
    assert log < one_page_a_commit / 2, f"the log grew to {log / 1e6:.1f} MB"
