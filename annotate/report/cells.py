"""The one cell formatter of the report: every section's rows and every renderer (rich table,
Markdown, HTML, LaTeX) write numbers through these functions, so a value reads the same
everywhere. Scores are shown x100 with one decimal, as the papers do; agreement coefficients
as they are; a missing value as a dash (or the text a renderer asks for).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from annotate.metric_registry import all_metrics, find_metric
from annotate.wording import fixed


class _MetricHeaders(Mapping[str, str]):
    """Each metric's column header, read from the metric registry (plugins' metrics too)."""

    def __getitem__(self, name: str) -> str:
        found = find_metric(name)
        if found is None:
            raise KeyError(name)
        return found.header

    def __iter__(self) -> Iterator[str]:
        return iter(all_metrics())

    def __len__(self) -> int:
        return len(all_metrics())


METRIC_NAMES: Mapping[str, str] = _MetricHeaders()
"""Metric id -> column header (`METRIC_NAMES.get(m, m)`)."""


Section = tuple[str, list[str], list[list[str]]]
"""A section's table as every renderer reads it: (title, headers, rows of cells)."""

MISSING = "–"


def pct(value: float | None, missing: str = MISSING) -> str:
    """A fraction as a percentage with one decimal (0.874 -> "87.4")."""
    return missing if value is None else fixed(value * 100, 1)


def coef(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else fixed(value, digits)


def interval(low: float | None, high: float | None, scale: float = 100, digits: int = 1) -> str:
    if low is None or high is None:
        return ""
    return f"[{fixed(low * scale, digits)}, {fixed(high * scale, digits)}]"


def quoted_bounds(e: Any, quoted: Any) -> tuple[float | None, float | None]:
    """The interval a task-score cell shows: `quoted` (a HeadlineInterval: the interval the one
    rule gives the task score, scoring.intervals.quoted_interval) when there is one; else the
    bootstrap's of the Estimate `e`. Pass `quoted` for the task score and for a task's only
    metric (which is its score)."""
    if quoted is not None:
        return quoted.low, quoted.high
    return (None, None) if e is None else (e.ci_low, e.ci_high)


def seconds(value: float | None) -> str:
    """Seconds; "unknown" where the labels carry no times (imported without them), never 0."""
    return "unknown" if value is None else f"{value:.1f}"


def share(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def votes_text(votes: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in votes.items())
