"""A researcher's first contact with a PostgreSQL store: a password never reaches the screen,
whatever it holds, and a URL the server refuses is said with what to check."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest
from sqlalchemy.exc import OperationalError
from typer.testing import CliRunner

from annotate.api import open_store
from annotate.cli import app
from annotate.errors import UserError
from annotate.store.engine import is_disconnect, refusal
from annotate.text import redacted


def _annotate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "annotate", *args], capture_output=True, text=True, timeout=60
    )


def test_a_password_with_a_bare_at_is_refused_without_showing_any_of_it():
    """`lab:Tr0ub@dor:3/x@host` was read with `dor:3/x@host` as the host: the command said
    it could not resolve it (or could not read its port), naming most of the password."""
    run = _annotate("--db", "postgresql://lab:Tr0ub@dor:3/x@127.0.0.1:1/study", "datasets")
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "has an @ in its user name or password" in run.stderr and "%40" in run.stderr
    assert "Tr0ub" not in run.stderr and "dor:3" not in run.stderr


def test_a_password_that_breaks_the_url_is_hidden_whole():
    """The password runs to the URL's last @: one with a bare / was printed whole."""
    said = "cannot use database URL 'postgresql://lab:a/b@h:xx/db': bad port"
    assert redacted(said) == "cannot use database URL 'postgresql://lab:***@h:xx/db': bad port"


def test_a_password_with_a_space_is_hidden_in_a_url_that_cannot_be_used():
    """A password typed with a bare space (SQLAlchemy takes it) was printed whole when the URL
    was refused: the redactor's password stopped at the space, so it found none."""
    for url in (
        "postgresql+psycopg://lab:tr0ub dor/x@127.0.0.1:xx/study",  # a port that is no number
        "mysql://lab:tr0ub dor/x@127.0.0.1/study",  # a driver that is not installed
    ):
        run = _annotate("--db", url, "datasets")
        assert run.returncode == 1 and "cannot use database URL" in run.stderr, run.stderr
        assert "tr0ub" not in run.stderr and "dor/x" not in run.stderr, run.stderr
        assert "lab:***@127.0.0.1" in run.stderr


def test_a_server_asking_for_a_password_is_no_outage():
    said = (
        'connection to server at "127.0.0.1", port 5432 failed: fe_sendauth: no password supplied'
    )
    exc = OperationalError("connect", {}, psycopg.OperationalError(said))
    assert refusal(exc) is not None and not is_disconnect(exc)


def test_a_missing_role_is_not_said_to_be_a_missing_database():
    """A role whose name holds "database" was told to check the database name and createdb."""
    from sqlalchemy import create_engine

    from annotate.store.engine import refused

    engine = create_engine("postgresql+psycopg://mydatabase@127.0.0.1/lab")
    role = 'FATAL:  role "mydatabase" does not exist'
    assert "createdb" not in str(refused(engine, role))
    assert "check the database name, the role" in str(refused(engine, role))
    database = 'FATAL:  database "lab" does not exist'
    assert "createdb NAME" in str(refused(engine, database))


@pytest.mark.postgres
def test_commands_that_name_the_store_hide_its_password(postgres_admin_url: str):
    """`init`, `check` and `datasets` printed the URL as given, password and all (and, once
    they hid it, still printed one typed with a bare space)."""
    import uuid

    from tests.conftest import _admin

    name = f"annotate_pw_{uuid.uuid4().hex[:8]}"
    with _admin(postgres_admin_url) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    scheme, rest = postgres_admin_url.rsplit("/", 1)[0].split("://", 1)
    user, host = rest.split("@", 1)
    shown = ""
    try:
        # The test server trusts: any password works, even one typed with a bare space.
        for password in ("s3cret%40w0rd9", "s3cret w0rd9:/x"):
            url = f"{scheme}://{user}:{password}@{host}/{name}"
            if password == "s3cret%40w0rd9":  # the database has no store yet
                run = _annotate("--db", f"{scheme}://{user}:s3cret w0rd9@{host}/{name}", "datasets")
                assert "no annotate store at" in run.stderr, run.stderr
                shown += run.stderr
                with pytest.raises(UserError, match="no annotate store at") as refused:
                    open_store(url)  # the Python API, in a notebook's traceback
                shown += str(refused.value)
            for args in (["init"], ["check"], ["datasets"], ["check", "--format", "json"]):
                result = CliRunner().invoke(app, ["--db", url, *args])
                assert result.exit_code == 0, result.output
                shown += result.output
        assert "s3cret" not in shown and "w0rd9" not in shown and f"{user}:***@" in shown
    finally:
        with _admin(postgres_admin_url) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.postgres
def test_a_refused_url_says_what_to_check(postgres_admin_url: str):
    """A database that does not exist was one line of the server's words, with nothing on
    what to do: the check for it was passed over when the store's tables were read first."""
    base = postgres_admin_url.rsplit("/", 1)[0]
    run = _annotate("--db", f"{base}/no_such_database_here", "datasets")
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "refused the connection" in run.stderr
    assert run.stderr.rstrip().endswith(
        "check the database name in the URL, or create it (createdb NAME)"
    )
