"""How a store's failures reach the user: a SQLite file or disk that fails (read-only,
full, damaged) is the user's to fix and gets one clear line (StorageError), not a traceback;
and a statement run on the driver directly (store/prepared.py) fails as SQLAlchemy's execution
would have failed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from annotate.errors import UserError

SQLITE_STORAGE_ERRORS = {
    "SQLITE_READONLY": "is read-only ({reason}): nothing was written. Check that the file and "
    "its folder are writable by you, or use a copy (`annotate backup`).",
    "SQLITE_FULL": "could not grow: the disk is full ({reason}). The last change was not saved "
    "and the store is intact; free some space and try again.",
    "SQLITE_IOERR": "could not be read or written ({reason}). Any change in progress was rolled "
    "back; check the disk, then run `annotate check`.",
    "SQLITE_CANTOPEN": "cannot be opened ({reason}); check that the file and its folder exist "
    "and are readable and writable by you.",
    "SQLITE_CORRUPT": "is damaged ({reason}). Restore it from a backup (docs: "
    '"Running a study", "Recovering from a backup").',
    "SQLITE_NOTADB": "is not a SQLite database ({reason}): check the --db path, or restore the "
    "store from a backup.",
}
"""SQLite failures of the file or the disk, not of the program: the user gets one clear line
(a UserError) instead of a traceback. The message prefix is the error name (its family)."""


STORE_GONE = "store file gone"
"""The reason of the StorageError for a SQLite store whose file is no longer there."""


class StorageError(UserError):
    """The store's file, disk or schema failed, not the program; `reason` is the database's
    own words."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def storage_error(exc: BaseException, engine: Engine) -> UserError | None:
    """The UserError for a read-only, full or unreadable SQLite file, else None. A busy
    database ("database is locked") is not one: it is transient and retried."""
    missing = _missing_schema_object(exc)
    if missing is not None:
        return StorageError(
            f"the store {describe_store(engine)} has no {missing}: it is damaged or was not made "
            "by this annotate. Run `annotate check`, or restore a backup.",
            f"no {missing}",
        )
    name = getattr(exc, "sqlite_errorname", None)
    if not isinstance(name, str):
        return None
    reason = str(exc) or name
    if name.startswith(("SQLITE_FULL", "SQLITE_IOERR")) and disk_is_full(engine):
        # On a full disk SQLite often says only "disk I/O error" (the WAL index cannot grow).
        name, reason = "SQLITE_FULL", f"{reason}; no space left on the device"
    for family, message in SQLITE_STORAGE_ERRORS.items():
        if name == family or name.startswith(family + "_"):
            text_ = f"the store {describe_store(engine)} " + message.format(reason=reason)
            return StorageError(text_, reason)
    return None


PG_UNDEFINED = {"42P01": "table", "42703": "column"}


def _missing_schema_object(exc: BaseException) -> str | None:
    """'table labels' when the query failed on a table or column the store lacks."""
    sqlstate = getattr(exc, "sqlstate", None)
    message = str(exc).splitlines()[0] if str(exc) else ""
    if sqlstate in PG_UNDEFINED:
        return f"{PG_UNDEFINED[sqlstate]} named in: {message}"
    for what in ("no such table: ", "no such column: "):
        if message.startswith(what):
            return f"{what[8:-2]} {message[len(what) :]}"
    return None


FULL_DISK_BYTES = 1 << 20
"""Less free space than this (1 MiB) on the store's device counts as a full disk."""


def disk_is_full(engine: Engine) -> bool:
    database = engine.url.database
    if not database or database == ":memory:":
        return False
    try:
        return shutil.disk_usage(Path(database).resolve().parent).free < FULL_DISK_BYTES
    except OSError:
        return False


def describe_store(engine: Engine) -> str:
    """The store's URL for a message: its password hidden, a SQLite path as the user wrote it
    (SQLAlchemy's rendering percent-encodes a path's non-ASCII letters and quotes)."""
    database = engine.url.database or ""
    if engine.dialect.name == "sqlite" and database.startswith("file:"):
        return f"sqlite:///{database.removeprefix('file:')} (opened read-only)"  # reading_url
    shown = engine.url.render_as_string(hide_password=True)
    return unquote(shown) if engine.dialect.name == "sqlite" else shown  # no password there


def watched(conn: Connection) -> bool:
    """Whether something listens to `conn`'s statements (a test counting them, or injecting a
    failure): then every statement goes through SQLAlchemy's execution, which tells them."""
    return bool(conn.dispatch.before_cursor_execute or conn.dispatch.after_cursor_execute)


def raised_as(conn: Connection, sql: str, args: tuple[Any, ...], exc: Exception) -> Exception:
    """What SQLAlchemy's execution raises for the driver's error `exc` on this engine: the
    store's own error (a full disk, a read-only file: the handle_error hook's rule), else the
    DBAPIError subclass wrapping it, for a statement run on the driver directly."""
    own = storage_error(exc, conn.engine)
    if own is not None:
        return own
    dialect = conn.dialect
    # A lost server connection is dropped from the pool, as SQLAlchemy's execution does.
    lost = dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
    if lost:
        conn.invalidate(exc)
    return DBAPIError.instance(
        sql, args, exc, dialect.loaded_dbapi.Error, connection_invalidated=lost, dialect=dialect
    )
