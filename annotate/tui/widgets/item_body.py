"""An item's fields as widgets, arranged by the task's layout.

Every layout splits into three parts (see `ItemParts`): text that scrolls (long passages), text
pinned below it so the thing being judged (a question, a hypothesis) stays in view however long
the passage is, and for MultiRC and ReCoRD an option list to answer with. Where each field goes
is decided in annotate/presentation/item_layout.py (the page follows the same rules). Field
texts are `rich.text.Text`, so they are verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.widget import Widget
from textual.widgets import OptionList, Static

from annotate.presentation.item_layout import (
    HIGHLIGHT_MARKER,
    PLACEHOLDER,
    copa_prompt,
    has_chooser,
    slots,
    split_highlights,
)
from annotate.presentation.verbatim import (
    HIGHLIGHT_STYLES,
    as_text,
    field_spans,
    heading,
    highlighted,
    mark_all,
)
from annotate.specs import FieldSpec, TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.widgets.choosers import CandidateJudgements, EntityChoice


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
    if spec.layout == "entity_choice" and f.name == "query":
        return mark_all(text, PLACEHOLDER, HIGHLIGHT_STYLES[0])
    if spec.layout == "entity_choice" and HIGHLIGHT_MARKER in text:
        return with_highlight_list(text)
    spans = [(span, HIGHLIGHT_STYLES[mark]) for span, mark in field_spans(spec, f.name, fields)]
    return highlighted(text, spans)


def with_highlight_list(text: str) -> Text:
    """The article, then its highlights as a bulleted list (not the raw markers)."""
    article, highlights = split_highlights(text)
    if not highlights:
        return Text(text)
    lines = [Text(article), Text(""), Text("Highlights", style="bold")]
    lines += [Text.assemble(" • ", Text(h)) for h in highlights]
    return Text("\n").join(lines)


def item_blocks(spec: TaskSpec, fields: dict[str, Any]) -> ItemBlocks:
    """The texts of one item, by where the task's layout puts them."""
    blocks = ItemBlocks(chooser=has_chooser(spec))
    for slot in slots(spec, fields):
        if slot.field is None:
            blocks.scrolling.append(copa_question(fields))
            continue
        block = field_block(slot.field.name, slot.field.label, field_text(spec, slot.field, fields))
        (blocks.pinned if slot.pinned else blocks.scrolling).append(block)
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
    return Block("copa-question", Text(copa_prompt(fields), style="bold"))
