"""Which schema a store has, and bringing it to the newest one (`annotate migrate`).

The schema is versioned by the Alembic scripts in `annotate/store/migrations/versions/`,
numbered 0001, 0002, ...: revision N is "schema N". Alembic keeps a store's revision in its
`alembic_version` table; `meta.schema_version` mirrors the number, because that is all annotate
0.1.0 (schema 1, before Alembic) wrote and reads: it refuses any other number, so an old binary
never writes into an upgraded store.

Every command checks the revision with one cheap query (Alembic itself is imported only to
create or migrate a store). A store one or more revisions behind is refused with one line that
names `annotate migrate` and the backup it will write; a store from a newer annotate is refused
with both versions named.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import DBAPIError, OperationalError

from annotate.errors import UserError
from annotate.store.engine import (
    describe_store,
    is_disconnect,
    refusal,
    refused,
    unreachable,
)

SCHEMA_RELEASES = {
    "0001": "0.1.0",
    "0002": "0.2.0",
    "0003": "0.2.0",
    "0004": "0.2.0",
    "0005": "0.2.0",
    "0006": "0.2.0",
    "0007": "0.2.0",
    "0008": "0.2.0",
    "0009": "0.3.0",
    "0010": "0.3.0",
    "0011": "0.3.0",
    "0012": "0.5.0",
    "0013": "0.5.0",
    "0014": "0.5.0",
    "0015": "0.5.0",
    "0016": "0.5.0",
    "0017": "0.5.0",
    "0018": "0.5.0",
    "0019": "0.5.0",
    "0020": "0.5.0",
}
"""Every revision, oldest first, with the first annotate release that wrote it (for messages).
A migration script adds its line here; a test checks this against the scripts."""
SCHEMA_REVISIONS = tuple(SCHEMA_RELEASES)
SCHEMA_HEAD = SCHEMA_REVISIONS[-1]
MIGRATIONS = Path(__file__).parent / "migrations"


class StoreNeedsMigration(UserError):
    """The store is at an older schema: `annotate migrate` upgrades it."""


def this_release() -> str:
    from annotate import __version__

    return __version__


def _release(revision: str) -> str:
    return SCHEMA_RELEASES.get(revision, "a newer annotate")


def read_revision(engine: Engine) -> str | None:
    """The store's revision, or None for an empty database. A database that is not an annotate
    store, or whose version record is damaged, is a UserError."""
    return _read_revision(engine, _table_names(engine))


def _table_names(engine: Engine) -> set[str]:
    try:
        return set(inspect(engine).get_table_names())
    except (OperationalError, DBAPIError) as exc:
        if is_disconnect(exc):
            raise unreachable(engine, exc) from None
        if (said := refusal(exc)) is not None:  # a wrong URL: said with what to check
            raise refused(engine, said) from None
        raise UserError(f"cannot open store {describe_store(engine)}: {exc.orig}") from None


def _read_revision(engine: Engine, names: set[str]) -> str | None:
    if not names:
        return None
    if "meta" not in names:
        raise UserError(f"{describe_store(engine)} is not an annotate store (it has other tables)")
    with engine.connect() as conn:
        if "alembic_version" in names:
            rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
            if len(rows) == 1:
                return str(rows[0])
            raise UserError(
                f"the store {describe_store(engine)} records {len(rows)} schema revisions "
                "instead of one (alembic_version); restore a backup"
            )
        found = conn.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).scalar()
    if found == "1":
        return "0001"  # annotate 0.1.0: the version in meta only, before Alembic
    raise UserError(
        f"the store {describe_store(engine)} has an unreadable schema version ({found!r}): it was "
        "not written by annotate, or was damaged; restore a backup"
    )


def backup_path(engine: Engine, revision: str) -> Path | None:
    """Where `annotate migrate` will copy a SQLite store before changing it (a free name
    beside the store); None for PostgreSQL, which migrates inside one transaction instead."""
    if engine.dialect.name != "sqlite":
        return None
    # A store opened for reading (engine.read_only_url) has a `file:` URI as its database.
    store = Path((engine.url.database or "annotate.db").removeprefix("file:"))
    base = f"{store.stem}-schema{int(revision)}-backup"
    candidate = store.with_name(base + store.suffix)
    n = 2
    while candidate.exists():
        candidate = store.with_name(f"{base}-{n}{store.suffix}")
        n += 1
    return candidate


def require_current(engine: Engine) -> bool:
    """True when the store is at the newest schema, False when the database is empty. An older
    store raises StoreNeedsMigration, a newer one a UserError naming both versions."""
    names = _table_names(engine)  # one listing serves both checks below
    revision = _read_revision(engine, names)
    if revision is None:
        return False
    if revision == SCHEMA_HEAD:
        _require_tables(engine, names)
        return True
    if revision in SCHEMA_REVISIONS:
        raise StoreNeedsMigration(needs_migration_message(engine, revision))
    raise UserError(
        f"the store {describe_store(engine)} has schema {_number(revision)} (written by "
        f"{_written_by(engine)}); this is annotate {this_release()}, which reads schema up to "
        f"{_number(SCHEMA_HEAD)}: upgrade annotate to use this store"
    )


CURATION_PREFIX = "curation_"
"""The curation tables' names begin so (store/curation_models.py; a test checks it)."""


