"""The small dialog behind `f`: flag the item, with an optional comment."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from annotate.protocol.flags import COMMENT_MAX_CHARS
from annotate.tui.widgets.title import ellipsize

FLAG_NOTE_CELLS = 140
"""A flag comment as the item screen and the quit dialog show it: two lines at 80 columns at
most, so the item and its answer keys stay in view (the whole comment is sent)."""


def shortened(comment: str) -> str:
    """`comment` on one line, cut with … to FLAG_NOTE_CELLS (cut to that many characters
    first: a pasted page is not measured a character at a time)."""
    return ellipsize(" ".join(comment.split())[: FLAG_NOTE_CELLS + 1], FLAG_NOTE_CELLS)


class CommentInput(Input):
    """The comment's field. Textual's Input refuses a paste whole when it would pass
    max_length (nothing at all appears); here the paste keeps what fits."""

    def _on_paste(self, event: events.Paste) -> None:
        event.prevent_default()  # not Input's own handling as well
        event.stop()
        line = event.text.splitlines()[0] if event.text else ""
        start, end = sorted((self.selection.start, self.selection.end))
        room = max(0, self.max_length - len(self.value) + (end - start))
        if line[:room]:
            self.replace(line[:room], start, end)


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
            yield CommentInput(
                value=self.comment,
                placeholder="comment (optional)",
                max_length=COMMENT_MAX_CHARS,  # as the page's: a paste of a file is cut
                id="flag-comment",
            )

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
