"""Screen snapshots of a crowd study's own screens (consent, exit survey, completion code, a
window another took over) at 80x24 and 160x50, like tests/tui/test_snapshots.py: after a
deliberate change, review and store them with `--snapshot-update`."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from annotate.tui.app import create_app
from annotate.tui.screens.crowd import ConsentScreen, ContinuedScreen, ExitScreen, SurveyScreen
from annotate.tui.screens.guidelines import GuidelinesScreen
from annotate.tui.screens.item import ItemScreen
from tests.tui.test_crowd_app import crowd_rte
from tests.tui.test_snapshots import ANNOTATOR, SIZES, arrive, same_picture_everywhere

assert same_picture_everywhere  # the frozen clocks and colours of the other snapshots


def app_for(workspace, tmp_path, **settings):
    study = crowd_rte(workspace.engine, tmp_path, **settings)
    return create_app(workspace.engine, study, ANNOTATOR, create_annotator=True)


@pytest.mark.parametrize("size", SIZES)
def test_consent(snap_compare, workspace, tmp_path, size):
    app = app_for(workspace, tmp_path)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, ConsentScreen)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def _to_the_survey(pilot: Pilot) -> None:
    await arrive(pilot, ConsentScreen)
    await pilot.press("a")
    await arrive(pilot, GuidelinesScreen)
    await pilot.press("enter")
    await arrive(pilot, ItemScreen)
    await pilot.press("1")
    await arrive(pilot, SurveyScreen)


@pytest.mark.parametrize("size", SIZES)
def test_exit_survey(snap_compare, workspace, tmp_path, size):
    app = app_for(workspace, tmp_path, batch=1)
    assert snap_compare(app, terminal_size=size, run_before=_to_the_survey)


@pytest.mark.parametrize("size", SIZES)
def test_completion_code(snap_compare, workspace, tmp_path, size):
    app = app_for(workspace, tmp_path, batch=1)

    async def run_before(pilot: Pilot) -> None:
        await _to_the_survey(pilot)
        await pilot.press("2")
        await arrive(pilot, SurveyScreen)
        await pilot.press("enter")  # skips the free-text question
        await arrive(pilot, ExitScreen)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_continued_in_another_window(snap_compare, workspace, tmp_path, size):
    app = app_for(workspace, tmp_path, consent=None)

    async def run_before(pilot: Pilot) -> None:
        await arrive(pilot, GuidelinesScreen)
        await pilot.press("enter")
        await arrive(pilot, ItemScreen)
        create_app(workspace.engine, "pilot", ANNOTATOR)  # a second window claims the annotator
        await pilot.press("1")
        await arrive(pilot, ContinuedScreen)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
