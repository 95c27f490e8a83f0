"""Open the store the user means: `--db URL`, else $ANNOTATE_DB, else the project file's `db`
(annotate/settings.py), else ./annotate.db."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from annotate.errors import UserError
from annotate.settings import settings
from annotate.store.engine import make_engine, normalise_url, read_only_url, until_reachable
from annotate.store.schema import create_schema, read_revision, require_current
from annotate.text import redacted_url

DEFAULT_URL = "sqlite:///annotate.db"


def resolve_url(db: str | None) -> str:
    chosen = db or settings().db or DEFAULT_URL
    if not chosen.strip():  # `init` made a store named " " in the current folder
        raise UserError(
            f"the store {chosen!r} (--db or ANNOTATE_DB) is blank: give a SQLite path or a "
            "database URL"
        )
    return normalise_url(chosen)


@dataclass
class Workspace:
    url: str
    engine: Engine

    @property
    def shown(self) -> str:
        """The store's URL for output (tables, JSON, messages): its password hidden."""
        return shown_url(self.url)


def shown_url(url: str) -> str:
    """`url` with its password as ***, and otherwise as the user wrote it (SQLAlchemy's own
    rendering percent-encodes a path's non-ASCII letters): what a command may print."""
    return redacted_url(url)


def _create_private_file(database: str | None) -> None:
    """A new SQLite store is made mode 0600 (its -wal and -shm files follow its mode)."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if path.exists() or not path.parent.is_dir():
        return  # an existing store keeps its mode; a missing folder is reported later
    from annotate.store.backup import create_private

    with contextlib.suppress(FileExistsError):  # made meanwhile by another process
        create_private(path)


def no_store_error(url: str, database: str | None) -> UserError:
    """The error for a store that is not there. A relative SQLite path (the default
    `annotate.db`) names the folder it was looked for in: run from the wrong folder, the
    command says where it looked."""
    where = ""
    if database and database != ":memory:" and not Path(database).is_absolute():
        where = f" in {Path.cwd()}"
    return UserError(
        f"no annotate store at {shown_url(url)}{where}; run `annotate init` (or import data)"
    )


def open_workspace(
    db: str | None = None, *, create: bool = False, any_schema: bool = False
) -> Workspace:
    """Open (and with `create`, initialise) the store. A missing store is an error unless
    `create`: a mistyped --db should not silently start an empty one. A store at another
    schema is refused (annotate/store/schema.py) unless `any_schema` (backup, migrate)."""
    settings()  # a bad ANNOTATE_* value stops here, before a new store file is made
    url = resolve_url(db)
    engine = make_engine(url)
    if create and engine.dialect.name == "sqlite":
        _create_private_file(engine.url.database)
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        there = bool(database) and database != ":memory:" and Path(str(database)).exists()
        if not create and database and database != ":memory:" and not there:
            raise no_store_error(url, str(database))
        # (A command that may create the store opens an existing one the same way.)
        read_only = read_only_url(Path(str(database))) if there else None
        if read_only is not None:
            # Reading works on read-only media or in a read-only folder; a command that writes
            # gets SQLite's "read-only" error, made into one clear line (store/engine.py).
            engine.dispose()
            engine = make_engine(read_only)
    # A database server that is restarting is waited for (within RECONNECT_SECONDS; one
    # that has not answered at all, within FIRST_CONTACT_SECONDS: store/engine.py).
    exists = until_reachable(
        engine,
        lambda: read_revision(engine) is not None if any_schema else require_current(engine),
        first_contact=True,
    )
    if not exists:
        if not create:
            engine.dispose()
            raise no_store_error(
                url, engine.url.database if engine.dialect.name == "sqlite" else None
            )
        create_schema(engine)
    return Workspace(url=url, engine=engine)
