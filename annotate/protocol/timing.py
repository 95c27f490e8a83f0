"""Time on task: the median seconds per answer, the one figure the console's Study screen,
the report's annotator table and datasheet, and `plan --pilot` all show.

Its population is the annotator's test answers (`MEDIAN_SECONDS_OF`): the seconds an item of
the measured task takes, the figure a plan's test labels are timed by. Training answers come
with feedback and a first reading of the guidelines, so a median over both phases mixes two
tasks; where a figure uses them (the console's detail line, a plan's training labels), it
names the training median apart.
Every header that shows the figure says so (`MEDIAN_SECONDS_HEADER`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MEDIAN_SECONDS_OF = "test"
"""The phase whose answers the median seconds per answer is taken over."""
MEDIAN_SECONDS_HEADER = "Median s per test answer"
"""The header of that median in every report table (terminal, Markdown, HTML)."""


def median_seconds(seconds: Sequence[float] | Any, *, presorted: bool = False) -> float | None:
    """The median of `seconds` (each the time from showing an item to its answer), or None
    when there is none. Unknown times (NaN) are left out. A caller that keeps its list sorted
    and free of NaN (the console's tracker, refreshed every second) passes `presorted=True`
    to skip the sort; any other sequence or array is partitioned here."""
    if not presorted:
        import numpy as np  # lazily: the console imports this module on start-up

        values = np.asarray(seconds, dtype=float)
        values = values[np.isfinite(values)]
        # The same middle value (or mean of the middle two), found without a full sort.
        return float(np.median(values)) if len(values) else None
    n = len(seconds)
    if not n:
        return None
    middle = n // 2
    if n % 2:
        return float(seconds[middle])
    return float((seconds[middle - 1] + seconds[middle]) / 2)
