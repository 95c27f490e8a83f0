"""Answer widgets for the tasks whose answer is not one key: MultiRC's true/false judgement of
every candidate answer, and ReCoRD's choice of an entity. Both are option lists (up/down move,
Enter selects) with the option text shown verbatim."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.message import Message
from textual.timer import Timer
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from annotate.presentation.verbatim import as_text
from annotate.specs import TaskSpec
from annotate.terminal_text import SafeText as Text

JUDGED_STYLE = {"1": "bold green", "0": "bold red"}
"""Colour of a MultiRC judgement by its stored value (True / False)."""


def numbered(n: int, text: str, suffix: Text | None = None) -> Text:
    prompt = Text.assemble((f"{n:>2}. ", "bold"), Text(text))
    if suffix is not None:
        prompt.append_text(suffix)
    return prompt


class CandidateJudgements(OptionList):
    """MultiRC: each candidate answer judged with an answer key; Enter submits once all are."""

    def __init__(
        self, spec: TaskSpec, answers: list[dict[str, Any]], previous: dict[str, str] | None
    ) -> None:
        self.spec = spec
        self.answers = [(as_text(a["idx"]), as_text(a["text"])) for a in answers]
        self.judgements: dict[str, str] = dict(previous or {})
        self.opened_with = dict(self.judgements)
        """The judgements shown at the start (the previous answer's, when revising): any other
        is the annotator's work, lost if they quit before submitting it."""
        super().__init__(*self._options(), id="chooser", markup=False, compact=True)

    def _prompt(self, n: int, idx: str, text: str) -> Text:
        value = self.judgements.get(idx)
        if value is None:
            mark = Text("   ·  not judged yet", style="dim")
        else:
            mark = Text(
                f"   →  {self.spec.label_text(value)}", style=JUDGED_STYLE.get(value, "bold")
            )
        return numbered(n, text, mark)

    def _options(self) -> list[Option]:
        return [
            Option(self._prompt(n, idx, text), id=f"answer-{n}")
            for n, (idx, text) in enumerate(self.answers, start=1)
        ]

    def on_mount(self) -> None:
        self.highlighted = self._first_unjudged(0) or 0

    def _first_unjudged(self, start: int) -> int | None:
        order = list(range(start, len(self.answers))) + list(range(start))
        return next((i for i in order if self.answers[i][0] not in self.judgements), None)

    def judge(self, value: str) -> None:
        """Judge the highlighted candidate, then move to the next one still open (so pressing
        the keys in order answers the list from top to bottom)."""
        index = self.highlighted or 0
        idx, text = self.answers[index]
        self.judgements[idx] = value
        self.replace_option_prompt_at_index(index, self._prompt(index + 1, idx, text))
        following = self._first_unjudged(index + 1 if index + 1 < len(self.answers) else 0)
        if following is not None:
            self.highlighted = following

    @property
    def remaining(self) -> int:
        return sum(1 for idx, _ in self.answers if idx not in self.judgements)

    @property
    def changed(self) -> bool:
        """Whether anything was judged since the list was shown (not yet submitted)."""
        return self.judgements != self.opened_with

    def answer(self) -> dict[str, str]:
        return {idx: self.judgements[idx] for idx, _ in self.answers}


class EntityChoice(OptionList):
    """ReCoRD: the passage's entities, numbered. A number key highlights that entity and Enter
    picks the highlighted one, so nothing is stored before the annotator has seen the entity's
    name in the cue under the list. With 10 or more entities a `1` could be the start of 10-19:
    the cue shows the digit typed so far, and a pause of `SETTLE_SECONDS` (or Enter) settles it,
    so `1`, a pause, then `7` means entity 7, never 17."""

    SETTLE_SECONDS = 1.0

    class CueChanged(Message):
        """What the cue under the list should say now."""

        def __init__(self, chooser: EntityChoice) -> None:
            super().__init__()
            self.chooser = chooser

    def __init__(self, entities: list[Any], previous: str | None) -> None:
        self.entities = [as_text(e) for e in entities]
        self.previous = previous
        self.typed = ""
        """Digits typed so far of a number that could still grow (12 after 1, of 15 entities)."""
        self._settle_timer: Timer | None = None
        super().__init__(
            *(Option(numbered(n, e)) for n, e in enumerate(self.entities, start=1)),
            id="chooser",
            markup=False,
            compact=True,
        )

    def on_mount(self) -> None:
        index = self.entities.index(self.previous) if self.previous in self.entities else 0
        self.highlighted = index if self.entities else None

    def type_digit(self, digit: str) -> None:
        """A number key: highlight the entity it names. With 9 entities or fewer every key
        names one at once; with 15, `1` waits a moment for a second digit (entity 1 is
        highlighted meanwhile) and `2` names entity 2."""
        self._stop_settling()
        count = len(self.entities)
        for typed in (self.typed + digit, digit):
            number = int(typed)
            if 1 <= number <= count:
                break
        else:
            self.typed = ""
            self.post_message(self.CueChanged(self))
            return
        self.highlighted = number - 1
        self.typed = "" if number * 10 > count else typed
        if self.typed:
            self._settle_timer = self.set_timer(self.SETTLE_SECONDS, self.settle)
        self.post_message(self.CueChanged(self))

    def settle(self) -> None:
        """The digits typed so far are the whole number (a pause, Enter or another key)."""
        self._stop_settling()
        if self.typed:
            self.typed = ""
            self.post_message(self.CueChanged(self))

    def _stop_settling(self) -> None:
        if self._settle_timer is not None:
            self._settle_timer.stop()
            self._settle_timer = None

    def cue(self) -> Text:
        """The line under the list: the highlighted entity by name, and what a key does now."""
        if self.highlighted is None or not self.entities:
            return Text("")
        number = self.highlighted + 1
        chosen = numbered(number, self.entities[self.highlighted])
        chosen.stylize("bold")
        if self.typed:
            top = min(len(self.entities), int(self.typed) * 10 + 9)
            return Text.assemble(
                (f"Typed {self.typed}", "bold reverse"),
                f": another digit for {int(self.typed) * 10}–{top}, or Enter for ",
                chosen,
            )
        return Text.assemble("Enter chooses ", chosen, Text(" (a number or ↑↓ to change)"))

    def on_key(self, event: events.Key) -> None:
        if not (event.character or "").isdigit():
            self.settle()  # moving with the arrows or Enter ends the number

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.post_message(self.CueChanged(self))
