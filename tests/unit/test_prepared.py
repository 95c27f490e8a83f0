"""The keypress's statements run on the SQLite driver directly (store/prepared.py) store and
read exactly what SQLAlchemy's execution does, and fail as it fails."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Table, bindparam, event, insert, select
from sqlalchemy.exc import IntegrityError

from annotate.protocol.studies import add_annotator
from annotate.store.engine import StorageError, write_connection
from annotate.store.models import Label, StudyItem
from annotate.store.prepared import Prepared
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


@pytest.fixture
def store(tmp_path: Path):
    ws = open_workspace(str(tmp_path / "p.db"), create=True)
    ctx = rte_study(ws.engine, tmp_path, test=3)
    annotator_id = add_annotator(ws.engine, "ana").id
    with ws.engine.connect() as conn:
        items = conn.execute(
            select(StudyItem.item_id).where(StudyItem.study_id == ctx.id, StudyItem.phase == "test")
        ).scalars()
        item_ids = sorted(items)
    yield ws.engine, ctx.id, item_ids, annotator_id
    ws.engine.dispose()


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


def test_a_second_label_for_the_same_item_fails_as_sqlalchemy_fails_and_stores_nothing(store):
    engine, study_id, (first, *_), annotator_id = store
    with write_connection(engine) as conn:
        INSERT.run(conn, row(study_id, first, annotator_id))
    with pytest.raises(IntegrityError), write_connection(engine) as conn:
        INSERT.run(conn, row(study_id, first, annotator_id, comment="again"))
    with engine.connect() as conn:
        assert conn.execute(select(label.c.comment)).scalars().all() == [None]


def test_a_store_that_refuses_writes_says_so_in_its_own_words(store):
    engine, study_id, (first, *_), annotator_id = store
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
    assert seen == ["BEGIN", "INSERT"]


def test_an_insert_given_other_columns_than_prepared_goes_through_sqlalchemy(store):
    engine, study_id, (first, *_), annotator_id = store
    fewer = {k: v for k, v in row(study_id, first, annotator_id).items() if k != "comment"}
    with write_connection(engine) as conn:
        INSERT.run(conn, fewer)
    with engine.connect() as conn:
        assert conn.execute(select(label.c.item_id)).scalars().all() == [first]
