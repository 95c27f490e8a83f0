"""`annotate prolific`'s parts on their own: the client's retries (and the one call it never
repeats), the token's absence, rejections that need a reason, and a store of annotate 0.4.2
(schema 11) upgraded to the schema with the Prolific ledger, its data kept."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from annotate.cli import app
from annotate.errors import UserError
from annotate.store import schema
from annotate.store.engine import make_engine
from tests.prolific_standin import running_standin

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
TOKEN = "unit-" + "ab12" * 8
OLD_STORE = Path(__file__).resolve().parents[1] / "migration" / "store-0.1.0.db"


def client(url: str, **kw):
    from annotate.platforms.prolific.client import Prolific

    return Prolific(TOKEN, url, sleep=lambda s: None, **kw)


def test_rate_limits_and_server_errors_are_retried_then_reported_in_one_line():
    from annotate.platforms.prolific.client import ProlificError

    with running_standin(TOKEN) as api, client(api.url, attempts=3) as c:
        api.state.faults += [("GET", "workspaces/", 429), ("GET", "workspaces/", 502)]
        assert c.workspaces()[0]["id"] == api.state.workspace
        assert len(api.state.of("GET", "workspaces/")) == 3
        api.state.faults += [("GET", "workspaces/", 503)] * 3
        with pytest.raises(ProlificError, match=r"GET workspaces/: 503 after 3 tries") as err:
            c.workspaces()
        assert TOKEN not in str(err.value)
        with pytest.raises(ProlificError, match="refused GET studies/nope/ \\(404\\)"):
            c.study("nope")


def test_a_payment_is_not_repeated_after_a_server_error_or_a_lost_answer():
    from annotate.platforms.prolific.client import ProlificUnsure

    calls = []

    def server_error(request):
        calls.append(request.url.path)
        return httpx.Response(502)

    with client("https://prolific.invalid/api/v1/", transport=httpx.MockTransport(server_error)) as c:
        with pytest.raises(ProlificUnsure, match="may have been acted on"):
            c.pay_bonuses("b1")
    assert calls == ["/api/v1/bulk-bonus-payments/b1/pay/"]

    def lost(request):
        calls.append(request.url.path)
        raise httpx.ReadTimeout("no answer", request=request)

    calls.clear()
    with client("https://prolific.invalid/api/v1/", transport=httpx.MockTransport(lost)) as c:
        with pytest.raises(ProlificUnsure):
            c.pay_bonuses("b1")
        assert len(calls) == 1
        with pytest.raises(UserError, match="no answer"):
            c.study("s1")  # a read is retried, then reported
    assert len(calls) == 1 + 5


def test_without_a_token_every_command_says_where_it_is_read_from(workspace, monkeypatch):
    monkeypatch.delenv("ANNOTATE_PROLIFIC_TOKEN", raising=False)
    from annotate.platforms.prolific.client import token_from_settings

    with pytest.raises(UserError, match="set ANNOTATE_PROLIFIC_TOKEN"):
        token_from_settings()


def test_a_rejection_needs_a_reason_prolific_accepts():
    from annotate.platforms.prolific.sync import MIN_REASON, check_reason

    with pytest.raises(UserError, match=f"at least {MIN_REASON} characters"):
        check_reason("too fast")
    long = "The answers were given faster than the items can be read. " * 2
    assert check_reason(long) == " ".join(long.split())


def _rows(path: Path) -> dict[str, list]:
    with sqlite3.connect(path) as conn:
        names = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            n: sorted(map(repr, conn.execute(f'SELECT * FROM "{n}"').fetchall()))
            for n in names
            if n not in ("meta", "alembic_version")
        }


def test_a_store_of_annotate_0_4_2_upgrades_with_its_data_kept(tmp_path: Path, monkeypatch):
    """annotate 0.4.2's schema is revision 0011: the 0.1.0 fixture store migrated as 0.4.2's
    `migrate` left it (its head was 0011), then today's `migrate` adds the Prolific tables and
    keeps every row."""
    path = tmp_path / "store.db"
    shutil.copy(OLD_STORE, path)
    engine = make_engine(f"sqlite:///{path}")
    with monkeypatch.context() as m:
        m.setattr(schema, "SCHEMA_HEAD", "0011")
        assert schema.migrate_store(engine).to_revision == "0011"
    engine.dispose()
    before = _rows(path)
    assert "prolificrequest" not in before and before["study"]
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{path}", "migrate"])
    assert result.exit_code == 0, result.output
    after = _rows(path)
    assert after.pop("prolificstudy") == [] and after.pop("prolificrequest") == []
    assert after == before
    engine = make_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0013"
    engine.dispose()
    study = before["study"][0].split(",")[1].strip(" '")
    result = CliRunner().invoke(app, ["--db", f"sqlite:///{path}", "prolific", "status", study])
    assert "is not a crowd study" in str(result.exception)  # the old study: no Prolific
