"""How the console writes numbers, durations and moments (plain functions, no widgets)."""

from __future__ import annotations

from datetime import datetime

from annotate.wording import fixed

DASH = "–"


def ago(moment: datetime | None, now: datetime) -> str:
    """ "12 s ago", "4 min ago", "3 h ago", "2 d ago" ("–" for never)."""
    if moment is None:
        return DASH
    seconds = max(0, int((now - moment).total_seconds()))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    return f"{seconds // 86400} d ago"


def share(value: float | None, digits: int = 0) -> str:
    """0.873 -> "87%" (or "87.3%" with digits=1)."""
    return DASH if value is None else f"{fixed(100 * value, digits)}%"


def number(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else fixed(value, digits)
