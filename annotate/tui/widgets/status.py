"""The line under the header: where the annotator stands in the phase, and the time spent on
the item on screen and in this session, each labelled (a bare clock says neither)."""

from __future__ import annotations

import time

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import ProgressBar, Static

from annotate.presentation.progress import describe_progress, phase_counts
from annotate.protocol.session import Progress
from annotate.terminal_text import SafeText as Text


def format_elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class StatusBar(Horizontal):
    """Phase, done/total with a bar, the time on this item (`item_clock`: not on the feedback
    screen, where the item is answered) and since the app started, updated every second."""

    def __init__(
        self, phase: str, progress: Progress, started: float, *, item_clock: bool = True
    ) -> None:
        super().__init__(id="status")
        self.phase = phase
        self.progress = progress
        self.started = started
        self.item_clock = item_clock
        self.item_started = time.monotonic()

    def compose(self) -> ComposeResult:
        _, total = phase_counts(self.phase, self.progress)
        yield Static(describe_progress(self.phase, self.progress), id="status-phase")
        yield ProgressBar(total=max(total, 1), show_eta=False, id="status-bar")
        yield Static(self._elapsed(), id="status-time")

    def on_mount(self) -> None:
        done, _ = phase_counts(self.phase, self.progress)
        self.query_one(ProgressBar).progress = done
        self.set_interval(1.0, self._tick)

    def on_resize(self) -> None:
        # The bar's cells depend on its width: give it the exact figures again.
        done, total = phase_counts(self.phase, self.progress)
        self.query_one(ProgressBar).update(total=max(total, 1), progress=done)

    def set_progress(self, phase: str, progress: Progress) -> None:
        """Move to the next item's figures without rebuilding the bar. This runs at every
        keypress, so only what is drawn differently is redrawn (bench/bench_keypress.py)."""
        self.phase, self.progress = phase, progress
        self.item_started = time.monotonic()  # a new item: its clock starts again
        set_line(self.query_one("#status-time", Static), self._elapsed())
        done, total = phase_counts(phase, progress)
        set_line(self.query_one("#status-phase", Static), describe_progress(phase, progress))
        bar = self.query_one(ProgressBar)
        if bar_moves(bar, done, max(total, 1)):
            bar.update(total=max(total, 1), progress=done)

    def _elapsed(self) -> Text:
        now = time.monotonic()
        session = Text.assemble(("session ", "dim"), format_elapsed(now - self.started))
        if not self.item_clock:
            return session
        item = Text.assemble(("time on item ", "dim"), format_elapsed(now - self.item_started))
        return Text.assemble(item, (" · ", "dim"), session)

    def _tick(self) -> None:
        set_line(self.query_one("#status-time", Static), self._elapsed())


def set_line(widget: Static, text: Text) -> None:
    """Put one line of text in a widget as wide as its text (`width: auto`): nothing to do if
    it says the same (the clocks, answering within the second), laid out again only when the
    width changes (a new digit), else just redrawn, which costs far less than a layout of the
    screen."""
    if widget.content == text:
        return
    widget.update(text, layout=widget.size.width != text.cell_len)


def bar_moves(bar: ProgressBar, done: int, total: int) -> bool:
    """Whether the bar would look different at `done` of `total`. With 200,000 test items an
    answer moves neither its percentage nor its half-cells, and an update would redraw both
    anyway (Textual's data binding refreshes them on every change of the fraction). Reads only
    `progress` and `total`: reading the computed `percentage` refreshes them too."""
    if bar.total != total or not bar.total:
        return True
    cells = 2 * bar.query_one("#bar", Widget).size.width  # the bar draws half cells
    before, after = _fraction(bar.progress, total), _fraction(done, total)
    return round(before * 100) != round(after * 100) or int(before * cells) != int(after * cells)


def _fraction(done: float, total: float) -> float:
    return min(max(done / total, 0.0), 1.0)
