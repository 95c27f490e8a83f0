"""Sign-in rate limits: refused tries are counted per key (an address, a name at an address,
or in a `--terminal` tab a name), and after a few of them a key must wait longer before its
next try is even checked.

The counts live in a small SQLite file shared by every process of one server (the HTML page's
uvicorn processes, or textual-serve's one process per tab), or in memory for a single process.
They are not in the store: they are about this server's visitors, not the study, and a wrong
try must cost no write to a PostgreSQL store. A key waits `delay(refusals)`: nothing for the
first FREE_TRIES refusals (typos), then FIRST_DELAY_S doubling up to MAX_DELAY_S.

The page limits per address first, then per name at that address (`page_keys`): a name's
right token is never locked out by other people's wrong tries. Tokens are 144 random bits, so
guessing one is hopeless whatever the count; what the limit bounds is one address's hammering
(each check costs 50 ms of scrypt). The log names a refused name by its first characters and
a hash only (`logged_key`): people type their token into the name field.
"""

from __future__ import annotations

import hashlib
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


MAX_DOUBLINGS = 30
"""Past MAX_DELAY_S anyway (2 s doubled 30 times is 68 years)."""
SHOWN_CHARS = 3
"""Characters of a refused name the log shows (with a hash that tells two names apart)."""


def delay(refusals: int) -> float:
    """Seconds a key waits after its `refusals`-th refused try (any count, however large)."""
    if refusals < FREE_TRIES:
        return 0.0
    # 2.0 * 2 ** n overflows a float past n = 1,023: the doubling stops long before that.
    doublings = min(refusals - FREE_TRIES, MAX_DOUBLINGS)
    return min(FIRST_DELAY_S * 2**doublings, MAX_DELAY_S)


def name_key(name: str) -> str:
    return f"name:{name.strip().casefold()}"


def address_key(address: str | None) -> str:
    return f"addr:{address or '?'}"


def page_keys(name: str, address: str | None) -> list[str]:
    """The page's keys for a try: its address, then the name at that address."""
    return [address_key(address), f"{name_key(name)}@{address or '?'}"]


def logged_key(key: str) -> str:
    """`key` as the log shows it: a name cut to its first characters plus a short hash (a
    token typed as the name must not land in the log); an address as it is."""
    if not key.startswith("name:"):
        return key
    name, at, address = key[len("name:") :].partition("@")
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    shown = name[:SHOWN_CHARS] + ("…" if len(name) > SHOWN_CHARS else "")
    return f"name:{shown}#{digest}{at}{address}"


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
        shown = ", ".join(logged_key(k) for k in keys)
        log.warning("refused a sign-in (%s)", terminal_safe(shown))

    def admitted(self, name: str, address: str | None = None) -> None:
        """Clear the counts of the name just let in: its own (a `--terminal` tab's), or with
        `address` the page's name at that address."""
        key = page_keys(name, address)[1] if address is not None else name_key(name)
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
