"""Reads that write nothing (issue 38): on PostgreSQL they run outside a transaction, which
saves the BEGIN and ROLLBACK round trips of every screen that only reads, and a connection
a read used goes back to the pool ready for an all-or-nothing write."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from annotate.store.engine import make_engine, read_connection, write_connection


def make_table(url: str):
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE note (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"))
    return engine


def test_a_write_after_a_read_on_the_same_pooled_connection_is_still_all_or_nothing(store_url):
    engine = make_table(store_url)
    for _ in range(3):  # the pool hands the read's connection to the write
        with read_connection(engine) as conn:
            assert conn.execute(text("SELECT count(*) FROM note")).scalar() == 0
        with pytest.raises(RuntimeError), write_connection(engine) as conn:
            conn.execute(text("INSERT INTO note (id, body) VALUES (1, 'half')"))
            raise RuntimeError("the write fails after its first statement")
    with read_connection(engine) as conn:
        assert conn.execute(text("SELECT count(*) FROM note")).scalar() == 0
    with write_connection(engine) as conn:
        conn.execute(text("INSERT INTO note (id, body) VALUES (1, 'whole')"))
    with read_connection(engine) as conn:
        assert conn.execute(text("SELECT body FROM note")).scalar() == "whole"
    engine.dispose()


@pytest.mark.postgres
def test_on_postgresql_each_statement_of_a_read_is_its_own_transaction(postgres_admin_url):
    engine = make_engine(postgres_admin_url)  # reads only: the maintenance database will do
    with read_connection(engine) as conn:
        conn.execute(text("SELECT pg_sleep(0.01)"))
        # In a transaction, a later statement starts after the transaction did.
        alone = conn.execute(text("SELECT transaction_timestamp() = statement_timestamp()"))
        assert alone.scalar() is True
    with engine.connect() as conn:  # a plain connection still opens a transaction
        conn.execute(text("SELECT pg_sleep(0.01)"))
        alone = conn.execute(text("SELECT transaction_timestamp() = statement_timestamp()"))
        assert alone.scalar() is False
    engine.dispose()


@pytest.mark.postgres
def test_on_postgresql_a_page_process_reuses_one_connection_per_store_thread(postgres_admin_url):
    """A page process's threads all on the store at once, request after request: each keeps
    its connection (no new server process per request, which cost PostgreSQL a third of its
    CPU per answer)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from sqlalchemy import event

    from annotate.store.engine import SERVER_POOL_SIZE
    from annotate.web.page.state import POSTGRES_THREADS

    assert POSTGRES_THREADS <= SERVER_POOL_SIZE
    engine = make_engine(postgres_admin_url)
    opened: list[object] = []
    event.listen(engine.pool, "connect", lambda *_: opened.append(1))
    together = threading.Barrier(POSTGRES_THREADS)

    def request(_: int) -> int:
        with read_connection(engine) as conn:
            together.wait(timeout=30)  # every thread holds its connection at once
            return conn.execute(text("SELECT 1")).scalar()

    with ThreadPoolExecutor(POSTGRES_THREADS) as threads:
        for _ in range(3):
            assert list(threads.map(request, range(POSTGRES_THREADS))) == [1] * POSTGRES_THREADS
    assert len(opened) == POSTGRES_THREADS
    engine.dispose()
