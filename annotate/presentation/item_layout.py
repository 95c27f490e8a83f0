"""Where an item's fields go, by the task's layout: text that scrolls (long passages), text
pinned below it so the thing being judged (a question, a hypothesis) stays in view however
long the passage is, and for MultiRC and ReCoRD a list to answer with."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# ReCoRD's blank, marked on both screens: the one the import checks every query has.
from annotate.formats.well_formed import PLACEHOLDER as PLACEHOLDER
from annotate.presentation.verbatim import as_text
from annotate.specs import FieldSpec, TaskSpec

PINNED_FIELDS = ("question", "query")
"""Fields kept in view below a scrolling passage (BoolQ, MultiRC, ReCoRD)."""

PIN_LAYOUTS = ("passage_question", "multi_answer", "entity_choice")
"""Layouts that pin PINNED_FIELDS."""

PIN_LAST_LAYOUTS = ("pair",)
"""Layouts whose last shown field is the one judged against the first (RTE's, CB's and AX's
hypothesis, WNLI's second sentence): it stays in view below a premise of any length."""

CHOOSER_LAYOUTS = ("multi_answer", "entity_choice")
"""Layouts answered from a list of the item's own options (MultiRC's candidates, ReCoRD's
entities)."""

CHOOSER_FIELDS = ("answers", "entities")
"""Fields shown as the option list rather than as text (MultiRC, ReCoRD)."""

HIGHLIGHT_MARKER = "@highlight"
"""ReCoRD's passages end with the article's highlights, each after a line of this marker."""

COPA_QUESTIONS = {
    "cause": "What was the CAUSE of this?",
    "effect": "What happened as a RESULT?",
}


@dataclass(frozen=True)
class Slot:
    """One text of the item, in reading order: a field, or (`field` None) COPA's question,
    which follows the premise."""

    field: FieldSpec | None
    pinned: bool = False


def shown_fields(spec: TaskSpec, fields: dict[str, Any]) -> list[FieldSpec]:
    """Fields the annotator reads, skipping an optional field that is empty in this item."""
    return [
        f
        for f in spec.fields
        if f.shown and f.label and not (f.optional and fields.get(f.name) in ("", None))
    ]


def has_chooser(spec: TaskSpec) -> bool:
    return spec.layout in CHOOSER_LAYOUTS


def slots(spec: TaskSpec, fields: dict[str, Any]) -> list[Slot]:
    """The item's texts in order, each scrolling or pinned as the task's layout says."""
    pin = spec.layout in PIN_LAYOUTS
    shown = shown_fields(spec, fields)
    pin_last = spec.layout in PIN_LAST_LAYOUTS and len(shown) > 1
    out = []
    for f in shown:
        if f.name in CHOOSER_FIELDS and has_chooser(spec):
            continue
        out.append(Slot(f, (pin and f.name in PINNED_FIELDS) or (pin_last and f is shown[-1])))
        if spec.layout == "choice" and f.name == "premise":
            out.append(Slot(None))
    return out


def copa_prompt(fields: dict[str, Any]) -> str:
    """COPA's hidden `question` field ("cause"/"effect") as the question it stands for."""
    raw = as_text(fields.get("question", ""))
    return COPA_QUESTIONS.get(raw.strip().lower(), raw)


def split_highlights(text: str) -> tuple[str, list[str]]:
    """ReCoRD's passage as (article, highlights): each line `@highlight` introduces the next
    line as one of the article's highlights (a highlight may span lines until the next marker)."""
    parts = re.split(rf"^[ \t]*{re.escape(HIGHLIGHT_MARKER)}[ \t]*$", text, flags=re.MULTILINE)
    highlights = [" ".join(p.split()) for p in parts[1:]]
    return parts[0].strip(), [h for h in highlights if h]
