"""The word-level difference between the two sentences, each shown verbatim with the changed
words marked (removed from the premise; added in the hypothesis) and a warning when the edit
is not minimal."""

from __future__ import annotations

from textual.widgets import Static

from annotate.curation.diff import WordDiff, word_diff
from annotate.terminal_text import SafeText as Text
from annotate.text import safe_offset

REMOVED_STYLE = "bold strike black on #ff8787"
ADDED_STYLE = "bold underline black on #87d787"
"""Strike and underline keep the two apart on a monochrome terminal too."""


def marked(text: str, spans: list[tuple[int, int]], style: str) -> Text:
    result = Text(text)
    for start, end in spans:
        result.stylize(style, safe_offset(text, start), safe_offset(text, end))
    return result


def diff_text(
    premise: str, hypothesis: str, diff: WordDiff | None = None, warn: bool = True
) -> Text:
    """The two sentences marked; `warn`: the minimal-edit warning when the edit is large (off
    while the author is still typing: a half-typed hypothesis always differs a lot)."""
    diff = diff or word_diff(premise, hypothesis)
    warning = diff.large and warn
    summary = Text(diff.summary(advice=warn), style="bold yellow" if warning else "dim")
    if warning:
        summary = Text.assemble(("⚠ ", "bold yellow"), summary)
    return Text.assemble(
        ("Premise     ", "bold"),
        marked(premise, diff.premise_spans, REMOVED_STYLE),
        "\n",
        ("Hypothesis  ", "bold"),
        marked(hypothesis, diff.hypothesis_spans, ADDED_STYLE),
        "\n",
        summary,
    )


class DiffView(Static):
    def __init__(
        self, premise: str = "", hypothesis: str = "", *, id: str = "diff", warn: bool = True
    ) -> None:
        super().__init__(diff_text(premise, hypothesis, warn=warn), id=id, markup=False)
        self.diff = word_diff(premise, hypothesis)
        self.warn = warn
        self.sentences = (premise, hypothesis)

    def show(self, premise: str, hypothesis: str, *, warn: bool | None = None) -> None:
        if warn is not None:
            self.warn = warn
        self.sentences = (premise, hypothesis)
        self.diff = word_diff(premise, hypothesis)
        self.update(diff_text(premise, hypothesis, self.diff, self.warn))
