"""What a new pair (or an edited example) must satisfy before it is saved.

The rules, each reported with the field it concerns so a screen can point at it: both
sentences written, not identical, not a duplicate of a pair already in the set (either
direction), both directions labelled with a label of the set, at least one known tag, and a
domain the GLUE TSV layout can hold.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from annotate.errors import UserError
from annotate.taxonomy import CATEGORY_OF
from annotate.text import CONTROL_CODES

_LINE_BREAKS = "\t\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""Tabs and whatever `str.splitlines` takes for a line break: joined with a space."""
_BREAKS = re.compile(rf"\s*[{_LINE_BREAKS}]+\s*")
_DROPPED = {code: None for code in CONTROL_CODES if chr(code) not in _LINE_BREAKS}
"""Every other control character (a pasted ESC, say) is dropped: the terminal sanitiser's
rule (`annotate.text.CONTROL_CODES`)."""
_INVISIBLE = {0x200B: None, 0x2060: None, 0xFEFF: None}
"""The zero-width space, the word joiner and the byte-order mark (a pasted file's first
character) show nothing: around a sentence they are dropped with the spaces, so that one of
them alone is an empty sentence, and sentences are compared without them. Inside a sentence
they stay (Thai and Khmer mark word breaks with the zero-width space), as do the zero-width
joiners (U+200C, U+200D: Persian, emoji)."""
_SPACE_OR_INVISIBLE = r"[\s\u200b\u2060\ufeff]+"
_OUTER = re.compile(rf"^{_SPACE_OR_INVISIBLE}|{_SPACE_OR_INVISIBLE}$")
TSV_BREAKS = "\t\r\n"
"""What a cell of the GLUE TSV cannot hold: it has no quoting, so a tab would shift the row's
cells and a line break split the row."""


@dataclass(frozen=True)
class Problem:
    field: str
    """premise, hypothesis, forward, backward, label, tags"""
    message: str


class DraftInvalid(UserError):
    """A pair or an edit that breaks the rules; `problems` lists every broken rule."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(p.message for p in self.problems))


@dataclass
class PairDraft:
    """A sentence pair as a curator writes it: both directions share the tags and domain."""

    premise: str = ""
    hypothesis: str = ""
    forward: str | None = None
    """Label of premise -> hypothesis."""
    backward: str | None = None
    """Label of hypothesis -> premise."""
    tags: list[str] = field(default_factory=list)
    domain: str = ""
    note: str = ""


def clean_sentence(text: str) -> str:
    """A sentence as stored: outer whitespace dropped, pasted line breaks and tabs joined with
    one space (the TSV layout has no way to hold them; the words are unchanged), other control
    characters dropped (the ESC of a pasted colour code: `\\x1b[31mred` keeps `[31mred`, in
    sight), invisible characters around it dropped with the spaces (`_INVISIBLE`: a zero-width
    space alone is an empty sentence), in one Unicode form (NFC: "é" typed as "e" and a
    combining accent is stored as the one character)."""
    kept = _OUTER.sub("", text.translate(_DROPPED))
    return unicodedata.normalize("NFC", _BREAKS.sub(" ", kept))


def curator_name(name: str | None) -> str:
    """A curator's name as typed, cleaned: without spaces around it and in one Unicode form
    (NFC), as study names are, so that " lea " or "léa" typed with a combining accent is the
    same curator as "lea" or "léa". Every curation entry point takes its names through here,
    then stores the spelling first recorded for the same curator (`curator_key`: letter case
    aside; `curation.curators.stored_name`); a blank name is refused."""
    cleaned = unicodedata.normalize("NFC", (name or "").strip())
    if not cleaned:
        raise UserError("a curator name cannot be blank: say who you are with --as NAME")
    return cleaned


def curator_key(name: str | None) -> str:
    """What makes two names one curator: `curator_name`, then Unicode case folding, compared
    in one Unicode form (canonical caseless matching: NFD, `str.casefold`, NFC), so that
    "LÉA", "léa" and "Léa" in either form are one curator. Which of her spellings is stored
    and shown is the one first recorded (`curation.curators.known_curator`); this is only the
    comparison. A blank name is refused, as by `curator_name`."""
    folded = unicodedata.normalize("NFD", curator_name(name)).casefold()
    return unicodedata.normalize("NFC", folded)


def comparable(text: str) -> str:
    """Text as sentences are compared: without invisible characters, in one Unicode form (NFC:
    imported files, kept as written, may hold either form). Spacing is the caller's."""
    return unicodedata.normalize("NFC", text.translate(_INVISIBLE))


def sentence_key(premise: str, hypothesis: str) -> tuple[str, str]:
    """What makes two examples duplicates: the same words in the same order (spacing and
    invisible characters aside), however their accents are encoded (`comparable`)."""
    return (" ".join(comparable(premise).split()), " ".join(comparable(hypothesis).split()))


def empty_sentence_problems(premise: str, hypothesis: str) -> list[Problem]:
    """The sentences left empty once cleaned (`clean_sentence`: spaces or a zero-width space
    alone are empty): a pair needs both, however it arrives (written, edited or imported)."""
    problems = []
    if not clean_sentence(premise):
        problems.append(Problem("premise", "the premise is empty"))
    if not clean_sentence(hypothesis):
        problems.append(Problem("hypothesis", "the hypothesis is empty"))
    return problems


def sentence_problems(premise: str, hypothesis: str) -> list[Problem]:
    problems = empty_sentence_problems(premise, hypothesis)
    first, second = sentence_key(premise, hypothesis)
    if premise and hypothesis and first == second:
        problems.append(
            Problem("hypothesis", "premise and hypothesis are identical: make the minimal edit")
        )
    return problems


def tsv_problem(text: str, field: str) -> list[Problem]:
    """The one rule for a value that goes into a cell of the GLUE TSV as it is (the domain;
    the sentences are cleaned instead), at edit, import and export time alike."""
    if any(c in text for c in TSV_BREAKS):
        return [
            Problem(
                field,
                f"the {field} holds a tab or line break, which the GLUE TSV layout cannot hold",
            )
        ]
    return []


def label_problem(value: str | None, labels: Sequence[str], field: str, what: str) -> list[Problem]:
    if value is None or value == "":
        return [Problem(field, f"choose a label for {what}")]
    if value not in labels:
        return [Problem(field, f"unknown label {value!r} for {what}; use {', '.join(labels)}")]
    return []


def tag_problems(tags: Sequence[str]) -> list[Problem]:
    if not tags:
        return [Problem("tags", "choose at least one phenomenon tag")]
    unknown = [t for t in tags if t not in CATEGORY_OF]
    if unknown:
        return [Problem("tags", f"unknown tag(s): {', '.join(repr(t) for t in unknown)}")]
    return []


def draft_problems(draft: PairDraft, labels: Sequence[str]) -> list[Problem]:
    """Every rule the draft breaks, except duplicates (which need the store)."""
    return [
        *sentence_problems(draft.premise, draft.hypothesis),
        *label_problem(draft.forward, labels, "forward", "premise → hypothesis"),
        *label_problem(draft.backward, labels, "backward", "hypothesis → premise"),
        *tag_problems(draft.tags),
        *tsv_problem(draft.domain, "domain"),
    ]
