"""29.2: with the store away (a PostgreSQL stop, a full disk) no screen crashes: the console's
change check and every annotator screen hold, say "store unreachable, retrying", and go on
when it is back."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from annotate.errors import UserError
from annotate.store.engine import StorageError
from annotate.tui.app import create_app
from annotate.tui.console.app import create_console_app
from annotate.tui.screens.guidelines import GuidelinesScreen
from annotate.tui.screens.item import ItemScreen
from annotate.tui.screens.phases import WaitingScreen
from tests import fixtures as fx
from tests.tui.support import (
    QUICK_TEST,
    build_study,
    labels,
    start,
    wait_until,
    without_labels,
)

GONE = OperationalError("SELECT 1", {}, psycopg.OperationalError("server closed the connection"))
FULL = OperationalError("INSERT", {}, sqlite3.OperationalError("database or disk is full"))
SQLITE_FULL = StorageError("the store x.db is full: database or disk is full", "disk is full")
"""A full disk as the app meets it on SQLite: the engine's error hook makes it a StorageError."""


class Outage:
    """Makes one of the session's methods fail with `error` until `end()`."""

    def __init__(self, monkeypatch, target, name: str, error: Exception) -> None:
        self.real = getattr(target, name)
        self.on = True
        self.calls = 0

        def failing(*args, **kwargs):
            self.calls += 1
            if self.on:
                raise error
            return self.real(*args, **kwargs)

        monkeypatch.setattr(target, name, failing)

    def end(self) -> None:
        self.on = False


def said(app) -> list[str]:
    """Every notification the app gave (toasts come and go: the record stays)."""
    if not hasattr(app, "said"):
        app.said = []
        real = app.notify

        def notify(message, *args, **kwargs):
            app.said.append(str(message))
            return real(message, *args, **kwargs)

        app.notify = notify
    return app.said


def told(app, words: str) -> bool:
    return any(words in m for m in said(app))


def quick_app(workspace, tmp_path, **overrides):
    study = build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        dev=fx.SG_RTE,
        test=without_labels(fx.SG_RTE),
        overrides={**QUICK_TEST, **overrides},
    )
    app = create_app(workspace.engine, study, "ana", create_annotator=True)
    app.RECONNECT_FIRST_S = app.RECONNECT_MAX_S = 0.05
    said(app)
    return study, app


@pytest.mark.parametrize(
    ("error", "words"),
    [(GONE, "store unreachable, retrying"), (SQLITE_FULL, "the store's disk is full, retrying")],
    ids=["server-gone", "sqlite-disk-full"],
)
async def test_enter_at_the_guidelines_holds_while_the_store_is_away(
    workspace, tmp_path, monkeypatch, error, words
):
    _, app = quick_app(workspace, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        outage = Outage(monkeypatch, app.session, "next_item", error)
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: outage.calls >= 2, "a retry")
        assert isinstance(app.screen, GuidelinesScreen) and app.is_running
        assert told(app, words)
        outage.end()
        await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "the first item")