def _require_tables(engine: Engine, names: set[str]) -> None:
    """A current store has every table `annotate init` makes (a dropped table would otherwise
    surface as a traceback in the middle of some command). The curation tables are exempt:
    curation creates them when first used (so their models need not be imported here)."""
    from sqlmodel import SQLModel

    from annotate.store import models

    assert models  # the import registers the tables on SQLModel.metadata
    expected = {name for name in SQLModel.metadata.tables if not name.startswith(CURATION_PREFIX)}
    missing = sorted(expected - names)
    if missing:
        raise UserError(
            f"the store {describe_store(engine)} is damaged: it lacks the table(s) "
            f'{", ".join(missing)}. Restore it from a backup (docs: "Running a study", '
            '"Recovering from a backup").'
        )


def needs_migration_message(engine: Engine, revision: str) -> str:
    backup = backup_path(engine, revision)
    how = (
        f"it first backs the store up to {backup}"
        if backup is not None
        else "it upgrades in one transaction; take a pg_dump first if you want a copy"
    )
    return (
        f"the store {describe_store(engine)} has schema {_number(revision)} (written by "
        f"{_written_by(engine, revision)}); annotate {this_release()} needs schema "
        f"{_number(SCHEMA_HEAD)}: run `annotate migrate` ({how})"
    )


def _number(revision: str) -> str:
    """A revision as the messages give it: 20, not 0020 (one that is no number as it is)."""
    return str(int(revision)) if revision.isdigit() else revision


def _written_by(engine: Engine, revision: str | None = None) -> str:
    """Which annotate last set the store's schema, as its meta record says: "annotate 0.4.2".
    When that is this release's number, a development build wrote it: "an earlier build of
    annotate 0.5.0" for an older schema, "a later build of annotate 0.5.0" for a newer one
    (`revision` None), not "written by annotate 0.5.0; this is annotate 0.5.0 ... upgrade".
    A store too old to say (0.1.0's): the release that first wrote `revision`; a newer store
    that does not say: "a newer annotate"."""
    with engine.connect() as conn:
        try:
            found = conn.execute(
                text("SELECT value FROM meta WHERE key = 'annotate_version'")
            ).scalar()
        except (OperationalError, DBAPIError):
            found = None  # no meta record to read
    if found and found == this_release():
        return f"{'an earlier' if revision is not None else 'a later'} build of annotate {found}"
    if found:
        return f"annotate {found}"
    return f"annotate {_release(revision)}" if revision is not None else "a newer annotate"


# --- creating and migrating (these import Alembic) ---------------------------------------------


def _alembic_config(conn: Connection):  # -> alembic.config.Config
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    return config


def _record_release(conn: Connection) -> None:
    """meta.annotate_version: which release last created or migrated the schema (named when a
    store is too new for an older annotate)."""
    conn.execute(text("DELETE FROM meta WHERE key = 'annotate_version'"))
    conn.execute(
        text("INSERT INTO meta (key, value) VALUES ('annotate_version', :v)"),
        {"v": this_release()},
    )


def create_schema(engine: Engine) -> None:
    """The newest schema, straight from the table models (what `annotate init` does), stamped
    with the newest revision."""
    from alembic import command
    from sqlmodel import SQLModel

    from annotate.store import curation_models, models

    assert models and curation_models  # the imports register the tables on SQLModel.metadata
    with engine.connect() as conn:
        conn = conn.execution_options(sqlite_immediate=True)
        with conn.begin():
            SQLModel.metadata.create_all(conn)
            conn.execute(
                text("INSERT INTO meta (key, value) VALUES ('schema_version', :v)"),
                {"v": str(int(SCHEMA_HEAD))},
            )
            _record_release(conn)
            command.stamp(_alembic_config(conn), SCHEMA_HEAD)


@dataclass(frozen=True)
class Migration:
    store: str
    from_revision: str
    to_revision: str
    backup: Path | None
    notes: tuple[str, ...] = ()
    """What a migration changed in the data besides the schema, in words (schema 17: curator
    names merged, and the duplicate reviews that removed)."""

    @property
    def changed(self) -> bool:
        return self.from_revision != self.to_revision


LOCK_NOTICE_MS = 2000
"""How long a PostgreSQL migration waits for a lock another session holds (a table a running
command reads or writes, another `migrate`) before it says that it is waiting, once, and
goes on waiting."""

LOCK_NOT_AVAILABLE = "55P03"
"""PostgreSQL's SQLSTATE for a statement that gave up waiting for a lock (lock_timeout)."""


