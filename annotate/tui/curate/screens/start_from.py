"""The small dialog behind Ctrl+O on the authoring screen: which example a new pair starts
from. Dismisses with the example's id, or None when cancelled."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class AskStartingExample(ModalScreen[int | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="start-from-dialog"):
            yield Static(
                Text("Start a new pair from an example", style="bold"), classes="dialog-title"
            )
            yield Static(
                Text(
                    "Its sentences and tags fill the form, to edit into a new pair; "
                    "the labels are yours to give."
                )
            )
            # Digits only: an id is all this asks for (`annotate curate list` shows them).
            yield Input(placeholder="example id", restrict=r"[0-9]*", id="start-from-id")
            yield Static(Text("Enter: fill the form · Esc: cancel", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(int(event.value) if event.value else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