async def test_u_and_a_full_disk_after_a_refused_answer_hold(workspace, tmp_path, monkeypatch):
    _, app = quick_app(workspace, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await start(pilot)
        await pilot.press("1", "enter")  # one test answer stored: there is one to revise
        await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "the next item")
        outage = Outage(monkeypatch, app.session, "last_answer", GONE)
        await pilot.press("u")
        await wait_until(pilot, lambda: outage.calls >= 2, "a retry of u")
        assert app.is_running and not app.screen.revising
        outage.end()
        await wait_until(pilot, lambda: app.screen.revising, "the revision screen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.screen.revising, "back at the item")

        def refused(*args, **kwargs):
            raise UserError("this answer was refused")

        monkeypatch.setattr(app.session, "submit_and_next", refused)
        disk = Outage(monkeypatch, app.session, "next_item", FULL)
        await pilot.press("1", "enter")
        await wait_until(pilot, lambda: disk.calls >= 2, "a retry of the next item")
        assert app.is_running
        disk.end()
        await wait_until(pilot, lambda: told(app, "The store is back"), "recovery")


async def test_a_full_disk_as_sqlite_says_it_keeps_the_answer(workspace, tmp_path, monkeypatch):
    """On SQLite a full disk reaches the app as the engine's StorageError (its error hook),
    not as the driver's error: the answer is kept and stored once there is room, as in an
    outage (the app used to drop it with a notice, then stop with a traceback)."""
    _, app = quick_app(workspace, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await start(pilot)
        answer = Outage(monkeypatch, app.session, "submit_and_next", SQLITE_FULL)
        await pilot.press("1", "enter")
        await wait_until(pilot, lambda: answer.calls >= 2, "a retry of the answer")
        assert app.is_running and told(app, "your answer is kept")
        answer.end()
        await wait_until(pilot, lambda: told(app, "your answer is saved"), "the answer stored")


async def test_a_retry_due_as_the_app_closes_is_not_made(workspace, tmp_path, monkeypatch):
    """A held retry whose timer fires while the app closes (its screens already gone) does
    nothing, where it used to ask for the next item and fail for want of a screen."""
    _, app = quick_app(workspace, tmp_path)
    timers = []
    real_timer = app.set_timer
    monkeypatch.setattr(
        app,
        "set_timer",
        lambda delay, callback: timers.append(callback) or real_timer(60, callback),
    )
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await start(pilot)
        outage = Outage(monkeypatch, app.session, "next_item", GONE)
        app.call_later(app.show_next)
        await wait_until(pilot, lambda: outage.calls >= 1 and timers, "a held retry")
        outage.end()
    asked = outage.calls
    result = timers[-1]()  # the timer fires after the app has closed
    if result is not None:
        await result
    assert outage.calls == asked  # the next item was not asked for


async def test_the_waiting_screen_holds_while_the_store_is_away(workspace, tmp_path, monkeypatch):
    _, app = quick_app(workspace, tmp_path, training_items=2, gate_min_items=2, gate_rule="manual")
    app.poll_seconds = 0.05
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await start(pilot)
        for _ in range(2):
            await pilot.press("1", "enter")
            await pilot.pause()
            if not isinstance(app.screen, WaitingScreen):
                await pilot.press("enter")  # past the feedback
        await wait_until(pilot, lambda: isinstance(app.screen, WaitingScreen), "waiting")
        outage = Outage(monkeypatch, app.session, "phase", GONE)
        await wait_until(pilot, lambda: outage.calls >= 3, "rechecks in the outage")
        assert app.is_running and isinstance(app.screen, WaitingScreen)
        assert told(app, "store unreachable, retrying")


async def test_the_console_change_check_holds_while_the_store_is_away(
    workspace, tmp_path, monkeypatch
):
    import annotate.tui.console.app as console_app

    study, _ = quick_app(workspace, tmp_path)
    app = create_console_app(workspace.engine, study, researcher="rhea")
    said(app)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.pause()
        real = console_app.change_stamp

        def gone(engine):
            raise GONE

        monkeypatch.setattr(console_app, "change_stamp", gone)
        app.check_for_changes()
        app.check_for_changes()
        await pilot.pause()
        assert app.is_running and app.store_away
        assert sum("store unreachable, retrying" in m for m in said(app)) == 1  # said once
        monkeypatch.setattr(console_app, "change_stamp", real)
        app.check_for_changes()
        assert told(app, "The store is back") and not app.store_away


READ_ONLY = OperationalError(
    "UPDATE", {}, sqlite3.OperationalError("attempt to write a readonly database")
)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (READ_ONLY, "readonly database"),
        (StorageError("the store is full", "database or disk is full"), "disk is full"),
        (GONE, "server closed the connection"),
    ],
    ids=["read-only", "full", "unreachable"],
)
async def test_quitting_never_fails_on_a_store_that_cannot_be_written(
    workspace, tmp_path, monkeypatch, error, reason
):
    """Issue 39, item 2: q on a read-only, full or unreachable store leaves as usual (no
    traceback); the item's lease runs out by itself, and the app says why it was kept."""
    _, app = quick_app(workspace, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await start(pilot)
        Outage(monkeypatch, app.session, "release", error)
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, "the app to close")
    assert not app.return_code  # a crash sets 1 and prints the traceback
    assert app.release_failed is not None and reason in app.release_failed


