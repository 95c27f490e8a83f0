"""Group commit on a SQLite store: writers of one process that arrive together share one
transaction and one commit; each is told its write is done only once it is committed; one
writer's failure is its own; a failed commit reaches every writer of the batch."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, event, text
from sqlmodel import Session

from annotate.store import group_commit
from annotate.store.engine import make_engine, write_connection, write_session, write_transaction

WRITERS = 6


@pytest.fixture
def engine(tmp_path: Path, monkeypatch):
    # The writers of `together` queue while the first one works: however slowly the machine
    # starts their threads, the batch waits for them (it would commit after 20 ms).
    monkeypatch.setattr(group_commit, "GROUP_FOR_AT_MOST_S", 60.0)
    engine = make_engine(f"sqlite:///{tmp_path / 's.db'}")
    with write_connection(engine) as conn:
        conn.execute(text("create table t (n integer primary key)"))
    yield engine
    engine.dispose()


def stored(engine: Engine) -> set[int]:
    """What a separate connection (another process would see the same) reads."""
    db = engine.url.database
    with sqlite3.connect(db) as raw:
        return {n for (n,) in raw.execute("select n from t")}


def wait_until(condition, seconds: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def together(engine: Engine, work, rows=lambda n: {n}) -> dict[int, object]:  # type: ignore[no-untyped-def]
    """WRITERS threads write at once: the first one's work waits until all the others are
    queued behind it, so they form one batch. work(conn, n) runs in writer n's transaction.
    Returns what each writer got: None (acknowledged) or its exception. An acknowledged
    writer's rows (`rows(n)`) were stored when its block returned."""
    outcome: dict[int, object] = {}
    seen: dict[int, bool] = {}
    at_failure.clear()
    queued = threading.Event()

    def writer(n: int) -> None:
        try:
            with write_connection(engine) as conn:
                if n == 0:
                    queued.wait(10)
                work(conn, n)
            seen[n] = rows(n) <= stored(engine)  # durable before acknowledged
            outcome[n] = None
        except Exception as exc:
            outcome[n] = exc
            at_failure[n] = stored(engine)

    first = threading.Thread(target=writer, args=(0,))
    first.start()
    wait_until(lambda: group_commit._GROUPS.of(engine).batch is not None)
    others = [threading.Thread(target=writer, args=(n,)) for n in range(1, WRITERS)]
    for thread in others:
        thread.start()
    wait_until(lambda: group_commit._GROUPS.of(engine).wanting == WRITERS - 1)
    queued.set()
    for thread in (first, *others):
        thread.join(20)
    assert all(seen.values())
    return outcome


at_failure: dict[int, set[int]] = {}
"""What the store held when a writer got its error (filled by `together`)."""


def insert(conn, n: int) -> None:  # type: ignore[no-untyped-def]
    conn.execute(text("insert into t values (:n)"), {"n": n})


def test_writers_arriving_together_share_one_commit_and_all_are_stored(engine):
    before = group_commit.commits(engine)
    outcome = together(engine, insert)
    assert outcome == dict.fromkeys(range(WRITERS))
    assert group_commit.commits(engine) - before == 1
    assert stored(engine) == set(range(WRITERS))


def test_a_failing_writer_rolls_back_its_own_rows_only(engine):
    def work(conn, n: int) -> None:  # type: ignore[no-untyped-def]
        insert(conn, n)
        insert(conn, 100 + n)
        if n == 2:
            raise ValueError("writer 2 changed its mind")

    outcome = together(engine, work)
    assert isinstance(outcome.pop(2), ValueError)
    assert all(result is None for result in outcome.values())
    expected = {n for n in range(WRITERS) if n != 2}
    assert stored(engine) == expected | {100 + n for n in expected}
    # Told once the batch committed: a retry would find the others' rows.
    assert at_failure[2] == stored(engine)


