"""A PostgreSQL server that goes away while an annotator works (stopped as a crash would, then
started again): the screen stays, says the store is unreachable, keeps the answer in hand, and
stores it once the server is back; `simulate` waits within bounds, then says what is wrong."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from annotate.errors import UserError
from annotate.store.engine import StoreUnreachable
from annotate.tui.app import create_app
from annotate.tui.screens.item import ItemScreen
from annotate.workspace import open_workspace
from tests import fixtures as fx
from tests import pg
from tests.tui.support import QUICK_TEST, build_study, labels, start, without_labels

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
WAIT_S = 60
"""Bound on waiting for the app to notice the outage, and to store the answer after it."""


@pytest.fixture
def own_server() -> Iterator[pg.Server]:
    """A server of this test's own: the test stops it, which the shared one must not be. (In
    a folder of its own under /tmp: the server's user cannot enter pytest's tmp_path.)"""
    try:
        server = pg.start()
    except pg.PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL tests need a server: {exc}")
    yield server
    pg.stop(server.folder)


def notices(app, text: str) -> bool:
    return any(text in str(n.message) for n in app._notifications)


async def wait_for(pilot, condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await pilot.pause(0.1)


async def test_the_screen_survives_an_outage_and_the_answer_is_stored_after_it(
    own_server, tmp_path
):
    ws = open_workspace(own_server.url, create=True)
    overrides = {**QUICK_TEST, "training_items": 0, "gate_rule": "threshold", "gate_min_items": 0}
    study = build_study(
        ws.engine, tmp_path, "superglue/rte", test=without_labels(fx.SG_RTE), overrides=overrides
    )
    app = create_app(ws.engine, study, "ana", create_annotator=True)
    app.RECONNECT_FIRST_S, app.RECONNECT_MAX_S = 0.2, 1.0
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        assert isinstance(app.screen, ItemScreen)
        screen, answered = app.screen, app.screen.item.item_id
        pg.stop_now(own_server)
        await pilot.press("1")
        await wait_for(pilot, lambda: notices(app, "store unreachable, retrying"), "the notice")
        assert app.is_running and app.screen is screen and screen.item.item_id == answered
        pg.restart(own_server)
        await wait_for(pilot, lambda: app.screen.item.item_id != answered, "the next item")
        assert notices(app, "your answer is saved")
    assert [(label.item_id, label.value) for label in labels(ws.engine)] == [
        (answered, "entailment")
    ]
    ws.engine.dispose()


def test_commands_wait_within_bounds_then_say_the_store_is_unreachable(own_server, monkeypatch):
    from annotate.store import engine as store_engine

    open_workspace(own_server.url, create=True).engine.dispose()
    pg.stop_now(own_server)
    monkeypatch.setattr(store_engine, "RECONNECT_SECONDS", 1.0)
    started = time.monotonic()
    with pytest.raises(StoreUnreachable, match="is unreachable") as refused:
        open_workspace(own_server.url)
    assert time.monotonic() - started < 10 and isinstance(refused.value, UserError)
    assert "\n" not in str(refused.value)
    pg.restart(own_server)
    open_workspace(own_server.url).engine.dispose()


def test_a_connection_left_idle_across_a_restart_is_replaced_unseen(own_server, monkeypatch):
    """The pool pings a connection that sat idle (here: any) before handing it out, so the
    first read after a restart finds a live server, not the closed connection."""
    from sqlalchemy import text

    from annotate.store import engine as store_engine

    ws = open_workspace(own_server.url, create=True)
    with store_engine.read_connection(ws.engine) as conn:  # pooled, then left idle
        assert conn.execute(text("SELECT 1")).scalar() == 1
    pg.stop_now(own_server)
    pg.restart(own_server)
    monkeypatch.setattr(store_engine, "IDLE_PING_S", 0.0)
    with store_engine.read_connection(ws.engine) as conn:
        assert conn.execute(text("SELECT 1")).scalar() == 1
    ws.engine.dispose()