async def held_answer(pilot, monkeypatch, key: str) -> Outage:
    """Answer `key` on the item while the store is away: the screen keeps the answer."""
    answer = Outage(monkeypatch, pilot.app.session, "submit_and_next", GONE)
    await pilot.press(key, "enter")
    await wait_until(pilot, lambda: answer.calls >= 1, "the answer held")
    return answer


async def test_an_answer_held_under_the_help_screen_is_stored_when_the_store_is_back(
    workspace, tmp_path, monkeypatch
):
    """The answer is kept while the store is away: opening the help over the item meanwhile
    dropped its retry (the item was no longer the screen on top), and the answer with it."""
    from annotate.tui.screens.help import HelpScreen

    _, app = quick_app(workspace, tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await start(pilot)
        answer = await held_answer(pilot, monkeypatch, "1")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        answer.end()
        await pilot.pause(0.3)  # retries come due under the help
        await pilot.press("escape")
        await wait_until(pilot, lambda: told(app, "your answer is saved"), "the answer stored")
    assert len(labels(workspace.engine, "test")) == 1


async def test_quitting_with_an_answer_held_asks_first_and_says_it_was_not_saved(
    workspace, tmp_path, monkeypatch
):
    """q while the screen kept an answer for the store's return left at once, the answer lost,
    and the last words said "every answer you gave was saved". Now q asks first: Enter keeps
    it (stored once the store is back); d quits, and the last words say it was not saved."""
    from annotate.presentation.answer_keys import COME_BACK
    from annotate.presentation.closing import words_on_leaving
    from annotate.tui.screens.discard import DiscardModal
    from tests.tui.support import all_static_text

    _, app = quick_app(workspace, tmp_path)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await start(pilot)
        answer = await held_answer(pilot, monkeypatch, "1")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, DiscardModal), "the question")
        assert "is not saved yet" in all_static_text(app) and app.is_running
        await pilot.press("enter")  # keep it
        answer.end()
        await wait_until(pilot, lambda: told(app, "your answer is saved"), "the answer stored")
        assert len(labels(workspace.engine, "test")) == 1

        answer = await held_answer(pilot, monkeypatch, "2")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, DiscardModal), "the question")
        Outage(monkeypatch, app.session, "release", GONE)
        await pilot.press("d")
        await wait_until(pilot, lambda: not app.is_running, "the app to close")
    assert not app.return_code and len(labels(workspace.engine, "test")) == 1
    assert app.dropped_answer and "Not entailment" in app.dropped_answer
    Outage(monkeypatch, app.session, "progress", GONE)
    words = words_on_leaving("ana", app.session, "s", COME_BACK, dropped=app.dropped_answer)
    assert "every answer you gave before your last one was saved" in words[0]
    assert (
        words[1]
        == f"Your last answer ({app.dropped_answer}) was not saved: the store could not be reached."
    )


async def test_the_console_s_gate_keys_say_the_store_is_away_and_the_console_stays(
    workspace, tmp_path, monkeypatch
):
    """x on the gate screen while the database server was down ended the console with a
    traceback (the preview's read); so did confirming a decision. Both now say so and stay."""
    from annotate.protocol import gate
    from annotate.tui.console.screens.confirm import ConfirmScreen
    from annotate.tui.console.screens.gate import GateScreen
    from annotate.tui.console.screens.study import StudyScreen
    from tests.tui.test_console import arrive, console, median_study

    ctx = median_study(workspace.engine, tmp_path, trainees=6)
    app = console(workspace.engine, ctx.study.name)
    said(app)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        preview = Outage(monkeypatch, gate, "preview_manual", GONE)
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        await pilot.press("down", "x")
        await wait_until(pilot, lambda: preview.calls >= 1, "the preview")
        assert app.is_running and isinstance(app.screen, GateScreen)
        assert told(app, "the store is unreachable: nothing was changed")
        preview.end()
        decide = Outage(monkeypatch, gate, "decide_manually", GONE)
        await pilot.press("x")
        await arrive(pilot, ConfirmScreen)
        await pilot.press(*"copied answers", "enter")
        await wait_until(pilot, lambda: decide.calls >= 1, "the decision")
        assert app.is_running and isinstance(app.screen, ConfirmScreen)
        decide.end()
        await pilot.press("enter")  # confirmed again, the store back
        await arrive(pilot, GateScreen)
