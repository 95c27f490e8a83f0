"""The answer keys, docked above the footer so they are always in view."""

from __future__ import annotations

from rich.style import Style
from textual.widgets import Static

from annotate.presentation.answer_keys import answer_keys_text, key
from annotate.specs import LabelOption, TaskSpec
from annotate.terminal_text import SafeText as Text


def clickable(option: LabelOption) -> Text:
    """` 1  Positive`, which answers when clicked or tapped (a browser on a phone has no
    keyboard to press the key with): the click runs the screen's `answer_key` action."""
    part = Text.assemble(key(option.key), " ", Text(option.text))
    part.stylize(Style(meta={"@click": f"screen.answer_key({option.key!r})"}))
    return part


class AnswerBar(Static):
    def __init__(self, spec: TaskSpec) -> None:
        super().__init__(answer_keys_text(spec, clickable), id="answer-bar")
