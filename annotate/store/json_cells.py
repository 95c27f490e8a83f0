"""A JSON cell read back as its stored text (SQLite hands JSON columns back as text where a
read asks for it, to decode each distinct text once): the one place such a text is decoded, and
the words for one that is not JSON. SQLite keeps whatever text a hand edited into the file
(PostgreSQL refuses it when written); `annotate check` finds every such cell."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, text

from annotate.errors import UserError


class UnreadableJSON(UserError):
    """A stored JSON cell that is not JSON: one line naming its table, row and column."""


def not_json(table: str, row: object, column: str) -> str:
    """A cell that is not JSON, in words (`annotate check` and every read that meets one)."""
    return f"{table} row {row}: {column} is not JSON"


def loads(raw: str, column: Any, conn: Connection) -> Any:
    """`raw`, a text of `column` (a model's attribute: `Label.value`) read on `conn`, decoded;
    a text that is not JSON is an `UnreadableJSON` naming its row (the first holding it)."""
    try:
        return json.loads(raw)
    except ValueError:
        raise unreadable(raw, column, conn) from None


def unreadable(raw: str, column: Any, conn: Connection) -> UnreadableJSON:
    table = column.table.name
    row = conn.execute(
        text(
            f'SELECT rowid FROM "{table}" WHERE CAST("{column.name}" AS TEXT) = :raw '
            "ORDER BY rowid LIMIT 1"
        ),
        {"raw": raw},
    ).scalar()
    where = not_json(table, "?" if row is None else row, column.name)
    return UnreadableJSON(f"{where} (edited by hand?): `annotate check` lists every such cell")
