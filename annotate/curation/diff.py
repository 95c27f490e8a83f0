"""The word-level difference between a premise and a hypothesis.

A diagnostic pair should isolate one phenomenon, so the two sentences differ by a minimal edit.
Tokens are whitespace-separated words (punctuation stays attached, as a curator reads them),
compared as the duplicate rule compares sentences (accents in either encoding, invisible
characters aside); difflib aligns the two token lists. The changed share is the fraction of
all tokens of both sentences that are not part of an aligned match, i.e. `1 -
SequenceMatcher.ratio()`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from annotate.curation.validation import comparable

LARGE_EDIT_SHARE = 0.40
"""Above this share of changed tokens the edit is no longer minimal: the screen warns (it does
not refuse; some phenomena, e.g. nominalization, need a longer rewrite)."""

Span = tuple[int, int]


@dataclass(frozen=True)
class WordDiff:
    premise_spans: list[Span]
    """Character spans of premise words removed or replaced (adjacent words merged)."""
    hypothesis_spans: list[Span]
    """Character spans of hypothesis words inserted or replacing."""
    changed_tokens: int
    total_tokens: int
    missing: str | None = None
    """"premise" or "hypothesis" when that sentence alone has no words yet: no edit to judge."""

    @property
    def changed_share(self) -> float:
        return self.changed_tokens / self.total_tokens if self.total_tokens else 0.0

    @property
    def large(self) -> bool:
        return self.missing is None and self.changed_share > LARGE_EDIT_SHARE

    def summary(self, advice: bool = True) -> str:
        """The count of changed words; with `advice`, the minimal-edit warning when large."""
        if not self.total_tokens:
            return "Write both sentences to see the difference."
        if self.missing:
            return f"Write the {self.missing} to see the difference."
        if not self.changed_tokens:
            return "The sentences are identical."
        text = (
            f"{self.changed_tokens} of {self.total_tokens} words differ ({self.changed_share:.0%})"
        )
        if self.large and advice:
            text += (
                f": more than {LARGE_EDIT_SHARE:.0%} changed, not a minimal edit. "
                "Can a smaller change test the same phenomenon?"
            )
        return text


def _tokens(text: str) -> list[re.Match[str]]:
    """The words of `text`, but for those of invisible characters alone (nothing to see)."""
    return [m for m in re.finditer(r"\S+", text) if comparable(m.group())]


def _spans(tokens: list[re.Match[str]], ranges: list[tuple[int, int]]) -> list[Span]:
    return [(tokens[i].start(), tokens[j - 1].end()) for i, j in ranges if j > i]


def word_diff(premise: str, hypothesis: str) -> WordDiff:
    a, b = _tokens(premise), _tokens(hypothesis)
    # Words compare as the duplicate rule compares sentences: "é" typed as one character or
    # as "e" and an accent, or with a zero-width space beside it, is the same word.
    words_a, words_b = [comparable(t.group()) for t in a], [comparable(t.group()) for t in b]
    matcher = SequenceMatcher(None, words_a, words_b, autojunk=False)
    removed: list[tuple[int, int]] = []
    added: list[tuple[int, int]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            removed.append((i1, i2))
            added.append((j1, j2))
    matched = sum(block.size for block in matcher.get_matching_blocks())
    total = len(a) + len(b)
    return WordDiff(
        premise_spans=_spans(a, removed),
        hypothesis_spans=_spans(b, added),
        changed_tokens=total - 2 * matched,
        total_tokens=total,
        missing="premise" if not a and b else "hypothesis" if a and not b else None,
    )
