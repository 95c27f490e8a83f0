"""`?`: every key, then the guidelines again, over the current screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from annotate.specs import ProtocolSpec, TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.guidelines import come_back_hint, keys_text, prior_hint, reflow


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark", "close", "Close"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, spec: TaskSpec, protocol: ProtocolSpec) -> None:
        super().__init__()
        self.spec = spec
        self.protocol = protocol

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Static(Text("Keys", style="bold"), classes="dialog-title")
            yield Static(keys_text(self.spec, come_back_hint(self.app)), id="help-keys")
            yield Static(Text(f"\n{self.spec.title}", style="bold"))
            yield Static(Text(reflow(self.spec.guidelines)))
            if (hint := prior_hint(self.spec, self.protocol)) is not None:
                yield Static(Text(hint, style="italic"))
            yield Static(Text("\nEscape or ? closes this help.", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#help-dialog").focus()

    def action_close(self) -> None:
        self.dismiss()
