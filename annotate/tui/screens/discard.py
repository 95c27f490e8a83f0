"""Asked when the annotator quits with work not yet sent: a flag (and its comment) goes with
the answer to the item, MultiRC's judgements of the candidate answers are stored only when
they are submitted, and an answer given while the store is away waits for it, so quitting
before any of them would drop it without a word."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.flag import shortened


@dataclass(frozen=True)
class Unsent:
    """What quitting now would drop."""

    flag: str | None = None
    """The comment of a flag not yet sent ("" for a flag without one); None: no flag."""
    judged: int = 0
    """MultiRC: candidate answers judged (or judged anew, when revising) and not submitted."""
    candidates: int = 0
    """The item's candidate answers, to say how far the judging got."""
    held: str | None = None
    """An answer given while the store is away, kept to be stored when it is back (described);
    None: none."""


class DiscardModal(ModalScreen[bool]):
    """Dismisses with True (discard and quit) or False (keep it: back to the item)."""

    BINDINGS = [
        Binding("d", "discard", "Discard and quit"),
        Binding("escape,k,enter", "keep", "Keep it"),
    ]

    def __init__(self, unsent: Unsent) -> None:
        super().__init__()
        self.unsent = unsent

    def compose(self) -> ComposeResult:
        flag, comment, judged = self.unsent.flag is not None, self.unsent.flag, self.unsent.judged
        what = [("flag comment" if comment else "flag")] if flag else []
        what += ["judgements"] if judged else []
        what += ["answer"] if self.unsent.held else []
        why = []
        if self.unsent.held:
            why.append(
                f"Your answer ({self.unsent.held}) is not saved yet: the store cannot be "
                "reached just now, and the answer is sent by itself once it can: if you quit "
                "now, it is lost."
            )
        if flag:
            why.append(
                "A flag is sent with your answer to this item, and you have not answered "
                "it yet: if you quit now, the flag is lost."
            )
        if judged:
            why.append(
                f"Judgements are stored when you submit them with Enter ({judged} of "
                f"{self.unsent.candidates} candidate answers judged), and you have not "
                "submitted them yet: if you quit now, they are lost."
            )
        with Vertical(id="discard-dialog"):
            title = f"Discard your {' and '.join(what)}?"
            yield Static(Text(title, style="bold"), classes="dialog-title")
            if comment:
                quoted = Text(shortened(comment), style="italic")
                yield Static(Text.assemble("“", quoted, "”"))
            yield Static(Text(" ".join(why)), id="discard-why")
            yield Static(
                Text.assemble(
                    (" Enter ", "bold reverse"),
                    " keep them, back to the item   "
                    if judged or len(what) > 1
                    else " keep it, back to the item   ",
                    (" d ", "bold reverse"),
                    " discard and quit",
                ),
                id="discard-keys",
            )

    def action_discard(self) -> None:
        self.dismiss(True)

    def action_keep(self) -> None:
        self.dismiss(False)