def test_a_writer_hitting_a_constraint_keeps_the_others_work(engine):
    with write_connection(engine) as conn:
        insert(conn, 100)

    def work(conn, n: int) -> None:  # type: ignore[no-untyped-def]
        insert(conn, n)
        insert(conn, 100 if n == 4 else 20 + n)  # writer 4 collides with the stored row

    outcome = together(engine, work, rows=lambda n: {n, 20 + n})
    assert "UNIQUE" in str(outcome.pop(4))
    assert all(result is None for result in outcome.values())
    expected = {n for n in range(WRITERS) if n != 4}
    assert stored(engine) == {100} | expected | {20 + n for n in expected}


def test_a_failed_commit_reaches_every_writer_and_none_is_acknowledged(engine):
    def fail(_conn) -> None:  # type: ignore[no-untyped-def]
        raise sqlite3.OperationalError("disk I/O error")

    event.listen(engine, "commit", fail)
    try:
        outcome = together(engine, insert)
    finally:
        event.remove(engine, "commit", fail)
    assert all("disk I/O error" in str(result) for result in outcome.values())
    assert stored(engine) == set()
    with write_connection(engine) as conn:  # the store works on
        insert(conn, 1)
    assert stored(engine) == {1}


def test_a_writer_alone_commits_at_once(engine):
    """No window: one writer's block returns as soon as its own commit is done."""
    before = group_commit.commits(engine)
    for n in range(3):
        with write_connection(engine) as conn:
            insert(conn, n)
        assert n in stored(engine)
    assert group_commit.commits(engine) - before == 3


def test_many_writers_free_running_commit_fewer_times_than_they_write(engine):
    acknowledged: list[int] = []
    lock = threading.Lock()
    before = group_commit.commits(engine)

    def writer(w: int) -> None:
        for i in range(40):
            n = w * 1000 + i
            with write_connection(engine) as conn:
                insert(conn, n)
            with lock:
                acknowledged.append(n)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(acknowledged) == 320
    assert stored(engine) == set(acknowledged)
    assert group_commit.commits(engine) - before < 320


def test_a_caller_keeps_its_connection_and_reads_the_commit_on_it(engine):
    """write_transaction: the caller writes on the connection it is given (the batch's) and
    reads on its own afterwards, seeing what was committed."""
    with engine.connect() as conn:
        with write_transaction(engine, conn) as on:
            insert(on, 7)
        assert conn.execute(text("select count(*) from t where n = 7")).scalar() == 1


def test_an_orm_sessions_rollback_undoes_its_own_writers_work_only(engine):
    def work(conn, n: int) -> None:  # type: ignore[no-untyped-def]
        insert(conn, n)
        if n == 1:
            with Session(bind=conn, join_transaction_mode="rollback_only") as session:
                session.execute(text("insert into t values (50)"))
                session.rollback()

    outcome = together(engine, work, rows=lambda n: set() if n == 1 else {n})
    assert all(result is None for result in outcome.values())
    assert stored(engine) == set(range(WRITERS)) - {1}
    with write_session(engine) as session:
        session.execute(text("insert into t values (60)"))
    assert 60 in stored(engine)


def test_a_write_inside_a_write_is_refused_not_a_hang(engine):
    with (
        write_connection(engine),
        pytest.raises(RuntimeError, match="inside another"),
        write_connection(engine),
    ):
        pass


def test_the_first_writer_failing_leaves_the_others_to_commit(engine):
    def work(conn, n: int) -> None:  # type: ignore[no-untyped-def]
        insert(conn, n)
        if n == 0:
            raise ValueError("the first writer changed its mind")

    outcome = together(engine, work)
    assert isinstance(outcome.pop(0), ValueError)
    assert all(result is None for result in outcome.values())
    assert stored(engine) == set(range(1, WRITERS))


def test_an_orm_write_refused_by_a_constraint_leaves_the_store_working(engine):
    """A writer alone (no SAVEPOINT) whose ORM flush is refused: its session rolls the
    transaction back, the writer gets the IntegrityError, and the next write goes through."""
    from sqlalchemy.exc import IntegrityError

    with write_connection(engine) as conn:
        insert(conn, 1)
    with pytest.raises(IntegrityError), write_session(engine) as session:
        session.execute(text("insert into t values (2)"))
        session.execute(text("insert into t values (1)"))
    with write_session(engine) as session:
        session.execute(text("insert into t values (3)"))
    assert stored(engine) == {1, 3}
