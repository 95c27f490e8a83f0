"""Screen snapshots of the researcher's console: every screen at 80x24 and 160x50, compared with
the SVGs stored in tests/tui/__snapshots__/test_console_snapshots/ (update after a deliberate
change with `pytest tests/tui/test_console_snapshots.py --snapshot-update`, then look at them).

The pictures are stable: the console's clock is frozen (NOW), every stored moment comes from a
clock that ticks a fixed step, and the report's bootstrap uses the study's fixed seed. Names
and comments carry markup look-alikes ([b]ana[/b], [/i]) to show they are drawn verbatim.
"""

from __future__ import annotations

import os

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from annotate.tui.console.screens.confirm import ConfirmScreen
from annotate.tui.console.screens.flags import FlagsScreen
from annotate.tui.console.screens.gate import GateScreen
from annotate.tui.console.screens.help import ConsoleHelpScreen
from annotate.tui.console.screens.report import ReportScreen
from annotate.tui.console.screens.studies import StudiesScreen
from annotate.tui.console.screens.study import StudyScreen
from tests.tui.console_support import busy_study
from tests.tui.support import screen_lines
from tests.tui.test_console import arrive, console, median_study

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((160, 50), id="160x50")]


@pytest.fixture(autouse=True)
def same_picture_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    for name in ("TEXTUAL_THEME", "TEXTUAL_DIM_FACTOR", "TEXTUAL_COLOR_SYSTEM"):
        if os.environ.get(name):
            pytest.fail(f"unset {name} to compare screen snapshots", pytrace=False)


async def settled(pilot: Pilot) -> None:
    """No worker still reading and the drawn lines the same two pauses running: the picture
    (or the background of a dialog opened next) shows the data, not a half-drawn screen."""
    # A DataTable draws its header row as one run or cell by cell depending on when its
    # caches were filled (the same picture, different SVG): draw every table afresh.
    for table in pilot.app.screen.query(DataTable):
        table._clear_caches()
        table.refresh()
    before = None
    for _ in range(200):
        await pilot.pause(0.02)
        now = screen_lines(pilot.app)
        if now == before and not any(w.is_running for w in pilot.app.screen.workers):
            return
        before = now
    raise AssertionError("the screen did not settle")


@pytest.mark.parametrize("size", SIZES)
def test_studies(snap_compare, workspace, tmp_path, size):
    busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudiesScreen)
        await settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_study_live(snap_compare, workspace, tmp_path, size):
    ctx = busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudyScreen)
        await settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_study_with_warnings(snap_compare, workspace, tmp_path, size):
    """A median-gated study whose trainees wait for the gate: the warning `status` gives."""
    ctx = median_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudyScreen)
        await settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_gate_with_warnings(snap_compare, workspace, tmp_path, size):
    ctx = median_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        await settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_gate_close_confirmation_refused(snap_compare, workspace, tmp_path, size):
    """Close on a k=5 study with 4 admittable trainees: who is admitted, the warning, and the
    refusal after Enter (Ctrl+F would force it)."""
    ctx = median_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudyScreen)
        await pilot.press("g")
        await arrive(pilot, GateScreen)
        await settled(pilot)
        await pilot.press("c")
        await arrive(pilot, ConfirmScreen)
        await pilot.press("enter")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_flags(snap_compare, workspace, tmp_path, size):
    ctx = busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        await settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_flag_resolve_confirmation(snap_compare, workspace, tmp_path, size):
    ctx = busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudyScreen)
        await pilot.press("f")
        await arrive(pilot, FlagsScreen)
        await settled(pilot)
        await pilot.press("v")
        await arrive(pilot, ConfirmScreen)
        await pilot.press(*"fixed")
        for widget in app.screen.query("Input"):
            widget.cursor_blink = False  # type: ignore[attr-defined]

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_report(snap_compare, workspace, tmp_path, size):
    ctx = busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine, ctx.study.name)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudyScreen)
        await pilot.press("r")
        await arrive(pilot, ReportScreen)
        await settled(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_help(snap_compare, workspace, tmp_path, size):
    busy_study(workspace.engine, tmp_path)
    app = console(workspace.engine)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, StudiesScreen)
        await settled(pilot)
        await pilot.press("question_mark")
        await arrive(pilot, ConsoleHelpScreen)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
