"""After a training answer: right or wrong, the gold label, the explanation, running accuracy.

The item stays on screen above the verdict so the annotator can see why; a key moves on.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotate.presentation.answer_keys import ScreenKeys, feedback_keys
from annotate.presentation.feedback import accuracy_line, answer_lines, gate_line, verdict_line
from annotate.presentation.progress import status_phase
from annotate.protocol.session import Feedback, ItemView, Progress
from annotate.specs import TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.messages import ScreenMessage
from annotate.tui.widgets.item_body import build_item
from annotate.tui.widgets.overflow import (
    FEEDBACK_KEYS,
    cue,
    scroll_pinned,
    show_pinned_cue,
    watch_overflow,
)
from annotate.tui.widgets.room import fit_blocks
from annotate.tui.widgets.status import StatusBar
from annotate.tui.widgets.title import FittedHeader


class FeedbackScreen(Screen[None]):
    BINDINGS = [
        Binding("enter", "next", "Continue"),
        Binding("space", "next", "Continue", show=False),
        # Priority: the passage scrolls even while the feedback (focused) could take the key.
        Binding("pageup", "scroll_body(-1)", "Scroll", show=False, priority=True),
        Binding("pagedown", "scroll_body(1)", "Scroll", show=False, priority=True),
        Binding("shift+up", "scroll_pinned(-1)", "Scroll", show=False, priority=True),
        Binding("shift+down", "scroll_pinned(1)", "Scroll", show=False, priority=True),
    ]

    class Continue(ScreenMessage):
        """The annotator has read the feedback."""

    def __init__(
        self,
        spec: TaskSpec,
        item: ItemView,
        answer: Any,
        feedback: Feedback,
        progress: Progress,
        started: float,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.item = item
        self.answer = answer
        self.feedback = feedback
        self.progress = progress
        self.started = started
        self.moved_on = False

    def compose(self) -> ComposeResult:
        parts = build_item(self.spec, self.item.fields)
        yield FittedHeader()
        yield StatusBar(status_phase(self.item), self.progress, self.started, item_clock=False)
        with VerticalScroll(id="body"):
            yield from parts.scrolling
        if parts.pinned:  # as on the item screen: the hypothesis or question stays in view
            with Vertical(id="pinned"):
                yield from parts.pinned
        # Focused, so ↑↓ scroll it when it is longer than its rows (MultiRC's candidates).
        with VerticalScroll(id="feedback"):
            yield Static(verdict_line(self.feedback), id="verdict")
            yield Static(
                answer_lines(self.spec, self.feedback, self.answer, self.item), id="answers"
            )
            if self.feedback.explanation:
                yield Static(
                    Text.assemble(("Why: ", "bold"), Text(self.feedback.explanation)),
                    id="explanation",
                )
            yield Static(accuracy_line(self.feedback), id="accuracy")
            if (line := gate_line(self.feedback)) is not None:
                yield Static(line, id="gate-line")
        # Outside the scrolling feedback: always in view.
        yield Static(Text("Press Enter or Space to continue.", style="dim"), id="continue-line")
        yield Footer()

    def on_mount(self) -> None:
        fit_blocks(self)
        panel = self.query_one("#feedback", VerticalScroll)
        panel.focus()
        watch_overflow(self, "#body, #pinned, #feedback", self._show_overflow)

    def on_resize(self) -> None:
        fit_blocks(self)
        self.call_after_refresh(self._show_overflow)

    def _show_overflow(self, *_: object) -> None:
        """Say on the borders what continues below, and with which key."""
        panel = self.query_one("#feedback")
        panel.border_title = cue(("more feedback below", panel, FEEDBACK_KEYS))
        show_pinned_cue(self)

    def action_scroll_body(self, direction: int) -> None:
        body = self.query_one("#body", VerticalScroll)
        if direction < 0:
            body.scroll_page_up()
        else:
            body.scroll_page_down()

    def action_scroll_pinned(self, direction: int) -> None:
        scroll_pinned(self, direction)

    def help_keys(self) -> ScreenKeys:
        """The keys of this screen for its help: no answer keys (the answer is given)."""
        return feedback_keys(pinned=bool(self.query("#pinned")))

    def action_next(self) -> None:
        if not self.moved_on:
            self.moved_on = True
            self.post_message(self.Continue(self))
