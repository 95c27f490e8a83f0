"""How the console writes numbers, durations and moments (plain functions, no widgets)."""

from __future__ import annotations

from datetime import datetime, timedelta

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


def duration(span: timedelta | None) -> str:
    """An ETA: "45 s", "12 min", "3 h 20 min", "2 d 4 h" ("–" when unknown)."""
    if span is None:
        return DASH
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
    return f"{days} d {hours} h"


def share(value: float | None, digits: int = 0) -> str:
    """0.873 -> "87%" (or "87.3%" with digits=1)."""
    return DASH if value is None else f"{fixed(100 * value, digits)}%"


def number(value: float | None, digits: int = 1) -> str:
    return DASH if value is None else fixed(value, digits)
