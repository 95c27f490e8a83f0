"""29.7: a PostgreSQL server that is up but refuses the URL (no such database, no such role,
a wrong password) is reported as that at once, not as "unreachable" after 30 seconds."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from sqlalchemy.exc import OperationalError

from annotate.store.engine import is_disconnect, refusal


def test_a_refused_connection_is_no_outage():
    import psycopg

    said = 'connection failed: connection to server at "127.0.0.1", port 5432 failed: FATAL:  database "nope" does not exist'
    exc = OperationalError("connect", {}, psycopg.OperationalError(said))
    assert refusal(exc) is not None and 'database "nope" does not exist' in refusal(exc)
    assert not is_disconnect(exc)
    gone = OperationalError("connect", {}, psycopg.OperationalError("connection refused"))
    assert refusal(gone) is None and is_disconnect(gone)


def _status_on(url: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "annotate", "--db", url, "status", "any"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return time.monotonic() - started, run


@pytest.mark.postgres
def test_a_wrong_database_or_role_is_said_at_once(postgres_admin_url: str):
    base = postgres_admin_url.rsplit("/", 1)[0]
    scheme, rest = base.split("://", 1)
    host = rest.rsplit("@", 1)[-1]
    for url, words in (
        (f"{base}/no_such_database_here", 'database "no_such_database_here" does not exist'),
        (f"{scheme}://no_such_role_here@{host}/postgres", "no_such_role_here"),
    ):
        took, run = _status_on(url)
        assert took < 15  # not the 30 s of waiting for a server
        assert run.returncode == 1, run.stderr
        assert run.stderr.startswith("error: ") and words in run.stderr
        assert "unreachable" not in run.stderr and "Traceback" not in run.stderr


def test_a_server_that_is_not_there_is_said_within_seconds():
    """Nothing listening on the port was said after the 30 s of waiting for a server that went
    away, and a port that accepts and never answers (a hung host, a firewall) held the command
    without end: both are said in one line within seconds."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        free_port = closed.getsockname()[1]
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel accepts the connection; nobody ever answers
        for port in (free_port, silent.getsockname()[1]):
            took, run = _status_on(f"postgresql+psycopg://u:p@127.0.0.1:{port}/x")
            assert took < 15, run.stderr
            assert run.returncode == 1, run.stderr
            assert run.stderr.startswith(
                f"error: the store postgresql+psycopg://u:***@127.0.0.1:{port}/x is unreachable ("
            )
            assert run.stderr.endswith(
                "check that the database server is running and reachable, then run the command "
                "again\n"
            )
            assert run.stderr.count("\n") == 1


def test_a_postgres_url_is_read_as_postgresql(cli):
    """`postgres://` is libpq's and psql's other spelling, the one hosting services give: it
    was refused with "Can't load plugin: sqlalchemy.dialects:postgres". It now opens the same
    database as `postgresql://` (nothing connects until a command reads)."""
    from annotate.store.engine import make_engine

    for url in ("postgres://lab@db-host/annotate", "postgres+psycopg://lab@db-host/annotate"):
        engine = make_engine(url)
        assert (engine.dialect.name, engine.dialect.driver) == ("postgresql", "psycopg")
        assert engine.url.host == "db-host" and engine.url.database == "annotate"
    said = cli("--db", "mysql2://u@h/db", "status", "any").stderr
    assert "Can't load plugin" in said and "postgresql+psycopg://USER@HOST/DB" in said
