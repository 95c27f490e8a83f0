"""Counts in words: "1 item", "2 items", the one way every layer writes them.

Pure Python with no imports from the project, so the TUI, the CLI and the reports may all use it.
"""

from __future__ import annotations

IRREGULAR = {
    "bonus": "bonuses",
    "study": "studies",
    "query": "queries",
    "entity": "entities",
    "has": "have",
    "is": "are",
    "was": "were",
    "waits": "wait",
}
"""Plurals that are not the word with an s (and the verb that agrees with a count)."""


def plural(n: int, noun: str) -> str:
    """`noun` as it goes with the count `n` ("item" for 1, "items" for 0 or 2)."""
    if n == 1:
        return noun
    return IRREGULAR.get(noun, noun + "s")


def count_of(n: int, noun: str) -> str:
    """`n` and its noun: count_of(1, "item") == "1 item", and
    count_of(3, "test item") == "3 test items"."""
    head, _, last = noun.rpartition(" ")
    words = f"{head} {plural(n, last)}" if head else plural(n, last)
    return f"{n} {words}"
