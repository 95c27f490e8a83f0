"""The keypress's statements run on the driver directly (store/prepared.py: SQLite's, and
psycopg on PostgreSQL) store and read exactly what SQLAlchemy's execution does, and fail as it
fails."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Table, bindparam, create_engine, event, func, insert, select, text
from sqlalchemy.exc import IntegrityError, OperationalError

from annotate.protocol.studies import add_annotator
from annotate.store.engine import StorageError, read_connection, write_connection
from annotate.store.models import Label, StudyItem
from annotate.store.prepared import Prepared, run_together
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study

label: Table = Label.__table__  # type: ignore[attr-defined]
COLUMNS = ["study_id", "item_id", "annotator_id", "phase", "value", "flag", "revisions"]
INSERT = Prepared(insert(label), [*COLUMNS, "shown_at", "comment"])
READ = Prepared(
    select(label.c.value, label.c.shown_at, label.c.flag, label.c.comment).where(
        label.c.study_id == bindparam("b_study"), label.c.item_id == bindparam("b_item")
    )
)


def _store(url: str, tmp_path: Path):
    ws = open_workspace(url, create=True)
    ctx = rte_study(ws.engine, tmp_path, test=3)
    annotator_id = add_annotator(ws.engine, "ana").id
    with ws.engine.connect() as conn:
        items = conn.execute(
            select(StudyItem.item_id).where(StudyItem.study_id == ctx.id, StudyItem.phase == "test")
        ).scalars()
        item_ids = sorted(items)
    yield ws.engine, ctx.id, item_ids, annotator_id
    ws.engine.dispose()


@pytest.fixture
def store(store_url: str, tmp_path: Path):
    """A study of three test items and an annotator, on each backend in turn."""
    yield from _store(store_url, tmp_path)


@pytest.fixture
def sqlite_store(tmp_path: Path):
    yield from _store(str(tmp_path / "p.db"), tmp_path)


def row(study_id: int, item_id: int, annotator_id: int, **more: object) -> dict[str, object]:
    return {
        "study_id": study_id,
        "item_id": item_id,
        "annotator_id": annotator_id,
        "phase": "test",
        "value": {"score": 2.5, "note": "ünïcode"},
        "flag": True,
        "revisions": 0,
        "shown_at": datetime(
            2026, 1, 2, 3, 4, 5, tzinfo=UTC
        ),  # whole seconds: SQLAlchemy writes .000000
        "comment": None,
        **more,
    }


def test_a_row_stored_on_the_driver_reads_back_as_sqlalchemy_stored_it(store):
    engine, study_id, (first, second, *_), annotator_id = store
    with write_connection(engine) as conn:
        INSERT.run(conn, row(study_id, first, annotator_id))
        conn.execute(insert(label), row(study_id, second, annotator_id))
    with engine.connect() as conn, conn.begin():
        stored = [
            tuple(r) for r in conn.execute(select(label.c.shown_at, label.c.value, label.c.flag))
        ]
        raw = conn.exec_driver_sql("SELECT shown_at, value, flag FROM label").all()
        fast = READ.run(conn, {"b_study": study_id, "b_item": first}).all()
        slow = conn.execute(READ.statement, {"b_study": study_id, "b_item": first}).all()
    assert stored[0] == stored[1]  # what the ORM reads: the same for both rows
    assert raw[0] == raw[1]  # and the same text in the file
    assert [tuple(r) for r in fast] == [tuple(r) for r in slow]
    assert fast[0].value == {"score": 2.5, "note": "ünïcode"}
    assert fast[0].shown_at == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC) and fast[0].flag is True


def test_a_read_outside_a_transaction_reads_what_sqlalchemy_reads(store):
    """A read's first statement on a `read_connection`: on PostgreSQL (autocommit, nothing to
    begin) it opens no transaction; on SQLite it begins the read's one transaction first, as
    SQLAlchemy would (the engine's begin hook: BEGIN on the driver), so the read's statements
    see one snapshot of the store."""
    engine, study_id, (first, *_), annotator_id = store
    with write_connection(engine) as conn:
        INSERT.run(conn, row(study_id, first, annotator_id))
    with read_connection(engine) as conn:
        fast = READ.run(conn, {"b_study": study_id, "b_item": first}).all()
        began = conn.in_transaction()
        if engine.dialect.name == "sqlite":
            assert conn.connection.dbapi_connection.in_transaction  # BEGIN reached SQLite
        slow = conn.execute(READ.statement, {"b_study": study_id, "b_item": first}).all()
    assert [tuple(r) for r in fast] == [tuple(r) for r in slow]
    assert fast[0].value == {"score": 2.5, "note": "ünïcode"} and fast[0].flag is True
    assert began is (engine.dialect.name == "sqlite")


def test_a_second_label_for_the_same_item_fails_as_sqlalchemy_fails_and_stores_nothing(store):
    engine, study_id, (first, *_), annotator_id = store
    with write_connection(engine) as conn:
        INSERT.run(conn, row(study_id, first, annotator_id))
    with pytest.raises(IntegrityError), write_connection(engine) as conn:
        INSERT.run(conn, row(study_id, first, annotator_id, comment="again"))
    with engine.connect() as conn:
        assert conn.execute(select(label.c.comment)).scalars().all() == [None]


COUNT = Prepared(
    select(func.count()).select_from(label).where(label.c.study_id == bindparam("b_study"))
)


def test_statements_run_together_run_in_order_and_return_what_each_returns_alone(store):
    """On PostgreSQL in one round trip (with the transaction's BEGIN); each statement still
    reads what the ones before it wrote."""
    engine, study_id, (first, second, *_), annotator_id = store
    with write_connection(engine) as conn:
        together = run_together(
            conn,
            (COUNT, {"b_study": study_id}),
            (INSERT, row(study_id, first, annotator_id)),
            (COUNT, {"b_study": study_id}),
            (READ, {"b_study": study_id, "b_item": first}),
        )
        apart = READ.run(conn, {"b_study": study_id, "b_item": first})
    before, inserted, after, read = together
    assert (before.scalar(), inserted.rowcount, after.scalar()) == (0, 1, 1)
    assert [tuple(r) for r in read.all()] == [tuple(r) for r in apart.all()]
    assert read.first().value == {"score": 2.5, "note": "ünïcode"} and read.first().flag is True
    with read_connection(engine) as conn:  # committed, and a read runs them together too
        counted, again = run_together(
            conn, (COUNT, {"b_study": study_id}), (READ, {"b_study": study_id, "b_item": second})
        )
    assert (counted.scalar(), again.all()) == (1, [])


def test_a_failure_among_statements_run_together_undoes_them_all(store):
    """A label stored twice fails as SQLAlchemy fails (IntegrityError), and the transaction's
    other writes, sent with it, are not stored."""
    engine, study_id, (first, second, *_), annotator_id = store
    with write_connection(engine) as conn:
        INSERT.run(conn, row(study_id, first, annotator_id))
    with pytest.raises(IntegrityError), write_connection(engine) as conn:
        run_together(
            conn,
            (INSERT, row(study_id, second, annotator_id)),
            (INSERT, row(study_id, first, annotator_id, comment="again")),
            (COUNT, {"b_study": study_id}),
        )
    with engine.connect() as conn:
        stored = conn.execute(select(label.c.item_id, label.c.comment)).all()
    assert [tuple(r) for r in stored] == [(first, None)]
    with write_connection(engine) as conn:  # the connection is usable again
        (inserted,) = run_together(conn, (INSERT, row(study_id, second, annotator_id)))
    assert inserted.rowcount == 1


def test_a_store_that_refuses_writes_says_so_in_its_own_words(sqlite_store):
    engine, study_id, (first, *_), annotator_id = sqlite_store
    with pytest.raises(StorageError, match="read-only"), write_connection(engine) as conn:
        conn.connection.driver_connection.execute("PRAGMA query_only=ON")
        try:
            INSERT.run(conn, row(study_id, first, annotator_id))
        finally:
            conn.connection.driver_connection.execute("PRAGMA query_only=OFF")


def test_a_listener_on_the_statements_sees_every_one_and_can_refuse_it(store):
    engine, study_id, (first, *_), annotator_id = store
    seen: list[str] = []

    def listen(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        seen.append(statement.split()[0])

    event.listen(engine, "before_cursor_execute", listen)
    try:
        with write_connection(engine) as conn:
            INSERT.run(conn, row(study_id, first, annotator_id))
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    assert seen[-1] == "INSERT"  # (after SQLite's BEGIN; psycopg sends its own unseen)


def test_an_insert_given_other_columns_than_prepared_goes_through_sqlalchemy(store):
    engine, study_id, (first, *_), annotator_id = store
    fewer = {k: v for k, v in row(study_id, first, annotator_id).items() if k != "comment"}
    with write_connection(engine) as conn:
        INSERT.run(conn, fewer)
    with engine.connect() as conn:
        assert conn.execute(select(label.c.item_id)).scalars().all() == [first]


RETURNING = Prepared(
    insert(label).returning(label.c.id, label.c.value), [*COLUMNS, "shown_at", "comment"]
)


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_on_postgresql_what_an_insert_returns_comes_back_as_sqlalchemy_returns_it(store):
    engine, study_id, (first, second, *_), annotator_id = store
    with write_connection(engine) as conn:
        fast = RETURNING.run(conn, row(study_id, first, annotator_id)).first()
        slow = conn.execute(RETURNING.statement, row(study_id, second, annotator_id)).first()
    assert fast.value == slow.value == {"score": 2.5, "note": "ünïcode"}
    assert fast.id != slow.id
    with engine.connect() as conn:
        assert sorted(conn.execute(select(label.c.id)).scalars()) == sorted([fast.id, slow.id])


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_on_postgresql_a_lost_server_connection_is_dropped_and_the_next_write_goes_through(
    store,
):
    engine, study_id, (first, *_), annotator_id = store
    with pytest.raises(OperationalError) as lost, write_connection(engine) as conn:
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar()
        killer = create_engine(engine.url, isolation_level="AUTOCOMMIT")
        with killer.connect() as other:
            other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        killer.dispose()
        try:
            INSERT.run(conn, row(study_id, first, annotator_id))
        finally:
            dropped = conn.invalidated  # as SQLAlchemy's execution leaves it
    assert dropped and lost.value.connection_invalidated
    with write_connection(engine) as conn:  # the pool hands out a working connection
        INSERT.run(conn, row(study_id, first, annotator_id))
    with engine.connect() as conn:
        assert conn.execute(select(label.c.item_id)).scalars().all() == [first]
