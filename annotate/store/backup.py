"""A consistent copy of a live SQLite store (`annotate backup`), taken while annotators work.

SQLite's online backup API copies the database page by page inside one read transaction: in WAL
mode writers carry on meanwhile, and the copy is the store as of one commit, never a mixture. A
plain file copy of a live WAL store can miss the committed pages still in the -wal file. The
copy is written under a temporary name and renamed when complete and verified, so a backup
interrupted by a full disk leaves no half-written file under the target's name.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from annotate.errors import UserError
from annotate.output_paths import output_file


@dataclass(frozen=True)
class Backup:
    path: Path
    size_bytes: int


def pg_dump_hint(engine: Engine, target: Path) -> str:
    url = engine.url.set(drivername="postgresql").render_as_string(hide_password=True)
    return (
        "annotate backup copies SQLite stores; for PostgreSQL use its own tool, e.g. "
        f"pg_dump --format=custom --file={target} '{url}' "
        "(a password goes in PGPASSWORD or ~/.pgpass; restore with pg_restore)"
    )


PARTIAL_PREFIX = "."
PRIVATE_MODE = 0o600
"""Stores and their backups are readable by their owner alone: they hold every answer,
comment and annotator name (and the tokens' hashes)."""


def create_private(path: Path) -> None:
    """Create `path` empty with mode 0600 (before SQLite opens it: SQLite would make it with
    the umask's mode, usually readable by everyone)."""
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_MODE))


def remove_leftovers(target: Path) -> list[Path]:
    """Delete the half-written copies a killed backup left beside `target` (the process that
    wrote `.NAME.partial-PID` is gone); a live backup's copy stays."""
    removed = []
    for leftover in target.parent.glob(f"{PARTIAL_PREFIX}{target.name}.partial-*"):
        pid = leftover.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


STORE_FILES = {  # a suffix of the store's file name: that file in words
    "": "the store itself",
    "-wal": "the store's -wal file",
    "-shm": "the store's -shm file",
    "-journal": "the store's -journal file",
}


def _store_file(source: Path, target: Path) -> str | None:
    """What `target` is of the store's own files (the store, its -wal, -shm or -journal), in
    words; None when it is none of them. A backup written over one of them would lose or damage
    the store (and the backup with it: SQLite removes its -wal when the store is closed)."""
    where = target.resolve()
    for suffix, words in STORE_FILES.items():
        own = source.with_name(source.name + suffix)
        if where == own.resolve() or (own.exists() and target.exists() and own.samefile(target)):
            return words
    return None


def backup_store(engine: Engine, target: Path, *, overwrite: bool = False) -> Backup:
    """Copy the SQLite store behind `engine` to `target` (a new file)."""
    if engine.dialect.name != "sqlite":
        raise UserError(pg_dump_hint(engine, target))
    source = Path(engine.url.database or "")
    target = target.expanduser()
    refused = _store_file(source, target)
    if refused:
        raise UserError(f"{target} is {refused}; choose another file for the backup")
    output_file(target, source.name or "annotate.db")
    if target.exists() and not overwrite:
        raise UserError(f"{target} exists already (use --overwrite to replace it)")
    remove_leftovers(target)
    partial = target.with_name(f"{PARTIAL_PREFIX}{target.name}.partial-{os.getpid()}")
    raw = engine.raw_connection()  # a pooled connection, with the store's pragmas
    try:
        create_private(partial)  # the copy holds every label and name: the owner's alone
        copy = sqlite3.connect(partial)
        try:
            raw.driver_connection.backup(copy)  # type: ignore[union-attr]
            verdict = copy.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            copy.close()
        if verdict != "ok":
            raise UserError(f"the copy did not verify ({verdict}); run `annotate check`")
        os.replace(partial, target)
    except sqlite3.Error as exc:
        raise UserError(f"cannot write the backup {target}: {exc}") from None
    except OSError as exc:  # a folder one may not write: said of the file asked for, not of
        # the hidden `.NAME.partial-PID` the copy is first written to
        raise UserError(f"cannot write the backup {target}: {exc.strerror or exc}") from None
    finally:
        raw.close()
        with contextlib.suppress(OSError):  # on a read-only file system, even when absent
            partial.unlink(missing_ok=True)
    return Backup(target, target.stat().st_size)
