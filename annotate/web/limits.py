"""Sign-in rate limits: refused tries are counted per annotator name and per address, and
after a few of them each key must wait longer before its next try is even checked.

The counts live in a small SQLite file shared by every process of one server (the HTML page's
uvicorn processes, or textual-serve's one process per tab), or in memory for a single process.
They are not in the store: they are about this server's visitors, not the study, and a wrong
try must cost no write to a PostgreSQL store. A key waits `delay(refusals)`: nothing for the
first FREE_TRIES refusals (typos), then FIRST_DELAY_S doubling up to MAX_DELAY_S.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable

from annotate.text import terminal_safe

log = logging.getLogger("annotate.serve")

LIMITS_ENV = "ANNOTATE_SIGNIN_LIMITS"
"""The file of refusal counts shared by one server's processes (set by `annotate serve`)."""
FREE_TRIES = 3
FIRST_DELAY_S = 2.0
MAX_DELAY_S = 300.0
FORGET_S = 3600.0
"""A key with no refusal for this long starts again from nothing."""


def delay(refusals: int) -> float:
    """Seconds a key waits after its `refusals`-th refused try."""
    if refusals < FREE_TRIES:
        return 0.0
    return min(FIRST_DELAY_S * 2 ** (refusals - FREE_TRIES), MAX_DELAY_S)


def name_key(name: str) -> str:
    return f"name:{name.strip().casefold()}"


def address_key(address: str | None) -> str:
    return f"addr:{address or '?'}"


class SignInLimiter:
    """`wait(keys)` says how long a try must still wait; `refused(keys)` counts a refused try
    (and logs it: every refusal is recorded, whether or not the name exists); `admitted(name)`
    clears the name's count."""

    def __init__(self, path: str = ":memory:", clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=10, check_same_thread=False, isolation_level=None)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS refusals "
            "(key TEXT PRIMARY KEY, count INTEGER NOT NULL, last REAL NOT NULL)"
        )

    def wait(self, keys: Iterable[str]) -> float:
        now = self.clock()
        keys = list(keys)
        with self._lock:
            rows = self._db.execute(
                f"SELECT count, last FROM refusals WHERE key IN ({','.join('?' * len(keys))})",
                keys,
            ).fetchall()
        waits = [last + delay(count) - now for count, last in rows if now - last < FORGET_S]
        return max([0.0, *waits])

    def refused(self, keys: Iterable[str]) -> None:
        now = self.clock()
        keys = list(keys)
        with self._lock:
            for key in keys:
                self._db.execute(
                    "INSERT INTO refusals (key, count, last) VALUES (?, 1, ?) "
                    "ON CONFLICT(key) DO UPDATE SET "
                    "count = CASE WHEN ? - last < ? THEN count + 1 ELSE 1 END, last = ?",
                    (key, now, now, FORGET_S, now),
                )
        log.warning("refused a sign-in (%s)", terminal_safe(", ".join(keys)))

    def admitted(self, name: str) -> None:
        key = name_key(name)
        with self._lock:
            # Nearly every sign-in has no refusal to clear: a read, which shares the file with
            # the other processes' reads, rather than a DELETE, which takes its write lock (on
            # the event loop, one process at a time).
            if self._db.execute("SELECT 1 FROM refusals WHERE key = ?", (key,)).fetchone():
                self._db.execute("DELETE FROM refusals WHERE key = ?", (key,))

    def close(self) -> None:
        self._db.close()


def wait_message(seconds: float) -> str:
    return (
        f"Too many refused sign-ins: wait {max(1, round(seconds))} s before trying again "
        "(nothing was checked)."
    )
