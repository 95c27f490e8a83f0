"""The writers' turn on a SQLite store: annotate's writing processes queue in the kernel, on
a lock on a file beside the store, rather than in SQLite's busy handler."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import Engine

from annotate.store.failures import STORE_GONE, StorageError

WRITER_LOCK_SUFFIX = ".writers"
"""Beside a SQLite store, the file whose lock orders annotate's writers (see writer_turn)."""
TURN_POLL_SECONDS = 0.001
"""Where the lock cannot be waited for in the kernel (see _lock_descriptor), how often a
waiting writer tries for its turn: a turn lasts about a millisecond."""


def store_file(engine: Engine) -> str | None:
    """The file of a SQLite store on disk; None for a database server, a store in memory, or
    a URI filename (shared memory and the like, where SQLite's own locking is all there is)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    return None if database.startswith("file:") else database


def writer_lock_path(engine: Engine) -> str | None:
    database = store_file(engine)
    return None if database is None else database + WRITER_LOCK_SUFFIX


def _open_lock_file(path: str, mode: int) -> int | None:
    """A descriptor to lock, or None where the folder or file does not let us have one (a
    read-only disk): the writer then falls back on SQLite's busy_timeout alone. A new lock
    file gets `mode`, the store's own permissions, whatever the umask, as SQLite gives its
    `-wal` and `-shm` files: a store a lab group may write (chmod 660) is one its members
    take turns on."""
    try:
        return os.open(path, os.O_RDWR)
    except FileNotFoundError:
        pass
    except OSError:
        return _read_only(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:  # another writer made it meanwhile
        return _open_lock_file(path, mode)
    except OSError:
        return None
    with contextlib.suppress(OSError):
        os.fchmod(fd, mode)
    return fd


def _read_only(path: str) -> int | None:
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:
        return None


_existed: set[str] = set()
"""The store files this process has seen: one missing now was deleted under it."""


@contextmanager
def writer_turn(engine: Engine) -> Iterator[None]:
    """Wait in the kernel for this process's turn to write to a SQLite store.

    SQLite's busy handler polls with sleeps of up to 100 ms and no queue, so under contention
    one writer can starve for the whole busy_timeout (measured: 5 s and "database is locked"
    with 5 writers holding the lock 2 ms each) while the lock is free most of the time. An
    exclusive lock on a file beside the store goes to a waiter as soon as the previous writer
    closes its descriptor (also when it is killed), so annotate's writers take turns; BEGIN
    IMMEDIATE and busy_timeout still guard against other programs, and are all there is where
    the file system has no native lock. PostgreSQL queues on its own locks: nothing to do
    there."""
    path = writer_lock_path(engine)
    if path is None:
        yield
        return
    database = path[: -len(WRITER_LOCK_SUFFIX)]
    try:
        mode = os.stat(database).st_mode & 0o666
        _existed.add(database)
    except FileNotFoundError:
        if database not in _existed:  # a new store, made by the first connection
            mode = 0o600
        else:
            # SQLite goes on writing to a file that was deleted (or whose folder was removed)
            # through its open descriptors: every answer would be acknowledged, then lost.
            raise StorageError(
                f"the store {database} is gone (its file was deleted or its folder removed): "
                "nothing can be saved there; restore it (a backup) and try again",
                STORE_GONE,
            ) from None
    except OSError:  # not ours to look at: SQLite says what it can do with it
        mode = 0o600
    # The threads of one process (the page's server) queue on a lock of their own first, so
    # only one of them at a time polls the file lock: forty threads polling it every
    # millisecond took the CPU and the GIL the turn's holder needed.
    with _process_turn(path):
        fd = _open_lock_file(path, mode)
        if fd is None:
            yield
            return
        try:
            _take_turn(fd)
            yield
        finally:
            os.close(fd)  # releases the lock


_process_turns: dict[str, threading.Lock] = {}
_process_turns_guard = threading.Lock()


def _process_turn(path: str) -> threading.Lock:
    """This process's lock for the writers' turn of the store at `path`."""
    with _process_turns_guard:
        return _process_turns.setdefault(path, threading.Lock())


@functools.cache
def _lock_descriptor() -> Callable[[int], object]:
    """How this platform waits for the lock, worked out by the first write (not at start-up):

    - POSIX: a blocking flock. The waiter sleeps in the kernel, which wakes it when the lock
      is released, so the writers take the lock in turn. Polling it every millisecond
      (filelock's way, which the turn used before) let one process take it again and again
      while another slept: 5 writing processes on 2 cores had a keypress p99 of 33-90 ms
      polling, against 10-11 ms blocking, at the same labels/s (bench_concurrency).
    - Elsewhere (Windows' LockFileEx): filelock's native lock, tried every TURN_POLL_SECONDS.
    """
    try:
        import fcntl
    except ImportError:
        with warnings.catch_warnings():  # without fcntl it warns of soft locks, never used here
            warnings.simplefilter("ignore")
            from filelock import lock_descriptor
        return functools.partial(lock_descriptor, poll_interval=TURN_POLL_SECONDS)
    return lambda fd: fcntl.flock(fd, fcntl.LOCK_EX)


def _take_turn(fd: int) -> None:
    try:
        _lock_descriptor()(fd)
    except OSError:  # no native file lock here: SQLite's busy_timeout orders the writers
        return
