"""Pieces the curation screens share: the problems box, the opinions of an example, and a
screen that shows its example again when someone changed it meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.screen import Screen
from textual.widgets import Static

from annotate.curation.review import ExampleChanged, Opinion
from annotate.curation.validation import DraftInvalid, Problem
from annotate.errors import UserError
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
    message (the app's handlers are named after the screen), `GONE`, `_example_id`, `_fresh`
    and `_refill`."""

    GONE = ""
    """What became of an example that changed and left this curator's queue."""

    UNSAVED = ""
    """What Ctrl+Q would lose when `has_unsaved_work` ("Your review"), for its question."""

    def has_unsaved_work(self) -> bool:
        """Anything the curator chose or typed on this screen that Ctrl+S has not stored."""
        raise NotImplementedError

    def _example_id(self) -> int:
        """The example on the screen."""
        raise NotImplementedError

    async def _store(self, judgement: Callable[[], object]) -> None:
        """Store this screen's judgement (`judgement` asks the desk), then go on; or say why
        nothing was stored: the example changed meanwhile (shown again), the form has a
        problem (listed, the cursor on its field), or the desk refused it."""
        try:
            judgement()
        except ExampleChanged as exc:
            await self._show_again(exc)
            return
        except DraftInvalid as exc:
            box = self.query_one("#problems", Static)
            box.update(problems_text(exc.problems))
            box.display = True
            self.query_one(FOCUS_OF_FIELD.get(exc.problems[0].field, "#label")).focus()
            return
        except UserError as exc:
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
            return
        self.post_message(self.Done(self, self._example_id(), skipped=False))  # type: ignore[attr-defined]

    def action_skip(self) -> None:
        self.post_message(self.Done(self, self._example_id(), skipped=True))  # type: ignore[attr-defined]

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
