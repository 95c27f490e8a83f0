"""The keypress's statements, run on the driver itself, without SQLAlchemy's execution machinery.

A test answer on a SQLite file is a write transaction of about six small statements that hold
the writers' turn (every writing process waits for it). SQLite runs each in 5-15 microseconds;
SQLAlchemy's `Connection.execute` spends 30-40 more in Python around each one (the compiled
cache's key, the execution context, the parameters' processing, the result's metadata), so with
five annotator processes the turn was held more for Python than for SQLite (bench_concurrency).
On PostgreSQL (psycopg) the same machinery costs 50-60 microseconds a statement, a seventh of
the page's own CPU per crowd answer. SQLAlchemy has no lighter public path for a statement that
is run millions of times with the same shape, so this module does what it would do, once: it
compiles the statement for the dialect (with positional parameters: psycopg takes `%s` as well
as SQLAlchemy's `%(name)s`), works out the bound parameters' order, their fixed values and their
type processors (SQLAlchemy's own: datetimes and JSON are stored exactly as the ORM stores
them), and at run time hands the driver the SQL string and a tuple. On PostgreSQL psycopg then
prepares the statement on the server after a few runs, as it does for SQLAlchemy's.

Everything else goes through SQLAlchemy as before:
- other databases and drivers;
- ORM sessions;
- a statement whose compiled form has anything this does not reproduce (Python-side column
  defaults, expanding IN lists, literal-rendered values), or an insert given other columns;
- RETURNING on SQLite (none of its hot statements use it);
- a connection with cursor-execute listeners (tests that count statements or inject a full
  disk): they see every statement, as SQLAlchemy runs it.

A connection with no transaction yet is begun first, as SQLAlchemy's execute would begin it
(the engine's begin hook), unless it runs in autocommit (a read on PostgreSQL:
`read_connection`): a page's reads are mostly one or two statements, and the first ran through
SQLAlchemy's execution before.

A driver error is raised as SQLAlchemy raises it (the same DBAPIError subclass, so callers' and
`_retry`'s rules hold), after the store's own translation (store.failures), which is what the
engine's handle_error hook does; a lost server connection is invalidated, as SQLAlchemy does."""

from __future__ import annotations

import copy
import weakref
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, Dialect
from sqlalchemy.orm import Session
from sqlalchemy.sql import ClauseElement

from annotate.store.failures import raised_as, watched


@dataclass(frozen=True)
class _Compiled:
    sql: str
    template: tuple[Any, ...]
    """The positional parameters, with the statement's own values in place."""
    given: tuple[int, ...]
    """The places of the caller's values, in the order `get` returns them."""
    get: Callable[[Mapping[str, Any]], Any]
    processes: tuple[tuple[int, Callable[[Any], Any]], ...]
    """Type processors (SQLAlchemy's for the dialect) by place."""
    results: tuple[Callable[[Any], Any] | None, ...]
    row: Any  # the rows' named tuple, or None: the statement returns no rows

    def arguments(self, params: Mapping[str, Any]) -> list[Any]:
        """The driver's positional parameters for the caller's `params`."""
        args = list(self.template)
        if self.given:
            values = self.get(params)
            if len(self.given) == 1:
                values = (values,)
            for slot, value in zip(self.given, values, strict=True):
                args[slot] = value
        for slot, process in self.processes:
            args[slot] = process(args[slot])
        return args

    def result(self, conn: Connection, cursor: Any, args: Sequence[Any]) -> Result:
        """The statement's rows (named tuples, through the type processors) and rowcount."""
        try:
            rows = cursor.fetchall() if self.row is not None else []
        except conn.dialect.loaded_dbapi.Error as exc:
            raise raised_as(conn, self.sql, args, exc) from exc
        if rows:
            make, results = self.row._make, self.results
            rows = [
                make(v if p is None else p(v) for v, p in zip(row, results, strict=True))
                for row in rows
            ]
        return Result(rows, cursor.rowcount)


