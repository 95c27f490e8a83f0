"""The answer keys, docked above the footer so they are always in view, and the list of every
key of the guidelines and the help: both in lines of the width they have."""

from __future__ import annotations

from rich.style import Style
from textual.widgets import Static

from annotate.presentation.answer_keys import (
    LINE_WIDTH,
    ScreenKeys,
    answer_keys_text,
    key,
    keys_text,
    typed_keys_hint,
)
from annotate.specs import LabelOption, TaskSpec
from annotate.terminal_text import SafeText as Text


def clickable(option: LabelOption) -> Text:
    """` 1  Positive`, which answers when clicked or tapped (a browser on a phone has no
    keyboard to press the key with): the click runs the screen's `answer_key` action."""
    part = Text.assemble(key(option.key), " ", Text(option.text))
    part.stylize(Style(meta={"@click": f"screen.answer_key({option.key!r})"}))
    return part


class FittedKeys(Static):
    """Key lines of 80 columns, or of the widget's own width when the terminal is narrower:
    CB's columns then line up two by two instead of breaking inside "Leaning true" or
    between a key and its point, and ReCoRD's hint breaks between its keys."""

    def __init__(self, spec: TaskSpec, *, id: str | None = None) -> None:
        self.spec = spec
        self.line_width = LINE_WIDTH
        super().__init__(self.keys(LINE_WIDTH), id=id)

    def keys(self, width: int) -> Text:
        """The keys in lines of `width`."""
        raise NotImplementedError

    def on_resize(self) -> None:
        # After the layout under way: a new text set during it keeps the old text's height.
        self.call_after_refresh(self._fit_width)

    def _fit_width(self) -> None:
        width = min(LINE_WIDTH, self.content_size.width)
        if width > 0 and width != self.line_width:
            self.line_width = width
            self.update(self.keys(width))


class AnswerBar(FittedKeys):
    """The answer keys, each clickable, docked above the footer."""

    def __init__(self, spec: TaskSpec) -> None:
        super().__init__(spec, id="answer-bar")

    def keys(self, width: int) -> Text:
        keys = answer_keys_text(self.spec, clickable, width)
        hint = typed_keys_hint(self.spec)  # a scale past 9: how to type "10"
        return keys if hint is None else Text("\n").join([keys, hint])


class KeysList(FittedKeys):
    """Every key of a screen (default: the item screen's), answer keys first (the guidelines
    and the help)."""

    def __init__(
        self, spec: TaskSpec, come_back: str, *, id: str, keys: ScreenKeys | None = None
    ) -> None:
        self.come_back = come_back
        self.screen_keys = keys
        super().__init__(spec, id=id)

    def keys(self, width: int) -> Text:
        return keys_text(self.spec, self.come_back, width, self.screen_keys)
