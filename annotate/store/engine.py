"""Make a database engine for a store URL, with the settings several annotators need.

SQLite (one host): every connection gets WAL, a busy timeout, synchronous=FULL and foreign keys;
transactions that read then write start with BEGIN IMMEDIATE so the busy timeout can work
(without it, concurrent writers lose commits to "database is locked"). A read-only, full or
unreadable SQLite file becomes one clear UserError; SQLite has rolled the failed transaction
back, so nothing is half-written.
PostgreSQL (several hosts): the same code, other URL, with sessions pinned to UTC. Callers retry
a transaction that failed transiently (`is_transient`: SQLite busy, PostgreSQL serialization
failure or deadlock).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TypeVar

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    bindparam,
    cast,
    create_engine,
    event,
    func,
    select,
    text,
)
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError, SQLAlchemyError
from sqlmodel import Session

from annotate.errors import UserError
from annotate.settings import settings
from annotate.store import checkpoint, group_commit
from annotate.store.failures import (
    STORE_GONE,
    StorageError,
    describe_store,
    storage_error,
    watched,
)
from annotate.store.prepared import on_driver
from annotate.store.turn import writer_lock_path, writer_turn
from annotate.text import redacted_url

T = TypeVar("T")

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA busy_timeout=5000",
    "PRAGMA synchronous=FULL",
    "PRAGMA foreign_keys=ON",
)

PG_RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})
"""serialization_failure and deadlock_detected: PostgreSQL rolled the transaction back and
running it again is the documented remedy."""


def normalise_url(url_or_path: str) -> str:
    """A plain path means a SQLite file. `postgres://` (libpq's and psql's other spelling, the
    one hosting services hand out) means `postgresql://`, which SQLAlchemy alone knows."""
    if "://" in url_or_path:
        scheme, rest = url_or_path.split("://", 1)
        if scheme == "postgres" or scheme.startswith("postgres+"):
            return f"postgresql{scheme[len('postgres') :]}://{rest}"
        return url_or_path
    return f"sqlite:///{Path(url_or_path).expanduser()}"


def _install_sqlite_hooks(engine: Engine, read_only: bool) -> None:
    # A read-only connection cannot switch the journal mode (the store is WAL already if it
    # was ever written by annotate), and refuses every write (query_only: the file itself may
    # be writable, see reading_url).
    pragmas = [p for p in SQLITE_PRAGMAS if not (read_only and "journal_mode" in p)]
    if read_only:
        pragmas.append("PRAGMA query_only=ON")

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # Let SQLAlchemy, not the sqlite3 module, decide when a transaction begins.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in pragmas:
            cursor.execute(pragma)
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn) -> None:  # type: ignore[no-untyped-def]
        options = conn.get_execution_options()
        if not options.get("keypress", False):
            checkpoint.resume(conn)  # a keypress commit may have left it off
        turn = conn.info.pop(group_commit.TURN_AT_BEGIN, None)
        if turn is not None:  # a batch opens: it writes (group_commit._open)
            turn.take()
        immediate = turn is not None or options.get("sqlite_immediate")
        begin = "BEGIN IMMEDIATE" if immediate else "BEGIN"
        if watched(conn):
            conn.exec_driver_sql(begin)
            return
        on_driver(conn, begin)  # (store/prepared.py says why: a keypress begins a transaction)


IDLE_PING_S = 1.0
"""A pooled connection to a database server that sat unused this long is pinged before it is
handed out; one returned moments ago is not."""


def _install_idle_ping(engine: Engine) -> None:
    # SQLAlchemy's pool_pre_ping pings at every checkout: under load, one round trip more per
    # request on a connection used a millisecond before (4-10% of the page's CPU on
    # PostgreSQL, measured). A connection a restarted server closed is one that sat idle
    # through the restart, so only those are pinged, with the pool's documented checkout
    # hook: DisconnectionError makes the pool discard the connection and connect afresh. A
    # restart under load fails the requests then in flight once (the page keeps their
    # answers and says so) and SQLAlchemy recycles every connection older than it.
    @event.listens_for(engine.pool, "connect")
    def _connected(_dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
        record.info["returned"] = time.monotonic()

    @event.listens_for(engine.pool, "checkin")
    def _returned(_dbapi_connection, record) -> None:  # type: ignore[no-untyped-def]
        record.info["returned"] = time.monotonic()

    @event.listens_for(engine.pool, "checkout")
    def _checkout(dbapi_connection, record, _proxy) -> None:  # type: ignore[no-untyped-def]
        if time.monotonic() - record.info.get("returned", 0.0) <= IDLE_PING_S:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except engine.dialect.loaded_dbapi.Error as exc:
            raise DisconnectionError(f"an idle connection was closed: {exc}") from exc


def _send_savepoints_as_text(engine: Engine) -> None:
    # SQLAlchemy builds each SAVEPOINT, RELEASE and ROLLBACK TO as a clause it declares
    # uncacheable, so every one is compiled afresh: under load a sixth of the page's Python
    # time per answer, since every writer after the first in a shared commit works inside a
    # SAVEPOINT (group_commit.py). The same statements go out as text; SQLAlchemy still keeps
    # the nested transactions' state, as these three hooks are where its dialect sends them.
    dialect = engine.dialect
    quote = dialect.identifier_preparer.quote

    def savepoint(connection: Connection, name: str) -> None:
        connection.exec_driver_sql(f"SAVEPOINT {quote(name)}")

    def rollback_to(connection: Connection, name: str) -> None:
        connection.exec_driver_sql(f"ROLLBACK TO SAVEPOINT {quote(name)}")

    def release(connection: Connection, name: str) -> None:
        connection.exec_driver_sql(f"RELEASE SAVEPOINT {quote(name)}")

    dialect.do_savepoint = savepoint  # type: ignore[method-assign]
    dialect.do_rollback_to_savepoint = rollback_to  # type: ignore[method-assign]
    dialect.do_release_savepoint = release  # type: ignore[method-assign]


def _install_storage_error_hook(engine: Engine) -> None:
    @event.listens_for(engine, "handle_error")
    def _on_error(context: ExceptionContext) -> None:
        error = storage_error(context.original_exception, engine)
        if error is not None:
            raise error from None


def read_only_url(path: Path) -> str | None:
    """A URL that opens the SQLite file `path` for reading only, when this user may not write
    it or its folder (a read-only folder, read-only media); None when writing is possible.

    SQLite needs to write beside a WAL store (its -shm index) even to read. `mode=ro` reads
    with an existing index, and makes one (with an empty -wal) where it may, which it cannot
    remove when it closes: every read left both behind. Where none is there, the file is
    opened `immutable` (no index, nothing written) when nobody writes it: in a read-only
    folder (there is no -wal file of unfinished commits, and no writer could create one), or
    when the file itself has no write permission for anyone (`chmod a-w`). A file that another
    user or group may write is read with the index, which its writers share."""
    folder = path.resolve().parent
    if os.access(path, os.W_OK) and os.access(folder, os.W_OK):
        return None
    target = path.resolve().as_posix()
    wal, shm = Path(f"{target}-wal"), Path(f"{target}-shm")
    unwritable = not os.access(folder, os.W_OK) or not path.stat().st_mode & 0o222
    immutable = unwritable and not shm.exists() and not wal.exists()
    return f"sqlite:///file:{target}?mode=ro{'&immutable=1' if immutable else ''}&uri=true"


def reading_url(path: Path) -> str:
    """A URL that opens the SQLite file `path` for reading (with make_engine's `read_only`).

    Where this user may write the file and its folder, the file is opened for writing and
    the connection refuses writes (query_only): SQLite removes the -wal and -shm files when
    the last connection that may write closes, and a `mode=ro` connection may not, so every
    read left them behind in the user's folder. Elsewhere, read_only_url's."""
    target = path.resolve().as_posix()
    return read_only_url(path) or f"sqlite:///file:{target}?uri=true"


SERVER_POOL_SIZE = 8
"""Connections a process keeps open to a database server, once it has needed them at once
(SQLAlchemy's default keeps 5, and opens up to 10 more when needed, closing each as it is
returned). A page process runs at most this many threads on the store (web/page/state.py's
POSTGRES_THREADS): when the pool kept fewer than the page's threads, the others opened and
closed a connection, each a new server process, on almost every request, and PostgreSQL spent
1.6 ms of CPU per test answer instead of 0.9-1.0 (measured, issue 38). A CLI or terminal
process opens only the one or two it uses."""


_KNOWN_URLS = (
    " (a store is a SQLite file, a path or sqlite:///PATH, or a PostgreSQL database,"
    " postgresql+psycopg://USER@HOST/DB)"
)
"""Said after a URL that cannot be used: the two kinds of store there are."""

BARE_AT = (
    "the database URL (--db or ANNOTATE_DB) has an @ in its user name or password, where a URL "
    "reserves it: write it as %40 there (and : / ? # % as %3A %2F %3F %23 %25): a password "
    "p@ss:1 is written p%40ss%3A1"
)
"""Said, without the URL (it holds the password), for a password with a bare @: SQLAlchemy
reads what follows it as the host, and the error then named that part of the password."""


def has_bare_at(url: str) -> bool:
    """Whether a server URL's user name or password holds an @ not percent-encoded: a host
    never holds one, so a second @ is part of them."""
    scheme, sep, rest = url.partition("://")
    return bool(sep) and not scheme.startswith("sqlite") and rest.count("@") > 1


CONNECT_TIMEOUT_S = 5
"""How long a connection to a database server may take to open (libpq's connect_timeout, in
whole seconds), unless the URL says. libpq's own default is to wait without end: a host that
drops packets, or a port that accepts and never answers, held a command for minutes."""


def make_engine(url: str, *, read_only: bool = False) -> Engine:
    """The engine for `url`; with `read_only`, a SQLite connection refuses every write."""
    url = normalise_url(url)
    if has_bare_at(url):
        raise UserError(BARE_AT)
    connect_args: dict[str, object] = {}
    pooling: dict[str, object] = {}
    if url.startswith("postgresql"):
        # Columns are `timestamp without time zone` holding UTC; a session in another time zone
        # would shift every aware datetime we write, so pin the session to UTC.
        connect_args["options"] = "-c timezone=UTC"
        if "connect_timeout" not in url:  # the URL's own value wins
            connect_args["connect_timeout"] = CONNECT_TIMEOUT_S
        pooling["pool_size"] = SERVER_POOL_SIZE
    try:
        # A statement's values stay out of every error's text: they hold platform ids, answers
        # and comments, and that text reaches logs, tracebacks and the crash screen.
        engine = create_engine(url, connect_args=connect_args, hide_parameters=True, **pooling)
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        shown = redacted_url(url)  # SQLAlchemy's words may quote the URL too
        said = str(exc).replace(url, shown)
        raise UserError(f"cannot use database URL {shown!r}: {said}{_KNOWN_URLS}") from None
    if engine.dialect.name == "sqlite":
        _install_sqlite_hooks(engine, read_only=read_only or engine.url.query.get("mode") == "ro")
    else:
        _install_idle_ping(engine)
    _send_savepoints_as_text(engine)
    _install_storage_error_hook(engine)
    return engine


RECONNECT_SECONDS: float | None = None
"""How long a command keeps trying to reach a PostgreSQL server that went away, before it
gives up with a clear error; None: ANNOTATE_RECONNECT_SECONDS (annotate.settings)."""
PG_CONNECTION_SQLSTATES = ("08", "57P01", "57P02", "57P03")
"""connection_exception (class 08), admin/crash shutdown, cannot connect now (starting up)."""


class StoreUnreachable(UserError):
    """The database server cannot be reached (stopped, restarting, network gone); `answered`:
    it said so itself (shutting down, starting up), so it is there."""

    def __init__(self, message: str, *, answered: bool = False) -> None:
        super().__init__(message)
        self.answered = answered


REFUSALS = (
    "does not exist",  # database "x" / role "x" does not exist
    "password authentication failed",
    "no password supplied",  # the server asks for one and the URL has none
    "no pg_hba.conf entry",
    "permission denied for database",
)
"""What a PostgreSQL server that is up says to a wrong URL: waiting will not help."""


class StoreRefused(UserError):
    """The server answered and refused this database, role or password."""


def refused(engine: Engine, said: str) -> StoreRefused:
    """The error for a server that refused the URL (`said`: its words, from `refusal`),
    with what to check."""
    if "password authentication failed" in said or "no password supplied" in said:
        check = (
            "check the password in the URL, USER:PASSWORD@HOST (characters such as @ : / # % "
            "percent-encoded: %40 %3A %2F %23 %25), or give it in PGPASSWORD or ~/.pgpass"
        )
    elif 'database "' in said and "does not exist" in said:  # not a role named "…database…"
        check = "check the database name in the URL, or create it (createdb NAME)"
    else:
        check = "check the database name, the role and its password in the URL"
    store = describe_store(engine)
    return StoreRefused(f"the store {store} refused the connection ({said}): {check}")


def refusal(exc: BaseException) -> str | None:
    """The server's refusal of the connection (wrong database, role or password), or None.
    psycopg gives no SQLSTATE for a failed connection: its message tells."""
    orig = getattr(exc, "orig", exc)
    if type(orig).__module__.split(".")[0] != "psycopg":
        return None
    text_ = str(orig)
    if not any(r in text_ for r in REFUSALS):
        return None
    fatal = [
        line for line in text_.splitlines() if "FATAL" in line or any(r in line for r in REFUSALS)
    ]
    return (fatal[-1] if fatal else text_.splitlines()[0]).strip()


def is_disconnect(exc: BaseException) -> bool:
    """Whether the store failed because its server went away, not because of the query: the
    same transaction may succeed once the server is back."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    if type(orig).__module__.split(".")[0] != "psycopg":
        return False  # SQLite has no server to lose
    if refusal(exc) is not None:
        return False  # the server is there and said no: a wrong URL, not an outage
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is None:
        return isinstance(exc, OperationalError)  # no answer at all: the connection failed
    return sqlstate.startswith(PG_CONNECTION_SQLSTATES)


PG_DISK_FULL = "53100"
"""PostgreSQL's disk_full."""


def is_full_disk(exc: BaseException) -> bool:
    """The store could not write: the disk (or the quota) is full. Nothing is written; the
    same write succeeds once there is room. On SQLite the engine's error hook has made it a
    StorageError already; on PostgreSQL it is the server's disk_full."""
    if isinstance(exc, StorageError):
        text_ = f"{exc.reason} {exc}".lower()
    elif isinstance(exc, DBAPIError):
        if getattr(exc.orig, "sqlstate", None) == PG_DISK_FULL:
            return True
        text_ = str(exc.orig).lower()
    else:
        return False
    return "disk is full" in text_ or "no space left" in text_ or "disk quota" in text_


def is_store_gone(exc: BaseException) -> bool:
    """A SQLite store whose file was deleted (or its folder removed) under a running app."""
    return isinstance(exc, StorageError) and exc.reason == STORE_GONE


def is_held(exc: BaseException) -> bool:
    """A failure a screen waits out (retrying) instead of crashing: the server went away, the
    disk is full, or the store's file is gone (until it is put back). Either way nothing was
    stored and the same call may succeed later."""
    return is_disconnect(exc) or is_full_disk(exc) or is_store_gone(exc)


HELD = (DBAPIError, StorageError)
"""The exceptions `is_held` may say a screen waits out: catch these, then ask it."""


def unreachable(engine: Engine, exc: BaseException) -> StoreUnreachable:
    reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
    return StoreUnreachable(
        f"the store {describe_store(engine)} is unreachable ({reason}); check that the database "
        "server is running and reachable, then run the command again",
        answered=server_answered(exc),
    )


def server_answered(exc: BaseException) -> bool:
    """Whether a server answered the failed connection or statement (with a SQLSTATE: it is
    shutting down, starting up), rather than nothing answering at all."""
    if isinstance(exc, StoreUnreachable):
        return exc.answered
    return getattr(getattr(exc, "orig", exc), "sqlstate", None) is not None


FIRST_CONTACT_SECONDS = 5.0
"""How long opening a store waits for a database server from which nothing has answered yet
(nothing listens on the port, no route to the host): a server being restarted listens again
within it, and a server that is not there is said to be so within it, not after
RECONNECT_SECONDS. A server that answers that it is starting up is waited for as one that
went away."""


def until_reachable(
    engine: Engine,
    work: Callable[[], T],
    seconds: float | None = None,
    *,
    first_contact: bool = False,
) -> T:
    """Run `work`; while the server is unreachable, again with a growing pause (at most 5 s),
    for up to `seconds` (RECONNECT_SECONDS), then a StoreUnreachable. `work` must be safe to
    run twice (the store's writes are idempotent under its unique constraints).
    `first_contact`: this process has not reached the server yet (a command opening the
    store), so while nothing answers at all it waits FIRST_CONTACT_SECONDS at most."""
    if seconds is None:
        seconds = settings().reconnect_seconds if RECONNECT_SECONDS is None else RECONNECT_SECONDS
    started = time.monotonic()
    deadline = started + seconds
    answered = not first_contact
    delay = 0.25
    while True:
        try:
            return work()
        except (DBAPIError, StoreUnreachable) as exc:
            if isinstance(exc, DBAPIError) and (said := refusal(exc)) is not None:
                raise refused(engine, said) from None
            if isinstance(exc, DBAPIError) and not is_disconnect(exc):
                raise
            answered = answered or server_answered(exc)
            limit = deadline if answered else min(deadline, started + FIRST_CONTACT_SECONDS)
            if time.monotonic() + delay > limit:
                if isinstance(exc, StoreUnreachable):
                    raise
                raise unreachable(engine, exc) from None
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


RETRIES = 5
"""Attempts for a commit that failed with a transient error. Each SQLite attempt has already
waited up to busy_timeout inside SQLite (and annotate's writers queue in writer_turn first), so
a retry runs at once: no sleeping back-off that turns a short wait into a long stall."""


def retry_transient(fn: Callable[[], T]) -> T:
    """Run a write transaction, again if it failed transiently (SQLite busy; PostgreSQL
    serialization failure or deadlock). A failed commit is "unknown", not "not written":
    callers make their writes idempotent under the unique constraints."""
    for attempt in range(RETRIES):
        try:
            return fn()
        except DBAPIError as exc:
            if attempt == RETRIES - 1 or not is_transient(exc):
                raise
    raise AssertionError("unreachable")


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


@contextmanager
def write_connection(engine: Engine, *, keypress: bool = False) -> Iterator[Connection]:
    """A connection in a transaction that takes the write lock at its start (BEGIN IMMEDIATE
    on SQLite, after this process's turn), commits on success and rolls back on any error.
    On a SQLite file the process's concurrent writers share the transaction and its commit
    (group_commit.py): the block returns once the commit is durable; an error rolls back this
    block's work alone. `keypress`: a person waits for this commit, so on SQLite it leaves the
    log's checkpoint for when they are reading (annotate/store/checkpoint.py)."""
    # The connection is checked out before this process's turn and returned after it: the
    # turn covers the transaction alone, and a writer that opens a batch never waits for the
    # pool while the others wait for it (they hold connections of their own meanwhile).
    with engine.connect() as own:
        if groups_commits(engine):
            with group_commit.grouped_write(
                engine, own, keypress=keypress, turn=writer_turn
            ) as conn:
                yield conn
            return
        with _transaction(engine, own, keypress=keypress):
            yield own


@contextmanager
def write_transaction(
    engine: Engine, conn: Connection, *, keypress: bool = False
) -> Iterator[Connection]:
    """`write_connection`'s transaction for a caller that keeps its connection `conn`: write
    on the connection this yields (`conn` itself, or on a SQLite file the open batch's: see
    group_commit.py); what the caller reads on `conn` once this has committed (where the
    annotator now stands) runs after the writers' turn, in a read transaction of its own that
    takes no write lock, so the next writer does not wait for it. `keypress` stays set on
    `conn` for that read: it must not checkpoint either."""
    if groups_commits(engine):
        conn.execution_options(keypress=keypress)
        with group_commit.grouped_write(engine, conn, keypress=keypress, turn=writer_turn) as on:
            yield on
        return
    with _transaction(engine, conn, keypress=keypress):
        yield conn


@contextmanager
def _transaction(engine: Engine, conn: Connection, *, keypress: bool) -> Iterator[None]:
    """One writer's own transaction (PostgreSQL, in-memory and URI stores)."""
    conn.execution_options(sqlite_immediate=True, keypress=keypress)
    try:
        later = checkpoint.keypress_commit(engine, conn) if keypress and is_sqlite(engine) else None
        with later or nullcontext(), writer_turn(engine), conn.begin():
            yield
    finally:
        conn.execution_options(sqlite_immediate=False)


def groups_commits(engine: Engine) -> bool:
    """Whether the process's writers share commits: SQLite files (where a connection reaches
    the same database from any thread). PostgreSQL groups concurrent commits itself."""
    return writer_lock_path(engine) is not None


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """An ORM session on a `write_connection`. It joins the transaction and never commits it;
    its rollback rolls back this writer's work alone (its SAVEPOINT in a shared batch)."""
    with (
        write_connection(engine) as conn,
        Session(bind=conn, join_transaction_mode="rollback_only") as session,
    ):
        yield session
        session.flush()


@contextmanager
def read_connection(engine: Engine) -> Iterator[Connection]:
    """A connection for a read that writes nothing. On SQLite its statements share one
    transaction, so one snapshot. On PostgreSQL it runs in autocommit: under READ COMMITTED
    (the isolation the store's writes are built on: assignment.py) each statement of a
    transaction reads a snapshot of its own anyway, so a read transaction bought nothing but
    two round trips, BEGIN and ROLLBACK, per read."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="AUTOCOMMIT")
        yield conn


@contextmanager
def read_session(engine: Engine) -> Iterator[Session]:
    """An ORM session for a read that writes nothing, on a `read_connection`. On PostgreSQL it
    so ends with no ROLLBACK, which psycopg follows by forgetting every statement it prepared
    on the connection (and DEALLOCATE ALL): each one was then parsed and planned afresh for its
    next five runs there. Under a paced crowd, the reads that ended that way (a page process
    looking up a worker it had not served yet) had PostgreSQL plan a fifth of the runs of the
    page's statements, and spend 1.6 ms of CPU per test answer instead of 1.3 (issue 38)."""
    with read_connection(engine) as conn, Session(bind=conn) as session:
        yield session


def refresh_statistics(engine: Engine, *tables: str) -> None:
    """After rows are loaded in bulk (a study's items, an import): on PostgreSQL, ANALYZE the
    tables, as its documentation advises after a bulk load. Until autovacuum gets to a new
    table (a minute or more later) the planner has no figures for it, and it read a whole
    study's index for each hand-out's one-item check (ix_studyitem_next, item_id its fifth
    column) instead of the row's own (uq_studyitem): 100-230 us of the server's time per
    test answer at 5,000 items, growing with the study. SQLite's planner goes by its own rules
    without statistics (and the store's queries are written for them): nothing to do there."""
    if engine.dialect.name != "postgresql":
        return
    try:
        with engine.connect() as conn:
            conn.execution_options(isolation_level="AUTOCOMMIT")
            quote = conn.dialect.identifier_preparer.quote
            for table in tables:
                conn.exec_driver_sql(f"ANALYZE {quote(table)}")
    except DBAPIError:
        # The rows are committed already, and the figures only speed the planner up
        # (autovacuum gets them anyway): a server that refuses or drops this fails nothing.
        return


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def ping(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


_ADVISORY_LOCK = text("SELECT pg_advisory_xact_lock(:key)")
ANNOTATOR_LOCK_PG = func.pg_advisory_xact_lock(
    -cast(bindparam("b_study"), Integer), cast(bindparam("b_annotator"), Integer)
)
"""lock_annotator's lock on PostgreSQL, as an expression (bound parameters b_study,
b_annotator), for a statement that takes it on its way (windows.TOUCH_LOCKED_PG)."""
_ANNOTATOR_LOCK = select(ANNOTATOR_LOCK_PG)


def lock_study(conn: Session | Connection, study_id: int) -> None:
    """Serialise the transactions that change something study-wide and rare (drawing the
    catch pool: annotate/protocol/catch.py). SQLite already holds the database write lock
    (BEGIN IMMEDIATE); PostgreSQL takes a transaction-scoped advisory lock on the study.
    Answers and hand-outs do not take it (lock_annotator, assignment.py)."""
    bind = conn.get_bind() if isinstance(conn, Session) else conn
    if bind.dialect.name == "postgresql":
        conn.execute(_ADVISORY_LOCK, {"key": 7_000_000 + study_id})


def lock_annotator(conn: Connection, study_id: int, annotator_id: int) -> None:
    """Serialise one annotator's transactions on a study that hand out, fill or give back their
    test items: two windows (or two requests of one tab) of one person never hold two items,
    exceed their batch or label an item twice. Uncontended in practice: one person answers
    one item at a time. SQLite already holds the database write lock (BEGIN IMMEDIATE);
    PostgreSQL takes a transaction-scoped advisory lock keyed (-study, annotator), in the
    two-integer key space, apart from lock_study's single keys and from the items' locks
    (study, item) that hand-outs take (assignment.py). It is taken first in the
    transaction, before any other lock, so an answer's can be part of no deadlock. A refusal
    (protocol/set_aside.py) takes the refused annotator's and then, in id order, those of the
    annotators whose kept-aside answers it counts back: two refusals at one moment may
    deadlock there, which PostgreSQL breaks and `retry_transient` runs again."""
    if conn.dialect.name == "postgresql":
        conn.execute(_ANNOTATOR_LOCK, {"b_study": study_id, "b_annotator": annotator_id})
