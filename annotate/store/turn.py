"""The writers' turn on a SQLite store: annotate's writing processes queue in the kernel, on
a lock on a file beside the store, rather than in SQLite's busy handler."""

from __future__ import annotations

import functools
import os
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from sqlalchemy import Engine

WRITER_LOCK_SUFFIX = ".writers"
"""Beside a SQLite store, the file whose lock orders annotate's writers (see writer_turn)."""
TURN_POLL_SECONDS = 0.001
"""Where the lock cannot be waited for in the kernel (see _lock_descriptor), how often a
waiting writer tries for its turn: a turn lasts about a millisecond."""


def writer_lock_path(engine: Engine) -> str | None:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):
        return None  # URI filenames (shared memory and the like): SQLite's own locking only
    return database + WRITER_LOCK_SUFFIX


def _open_lock_file(path: str) -> int | None:
    """A descriptor to lock, or None where the folder or file does not let us have one (a
    read-only disk): the writer then falls back on SQLite's busy_timeout alone."""
    for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
        try:
            return os.open(path, flags, 0o600)
        except OSError:
            continue
    return None


@contextmanager
def writer_turn(engine: Engine) -> Iterator[None]:
    """Wait in the kernel for this process's turn to write to a SQLite store.

    SQLite's busy handler polls with sleeps of up to 100 ms and no queue, so under contention
    one writer can starve for the whole busy_timeout (measured: 5 s and "database is locked"
    with 5 writers holding the lock 2 ms each) while the lock is free most of the time. An
    exclusive lock on a file beside the store goes to a waiter as soon as the previous writer
    lets go of it (also when it is killed), so annotate's writers take turns; BEGIN
    IMMEDIATE and busy_timeout still guard against other programs, and are all there is where
    the file system has no native lock. PostgreSQL queues on its own locks: nothing to do
    there."""
    path = writer_lock_path(engine)
    if path is None:
        yield
        return
    # The threads of one process (the page's server) queue on a lock of their own first, so
    # only one of them at a time polls the file lock: forty threads polling it every
    # millisecond took the CPU and the GIL the turn's holder needed.
    turn = _process_turn(path)
    with turn.lock:
        fd = turn.fd if turn.fd is not None else _open_lock_file(path)
        if fd is None:
            yield
            return
        unlock = _unlock_descriptor()
        locked = False
        try:
            locked = _take_turn(fd)
            yield
        finally:
            _end_turn(turn, fd, unlock if locked else None)


@dataclass
class _ProcessTurn:
    lock: threading.Lock = field(default_factory=threading.Lock)
    fd: int | None = None
    """The lock file, kept open between turns where the lock can be let go of without closing
    it (flock): an open and a close per write were two system calls of the keypress's ten."""


def _end_turn(turn: _ProcessTurn, fd: int, unlock: Callable[[int], object] | None) -> None:
    """Let the next writer have the turn: unlock the descriptor and keep it, or close it
    (which releases the lock) where it cannot be unlocked alone or was not locked."""
    if unlock is not None:
        try:
            unlock(fd)
            turn.fd = fd
            return
        except OSError:
            pass
    turn.fd = None
    os.close(fd)


_process_turns: dict[str, _ProcessTurn] = {}
_process_turns_guard = threading.Lock()


def _process_turn(path: str) -> _ProcessTurn:
    """This process's turn at the store at `path`: its lock and its kept lock file."""
    with _process_turns_guard:
        return _process_turns.setdefault(path, _ProcessTurn())


def _forget_turns_after_fork() -> None:
    """A forked child starts with turns of its own. Its copy of a kept descriptor shares the
    parent's open file, and so the parent's lock: a child that locked it would take the turn
    while the parent held it. Closing the copy leaves the parent's lock as it is (the lock
    goes with the parent's descriptor)."""
    global _process_turns, _process_turns_guard
    for turn in _process_turns.values():
        if turn.fd is not None:
            with suppress(OSError):
                os.close(turn.fd)
    _process_turns, _process_turns_guard = {}, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_turns_after_fork)


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


@functools.cache
def _unlock_descriptor() -> Callable[[int], object] | None:
    """How this platform lets go of the lock and keeps the descriptor (flock's LOCK_UN), or
    None where only closing it releases the lock (filelock's native lock on Windows)."""
    try:
        import fcntl
    except ImportError:
        return None
    return lambda fd: fcntl.flock(fd, fcntl.LOCK_UN)


def _take_turn(fd: int) -> bool:
    """Whether the lock was taken (False: no native file lock here, and SQLite's busy_timeout
    orders the writers)."""
    try:
        _lock_descriptor()(fd)
    except OSError:
        return False
    return True
