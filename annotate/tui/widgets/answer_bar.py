"""The answer keys, docked above the footer so they are always in view."""

from __future__ import annotations

from rich.style import Style
from textual.widgets import Static

from annotate.specs import LabelOption, TaskSpec
from annotate.terminal_text import SafeText as Text

INLINE_LIMIT = 24
"""Options with texts up to this long share a line; longer ones (STS-B's anchors, RTE's
explanations) get a line each so nothing is cut at 80 columns."""

KEY_STYLE = "bold reverse"


def _key(key: str) -> Text:
    return Text(f" {key} ", style=KEY_STYLE)


def clickable(option: LabelOption) -> Text:
    """` 1  Positive`, which answers when clicked or tapped (a browser on a phone has no
    keyboard to press the key with): the click runs the screen's `answer_key` action."""
    part = Text.assemble(_key(option.key), " ", Text(option.text))
    part.stylize(Style(meta={"@click": f"screen.answer_key({option.key!r})"}))
    return part


def plain(option: LabelOption) -> Text:
    return Text.assemble(_key(option.key), " ", Text(option.text))


def option_lines(options: list[LabelOption], click: bool = False) -> Text:
    """`1 Positive  2 Negative` on one line, or one option per line when the texts are long."""
    one_per_line = any(len(o.text) > INLINE_LIMIT for o in options)
    show = clickable if click else plain
    return Text("\n" if one_per_line else "   ").join(show(o) for o in options)


def answer_keys_text(spec: TaskSpec, click: bool = False) -> Text:
    """What the answer bar says for this task (`click`: the answers answer when clicked, in
    the answer bar; the help screen only lists them)."""
    show = clickable if click else plain
    if spec.kind == "multi_answer":
        judge = Text("   ").join(show(o) for o in spec.answer_options())
        return Text.assemble(
            judge, "  the marked answer   ", _key("↑↓"), " move   ", _key("Enter"), " submit"
        )
    if spec.kind == "entity_choice":
        return Text.assemble(
            _key("1 2 3…"),
            " the entity with that number   ",
            _key("↑↓"),
            " move   ",
            _key("Enter"),
            " pick it",
        )
    return option_lines(spec.answer_options(), click)


class AnswerBar(Static):
    def __init__(self, spec: TaskSpec) -> None:
        super().__init__(answer_keys_text(spec, click=True), id="answer-bar")
