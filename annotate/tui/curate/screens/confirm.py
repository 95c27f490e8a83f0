"""A yes/no question before something is lost: the author's half-written pair on Ctrl+Q or
Ctrl+R, a half-made review or decision on Ctrl+Q. Dismisses with True (go ahead) or False
(keep writing)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmDiscard(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes, discard"),
        Binding("n,escape", "answer(False)", "No, keep writing"),
    ]

    def __init__(self, question: str, what: str = "The pair on the form") -> None:
        super().__init__()
        self.question = question
        self.what = what
        """What would be lost, as the dialog names it ("Your review")."""

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(Text(self.question, style="bold"), classes="dialog-title")
            yield Static(Text(f"{self.what} is not saved (Ctrl+S saves it)."))
            yield Static(Text("y: discard it · n or Esc: keep writing", style="dim"))

    def action_answer(self, discard: bool) -> None:
        self.dismiss(discard)
