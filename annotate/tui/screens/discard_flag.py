"""Asked when the annotator quits with a flag not yet sent: a flag (and its comment) goes with
the answer to the item, so quitting before answering would drop it without a word."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.flag import shortened


class DiscardFlagModal(ModalScreen[bool]):
    """Dismisses with True (discard the flag and quit) or False (keep it: back to the item)."""

    BINDINGS = [
        Binding("d", "discard", "Discard and quit"),
        Binding("escape,k,enter", "keep", "Keep it"),
    ]

    def __init__(self, comment: str) -> None:
        super().__init__()
        self.comment = comment

    def compose(self) -> ComposeResult:
        what = "flag comment" if self.comment else "flag"
        with Vertical(id="discard-dialog"):
            yield Static(Text(f"Discard your {what}?", style="bold"), classes="dialog-title")
            if self.comment:
                quoted = Text(shortened(self.comment), style="italic")
                yield Static(Text.assemble("“", quoted, "”"))
            yield Static(
                Text(
                    "A flag is sent with your answer to this item, and you have not answered "
                    "it yet: if you quit now, the flag is lost."
                ),
                id="discard-why",
            )
            yield Static(
                Text.assemble(
                    (" Enter ", "bold reverse"),
                    " keep it, back to the item   ",
                    (" d ", "bold reverse"),
                    " discard and quit",
                ),
                id="discard-keys",
            )

    def action_discard(self) -> None:
        self.dismiss(True)

    def action_keep(self) -> None:
        self.dismiss(False)
