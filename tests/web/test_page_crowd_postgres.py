"""On PostgreSQL a crowd worker's whole way through the page sends no ROLLBACK to the server.

psycopg forgets every statement it prepared on a connection at each ROLLBACK (and has the
server drop them too: DEALLOCATE ALL), so each one is parsed and planned afresh for its next
five runs there. Reads that ended their transaction that way (the annotator looked up by a page
process that had not served the worker yet) made PostgreSQL plan a fifth of the page's
statements under a paced crowd (issue 38)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event

from tests.crowd_helpers import batch_study, prolific_query
from tests.web.test_page import client, csrf, screen, ticket

pytest.importorskip("starlette")
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.parametrize("backend", ["postgresql"], indirect=True),
]


@pytest.fixture
def db_url(store_url: str) -> str:
    return store_url


@contextmanager
def server_rollbacks(engine) -> Iterator[list[str]]:
    """The ROLLBACKs that reach the server meanwhile: a rollback of a connection with a
    transaction open there (in autocommit there is none, and psycopg sends nothing)."""
    from psycopg.pq import TransactionStatus

    seen: list[str] = []

    def sent(dbapi_connection) -> bool:  # type: ignore[no-untyped-def]
        return dbapi_connection.info.transaction_status != TransactionStatus.IDLE

    def on_rollback(conn) -> None:  # type: ignore[no-untyped-def]
        if sent(conn.connection.dbapi_connection):
            seen.append("rollback")

    def on_reset(dbapi_connection, record, state) -> None:  # type: ignore[no-untyped-def]
        if sent(dbapi_connection):
            seen.append("pool reset")

    event.listen(engine, "rollback", on_rollback)
    event.listen(engine.pool, "reset", on_reset)
    try:
        yield seen
    finally:
        event.remove(engine, "rollback", on_rollback)
        event.remove(engine.pool, "reset", on_reset)


def test_a_workers_whole_way_through_two_page_processes_sends_no_rollback(
    workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    batch_study(workspace.engine, tmp_path, consent="We keep your answers under a pseudonym.")
    engine = workspace.engine
    # Two page processes, as `serve --workers 2` runs them (one secret for both): a worker's
    # requests alternate, so each process meets the worker (and looks them up) on its own.
    monkeypatch.setenv("ANNOTATE_WEB_SECRET", "one-key-for-both-processes")
    first, second = client(engine, "pilot"), client(engine, "pilot")
    screens, turn = [], 0

    def browser():  # type: ignore[no-untyped-def]
        nonlocal turn
        turn += 1
        now, other = (first, second) if turn % 2 else (second, first)
        now.cookies = other.cookies
        return now

    with server_rollbacks(engine) as rollbacks:
        page = browser().get("/", params=prolific_query(1))
        screens.append(screen(page))
        page = browser().post("/consent", data={"csrf": csrf(page), "agree": "yes"})
        screens.append(screen(page))
        page = browser().post("/start", data={"csrf": csrf(page)})
        while screen(page) in ("item", "feedback"):
            screens.append(screen(page))
            if screen(page) == "feedback":
                page = browser().get("/screen?next=1")
                continue
            data = {"csrf": csrf(page), "ticket": ticket(page), "answer": "entailment"}
            page = browser().post("/answer", data=data)
        screens.append(screen(page))
        page = browser().post("/survey", data={"csrf": csrf(page), "q:remarks": "none"})
        screens.append(screen(page))
    assert screens[:2] == ["consent", "guidelines"] and screens[-2:] == ["survey", "exit"]
    assert screens.count("feedback") == 2 and screens.count("item") == 4, screens
    assert rollbacks == []


def test_a_nul_in_a_comment_is_dropped_not_refused_by_the_server(workspace, tmp_path: Path):
    """PostgreSQL takes no NUL in text: a comment pasted with one is stored without it (it was
    a server error, and the answer it came with was lost at every retry)."""
    from tests.web.support import labels

    batch_study(workspace.engine, tmp_path)
    c = client(workspace.engine, "pilot")
    page = c.get("/", params=prolific_query(1))
    page = c.post("/start", data={"csrf": csrf(page)})
    while screen(page) in ("item", "feedback"):
        if screen(page) == "feedback":
            page = c.get("/screen?next=1")
            continue
        data = {"csrf": csrf(page), "ticket": ticket(page), "answer": "entailment"}
        page = c.post("/answer", data={**data, "flag": "1", "comment": "odd\x00 item"})
        assert page.status_code == 200
    assert {label.comment for label in labels(workspace.engine, "pilot")} == {"odd item"}
