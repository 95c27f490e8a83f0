"""What a task's records must hold beyond parsing: checked on every item an import reads, in
any layout (the task's own files, a zip, the Hub's), so a record that parses but is malformed
is refused with its file, line and reason instead of stored as given. The rules follow from
what the task spec declares, one function each:

- a character highlight (WiC's `start1`/`end1` in `sentence1`): whole numbers with
  0 <= start < end <= the field's length, the end exclusive (`char_span_problem`);
- a word highlight (WSC's `span1_index` in `text`): a whole number naming one of the field's
  words, split on whitespace (`word_index_problem`). The span's own text is not compared with
  the words there: in SuperGLUE's WSC files (train, val, test: 1,608 spans) 137 differ from
  them in case or punctuation and 12 more otherwise (a possessive, a neighbouring word);
- a ReCoRD query holds `@placeholder`, the blank its answer fills (`placeholder_problem`);
- a field the annotator reads as text (RTE's `premise`) is not a list or an object: a Parquet
  or JSON list would be stored as given and shown as Python's brackets (`text_problem`; MultiRC's
  answers and ReCoRD's entities are lists by their readers); nor is it empty or blank, unless
  the task says it is optional;
- a task of minimal pairs by consecutive ids (AX-g: idx 2k and 2k+1) has every row's partner
  (`unpaired_problem`).
- a diagnostic's tags (the GLUE categories' columns, AX and AX-b) are the taxonomy's, each
  under its own category (`tag_problem`): a misspelt one would be scored as a phenomenon of its
  own, as `curate import` refuses it.

ReCoRD's entity spans exist only in its original files and are checked where they are read
(`readers.read_record`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from annotate.errors import DataFileError, UserError
from annotate.formats.readers import ParsedItem
from annotate.specs import HighlightSpec, TaskSpec
from annotate.taxonomy import COARSE, check_tags

PLACEHOLDER = "@placeholder"
"""The blank in a ReCoRD query that the chosen entity fills."""

_WHOLE_NUMBER = re.compile(r"\s*-?\d+\s*")

ItemRule = Callable[[ParsedItem], str | None]
"""Why an item is malformed, or None."""


def whole_number(value: Any) -> int | None:
    """`value` as an offset or index: an integer, or its digits as a CSV cell holds them
    (`to_csv` output); None for anything else (a float, a boolean, a word, null)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _WHOLE_NUMBER.fullmatch(value):
        return int(value)
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def char_span_problem(h: HighlightSpec, fields: dict[str, Any]) -> str | None:
    """Why a character highlight does not fall in its field (WiC: `start1`..`end1` in
    `sentence1`, the end exclusive as in the real files: `sentence1[start1:end1]` is the
    word), or None."""
    assert h.end is not None
    text = _text(fields.get(h.field, ""))
    where = f"a character offset into {h.field}"
    start, end = whole_number(fields.get(h.start)), whole_number(fields.get(h.end))
    for name, value in ((h.start, start), (h.end, end)):
        if value is None:
            return f"{name} {fields.get(name)!r} is not an integer ({where})"
        if value < 0:
            return f"{name} {value} is negative ({where})"
    assert start is not None and end is not None
    if end <= start:
        return (
            f"{h.end} {end} is not after {h.start} {start}: the span in {h.field} would be "
            f"{'empty' if end == start else 'reversed'} (the end is exclusive)"
        )
    if end > len(text):
        return (
            f"{h.end} {end} is past the end of {h.field}, which has {len(text)} characters "
            f"(offsets count from 0 and the end is exclusive: at most {len(text)})"
        )
    return None


def word_index_problem(h: HighlightSpec, fields: dict[str, Any]) -> str | None:
    """Why a word highlight's index names no word of its field (WSC: `span1_index` into
    `text.split()`, as jiant reads it), or None."""
    words = _text(fields.get(h.field, "")).split()
    index = whole_number(fields.get(h.start))
    where = f"the index of a word of {h.field}, split on whitespace, counted from 0"
    if index is None:
        return f"{h.start} {fields.get(h.start)!r} is not an integer ({where})"
    if index < 0:
        return f"{h.start} {index} is negative ({where})"
    if not words:
        return f"{h.start} {index} names a word of {h.field}, which has none"
    if index >= len(words):
        return (
            f"{h.start} {index} is past the last word of {h.field}, which has {len(words)} "
            f"words (split on whitespace; indices count from 0: at most {len(words) - 1})"
        )
    return None


