"""The small dialog behind `f`: flag the item, with an optional comment."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class FlagModal(ModalScreen[str | None]):
    """Dismisses with the comment ("" for a flag without one), or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, comment: str | None = None) -> None:
        super().__init__()
        self.comment = comment or ""

    def compose(self) -> ComposeResult:
        with Vertical(id="flag-dialog"):
            yield Static("Flag this item", classes="dialog-title")
            yield Static(
                "Something wrong with it (a typo, unclear, no good answer)? Say what, if you "
                "like. Enter flags it; Escape cancels.",
                markup=False,
            )
            yield Input(value=self.comment, placeholder="comment (optional)", id="flag-comment")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def typed(self) -> str:
        """What the annotator has typed so far (not yet sent)."""
        return self.query_one(Input).value
