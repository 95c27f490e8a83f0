"""The named baseline of the page benchmark: a bare Starlette page on the same store layout.

An arrival inserts the worker's annotator row and selects their first item; an answer inserts
one label and selects the next item: one write and one read per request, each write its own
transaction, committed with the same durability as annotate (WAL, synchronous=FULL, busy
timeout, foreign keys: store/engine.py's pragmas). No phases, no leases, no k, no session
cookie: what any page must at least do to store an answer durably and show the next.

    BARE_DB=store.db BARE_STUDY=crowd python -m uvicorn bench.bare_page:app --port 8001
"""

from __future__ import annotations

import html
import json
import os
import sqlite3
import threading
from datetime import UTC, datetime

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from annotate.store.engine import SQLITE_PRAGMAS

_local = threading.local()


def _conn() -> sqlite3.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = sqlite3.connect(os.environ["BARE_DB"], isolation_level=None, timeout=5)
        for pragma in SQLITE_PRAGMAS:
            conn.execute(pragma)
        _local.conn = conn
    return conn


def _study_id(conn: sqlite3.Connection) -> int:
    found = getattr(_local, "study", None)
    if found is None:
        found = _local.study = conn.execute(
            "SELECT id FROM study WHERE name = ?", (os.environ.get("BARE_STUDY", "crowd"),)
        ).fetchone()[0]
    return found


def _write(conn: sqlite3.Connection, sql: str, params: tuple) -> int:
    conn.execute("BEGIN IMMEDIATE")
    try:
        row_id = conn.execute(sql, params).lastrowid
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return int(row_id or 0)


def _item_page(conn: sqlite3.Connection, annotator: int, position: int) -> HTMLResponse:
    row = conn.execute(
        "SELECT i.id, i.fields FROM studyitem s JOIN item i ON i.id = s.item_id "
        "WHERE s.study_id = ? AND s.phase = 'test' AND s.position = ?",
        (_study_id(conn), position),
    ).fetchone()
    if row is None:
        return HTMLResponse('<p data-screen="finished">Done.</p>')
    fields = json.loads(row[1])
    text = "".join(f"<p>{html.escape(str(v))}</p>" for v in fields.values())
    return HTMLResponse(
        f'<section data-screen="item">{text}<form method="post" action="/answer">'
        f'<input type="hidden" name="a" value="{annotator}">'
        f'<input type="hidden" name="i" value="{row[0]}">'
        f'<input type="hidden" name="n" value="{position}">'
        '<button name="answer" value="entailment">entailment</button></form></section>'
    )


def arrive(request: Request) -> HTMLResponse:
    conn = _conn()
    worker = str(request.query_params.get("id", ""))[:64]
    annotator = _write(
        conn,
        "INSERT INTO annotator (name, failed_logins, created_at, synthetic) VALUES (?, 0, ?, 0)",
        (f"bare-{worker}", datetime.now(UTC).isoformat()),
    )
    return _item_page(conn, annotator, 0)


async def answer(request: Request) -> HTMLResponse:
    form = await request.form()

    def work() -> HTMLResponse:
        conn = _conn()
        now = datetime.now(UTC).isoformat()
        annotator, item, position = int(form["a"]), int(form["i"]), int(form["n"])
        _write(
            conn,
            "INSERT INTO label (study_id, item_id, annotator_id, phase, value, shown_at, "
            "answered_at, flag, revisions) VALUES (?, ?, ?, 'test', ?, ?, ?, 0, 0)",
            (_study_id(conn), item, annotator, json.dumps(str(form["answer"])), now, now),
        )
        return _item_page(conn, annotator, position + 1)

    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(work)


app = Starlette(routes=[Route("/", arrive), Route("/answer", answer, methods=["POST"])])