def migrate_store(engine: Engine, waiting: Callable[[str], None] | None = None) -> Migration:
    """Upgrade the store in place to the newest schema, in one transaction.

    SQLite: the write lock is taken first, then a consistent copy of the store is written beside
    it (nobody can commit between the copy and the migration), foreign keys are off while tables
    are rebuilt and checked before the commit. PostgreSQL: one transaction (its DDL is
    transactional) under an advisory lock, so two `migrate` runs cannot interleave; one that
    waits for another session's lock for LOCK_NOTICE_MS tells `waiting` so (in words), undoes
    what it did and starts again, waiting as long as it takes."""
    from alembic import command

    revision = read_revision(engine)
    if revision is None:
        raise UserError(
            f"no annotate store at {describe_store(engine)}; `annotate init` creates one"
        )
    if revision not in SCHEMA_REVISIONS:
        require_current(engine)  # raises: newer than this annotate
    result = Migration(describe_store(engine), revision, SCHEMA_HEAD, None)
    if revision == SCHEMA_HEAD:
        return result
    sqlite = engine.dialect.name == "sqlite"

    def migrate_in(conn: Connection, lock_timeout_ms: int) -> Migration:
        with conn.execution_options(sqlite_immediate=True).begin():
            if not sqlite:
                conn.execute(text(f"SET LOCAL lock_timeout = {int(lock_timeout_ms)}"))
                conn.execute(text("SELECT pg_advisory_xact_lock(7000000)"))
            # Read again under the lock: another `annotate migrate` may have migrated the
            # store while this one waited for it (its backup would hold the new schema
            # under the old schema's name, and "migrated from schema 1" be said twice).
            now = read_revision_in(conn) or "0001"
            done = replace(result, from_revision=now)
            if now == SCHEMA_HEAD:
                return done
            if sqlite:
                _refuse_dangling_rows(engine, conn)
                done = _backup_first(engine, done)
            if read_revision_in(conn) is None:  # 0.1.0: stamp it as schema 1 first
                command.stamp(_alembic_config(conn), "0001")
            config = _alembic_config(conn)
            config.attributes["notes"] = []  # a migration script says what it changed
            command.upgrade(config, SCHEMA_HEAD)
            done = replace(done, notes=tuple(config.attributes["notes"]))
            if sqlite:
                _check_foreign_keys(conn)
            _record_release(conn)
            return done

    with engine.connect() as conn:
        if sqlite:
            # Outside any transaction (it is a no-op inside one): table rebuilds in batch mode
            # drop and re-create tables that others point at.
            conn.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            if sqlite or waiting is None:
                return migrate_in(conn, 0)
            try:
                return migrate_in(conn, LOCK_NOTICE_MS)
            except OperationalError as exc:
                if getattr(exc.orig, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                    raise
            waiting(
                f"waiting for another session's lock on {result.store} (a command or a page "
                "using the store, or another `annotate migrate`) …"
            )
            return migrate_in(conn, 0)
        finally:
            if sqlite:
                conn.connection.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]


def read_revision_in(conn: Connection) -> str | None:
    """The Alembic revision inside a migration's transaction (None before the first stamp)."""
    if "alembic_version" not in inspect(conn).get_table_names():
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _backup_first(engine: Engine, result: Migration) -> Migration:
    from annotate.store.backup import backup_store

    target = backup_path(engine, result.from_revision)
    assert target is not None
    try:
        backup_store(engine, target)
    except sqlite3.Error as exc:
        raise UserError(f"cannot back the store up to {target}: {exc}; nothing changed") from None
    return Migration(result.store, result.from_revision, result.to_revision, target)


def _refuse_dangling_rows(engine: Engine, conn: Connection) -> None:
    """Rows pointing at nothing before the migration: damage an older annotate's foreign keys
    would have refused (a row written or deleted by hand). `annotate check`, which lists
    them, refuses an old store, so the refusal says which row and what to do instead."""
    if (found := _dangling(conn)) is not None:
        rows, first = found
        raise UserError(
            f"the store {describe_store(engine)} has {rows} pointing at nothing (first: {first}; "
            "`PRAGMA foreign_key_check` in sqlite3 lists them), damage from before this "
            "migration: nothing changed. Restore a backup from before the damage, or delete "
            "those rows, then run `annotate migrate`"
        )


def _check_foreign_keys(conn: Connection) -> None:
    if (found := _dangling(conn)) is not None:
        rows, first = found
        raise UserError(
            f"the migration would leave {rows} pointing at nothing (first: {first}); nothing "
            "changed: the store is as it was (please report this migration failure)"
        )


def _dangling(conn: Connection) -> tuple[str, str] | None:
    """SQLite's rows pointing at nothing, as words: their count ("3 rows") and the first
    (`check`'s words for it); None when there are none."""
    from annotate.store.check import dangling_row
    from annotate.wording import count_of

    broken = conn.execute(text("PRAGMA foreign_key_check")).fetchall()
    if not broken:
        return None
    table, rowid, parent, _ = broken[0]
    return count_of(len(broken), "row"), dangling_row(table, rowid, parent)
