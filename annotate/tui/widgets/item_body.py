"""An item's fields as widgets, arranged by the task's layout.

Every layout splits into three parts (see `ItemParts`): text that scrolls (long passages), text
pinned below it so the thing being judged (a question, a hypothesis) stays in view however long
the passage is, and for MultiRC and ReCoRD an option list to answer with. Field texts are
`rich.text.Text`, so they are verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from textual.widget import Widget
from textual.widgets import OptionList, Static

from annotate.specs import FieldSpec, TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.widgets.choosers import CandidateJudgements, EntityChoice
from annotate.tui.widgets.verbatim import (
    HIGHLIGHT_STYLES,
    as_text,
    heading,
    highlight_span,
    highlight_styles,
    highlighted,
    mark_all,
)

PINNED_FIELDS = ("question", "query")
"""Fields kept in view below a scrolling passage (BoolQ, MultiRC, ReCoRD)."""

PIN_LAST_LAYOUTS = ("pair",)
"""Layouts whose last shown field is the one judged against the first (RTE's, CB's and AX's
hypothesis, WNLI's second sentence): it stays in view below a premise of any length."""

HIGHLIGHT_MARKER = "@highlight"
"""ReCoRD's passages end with the article's highlights, each after a line of this marker."""

CHOOSER_FIELDS = ("answers", "entities")
"""Fields shown as the option list rather than as text (MultiRC, ReCoRD)."""

COPA_QUESTIONS = {
    "cause": "What was the CAUSE of this?",
    "effect": "What happened as a RESULT?",
}

PLACEHOLDER = "@placeholder"


@dataclass
class ItemParts:
    scrolling: list[Widget] = field(default_factory=list)
    pinned: list[Widget] = field(default_factory=list)
    chooser: OptionList | None = None


FIELD_CLASS = "field"
"""The class of every text widget of an item (its CSS, and how the next item knows it)."""


@dataclass(frozen=True)
class Block:
    """One text of the item, before it is a widget: the next item on a screen laid out the
    same way only needs the texts (ItemScreen.show_item), and a widget costs more to make
    than its text."""

    id: str
    content: Text

    def widget(self) -> Static:
        return Static(self.content, id=self.id, classes=FIELD_CLASS, markup=False)


@dataclass
class ItemBlocks:
    """The item's texts by where they go (see ItemParts); `chooser`: whether it has an option
    list (made with the widgets: its options are the item's)."""

    scrolling: list[Block] = field(default_factory=list)
    pinned: list[Block] = field(default_factory=list)
    chooser: bool = False


def field_block(name: str, label: str, text: Text) -> Block:
    return Block(f"field-{name}", heading(label, text))


def field_text(spec: TaskSpec, f: FieldSpec, fields: dict[str, Any]) -> Text:
    """The field's text with its highlights (WiC's word, WSC's spans), if any."""
    text = as_text(fields.get(f.name, ""))
    spans = []
    for h, style in zip(spec.highlights, highlight_styles(spec.highlights), strict=True):
        if h.field == f.name and (span := highlight_span(h, fields)) is not None:
            spans.append((span, style))
        elif h.text == f.name:
            # The span's own text field (WSC's "Noun phrase") wears the span's colour.
            spans.append(((0, len(text)), style))
    if spec.layout == "entity_choice" and f.name == "query":
        return mark_all(text, PLACEHOLDER, HIGHLIGHT_STYLES[0])
    if spec.layout == "entity_choice" and HIGHLIGHT_MARKER in text:
        return with_highlight_list(text)
    return highlighted(text, spans)


def split_highlights(text: str) -> tuple[str, list[str]]:
    """ReCoRD's passage as (article, highlights): each line `@highlight` introduces the next
    line as one of the article's highlights (a highlight may span lines until the next marker)."""
    parts = re.split(rf"^[ \t]*{re.escape(HIGHLIGHT_MARKER)}[ \t]*$", text, flags=re.MULTILINE)
    highlights = [" ".join(p.split()) for p in parts[1:]]
    return parts[0].strip(), [h for h in highlights if h]


def with_highlight_list(text: str) -> Text:
    """The article, then its highlights as a bulleted list (not the raw markers)."""
    article, highlights = split_highlights(text)
    if not highlights:
        return Text(text)
    lines = [Text(article), Text(""), Text("Highlights", style="bold")]
    lines += [Text.assemble(" • ", Text(h)) for h in highlights]
    return Text("\n").join(lines)


def shown_fields(spec: TaskSpec, fields: dict[str, Any]) -> list[FieldSpec]:
    """Fields the annotator reads, skipping an optional field that is empty in this item."""
    return [
        f
        for f in spec.fields
        if f.shown and f.label and not (f.optional and fields.get(f.name) in ("", None))
    ]


def item_blocks(spec: TaskSpec, fields: dict[str, Any]) -> ItemBlocks:
    """The texts of one item, by where the task's layout puts them."""
    blocks = ItemBlocks(chooser=spec.layout in ("multi_answer", "entity_choice"))
    pin = spec.layout in ("passage_question", "multi_answer", "entity_choice")
    shown = shown_fields(spec, fields)
    pin_last = spec.layout in PIN_LAST_LAYOUTS and len(shown) > 1
    for f in shown:
        if f.name in CHOOSER_FIELDS and blocks.chooser:
            continue
        block = field_block(f.name, f.label, field_text(spec, f, fields))
        pinned = (pin and f.name in PINNED_FIELDS) or (pin_last and f is shown[-1])
        (blocks.pinned if pinned else blocks.scrolling).append(block)
        if spec.layout == "choice" and f.name == "premise":
            blocks.scrolling.append(copa_question(fields))
    return blocks


def build_item(
    spec: TaskSpec,
    fields: dict[str, Any],
    previous: Any = None,
    blocks: ItemBlocks | None = None,
) -> ItemParts:
    """Widgets for one item (of its `blocks`, when the caller has them already); `previous`
    pre-selects an earlier answer (revising)."""
    blocks = blocks or item_blocks(spec, fields)
    parts = ItemParts([b.widget() for b in blocks.scrolling], [b.widget() for b in blocks.pinned])
    if spec.layout == "multi_answer":
        parts.chooser = CandidateJudgements(
            spec, list(fields.get("answers", [])), previous if isinstance(previous, dict) else None
        )
    elif spec.layout == "entity_choice":
        parts.chooser = EntityChoice(
            list(fields.get("entities", [])), previous if isinstance(previous, str) else None
        )
    return parts


def copa_question(fields: dict[str, Any]) -> Block:
    """COPA's hidden `question` field ("cause"/"effect") as the question it stands for."""
    raw = as_text(fields.get("question", ""))
    prompt = COPA_QUESTIONS.get(raw.strip().lower(), raw)
    return Block("copa-question", Text(prompt, style="bold"))