class Result:
    """What the callers here use of a CursorResult: its rows (named tuples) and rowcount."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows, self.rowcount = rows, rowcount

    def first(self) -> Any:
        return self._rows[0] if self._rows else None

    def scalar(self) -> Any:
        return self._rows[0][0] if self._rows else None

    def all(self) -> list[Any]:
        return self._rows


class Prepared:
    """A statement to run many times: `run(conn, params)` is `conn.execute(statement, params)`
    (for the parts of the result used here), faster on SQLite. `columns`: an INSERT's columns,
    all given by every caller."""

    def __init__(self, statement: ClauseElement, columns: Sequence[str] | None = None) -> None:
        self.statement = statement
        self.columns = list(columns) if columns is not None else None
        self._compiled: dict[str, _Compiled | None] = {}

    def run(self, conn: Connection | Session, params: Mapping[str, Any]) -> Any:
        """`conn.execute(statement, params)`; an ORM session's goes through it as before."""
        if isinstance(conn, Session):
            return conn.execute(self.statement, params)
        compiled = self._on_driver(conn, params)
        if compiled is None:
            return conn.execute(self.statement, params)
        args = compiled.arguments(params)
        cursor = on_driver(conn, compiled.sql, args)
        return compiled.result(conn, cursor, args)

    def _on_driver(self, conn: Connection, params: Mapping[str, Any]) -> _Compiled | None:
        """The compiled form to run on the driver, `conn` begun as SQLAlchemy would begin it;
        None: through SQLAlchemy."""
        compiled = self._for(conn)
        if compiled is None or (self.columns is not None and len(params) != len(self.columns)):
            return None
        if not conn.in_transaction() and not _autocommit(conn):
            # What SQLAlchemy's execute would do first (its autobegin, with the engine's begin
            # hook); a read_connection on PostgreSQL runs in autocommit: nothing to begin.
            conn.begin()
        return compiled

    def _for(self, conn: Connection) -> _Compiled | None:
        """The compiled form to run on `conn`, or None: through SQLAlchemy."""
        dialect = conn.dialect
        if (dialect.name, dialect.driver) not in _DRIVERS or watched(conn):
            return None
        try:
            return self._compiled[dialect.name]
        except KeyError:
            compiled = self._compiled[dialect.name] = self._compile(_positional(dialect))
            return compiled

    def _compile(self, dialect: Dialect) -> _Compiled | None:
        compiled: Any = self.statement.compile(dialect=dialect, column_keys=self.columns)
        if (
            not compiled.positional
            or compiled.insert_prefetch
            or compiled.update_prefetch
            or compiled.literal_execute_params
            or compiled.post_compile_params
        ):
            return None
        template: list[Any] = []
        given: list[int] = []
        names: list[str] = []
        processes = []
        for slot, name in enumerate(compiled.positiontup):
            bind = compiled.binds[name]
            caller = bind.required or bind.callable or (self.columns and name in self.columns)
            template.append(None if caller else bind.effective_value)
            if caller:
                given.append(slot)
                names.append(name)
            process = bind.type.dialect_impl(dialect).bind_processor(dialect)
            if process is not None:
                processes.append((slot, process))
        if dialect.name == "sqlite" and getattr(self.statement, "_returning", ()):
            return None
        # A query's columns, or what an INSERT, UPDATE or DELETE returns (none without RETURNING)
        columns = list(getattr(self.statement, "exported_columns", ()))
        results = tuple(
            c.type.dialect_impl(dialect).result_processor(dialect, None) for c in columns
        )
        row = namedtuple("Row", [c.key for c in columns], rename=True) if columns else None
        return _Compiled(
            compiled.string,
            tuple(template),
            tuple(given),
            itemgetter(*names) if names else dict,
            tuple(processes),
            results,
            row,
        )


