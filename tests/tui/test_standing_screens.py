"""Screens that follow protocol/standing.py and its clocks, driven by Pilot: the console's
relative times move every second with nothing new in the store (and without reading it), and
an annotator paused with no refresher item left is told so."""

from __future__ import annotations

from datetime import timedelta

from textual.widgets import DataTable

from annotate.tui.app import create_app
from annotate.tui.console.app import create_console_app
from annotate.tui.console.screens.study import StudyScreen
from annotate.tui.screens.phases import PausedScreen
from tests.tui.console_support import NOW, busy_study, paused_without_refreshers
from tests.tui.support import screen_text, start, wait_until


def last_label(app) -> str:
    line = next(x for x in screen_text(app).splitlines() if "last label" in x)
    return line.split("last label", 1)[1].split(" ago")[0].strip() + " ago"


async def test_relative_times_move_every_second_without_a_store_read(workspace, tmp_path):
    busy_study(workspace.engine, tmp_path)
    moment = {"now": NOW}
    app = create_console_app(workspace.engine, "rte [pilot]", clock=lambda: moment["now"])
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_until(
            pilot, lambda: isinstance(app.screen, StudyScreen) and app.screen.loaded, "study"
        )
        screen = app.screen
        assert last_label(app).endswith(" min ago")  # the frozen now, minutes after it
        table = screen.query_one("#annotators", DataTable)
        column = "last"  # the column's key (its header may be short on a narrow window)
        before = str(table.get_cell("ben", column))
        loads = screen.loads
        moment["now"] = NOW + timedelta(hours=2)  # nothing new in the store meanwhile
        await wait_until(pilot, lambda: last_label(app) == "2 h ago", "the clock to move")
        assert str(table.get_cell("ben", column)) != before
        assert str(table.get_cell("ben", column)).strip() == "2 h ago"
        assert screen.loads == loads  # redrawn from what was read: no new read


async def test_an_annotator_paused_without_refresher_items_is_told_so(workspace, tmp_path):
    session = paused_without_refreshers(workspace.engine, tmp_path)
    assert session.progress().paused
    app = create_app(workspace.engine, "p", "ana")
    async with app.run_test(size=(100, 30)) as pilot:
        await start(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, PausedScreen), "PausedScreen")
        text = " ".join(screen_text(app).split())
        assert "Paused" in text and "the refresher items are used up" in text
        assert "The researcher has been told" in text
