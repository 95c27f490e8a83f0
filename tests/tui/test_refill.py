"""The next test item is drawn in the screen already up: its texts and status line change in
place, laid out again only when a text takes a different number of lines or cells, and the
progress bar is redrawn only when it would look different (bench/bench_keypress.py). What the
annotator sees must be exactly what a full redraw shows: same characters, same styles."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import ProgressBar, Static

import annotate.tui.app as label_app_module
import annotate.tui.widgets.status as status_module
from annotate.tui.app import LabelApp, create_app
from annotate.tui.screens.item import ItemScreen
from annotate.tui.widgets.status import StatusBar, phase_counts
from tests.tui.support import QUICK_TEST, build_study, settle, start, wait_until
from tests.tui.task_data import LONG_PREMISE_SENTENCES, long_premise

PREMISES = (
    "The quay was quiet.",
    " ".join(LONG_PREMISE_SENTENCES[:4]),  # a few lines at 80 columns
    long_premise(2500),  # taller than the passage's room: it scrolls
    "The quay was busy.",  # as long as the first: the same lines
)
HYPOTHESES = ("A ferry came.", " ".join(LONG_PREMISE_SENTENCES[4:6]), "A boat left.")

ROWS = [{"premise": PREMISES[i % 4], "hypothesis": HYPOTHESES[i % 3], "idx": i} for i in range(150)]
"""150 test items: with that many, one answer moves the bar (64 half cells at 80 columns) and
its percentage only now and then, so both the redrawn and the kept bar are compared."""


class FrozenClock:
    """Stands in for the `time` module where the screens read the clock, so that the status
    line's "time on item" and "session" are the same in both pictures."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(label_app_module, "time", FrozenClock(1000.0))
    monkeypatch.setattr(status_module, "time", FrozenClock(1083.0))


def picture(app: LabelApp) -> list[list[tuple[str, object]]]:
    """Every line of the screen as drawn: its text runs with their styles."""
    lines = app.screen._compositor.render_strips()
    return [[(s.text, s.style) for s in Strip(line).simplify()] for line in lines]


async def redrawn_picture(app: LabelApp, pilot: Pilot) -> list[list[tuple[str, object]]]:
    """The picture once every text is laid out and drawn again and the bar is given its
    exact figures: what the screen showed when each keypress redrew everything. (Not a new
    screen: Textual's bar draws its first figure before it knows its width, so a new screen's
    bar can differ by half a cell whatever the keypress does.)"""
    screen = app.screen
    status = screen.query_one(StatusBar)
    done, total = phase_counts(status.phase, status.progress)
    screen.query_one(ProgressBar).update(total=max(total, 1), progress=done)
    for widget in screen.query(Static):
        widget.refresh(layout=True)
    await settle(pilot)
    return picture(app)


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
async def test_the_next_item_looks_as_after_a_full_redraw(workspace, tmp_path, size):
    study = build_study(
        workspace.engine, tmp_path, "superglue/rte", test=ROWS, overrides=QUICK_TEST
    )
    app = create_app(workspace.engine, study, "ana", create_annotator=True)
    async with app.run_test(size=size) as pilot:
        await start(pilot)
        first = app.screen
        assert isinstance(first, ItemScreen)
        kept, moved = 0, 0
        for n in range(1, 16):
            shown = first.item.item_id
            bar_before = first.query_one(ProgressBar).progress
            await pilot.press("1")
            await wait_until(pilot, lambda s=shown: first.item.item_id != s, "the next item")
            await settle(pilot)
            assert app.screen is first  # drawn in place, not a new screen
            assert first.progress.test_done == n
            bar_after = first.query_one(ProgressBar).progress
            kept, moved = kept + (bar_after == bar_before), moved + (bar_after != bar_before)
            assert picture(app) == await redrawn_picture(app, pilot), f"after answer {n}"
        assert kept and moved  # both ways of updating the bar were compared


TEXTS = [
    "",
    "Short.",
    "Short.\n",
    "Two\nlines",
    "x" * 40,  # exactly the width
    "x" * 41,  # one cell more: folded
    "word " * 8,  # 40 cells with its trailing space
    "word " * 9,  # wrapped at a space
    "日本語のテキスト" * 3,  # wide characters: 48 cells
    "日本語のテキスト" * 2 + "日本",  # 36 cells
    "a\tb",  # a tab: Textual's own count
    "\n\n",
    LONG_PREMISE_SENTENCES[0],
]


@pytest.mark.parametrize("content", TEXTS, ids=range(len(TEXTS)))
async def test_the_line_count_of_a_new_text_is_textuals(content):
    """The next item's texts are counted without wrapping them when no line is wider than
    the widget: the count must be the one Textual's layout would make."""
    from textual.app import App, ComposeResult

    from annotate.presentation.verbatim import heading
    from annotate.terminal_text import SafeText
    from annotate.tui.screens.item import text_height

    class One(App[None]):
        CSS = "Static { width: 40; }"

        def compose(self) -> ComposeResult:
            yield Static("", markup=False)

    app = One()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        widget = app.query_one(Static)
        for text in (SafeText(content), heading("Premise", SafeText(content))):
            widget.update(text, layout=False)
            shown = widget.content_size
            textual = widget.get_content_height(shown, shown, shown.width)
            assert text_height(widget, text, shown) == textual, repr(text.plain)
