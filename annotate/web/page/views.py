"""An item as the HTML page draws it: plain data computed from the task's `TaskSpec` (by the
layout rules the terminal app follows too: annotate/presentation/), rendered second by the
templates.

Every string here has been through the one sanitiser (`annotate.text.terminal_safe`); the
templates then HTML-escape it (Jinja autoescape), so text from data files or people is shown
as text, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotate.presentation import feedback as said
from annotate.presentation.item_layout import (
    HIGHLIGHT_MARKER,
    PLACEHOLDER,
    copa_prompt,
    slots,
    split_highlights,
)
from annotate.presentation.progress import describe_progress, phase_counts, status_phase
from annotate.presentation.verbatim import Span, as_text, field_spans, placeholder_spans
from annotate.protocol.session import Feedback, ItemView, Progress
from annotate.specs import TaskSpec
from annotate.text import terminal_safe


@dataclass(frozen=True)
class Segment:
    text: str
    mark: int | None = None
    """None: plain text; 0, 1: the field's first or second highlight (WSC's noun phrase and
    pronoun; WiC's word; ReCoRD's @placeholder)."""


@dataclass
class Block:
    name: str
    label: str
    segments: list[Segment]
    highlights: list[str] = field(default_factory=list)
    """ReCoRD's article highlights, listed after the passage."""
    strong: bool = False


@dataclass(frozen=True)
class Option:
    key: str
    value: str
    text: str


@dataclass
class ItemPage:
    """What the item screen shows: text that scrolls, text that stays in view next to the
    answers (the hypothesis, the question) and the answers themselves."""

    scrolling: list[Block] = field(default_factory=list)
    pinned: list[Block] = field(default_factory=list)
    options: list[Option] = field(default_factory=list)
    candidates: list[tuple[str, str | None]] = field(default_factory=list)
    """MultiRC: (text, earlier judgement) of each candidate answer, judged with an option."""
    entities: list[str] = field(default_factory=list)
    """ReCoRD: the entities to choose from."""
    kind: str = "classification"
    scale: bool = False
    chosen: str | int | None = None
    """The earlier answer, when revising: an option's value, or an entity's number."""


def safe(value: Any) -> str:
    return terminal_safe(as_text(value))


def options(spec: TaskSpec) -> list[Option]:
    return [Option(safe(o.key), o.value, safe(o.text)) for o in spec.answer_options()]


def segments(text: str, spans: list[Span]) -> list[Segment]:
    """`text` cut at its highlight spans (offsets into the stored text); each piece is
    sanitised on its own, so offsets never shift. Overlapping spans keep the first."""
    out: list[Segment] = []
    at = 0
    for (start, end), mark in sorted(spans):
        if start < at:
            continue
        if start > at:
            out.append(Segment(terminal_safe(text[at:start])))
        out.append(Segment(terminal_safe(text[start:end]), mark))
        at = end
    if at < len(text) or not out:
        out.append(Segment(terminal_safe(text[at:])))
    return out


def field_block(spec: TaskSpec, name: str, label: str, fields: dict[str, Any]) -> Block:
    text = as_text(fields.get(name, ""))
    if spec.layout == "entity_choice" and name == "query":
        return Block(name, safe(label), segments(text, placeholder_spans(text, PLACEHOLDER)))
    if spec.layout == "entity_choice" and HIGHLIGHT_MARKER in text:
        article, highlights = split_highlights(text)
        return Block(name, safe(label), segments(article, []), [safe(h) for h in highlights])
    return Block(name, safe(label), segments(text, field_spans(spec, name, fields)))


def item_page(spec: TaskSpec, fields: dict[str, Any], previous: Any = None) -> ItemPage:
    """The item's parts; `previous` (revising) marks the earlier answer."""
    page = ItemPage(options=options(spec), kind=spec.kind, scale=spec.scale is not None)
    for slot in slots(spec, fields):
        if slot.field is None:
            prompt = [Segment(safe(copa_prompt(fields)))]
            page.scrolling.append(Block("copa-question", "", prompt, strong=True))
            continue
        block = field_block(spec, slot.field.name, slot.field.label, fields)
        (page.pinned if slot.pinned else page.scrolling).append(block)
    if spec.layout == "multi_answer":
        judged = previous if isinstance(previous, dict) else {}
        page.candidates = [
            (safe(a.get("text", "")), judged.get(a.get("idx")))
            for a in fields.get("answers", [])
            if isinstance(a, dict)
        ]
    elif spec.layout == "entity_choice":
        entities = list(fields.get("entities", []))
        page.entities = [safe(e) for e in entities]
        if previous in entities:
            page.chosen = entities.index(previous) + 1
    elif previous is not None:
        page.chosen = f"{float(previous):g}" if spec.kind == "regression" else str(previous)
    return page


@dataclass
class FeedbackPage:
    verdict: str
    """"right", "wrong" or "none" (no gold)."""
    lines: list[str]
    explanation: str | None
    accuracy: str
    gate: str | None


def feedback_page(spec: TaskSpec, item: ItemView, answer: Any, feedback: Feedback) -> FeedbackPage:
    """The terminal feedback screen's content, in the same words (as plain text: their
    SafeText is already sanitised)."""
    gate = said.gate_line(feedback)
    return FeedbackPage(
        said.verdict(feedback),
        said.answer_lines(spec, feedback, answer, item).plain.split("\n"),
        safe(feedback.explanation) if feedback.explanation else None,
        said.accuracy_line(feedback).plain,
        gate.plain if gate is not None else None,
    )


def status_line(item: ItemView, progress: Progress) -> tuple[str, int, int]:
    """`Training 2/5 · 50% right` (the terminal status bar's words) and (done, total)."""
    phase = status_phase(item)
    done, total = phase_counts(phase, progress)
    return describe_progress(phase, progress).plain, done, total