def run_together(conn: Connection, *runs: tuple[Prepared, Mapping[str, Any]]) -> list[Any]:
    """Run statements whose parameters need none of the others' results, in this order, and
    their results: `[statement.run(conn, params) for statement, params in runs]`.

    On PostgreSQL they go to the server in one round trip (psycopg's pipeline mode), with the
    transaction's BEGIN when it is the first: the server still runs them one after the other,
    each reading what the ones before it wrote and locked, as if sent one by one. What it
    saves is waiting: a transaction of BEGIN, two short statements and COMMIT took 380-450
    microseconds against 470-520 sent one by one (the server's CPU 105-125 against 125-145;
    the page's the same, psycopg's pipeline costing what the round trips saved), and under
    load every round trip waits for a processor again, at both ends. SQLite runs in the
    process: nothing to save, so they run one by one."""
    if conn.dialect.name != "postgresql" or len(runs) < 2:
        return [statement.run(conn, params) for statement, params in runs]
    compiled = [statement._on_driver(conn, params) for statement, params in runs]
    if any(c is None for c in compiled):
        return [statement.run(conn, params) for statement, params in runs]
    calls = [(c, c.arguments(params)) for c, (_, params) in zip(compiled, runs, strict=True)]
    cursors = _cursors(conn, len(calls))
    driver = conn.connection.driver_connection
    assert driver is not None
    try:
        with driver.pipeline():
            for cursor, (c, args) in zip(cursors, calls, strict=True):
                cursor.execute(c.sql, args)
    except conn.dialect.loaded_dbapi.Error as exc:
        sql = ";\n".join(c.sql for c, _ in calls)
        raise raised_as(conn, sql, tuple(a for _, args in calls for a in args), exc) from exc
    return [c.result(conn, cursor, args) for cursor, (c, args) in zip(cursors, calls, strict=True)]


_DRIVERS = {("sqlite", "pysqlite"), ("postgresql", "psycopg")}
"""The drivers this runs statements on: SQLite's own module, and psycopg 3."""

_POSITIONAL: weakref.WeakKeyDictionary[Dialect, Dialect] = weakref.WeakKeyDictionary()


def _positional(dialect: Dialect) -> Dialect:
    """`dialect`, compiling positional parameters: SQLite's already does (qmark); psycopg's
    SQLAlchemy dialect names them (pyformat), and a copy of it numbers them as `%s` (format,
    which psycopg takes too, and SQLAlchemy's PostgreSQL compiler renders for pg8000)."""
    if dialect.positional:
        return dialect
    try:
        return _POSITIONAL[dialect]
    except KeyError:
        twin = copy.copy(dialect)
        twin.paramstyle, twin.positional = "format", True
        return _POSITIONAL.setdefault(dialect, twin)


def _autocommit(conn: Connection) -> bool:
    """Whether `conn` runs each statement in a transaction of its own (read_connection on
    PostgreSQL): nothing to begin, so its first statement may go to the driver as well."""
    return conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT"


def on_driver(conn: Connection, sql: str, args: tuple[Any, ...] = ()) -> Any:
    """Run `sql` on `conn`'s driver connection itself (its cursor), a driver error raised as
    SQLAlchemy would raise it. The caller has made sure nothing listens (`watched`).

    The cursor is kept with the driver connection and used again: psycopg spends some 13
    microseconds making a cursor (measured, a short statement through Prepared.run: 16 against
    24 microseconds), and a crowd answer runs four or five. Every caller here reads
    its rows before the next statement, so one cursor a connection is all they need."""
    cursor = _cursors(conn, 1)[0]
    try:
        return cursor.execute(sql, args)
    except conn.dialect.loaded_dbapi.Error as exc:
        raise raised_as(conn, sql, args, exc) from exc


def _cursors(conn: Connection, count: int) -> list[Any]:
    """`count` driver cursors of `conn`, kept with its driver connection and used again (a
    statement's results stay in its cursor until the next statement run on it)."""
    fairy = conn.connection
    driver = fairy.driver_connection
    assert driver is not None
    kept = fairy.info.get(_CURSORS)
    if kept is None or kept[0].connection is not driver:
        kept = fairy.info[_CURSORS] = []
    while len(kept) < count:
        kept.append(driver.cursor())
    return kept[:count]


_CURSORS = "annotate.prepared.cursors"
"""The driver cursors on_driver and run_together keep in a pooled connection's `info` (which
SQLAlchemy clears when it closes or replaces the driver connection)."""
