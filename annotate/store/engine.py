"""Make a database engine for a store URL, with the settings several annotators need.

SQLite (one host): every connection gets WAL, a busy timeout, synchronous=FULL and foreign keys;
transactions that read then write start with BEGIN IMMEDIATE so the busy timeout can work
(DESIGN.md, "SQLite with several writers"). PostgreSQL (several hosts): the same code, other URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlmodel import Session, SQLModel, select

from annotate.errors import UserError
from annotate.store import models
from annotate.store.models import SCHEMA_VERSION, Meta

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA busy_timeout=5000",
    "PRAGMA synchronous=FULL",
    "PRAGMA foreign_keys=ON",
)


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


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    try:
        engine = create_engine(url, pool_pre_ping=url.startswith("postgresql"))
    except (SQLAlchemyError, ImportError, ValueError) as exc:
        raise UserError(f"cannot use database URL {url!r}: {exc}") from None
    if engine.dialect.name == "sqlite":
        _install_sqlite_hooks(engine)
    return engine


def _describe(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def check_schema(engine: Engine) -> bool:
    """True when the store has our tables at our schema version, False when it is empty.
    Anything else (another version, another program's database) is a UserError."""
    try:
        names = set(inspect(engine).get_table_names())
    except OperationalError as exc:
        raise UserError(f"cannot open store {_describe(engine)}: {exc.orig}") from None
    if not names:
        return False
    if "meta" not in names:
        raise UserError(f"{_describe(engine)} is not an annotate store (it has other tables)")
    with Session(engine) as session:
        row = session.exec(select(Meta).where(Meta.key == "schema_version")).first()
    found = int(row.value) if row else None
    if found != SCHEMA_VERSION:
        raise UserError(
            f"the store {_describe(engine)} has schema version {found}, but this annotate "
            f"reads version {SCHEMA_VERSION}; use the annotate version that wrote it"
        )
    return True


def create_schema(engine: Engine) -> None:
    assert models  # the import registers the tables on SQLModel.metadata
    SQLModel.metadata.create_all(engine)
    with Session(engine) as session:
        if session.get(Meta, "schema_version") is None:
            session.add(Meta(key="schema_version", value=str(SCHEMA_VERSION)))
            session.commit()


@contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """A session whose transaction takes the write lock at its start (BEGIN IMMEDIATE on
    SQLite), commits on success and rolls back on any error."""
    with engine.connect() as conn:
        conn = conn.execution_options(sqlite_immediate=True)
        with Session(bind=conn) as session, conn.begin():
            yield session
            session.flush()


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def ping(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))


def lock_study(session: Session, study_id: int) -> None:
    """Serialise the transactions that hand out or fill a study's test items. SQLite already
    holds the database write lock (BEGIN IMMEDIATE); PostgreSQL takes a transaction-scoped
    advisory lock on the study."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": 7_000_000 + study_id})
