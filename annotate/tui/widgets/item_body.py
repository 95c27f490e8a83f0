"""An item's fields as widgets, arranged by the task's layout.

Every layout splits into three parts (see `ItemParts`): text that scrolls (long passages), text
pinned below it so the question stays in view however long the passage is, and for MultiRC and
ReCoRD an option list to answer with. Field texts are `rich.text.Text`, so they are verbatim.
"""

from __future__ import annotations

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


def field_block(name: str, label: str, text: Text) -> Static:
    return Static(heading(label, text), id=f"field-{name}", classes="field", markup=False)


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
    return highlighted(text, spans)


def shown_fields(spec: TaskSpec, fields: dict[str, Any]) -> list[FieldSpec]:
    """Fields the annotator reads, skipping an optional field that is empty in this item."""
    return [
        f
        for f in spec.fields
        if f.shown and f.label and not (f.optional and fields.get(f.name) in ("", None))
    ]


def build_item(spec: TaskSpec, fields: dict[str, Any], previous: Any = None) -> ItemParts:
    """Widgets for one item; `previous` pre-selects an earlier answer (revising)."""
    parts = ItemParts()
    pin = spec.layout in ("passage_question", "multi_answer", "entity_choice")
    for f in shown_fields(spec, fields):
        if f.name in CHOOSER_FIELDS and spec.layout in ("multi_answer", "entity_choice"):
            continue
        block = field_block(f.name, f.label, field_text(spec, f, fields))
        (parts.pinned if pin and f.name in PINNED_FIELDS else parts.scrolling).append(block)
        if spec.layout == "choice" and f.name == "premise":
            parts.scrolling.append(copa_question(fields))
    if spec.layout == "multi_answer":
        parts.chooser = CandidateJudgements(
            spec, list(fields.get("answers", [])), previous if isinstance(previous, dict) else None
        )
    elif spec.layout == "entity_choice":
        parts.chooser = EntityChoice(
            list(fields.get("entities", [])), previous if isinstance(previous, str) else None
        )
    return parts


def copa_question(fields: dict[str, Any]) -> Static:
    """COPA's hidden `question` field ("cause"/"effect") as the question it stands for."""
    raw = as_text(fields.get("question", ""))
    prompt = COPA_QUESTIONS.get(raw.strip().lower(), raw)
    return Static(Text(prompt, style="bold"), id="copa-question", classes="field", markup=False)
