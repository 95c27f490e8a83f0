"""Pieces the curation screens share: the problems box and the opinions of an example."""

from __future__ import annotations

from annotate.curation.review import Opinion
from annotate.curation.validation import Problem
from annotate.terminal_text import SafeText as Text
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
