"""`?`: every key, then the guidelines again, over the current screen; how to close it stays
in view below them."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from annotate.presentation.answer_keys import ScreenKeys
from annotate.presentation.guidelines import prior_hint, reflow
from annotate.specs import ProtocolSpec, TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.guidelines import come_back_hint
from annotate.tui.widgets.answer_bar import KeysList


def keys_of(screen: Screen) -> ScreenKeys:
    """The keys of `screen` (its `help_keys`), or none but `?` and `q` (a dialog)."""
    help_keys = getattr(screen, "help_keys", None)
    return help_keys() if callable(help_keys) else ScreenKeys(False, [])


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark", "close", "Close"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, spec: TaskSpec, protocol: ProtocolSpec, keys: ScreenKeys) -> None:
        """`keys`: those of the screen the help was opened from (ScreenKeys)."""
        super().__init__()
        self.spec = spec
        self.protocol = protocol
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(id="help-dialog"):
            with VerticalScroll(id="help-body"):
                yield Static(Text("Keys", style="bold"), classes="dialog-title")
                yield KeysList(self.spec, come_back_hint(self.app), id="help-keys", keys=self.keys)
                yield Static(Text(f"\n{self.spec.title}", style="bold"))
                yield Static(Text(reflow(self.spec.guidelines)))
                if (hint := prior_hint(self.spec, self.protocol)) is not None:
                    yield Static(Text(hint, style="italic"))
            yield Static(
                Text.assemble(
                    ("Escape", "bold"),
                    " or ",
                    ("?", "bold"),
                    " closes this help   ",
                    ("↑↓ PgUp PgDn", "bold"),
                    " scroll",
                ),
                id="help-close",
            )

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss()
