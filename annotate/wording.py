"""Counts in words ("1 item", "2 items") and numbers in digits ("0.412"), the one way every
layer writes them.

Pure Python with no imports from the project, so the TUI, the CLI and the reports may all use it.
"""

from __future__ import annotations

import shlex
from datetime import timedelta

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


def seconds(value: float) -> str:
    """A span in seconds as every screen says it: "5 seconds", "0.2 seconds", "1 second"
    (never "5.0 seconds")."""
    return f"{value:g} {'second' if value == 1 else 'seconds'}"


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


ETA_HORIZON_DAYS = 30
"""Beyond this a projection from the current pace is not a date to plan by: the ETA says so."""


def eta(span: timedelta) -> str:
    """How long the rest of a study should take at the current pace: "45 s", "12 min",
    "3 h 20 min", "2 d 4 h"; beyond ETA_HORIZON_DAYS, "more than 30 days at the current pace"
    (a projection from a trickle of labels is no date to the hour)."""
    seconds = int(span.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    if span > timedelta(days=ETA_HORIZON_DAYS):
        return f"more than {ETA_HORIZON_DAYS} days at the current pace"
    return f"{days} d {hours} h"


def shell_word(text: str) -> str:
    """`text` as one word of a command shown to paste into a shell: as it is where it needs
    no quoting (`rte-2026`), else quoted (`'rte pilot'`), so the command runs as shown."""
    return shlex.quote(text)
