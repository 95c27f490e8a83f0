"""Make a database engine for a store URL, with the settings several annotators need.

SQLite (one host): every connection gets WAL, a busy timeout, synchronous=FULL and foreign keys;
transactions that read then write start with BEGIN IMMEDIATE so the busy timeout can work
(DESIGN.md, "SQLite with several writers"). A read-only, full or unreadable SQLite file becomes
one clear UserError; SQLite has rolled the failed transaction back, so nothing is half-written.
PostgreSQL (several hosts): the same code, other URL, with sessions pinned to UTC. Callers retry
a transaction that failed transiently (`is_transient`: SQLite busy, PostgreSQL serialization
failure or deadlock).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DBAPIError, OperationalError, SQLAlchemyError
from sqlmodel import Session

from annotate.errors import UserError

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA busy_timeout=5000",
    "PRAGMA synchronous=FULL",
    "PRAGMA foreign_keys=ON",
)

PG_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})
"""serialization_failure and deadlock_detected: PostgreSQL rolled the transaction back and
running it again is the documented remedy."""

SQLITE_STORAGE_ERRORS = {
    "SQLITE_READONLY": "is read-only ({reason}): nothing was written. Check that the file and "
    "its folder are writable by you, or use a copy (`annotate backup`).",
    "SQLITE_FULL": "could not grow: the disk is full ({reason}). The last change was not saved "
    "and the store is intact; free some space and try again.",
    "SQLITE_IOERR": "could not be read or written ({reason}). The last change was not saved; "
    "check the disk, then run `annotate check`.",
    "SQLITE_CANTOPEN": "cannot be opened ({reason}); check that the file and its folder exist "
    "and are readable and writable by you.",
}
"""SQLite failures of the file or the disk, not of the program: the user gets one clear line
(a UserError) instead of a traceback. The message prefix is the error name (its family)."""


def normalise_url(url_or_path: str) -> str:
    """A plain path means a SQLite file."""
    if "://" in url_or_path:
        return url_or_path
    return f"sqlite:///{Path(url_or_path).expanduser()}"


def _install_sqlite_hooks(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # Let SQLAlchemy, not the sqlite3 module, decide when a transaction begins.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        immediate = conn.get_execution_options().get("sqlite_immediate", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _install_storage_error_hook(engine: Engine) -> None:
    @event.listens_for(engine, "handle_error")
    def _on_error(context: ExceptionContext) -> None:
        error = storage_error(context.original_exception, engine)
        if error is not None:
            raise error from None


def storage_error(exc: BaseException, engine: Engine) -> UserError | None:
    """The UserError for a read-only, full or unreadable SQLite file, else None. A busy
    database ("database is locked") is not one: it is transient and retried."""
    name = getattr(exc, "sqlite_errorname", None)
    if not isinstance(name, str):
        return None
    for family, message in SQLITE_STORAGE_ERRORS.items():
        if name == family or name.startswith(family + "_"):
            reason = str(exc) or name
            return UserError(f"the store {describe_store(engine)} " + message.format(reason=reason))
    return None


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    connect_args: dict[str, object] = {}
    if url.startswith("postgresql"):
        # Columns are `timestamp without time zone` holding UTC; a session in another time zone
        # would shift every aware datetime we write, so pin the session to UTC.
        connect_args["options"] = "-c timezone=UTC"
    try:
        engine = create_engine(
            url, pool_pre_ping=url.startswith("postgresql"), connect_args=connect_args
        )
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        raise UserError(f"cannot use database URL {url!r}: {exc}") from None
    if engine.dialect.name == "sqlite":
        _install_sqlite_hooks(engine)
        _install_storage_error_hook(engine)
    return engine


def is_transient(exc: BaseException) -> bool:
    """Whether running the failed transaction again may succeed: SQLite was busy (another
    writer held the lock past busy_timeout), or PostgreSQL aborted it as a serialization
    failure or a deadlock victim."""
    if not isinstance(exc, DBAPIError):
        return False
    sqlstate = getattr(exc.orig, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate in PG_RETRYABLE_SQLSTATES
    text_ = str(exc.orig).lower()
    return isinstance(exc, OperationalError) and ("locked" in text_ or "busy" in text_)


def describe_store(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


WRITER_LOCK_SUFFIX = ".writers"
"""Beside a SQLite store, the file whose flock orders annotate's writers (see writer_turn)."""


def _writer_lock_path(engine: Engine) -> str | None:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):
        return None  # URI filenames (shared memory and the like): SQLite's own locking only
    return database + WRITER_LOCK_SUFFIX


def _open_lock_file(path: str) -> int | None:
    """A descriptor to flock, or None where the folder or file does not let us have one (a
    read-only disk): the writer then falls back on SQLite's busy_timeout alone."""
    for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
        try:
            return os.open(path, flags, 0o666)
        except OSError:
            continue
    return None


@contextmanager
def writer_turn(engine: Engine) -> Iterator[None]:
    """Wait in the kernel for this process's turn to write to a SQLite store.

    SQLite's busy handler polls with sleeps of up to 100 ms and no queue, so under contention
    one writer can starve for the whole busy_timeout (measured: 5 s and "database is locked"
    with 5 writers holding the lock 2 ms each) while the lock is free most of the time. An
    exclusive flock on a file beside the store wakes the next waiter as soon as the previous
    writer closes its descriptor (also when it is killed), so annotate's writers take turns;
    BEGIN IMMEDIATE and busy_timeout still guard against other programs. PostgreSQL queues
    on its own locks: nothing to do there."""
    path = _writer_lock_path(engine)
    fd = _open_lock_file(path) if path is not None else None
    if fd is None:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def write_connection(engine: Engine) -> Iterator[Connection]:
    """A connection in a transaction that takes the write lock at its start (BEGIN IMMEDIATE
    on SQLite, after this process's turn), commits on success and rolls back on any error."""
    # The connection is checked out before this process's turn and returned after it: the
    # turn covers the transaction alone.
    with engine.connect() as conn:
        conn = conn.execution_options(sqlite_immediate=True)
        with writer_turn(engine), conn.begin():
            yield conn


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """An ORM session on a `write_connection`."""
    with write_connection(engine) as conn, Session(bind=conn) as session:
        yield session
        session.flush()


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def ping(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(:key)")


def lock_study(conn: Session | Connection, study_id: int) -> None:
    """Serialise the transactions that hand out or fill a study's test items. SQLite already
    holds the database write lock (BEGIN IMMEDIATE); PostgreSQL takes a transaction-scoped
    advisory lock on the study."""
    bind = conn.get_bind() if isinstance(conn, Session) else conn
    if bind.dialect.name == "postgresql":
        conn.execute(_ADVISORY_LOCK, {"key": 7_000_000 + study_id})