def placeholder_problem(item: ParsedItem) -> str | None:
    """Why a ReCoRD query cannot be answered: it has no @placeholder for the entity to fill."""
    query = _text(item.fields.get("query", ""))
    if PLACEHOLDER in query:
        return None
    return (
        f"query {item.source_id} has no {PLACEHOLDER}, the blank the chosen entity fills "
        f"(the query is {query[:60]!r}{'…' if len(query) > 60 else ''})"
    )


def text_problem(spec: TaskSpec) -> ItemRule:
    """Why an item's shown field is not text: a list or an object where the task has text,
    or nothing but blanks in a text the annotator must read (a null one is refused by its
    reader; an optional one may be empty)."""
    shown = [f.name for f in spec.fields if f.shown]
    needed = {f.name for f in spec.fields if f.shown and f.label and not f.optional}

    def problem(item: ParsedItem) -> str | None:
        for name in shown:
            value = item.fields.get(name)
            if isinstance(value, list | tuple | dict):
                kind = "an object" if isinstance(value, dict) else "a list"
                held = repr(value)
                held = held if len(held) <= 60 else held[:59] + "…"
                return f"{name} is {kind} ({held}) where {spec.name} has text"
            if name in needed and isinstance(value, str) and not value.strip():
                return f"{name} is empty: the item would have no {name}"
        return None

    return problem


def tag_problem(item: ParsedItem) -> str | None:
    """Why a diagnostic item's tags are not the GLUE taxonomy's (a tag misspelt, or under
    another category), or None."""
    try:
        check_tags(item.tags or {})
    except UserError as e:
        return str(e)
    return None


def _highlight_rule(h: HighlightSpec) -> ItemRule | None:
    if h.unit == "char" and h.end is not None:
        return lambda item: char_span_problem(h, item.fields)
    if h.unit == "token":
        return lambda item: word_index_problem(h, item.fields)
    return None


def item_rules(spec: TaskSpec) -> list[ItemRule]:
    """The checks each of `spec`'s items must pass, from what the spec declares."""
    rules = [rule for h in spec.highlights if (rule := _highlight_rule(h)) is not None]
    if spec.source.reader not in ("multirc", "record"):  # their readers build lists
        rules.insert(0, text_problem(spec))
    if spec.source.reader == "record":
        rules.append(placeholder_problem)
    categories = set(spec.source.tag_columns)
    if categories and categories <= set(COARSE):
        rules.append(tag_problem)
    return rules


def unpaired_problem(
    spec: TaskSpec, rows: list[tuple[str, int, Path | None]]
) -> tuple[int, Path | None, str] | None:
    """(line, file, reason) of the first row without its minimal-pair partner in a task of
    pairs by consecutive ids (AX-g); else None. The pairs are the rows with ids 2k and 2k+1, as
    jiant's GenderParity pairs them: a row alone is in no pair, and its task's score (parity)
    would quietly rest on fewer pairs than the file holds. An odd number of rows says so first."""
    if spec.minimal_pairs is None:
        return None
    ids = {source_id for source_id, _, _ in rows}
    for source_id, line, file in rows:
        number = whole_number(source_id)
        partner = None if number is None else str(number ^ 1)
        if partner is None or partner not in ids:
            missing = (
                f"idx {source_id}'s partner, idx {partner}, is not in the file"
                if partner is not None
                else f"idx {source_id!r} is not a number, so it pairs with no row"
            )
            count = f"{len(rows)} rows, an odd number: " if len(rows) % 2 else ""
            reason = (
                f"{count}{spec.short_name}'s minimal pairs come in twos (the rows with idx 2k "
                f"and 2k+1), and {missing}"
            )
            return line, file, reason
    return None


def well_formed(items: Iterable[ParsedItem], spec: TaskSpec, where: Path) -> Iterator[ParsedItem]:
    """`items`, refused at the first one a rule of `spec` finds malformed (see the module's
    list), and at the end when the rows of a task of minimal pairs leave one without its
    partner. Errors name the item's file (`where` unless the item says) and line."""
    rules = item_rules(spec)
    pairs: list[tuple[str, int, Path | None]] = []
    for item in items:
        for rule in rules:
            if (problem := rule(item)) is not None:
                raise DataFileError(item.file or where, item.line, problem)
        if spec.minimal_pairs is not None:
            pairs.append((item.source_id, item.line, item.file))
        yield item
    if (unpaired := unpaired_problem(spec, pairs)) is not None:
        line, file, reason = unpaired
        raise DataFileError(file or where, line, reason)
