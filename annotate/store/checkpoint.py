"""Copying a SQLite store's write-ahead log back into its file (a checkpoint) while the
annotator reads, not while they wait for the next item.

SQLite checkpoints inside the commit that takes the log past `wal_autocheckpoint` pages (1,000
by default). At 1M labels an answer's commit adds about ten pages (the label's indexes, the
item's counters, the lease), so one keypress in a hundred waited some 70-110 ms, mostly for the
store file's fsync (bench/bench_keypress.py). A thread does not help: on ext4 the next commit's
fsync of the log queues behind the checkpoint's. So a keypress commit leaves the checkpoint
(`keypress_commit`) and the annotator app asks for it once no key has been pressed for a moment
(`when_idle`). At most `DEFER_AT_MOST` commits wait, then a keypress commit checkpoints: the
log never grows past its usual size, even for someone who never pauses. That checkpoint takes
the writers' turn (store/turn.py), as SQLite's own does inside a commit: run beside other
processes' commits, it never copied the log whole, so the log never started over and grew by
every commit (200 MB in six seconds with five terminal annotators writing flat out, each
commit slower than the one before). Other commits
(imports, the CLI, other processes) checkpoint as SQLite does. Durability is unchanged: a
commit is in the log, synced, before it returns; a checkpoint only moves it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine

from annotate.store.per_engine import PerEngine
from annotate.store.turn import writer_turn

DEFER_AT_MOST = 100
"""Keypress commits that may leave their checkpoint for later: about SQLite's 1,000 log pages
at 1M labels."""


class _Waiting:
    def __init__(self) -> None:
        self.commits = 0
        self.lock = threading.Lock()


_WAITING = PerEngine(_Waiting)


_PAUSED = "annotate.autocheckpoint_paused"
"""In a pooled connection's `info` (one per SQLite connection): the `wal_autocheckpoint` that
keypress commits turned off on it, until another transaction begins there (`resume`)."""


@contextmanager
def keypress_commit(engine: Engine, conn: Connection) -> Iterator[None]:
    """Around one write transaction on a SQLite `conn` that a person waits for: its commit
    does not checkpoint, `when_idle` does; the DEFER_AT_MOST-th such commit in a row does.
    SQLite's own checkpoint stays off on the connection from one keypress commit to the next
    (the status line's figures come from the keypress, or from a read right after its commit
    that is flagged as the keypress's too), so a keypress sets no PRAGMA; any other
    transaction that begins on the connection turns it back on first (`resume`)."""
    raw = conn.connection.dbapi_connection
    assert raw is not None
    info = conn.connection.info
    if _PAUSED not in info:
        info[_PAUSED] = int(raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        raw.execute("PRAGMA wal_autocheckpoint=0")
    yield
    waiting = _WAITING.of(engine)  # not reached when the transaction failed: nothing written
    with waiting.lock:
        waiting.commits += 1
        now = waiting.commits >= DEFER_AT_MOST
        if now:
            waiting.commits = 0
    if now:  # someone who never pauses: the log is as long as SQLite lets it grow
        with writer_turn(engine):  # nobody appends meanwhile: it copies the log whole
            raw.execute("PRAGMA wal_checkpoint(PASSIVE)")


def resume(conn: Connection) -> None:
    """Before a transaction that is not a keypress's begins on a SQLite `conn`: SQLite's own
    checkpoint is on again, as it was before the keypress commits turned it off."""
    threshold = conn.connection.info.pop(_PAUSED, None)
    if threshold is not None:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        raw.execute(f"PRAGMA wal_autocheckpoint={threshold}")


def when_idle(engine: Engine) -> bool:
    """Checkpoint what keypress commits left (PASSIVE: it waits for no reader or writer).
    True if there was something to do. Cheap when there is not: the app asks regularly."""
    waiting = _WAITING.get(engine)
    if waiting is None or not waiting.commits:
        return False
    with waiting.lock:
        waiting.commits = 0
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
    return True
