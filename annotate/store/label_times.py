"""What an imported study's label times are worth, from its import record
(`LabelImport.detail["times"]`): written by `import-labels`, read by `status`, the console and
the datasheet, which must not give a made-up date as the last label's."""

from __future__ import annotations

from typing import Any

RECORDED = "recorded"
"""Clock times: annotate's own labels, or a file that gives dates."""
DURATIONS_ONLY = "durations only"
"""A file that gives how long each answer took, not when: each worker's answers are laid end to
end from 1970-01-01 (formats/label_sources/times.py), so their lengths are real and their
dates are not."""
NONE_IN_FILE = "none in the file"
"""A file without times: the labels have none (schema 13)."""

DURATIONS_NOTE = "the file gives durations, not dates"
"""How the import's datasheet note on such a file begins (`detail["notes"]`): the sign of one
imported before `times` said "durations only"."""


def label_times(detail: dict[str, Any] | None) -> str:
    """RECORDED, DURATIONS_ONLY or NONE_IN_FILE for a study with this import record's detail
    (None: a study run in annotate)."""
    if not detail:
        return RECORDED
    times = str(detail.get("times") or RECORDED)
    notes = detail.get("notes") or []
    if times == RECORDED and any(str(note).startswith(DURATIONS_NOTE) for note in notes):
        return DURATIONS_ONLY
    return times


def dates_known(detail: dict[str, Any] | None) -> bool:
    """Whether the labels' dates are real (a last label "3 d ago" means something)."""
    return label_times(detail) == RECORDED


def last_activity_words(times: str) -> str:
    """What a study's last activity is, in words, when there is no date to give: none yet,
    or why the imported labels have none."""
    if times == DURATIONS_ONLY:
        return "unknown (the labels' file gives durations, not dates)"
    if times == NONE_IN_FILE:
        return "unknown (the labels' file records no times)"
    return "none yet"
