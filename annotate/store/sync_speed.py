"""How fast the disk under a SQLite store makes a write durable, and so how many threads a
server process gives the store's work.

Answers that arrive together share one commit and its sync only when several threads write
(store/group_commit.py); but two threads of one process hand Python's lock back and forth at
every statement (the sqlite3 module lets go of it for each one), which costs processor time.
Which wins depends on the disk. Measured on the crowd's whole path (bench_web: 1,000 paced
workers, 2 processes, issue 38), one thread against four, each beside the bare page in the same
run, with every sync made slower by strace's fault injection (`--sync-delay-ms`); test answer
to next item p99:

- syncs of 0.25 ms (the measuring machine's disk, no delay): on par or one thread ahead. Earlier
  sessions: 8-14 ms against 13-22, 2.2-2.8 ms of CPU per answer against 2.5-3.4; this one's
  (alternated, on a busier machine): 19-34 ms against 17-26, 3.3-3.9 ms of CPU against
  3.2-3.3. The bare page 6-12 ms;
- 0.75 ms: 22 against 21 ms, CPU 1.70 against 1.75 times the bare page's; the bare page 23-38;
- 1.25 ms: 54 against 25-34 ms; the bare page 38-58;
- 2.25 ms: 329 against 33-36 ms; the bare page 184-1,259 (its writers wait in SQLite's busy
  handler, which sleeps). A burst of 100 arrivals' first item p99: 607 against 342-390 ms.

So a process measures its disk once, before its first answer, and groups where a sync takes
SLOW_SYNC_S or more, where the two were on par. Where it does not group it uses no thread at
all: its event loop makes the store calls itself (web/page/state.py: PageState.run). The one
thread ran them one at a time as well, and each call's hand-over to it and back, with the
two threads then taking Python's lock from each other at every statement, cost more processor
time than the loop gained by going on meanwhile. Alternated in one session (annotate alone,
four runs each, same crowd, syncs of 0.25 ms), one thread against none, medians: 2.74 against
2.40 ms of CPU per answer, 2.37 against 2.01 once every worker was at the test items, test
answer p99 13.3 against 9.5 ms, a burst of 100 arrivals' first item p99 271 against 217 ms.
`ANNOTATE_SQLITE_THREADS` decides where it is set (0: the loop).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path
from time import perf_counter

from sqlalchemy import Engine

from annotate.store.turn import store_file

SLOW_SYNC_S = 0.00075
"""A sync that takes this long or more makes grouping pay (module docstring)."""
ON_THE_LOOP = 0
"""No thread: the server process's event loop does the store's work itself (module docstring)."""
ONE_THREAD = 1
GROUPING_THREADS = 4
"""Threads where syncs are slow (module docstring): enough to keep a batch filling while the
last one syncs."""
PROBES = 5
PAGE = b"\0" * 4096
SYNC = getattr(os, "fdatasync", os.fsync)
"""What a commit's sync calls (SQLite uses fsync where there is no fdatasync: macOS)."""


def sync_seconds(folder: Path) -> float:
    """The median time to append a page to a file in `folder` and make it durable, as a
    commit appends to the store's write-ahead log and syncs it. A scratch file, removed."""
    times = []
    with tempfile.TemporaryFile(dir=folder, prefix=".annotate-sync-") as scratch:
        fd = scratch.fileno()
        os.write(fd, PAGE)
        SYNC(fd)  # the file's creation, synced once: not what a commit pays
        for _ in range(PROBES):
            os.write(fd, PAGE)
            start = perf_counter()
            SYNC(fd)
            times.append(perf_counter() - start)
    return statistics.median(times)


def store_threads(engine: Engine) -> int:
    """Threads for a server process's work on the SQLite store `engine`: GROUPING_THREADS
    where its disk syncs slowly, else none (ON_THE_LOOP). One where it cannot be measured (a
    store in memory, a folder it may not write to): that is how the store was served before."""
    database = store_file(engine)
    if database is None:
        return ONE_THREAD
    try:
        seconds = sync_seconds(Path(database).resolve().parent)
    except OSError:
        return ONE_THREAD
    return threads_for(seconds)


def threads_for(sync_s: float) -> int:
    """The rule: grouping threads where a sync takes SLOW_SYNC_S or more, else none."""
    return GROUPING_THREADS if sync_s >= SLOW_SYNC_S else ON_THE_LOOP
