"""Counts in words ("1 item", "2 items") and numbers in digits ("0.412"), the one way every
layer writes them.

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
    "differs": "differ",
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


def fixed(value: float, digits: int = 3, *, sign: bool = False) -> str:
    """`value` with `digits` decimals, as every table, report and screen shows a number: one
    that rounds to zero is "0.000", never "-0.000" (a κ of -0.0003 printed with a sign read as
    disagreement). `sign`: a difference, "+1.2" or "-1.2", and "+0.0" for none."""
    text = f"{value:{'+' if sign else ''}.{digits}f}"
    if text.strip("+-0.") == "":  # rounds to zero
        return ("+" if sign else "") + text.lstrip("+-")
    return text


def p_value(value: float | None) -> str:
    """A test's p-value in four significant digits, "3.725e-09" (never "0.000": a p-value
    is not zero), as `compare` and the report both write it; "–" for none."""
    return "–" if value is None else f"{value:.4g}"
