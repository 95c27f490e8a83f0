"""Pieces the curation screens share: the problems box, the opinions of an example, and a
screen that shows its example again when someone changed it meanwhile."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen

from annotate.curation.review import ExampleChanged, Opinion
from annotate.curation.validation import Problem
from annotate.terminal_text import SafeText as Text
from annotate.text import terminal_safe
from annotate.tui.curate.widgets.label_choice import label_text

FOCUS_OF_FIELD = {
    "premise": "#premise",
    "hypothesis": "#hypothesis",
    "forward": "#forward",
    "backward": "#backward",
    "label": "#label",
    "tags": "#tag-filter",
}
"""Where the cursor goes to fix a problem with each field."""


def problems_text(problems: list[Problem], heading: str = "Not saved:") -> Text:
    text = Text(heading, style="bold")
    for problem in problems:
        text.append("\n✗ ", style="bold red")
        text.append(problem.message)
    return text


def opinions_text(opinions: list[Opinion]) -> Text:
    """Each person's label and tags, one line each (names and notes verbatim)."""
    text = Text()
    for n, opinion in enumerate(opinions):
        if n:
            text.append("\n")
        text.append(f"{opinion.role:<9} ", style="dim")  # a long role still ends in a space
        text.append(opinion.who, style="bold")
        text.append("  ")
        text.append(label_text(opinion.label), style="reverse")
        text.append("  ")
        text.append(" · ".join(opinion.tags) if opinion.tags else "(no tags)")
        if opinion.note:
            text.append("\n          note: ", style="dim")
            text.append(opinion.note, style="italic")
    return text


class ExampleScreen(Screen[None]):
    """A screen that judges one example (review, adjudication). Each defines its own `Done`
    message (the app's handlers are named after the screen), `GONE`, `_fresh` and `_refill`."""

    GONE = ""
    """What became of an example that changed and left this curator's queue."""

    def _fresh(self, example_id: int) -> Any | None:
        """The example as this screen would show it now, or None: no longer this curator's."""
        raise NotImplementedError

    def _refill(self, fresh: Any) -> None:
        """Take `fresh` (what `_fresh` gave) as the screen's example."""
        raise NotImplementedError

    async def _show_again(self, changed: ExampleChanged) -> None:
        """The example changed since this screen showed it (someone edited it meanwhile, or,
        for a decision, reviewed it): nothing was stored. Show it as it is now, read afresh,
        with a blank form; or, when the change left nothing for this curator, go on to the
        next one."""
        fresh = self._fresh(changed.example_id)
        if fresh is None:
            self.notify(
                f"example {changed.example_id} {changed.change} and {self.GONE}",
                severity="warning",
                markup=False,
            )
            self.post_message(self.Done(self, changed.example_id, skipped=True))  # type: ignore[attr-defined]
            return
        self._refill(fresh)
        await self.recompose()
        self.on_mount()  # type: ignore[attr-defined]
        self.notify(terminal_safe(str(changed)), severity="warning", markup=False)
