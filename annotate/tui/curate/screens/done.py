"""Nothing (more) to do in this mode: say so, and what was done."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from annotate.terminal_text import SafeText as Text


class NothingLeftScreen(Screen[None]):
    # q works here too; the footer shows the app's one Quit (^q), not a second one.
    BINDINGS = [Binding("q,escape", "app.quit", "Quit", show=False)]

    def __init__(self, title: str, detail: str) -> None:
        super().__init__()
        self.title_text = title
        self.detail = detail

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(classes="message-box"):
            yield Static(Text(self.title_text, style="bold"), classes="message-title")
            yield Static(Text(self.detail))
            yield Static(Text("Press q to quit.", style="dim"))
        yield Footer()
