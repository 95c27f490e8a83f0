"""The answer keys, docked above the footer so they are always in view."""

from __future__ import annotations

from rich.style import Style
from textual.widgets import Static

from annotate.presentation.answer_keys import LINE_WIDTH, answer_keys_text, key
from annotate.specs import LabelOption, TaskSpec
from annotate.terminal_text import SafeText as Text


def clickable(option: LabelOption) -> Text:
    """` 1  Positive`, which answers when clicked or tapped (a browser on a phone has no
    keyboard to press the key with): the click runs the screen's `answer_key` action."""
    part = Text.assemble(key(option.key), " ", Text(option.text))
    part.stylize(Style(meta={"@click": f"screen.answer_key({option.key!r})"}))
    return part


class AnswerBar(Static):
    """The keys in lines of 80 columns, or of the bar's own width when the terminal is
    narrower: CB's columns then line up two by two instead of breaking inside "Leaning
    true", and ReCoRD's hint breaks between its keys."""

    def __init__(self, spec: TaskSpec) -> None:
        self.spec = spec
        self.line_width = LINE_WIDTH
        super().__init__(answer_keys_text(spec, clickable), id="answer-bar")

    def on_resize(self) -> None:
        # After the layout under way: a new text set during it keeps the old text's height.
        self.call_after_refresh(self._fit_width)

    def _fit_width(self) -> None:
        width = min(LINE_WIDTH, self.content_size.width)
        if width > 0 and width != self.line_width:
            self.line_width = width
            self.update(answer_keys_text(self.spec, clickable, width))
