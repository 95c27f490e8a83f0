"""A migration fixture (a SQLite store an earlier release made) on the test's backend: the
file copied, or on PostgreSQL the schema as that release left it with the fixture's rows."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from sqlalchemy import MetaData, create_engine, insert, text

from annotate.store import schema
from annotate.store.engine import make_engine


def earlier_store(
    store: Path,
    revision: str,
    tables: Sequence[str],
    backend: str,
    new_store_url: Callable[[], str],
    tmp_path: Path,
    *,
    unstamped: bool = False,
) -> str:
    """`store` on `backend`: on SQLite a copy of the file; on PostgreSQL a new store migrated
    to `revision` (the schema that release wrote), then every row of `tables` (in the order
    their foreign keys need). `unstamped`: without Alembic's revision table, as 0.1.0 left a
    store."""
    if backend == "sqlite":
        path = tmp_path / store.name
        shutil.copy(store, path)
        return f"sqlite:///{path}"
    from alembic import command

    url = new_store_url()
    engine = make_engine(url)
    source = create_engine(f"sqlite:///{store}")
    with engine.begin() as conn, source.connect() as old:
        command.upgrade(schema._alembic_config(conn), revision)
        if unstamped:
            conn.execute(text("DROP TABLE alembic_version"))
        meta = MetaData()
        meta.reflect(conn)
        for name in tables:
            table = meta.tables[name]
            copied = [dict(r._mapping) for r in old.execute(text(f"SELECT * FROM {name}"))]
            for row in copied:
                for column in table.columns:
                    if str(column.type) == "JSON" and isinstance(row[column.name], str):
                        row[column.name] = json.loads(row[column.name])
                    elif str(column.type) == "BOOLEAN" and isinstance(row[column.name], int):
                        row[column.name] = bool(row[column.name])
            if copied:
                conn.execute(insert(table), copied)
            if "id" in table.columns:
                conn.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                        f"(SELECT coalesce(MAX(id), 0) + 1 FROM {name}), false)"
                    )
                )
    source.dispose()
    engine.dispose()
    return url
