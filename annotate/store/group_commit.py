"""Group commit on a SQLite store: the concurrent writers of one process (the page's threads)
share one transaction and one fsync.

A durable commit costs an fsync (synchronous=FULL: 2-8 ms on a plain disk), so writers that
each commit alone top out near 150 commits/s whatever the processor does. Here a writer takes
the process's serial lock; if no batch is open it opens one (the writers' turn, BEGIN
IMMEDIATE on one connection), then runs its work on the batch's connection; every writer
after the first does it inside a SAVEPOINT, so a failing writer rolls back its own work only
(the first one's failure ends the batch before anyone joined it). A failed writer gets its
exception once the batch has ended (a few milliseconds): a caller that retries after a unique
constraint refused its write ("another tab of this worker inserted first: look again") must
find the other's row committed, or it would look again, outside the batch, and find nothing.
The writer that finishes while nobody is waiting to join (or when the batch is full)
commits the batch, for everyone in it; each writer's `with` block returns only after that
commit succeeded, so nothing is acknowledged before it is durable. If the commit fails
(disk full, read-only), every writer of the batch gets the error, and nothing of theirs was
acknowledged.

No writer waits for a window: a writer alone commits at once (a keypress costs what it did),
and under load the batch fills by itself, with the writers that arrive while the one before
works or while the previous batch syncs. Writers see each other's work in the batch as if they
had run one after the other, which they did: one at a time, under the serial lock.

Every writer brings a connection of its own, checked out before it queues (so the one that
opens a batch never waits for the pool while holding the others up), and lends it to the batch
if it opens it; it gets it back when its block returns, at the batch's end (`write_transaction`
then reads on it). The batch's connection is used by one thread at a time (the serial lock
orders them); SQLAlchemy opens file databases with `check_same_thread=False` for its pool. A
write inside a write on the same engine would wait for itself: it is refused with a
RuntimeError instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, NestedTransaction, RootTransaction

from annotate.store import checkpoint
from annotate.store.failures import watched
from annotate.store.per_engine import PerEngine
from annotate.store.prepared import on_driver

GROUP_AT_MOST = 64
"""Writers in one batch at most: then it commits even if more are waiting (they form the
next), so the first writer of a busy batch does not wait for many others' work."""
GROUP_FOR_AT_MOST_S = 0.02
"""Seconds a batch stays open at most (its writers' work, one after the other), for the same
reason."""


@dataclass
class _Batch:
    conn: Connection
    transaction: RootTransaction
    turn: TurnAtBegin
    keypress: AbstractContextManager[None] | None
    opened: float = field(default_factory=time.monotonic)
    members: int = 0
    error: BaseException | None = None
    """What ended the batch without a commit: every member gets it."""
    done: threading.Event = field(default_factory=threading.Event)


class _Group:
    def __init__(self) -> None:
        self.serial = threading.Lock()
        self.guard = threading.Lock()
        self.wanting = 0
        """Writers waiting for the serial lock: they will join the open batch."""
        self.batch: _Batch | None = None
        self.holder: int | None = None
        """The thread holding the serial lock (a write inside a write is refused)."""
        self.commits = 0
        """Batches committed (read by tests and benchmarks)."""


_GROUPS = PerEngine(_Group)


def commits(engine: Engine) -> int:
    """Batches this process has committed on `engine` (each one transaction, one fsync)."""
    group = _GROUPS.get(engine)
    return group.commits if group is not None else 0


OpenTurn = Callable[[Engine], AbstractContextManager[None]]


@contextmanager
def grouped_write(
    engine: Engine, conn: Connection, *, keypress: bool, turn: OpenTurn
) -> Iterator[Connection]:
    """The connection to write on, in the open batch (inside a SAVEPOINT unless this writer
    opened the batch); the block returns once the batch has committed. `conn`: the caller's
    own connection, lent to the batch if this writer opens it. `keypress`: a person waits
    (checkpoint.keypress_commit), taken from the writer that opens the batch. `turn`: the
    writers' turn across processes."""
    group = _GROUPS.of(engine)
    me = threading.get_ident()
    if group.holder == me:
        raise RuntimeError("a write transaction inside another one on the same store")
    with group.guard:
        group.wanting += 1
    try:
        group.serial.acquire()
    finally:
        with group.guard:
            group.wanting -= 1
    group.holder = me
    batch = group.batch
    if batch is None:
        try:
            batch = group.batch = _open(engine, conn, keypress, turn)
        except BaseException:
            group.holder = None
            group.serial.release()
            raise
    batch.members += 1
    failure: BaseException | None = None
    try:
        # The first writer's work is all the batch holds: no SAVEPOINT (a writer alone, a
        # keypress, an import, runs the statements it ran before); if it fails, the batch
        # ends, rolled back, with nobody else in it.
        nested = None if batch.members == 1 else batch.conn.begin_nested()
    except BaseException as exc:  # the transaction is gone: the batch ends
        failure = batch.error = exc
    else:
        try:
            yield batch.conn
        except BaseException as exc:
            failure = exc
            if nested is None:
                batch.error = exc
            else:
                _roll_back(batch, nested, exc)
        else:
            if nested is not None:
                try:
                    _release(batch, nested)
                except BaseException as exc:
                    failure = batch.error = exc
    if batch.error is not None or _full(group, batch):
        _finish(group, batch)
    else:  # the next writer joins; the last one commits
        group.holder = None
        group.serial.release()
        batch.done.wait()
    if failure is not None:
        raise failure
    if batch.error is not None:
        raise batch.error


