"""Times in label files: parsing the platforms' date formats, and turning what a file records
(a span per assignment, a duration per label) into each label's shown_at and answered_at.

Where a file gives one span per assignment or response (MTurk AcceptTime..SubmitTime with
WorkTimeInSeconds, Qualtrics StartDate..EndDate with Duration), the span is shared equally
among the answers in it, in slot order, so each worker's time on task sums to what the platform
recorded."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from annotate.errors import DataFileError
from annotate.formats.label_sources.labels import RawLabel

ZONES = {"UTC": 0, "GMT": 0, "PDT": -7, "PST": -8, "EDT": -4, "EST": -5, "CDT": -5, "CST": -6}
"""Zone abbreviations MTurk writes (its requester site shows Pacific time), in hours from UTC."""

SHARED_SPAN_NOTE = "times per answer: each assignment's work time shared equally among its answers"
"""The datasheet's note for a file whose times `share_span` spread over the answers."""

SECONDS_ONLY = "__seconds__"
"""The `RawLabel.fields` key of a label's duration when the file gives no clock time."""


def parse_time(text: str, path: Path, line: int, what: str, zone: tzinfo | None = None) -> datetime:
    """ISO 8601 (Label Studio, long files), MTurk's `Tue Jun 04 10:12:33 PDT 2019`, or
    Qualtrics' `2024-05-01 10:00:00`; a time that names no zone is in `zone` (UTC unless
    the file says otherwise, as a Qualtrics export does)."""
    raw = text.strip()
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None:
        match = re.fullmatch(r"(\w{3} \w{3} \d{1,2} \d{2}:\d{2}:\d{2}) (\w+) (\d{4})", raw)
        if match is None:
            raise DataFileError(path, line, f"{what} {raw!r} is not a date and time")
        zone = match.group(2).upper()
        if zone not in ZONES:
            raise DataFileError(path, line, f"{what} {raw!r}: unknown time zone {zone}")
        try:
            moment = datetime.strptime(
                f"{match.group(1)} {match.group(3)}", "%a %b %d %H:%M:%S %Y"
            ).replace(tzinfo=UTC) - timedelta(hours=ZONES[zone])
        except ValueError:
            raise DataFileError(path, line, f"{what} {raw!r} is not a date and time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone or UTC)
    return moment.astimezone(UTC)


def named_zone(name: str, path: Path, line: int, what: str) -> tzinfo:
    """A time zone a file names: `Z`/`UTC` or an IANA name (`America/Denver`), as Qualtrics
    writes in its import ids; an unknown name is an error, not a silent UTC."""
    if name.strip().upper() in {"Z", "UTC", "GMT", "ETC/UTC"}:
        return UTC
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise DataFileError(path, line, f"{what}: unknown time zone {name!r}") from None


MAX_SECONDS = 366 * 24 * 3600
"""The longest time one answer (or one assignment) may take: a year. More is a broken cell,
and would overflow the dates built from it."""


def seconds(text: str | None, path: Path, line: int, what: str) -> float | None:
    """A cell of seconds (None when empty); not a finite number, negative or over a year is
    an error."""
    if text is None:
        return None
    shown = text if len(text) <= 30 else f"{text[:12]}…{text[-6:]} ({len(text)} characters)"
    try:
        value = float(text)
    except (ValueError, OverflowError):
        raise DataFileError(path, line, f"{what} {shown!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise DataFileError(path, line, f"{what} {shown!r} is not a finite number of seconds")
    if value < 0:
        raise DataFileError(path, line, f"{what} {shown!r} must not be negative")
    if value > MAX_SECONDS:
        raise DataFileError(path, line, f"{what} {shown!r} is more than a year")
    return value


def share_span(
    labels: list[RawLabel], start: datetime | None, end: datetime | None, seconds: float | None
) -> None:
    """Spread one assignment's time over its answers, in order: each gets an equal share of the
    work time (or of end - start), back to back from the start (or ending at the end). With
    the work time alone (no clock time), each answer keeps its share as its duration, for
    `lay_end_to_end`."""
    if not labels:
        return
    if seconds is None and start is not None and end is not None:
        seconds = max((end - start).total_seconds(), 0.0)
    if seconds is None:
        for label in labels:
            label.answered_at = end or start
            label.shown_at = label.answered_at
        return
    share = timedelta(seconds=seconds / len(labels))
    origin = start if start is not None else (end - share * len(labels) if end else None)
    if origin is None:
        for label in labels:
            label.fields[SECONDS_ONLY] = share.total_seconds()
        return
    for n, label in enumerate(labels):
        label.shown_at = origin + share * n
        label.answered_at = origin + share * (n + 1)


def lay_end_to_end(labels: list[RawLabel], path: Path | None = None) -> bool:
    """Labels with seconds (fields[SECONDS_ONLY]) but no clock time: laid end to end per worker
    from 1970-01-01 (only the durations mean anything; the datasheet says the dates are
    unknown). True when no label needed it: the file's dates are real."""
    clock: dict[str, datetime] = {}
    for label in labels:
        secs = label.fields.pop(SECONDS_ONLY, None)
        if secs is None:
            continue
        start = clock.get(label.worker, datetime(1970, 1, 1, tzinfo=UTC))
        try:
            label.shown_at, label.answered_at = start, start + timedelta(seconds=secs)
        except OverflowError:
            where = label.source or path or Path("?")
            raise DataFileError(
                where, label.line, "the times of this line's worker add up past year 9999"
            ) from None
        clock[label.worker] = label.answered_at
    return not clock
