"""The first screen: the task, its guidelines, the label-prior hint and the keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotate.presentation.answer_keys import COME_BACK, ScreenKeys
from annotate.presentation.guidelines import prior_hint, reflow, where_you_are
from annotate.protocol.session import Progress
from annotate.specs import ProtocolSpec, TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.messages import ScreenMessage
from annotate.tui.widgets.answer_bar import KeysList
from annotate.tui.widgets.title import FittedHeader


def come_back_hint(app: object) -> str:
    """How to resume in this app: a terminal's words, or the browser app's own."""
    return getattr(app, "COME_BACK", COME_BACK)


class GuidelinesScreen(Screen[None]):
    BINDINGS = [Binding("enter", "start", "Start")]

    class Start(ScreenMessage):
        """The annotator has read the guidelines."""

    def __init__(
        self,
        spec: TaskSpec,
        protocol: ProtocolSpec,
        progress: Progress,
        preface: str | None = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.protocol = protocol
        self.progress = progress
        self.preface = preface
        """The researcher's own words above the task's guidelines (a crowd study's settings)."""

    def compose(self) -> ComposeResult:
        yield FittedHeader()
        with VerticalScroll(id="body"):
            yield Static(Text(self.spec.title, style="bold"), classes="dialog-title")
            if self.preface:
                yield Static(Text(reflow(self.preface)), id="preface")
            yield Static(Text(reflow(self.spec.guidelines)), id="guidelines")
            if (hint := prior_hint(self.spec, self.protocol)) is not None:
                yield Static(Text(hint, style="italic"), id="prior-hint")
            yield KeysList(self.spec, come_back_hint(self.app), id="keys")
        yield Static(
            Text.assemble(
                where_you_are(self.progress, self.protocol),
                " ",
                ("Press Enter to start.", "bold"),
            ),
            id="start-line",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#body").focus()

    def help_keys(self) -> ScreenKeys:
        """The keys of this screen for its help (the items' keys are listed on the screen)."""
        return ScreenKeys(False, [("Enter", "start")])

    def action_start(self) -> None:
        self.post_message(self.Start(self))
