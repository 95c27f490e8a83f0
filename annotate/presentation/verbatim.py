"""Text from data or people, shown exactly as written, and where its highlights fall.

A `SafeText` is never parsed as markup (Textual would crash on `[/foo]` and drop `[CLS]`);
styles are added with `stylize` on character spans, never by splicing markup into the string.
The page takes the same spans and draws them as `<mark>`.
"""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text as RichText

from annotate.specs import HighlightSpec, TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.text import safe_offset

HIGHLIGHT_STYLES = ("bold underline black on yellow", "bold italic black on cyan")
"""One style per highlight of a field, in order (WSC: noun phrase, then pronoun). Underline and
italic keep the spans apart on a monochrome terminal too."""

HEADING_STYLE = "bold"

Span = tuple[tuple[int, int], int]
"""(start, end) offsets into the stored text, and the highlight's number (its style)."""


def as_text(value: Any) -> str:
    """A field value as the string to show (numbers and other JSON scalars as written)."""
    return value if isinstance(value, str) else str(value)


def heading(label: str, value: Text | str) -> Text:
    """A field: its heading on one line, its text below."""
    body = value if isinstance(value, RichText) else Text(value)
    return Text.assemble(Text(label, style=HEADING_STYLE), "\n", body)


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def token_span(text: str, index: int, n_tokens: int) -> tuple[int, int] | None:
    """Character span of tokens index..index+n_tokens-1, tokens being `text.split()` (WSC's
    span indices count whitespace-separated tokens)."""
    tokens = list(re.finditer(r"\S+", text))
    if n_tokens < 1 or index < 0 or index + n_tokens > len(tokens):
        return None
    return tokens[index].start(), tokens[index + n_tokens - 1].end()


_EDGE = re.compile(r"^\W+|(?:['’]s)?\W*$")


def _word(token: str) -> str:
    """A token as a span's text is compared with it: case, the punctuation around it and a
    possessive 's aside ("Emma's" is "Emma", "it," is "it")."""
    return _EDGE.sub("", token.casefold())


def _words(text: str) -> list[str]:
    return [_word(t) for t in text.split()]


def matching_token_span(text: str, index: int, span_text: str) -> tuple[int, int] | None:
    """Character span of the tokens that read `span_text`: those at token `index` when they
    do, else the nearest tokens of the text that do (WSC's indices are off by one in a few
    items: "use" for the pronoun "it"), else None: a noun phrase the text never spells out
    ("Kamenev and Zinoviev" of "Lev Kamenev, … and Grigory Zinoviev") gets no highlight,
    rather than a wrong one."""
    wanted = _words(span_text)
    if not wanted:
        return token_span(text, index, 1)
    words = _words(text)
    n = len(wanted)
    starts = [i for i in range(len(words) - n + 1) if words[i : i + n] == wanted]
    if not starts:
        return None
    return token_span(text, min(starts, key=lambda i: (abs(i - index), i)), n)


def highlight_span(h: HighlightSpec, fields: dict[str, Any]) -> tuple[int, int] | None:
    """Where highlight `h` falls in its field, or None when the offsets do not fit the text
    (bad data must not crash the screen: the text is then shown without the highlight)."""
    text = as_text(fields.get(h.field, ""))
    start = _as_int(fields.get(h.start))
    if start is None:
        return None
    if h.unit == "token":
        if h.text:
            return matching_token_span(text, start, as_text(fields.get(h.text, "")))
        return token_span(text, start, 1)
    end = _as_int(fields.get(h.end)) if h.end else None
    if end is None or not 0 <= start < end <= len(text):
        return None
    return start, end


def highlight_marks(highlights: list[HighlightSpec]) -> list[int]:
    """The number of each highlight within its field, so WiC's two sentences share one look
    and WSC's noun phrase and pronoun (same field) get two."""
    seen: dict[str, int] = {}
    marks = []
    for h in highlights:
        n = seen.get(h.field, 0)
        seen[h.field] = n + 1
        marks.append(n % len(HIGHLIGHT_STYLES))
    return marks


def highlight_styles(highlights: list[HighlightSpec]) -> list[str]:
    """The terminal style of each highlight (see `highlight_marks`)."""
    return [HIGHLIGHT_STYLES[mark] for mark in highlight_marks(highlights)]


def field_spans(spec: TaskSpec, name: str, fields: dict[str, Any]) -> list[Span]:
    """The highlights that fall in field `name` of an item, numbered as `highlight_marks`."""
    text = as_text(fields.get(name, ""))
    spans = []
    for h, mark in zip(spec.highlights, highlight_marks(spec.highlights), strict=True):
        if h.field == name and (span := highlight_span(h, fields)) is not None:
            spans.append((span, mark))
        elif h.text == name:
            # The span's own text field (WSC's "Noun phrase") wears the span's colour.
            spans.append(((0, len(text)), mark))
    return spans


def placeholder_spans(text: str, needle: str) -> list[Span]:
    """Every occurrence of `needle` (ReCoRD's @placeholder), as the first highlight."""
    if not needle:
        return []
    return [((m.start(), m.end()), 0) for m in re.finditer(re.escape(needle), text)]


def highlighted(text: str, spans: list[tuple[tuple[int, int], str]]) -> Text:
    """`text` verbatim with each (start, end) span styled."""
    result = Text(text)
    for (start, end), style in spans:
        # Offsets count the stored text; a placeholder is longer than its control character.
        result.stylize(style, safe_offset(text, start), safe_offset(text, end))
    return result


def mark_all(text: str, needle: str, style: str) -> Text:
    """`text` with every occurrence of `needle` styled (ReCoRD's @placeholder)."""
    return highlighted(text, [(span, style) for span, _ in placeholder_spans(text, needle)])