TURN_AT_BEGIN = "annotate.turn_at_begin"
"""In a connection's `info` while its batch opens: the writers' turn, which the engine's begin
hook takes (and removes) just before it sends BEGIN IMMEDIATE (store/engine.py)."""


class TurnAtBegin:
    """The writers' turn, taken as late as it can be: by the begin hook, right before BEGIN
    IMMEDIATE, so SQLAlchemy's own work to begin a transaction is done before it, not while
    every other writing process waits (measured: most of a transaction's start)."""

    def __init__(self, turn: AbstractContextManager[None]) -> None:
        self.turn, self.taken = turn, False

    def take(self) -> None:
        self.turn.__enter__()
        self.taken = True

    def give_back(self) -> None:
        if self.taken:
            self.taken = False
            self.turn.__exit__(None, None, None)


def _open(engine: Engine, conn: Connection, keypress: bool, turn: OpenTurn) -> _Batch:
    later = checkpoint.keypress_commit(engine, conn) if keypress else None
    writers_turn = TurnAtBegin(turn(engine))
    if later is not None:
        later.__enter__()
    conn.execution_options(keypress=keypress)
    conn.info[TURN_AT_BEGIN] = writers_turn  # (the hook takes it: BEGIN IMMEDIATE after it)
    try:
        transaction = conn.begin()
        if not writers_turn.taken:  # an engine without annotate's begin hook
            conn.info.pop(TURN_AT_BEGIN, None)
            writers_turn.take()
    except BaseException:
        conn.info.pop(TURN_AT_BEGIN, None)
        writers_turn.give_back()
        raise
    return _Batch(conn, transaction, writers_turn, later)


def _roll_back(batch: _Batch, nested: NestedTransaction, exc: BaseException) -> None:
    """Roll back one writer's work. Some SQLite errors (a full disk, an I/O error) roll the
    whole transaction back: the savepoint is gone with the batch's other work, so the batch
    ends and every member gets the error."""
    try:
        if batch.conn.get_nested_transaction() is nested:  # (else an ORM session's did it)
            nested.rollback()
    except BaseException:
        batch.error = batch.error or exc
        return
    raw = batch.conn.connection.dbapi_connection
    if raw is not None and not raw.in_transaction:
        batch.error = batch.error or exc


def _release(batch: _Batch, nested: NestedTransaction) -> None:
    """Keep one writer's work in the batch (RELEASE SAVEPOINT)."""
    if batch.conn.get_nested_transaction() is not nested:
        return  # an ORM session's rollback() ended it: nothing to keep
    if nested.is_active:
        nested.commit()
    else:
        nested.rollback()


def _full(group: _Group, batch: _Batch) -> bool:
    """Whether to commit now: nobody waits to join, or the batch has had its share."""
    with group.guard:
        waiting = group.wanting
    return (
        waiting == 0
        or batch.members >= GROUP_AT_MOST
        or time.monotonic() - batch.opened >= GROUP_FOR_AT_MOST_S
    )


def _commit_on_driver(conn: Connection) -> bool:
    """COMMIT on the SQLite driver itself, so SQLAlchemy's bookkeeping of the transaction's end
    (events, the pool's reset-on-return state) runs after the writers' turn is given back,
    not while every other writing process waits for it. False where something listens to the
    connection's statements (watched) or commits (SQLAlchemy tells those before the driver
    commits): SQLAlchemy commits, as it always did."""
    if watched(conn) or conn.dispatch.commit:
        return False
    on_driver(conn, "COMMIT")
    return True


def _finish(group: _Group, batch: _Batch) -> None:
    """Commit the batch (roll it back if it failed), end its turn, then let its members go.
    Runs holding the serial lock, which it releases: writers that arrive meanwhile queue and
    form the next batch."""
    group.batch = None
    committed_on_driver = False
    try:
        try:
            if batch.conn.get_transaction() is not batch.transaction:
                pass  # rolled back already (the first writer's ORM session did, alone in it)
            elif batch.error is None:
                committed_on_driver = _commit_on_driver(batch.conn)
                if not committed_on_driver:
                    batch.transaction.commit()
                group.commits += 1
            else:
                batch.transaction.rollback()
        except BaseException as exc:
            batch.error = batch.error or exc
            try:
                batch.transaction.rollback()
            except BaseException:
                batch.conn.invalidate()  # do not pool a connection in an unknown state
        finally:
            batch.turn.give_back()
            try:
                if committed_on_driver:  # SQLAlchemy's own end of it, outside the turn
                    batch.transaction.commit()  # (the driver's commit: nothing left to do)
            finally:
                group.holder = None
                group.serial.release()
        if batch.keypress is not None and batch.error is None:
            batch.keypress.__exit__(None, None, None)  # its deferred checkpoint, when due
    finally:
        batch.done.set()
