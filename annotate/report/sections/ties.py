"""Ties: the declared tie rule and what it did, with the tied units."""

from __future__ import annotations

from annotate.report.cells import (
    Section,
    votes_text,
)
from annotate.report.model.schema import (
    StudyReport,
)
from annotate.report.sections.base import ReportSection, single

TIES_SHOWN = 10


def _ties_section(r: StudyReport) -> Section:
    t = r.ties
    rows = [["Tie rule", t.rule]]
    if not t.applies:
        rows.append(["", t.note or ""])
        return "Ties", ["", ""], rows
    rows += [
        [f"Tied {t.unit}s", str(t.n_tied)],
        ["Resolved at random (study seed)", str(t.resolved_at_random)],
        ["Resolved by dev majority class", str(t.resolved_by_dev_majority_class)],
        ["Abstained (counted wrong)", str(t.abstained_counted_wrong)],
        ["Open, awaiting an extra annotator (counted wrong)", str(t.open_counted_wrong)],
        [
            f"{t.unit.capitalize()}s with more than k labels",
            str(t.units_with_more_than_k_labels),
        ],
    ]
    if t.note:
        rows.append(["Note", t.note])
    for item in t.items[:TIES_SHOWN]:
        rows.append(
            [
                f"  {item.item}",
                f"{votes_text(item.votes)} -> {item.result or 'no answer'} ({item.resolution})",
            ]
        )
    if len(t.items) > TIES_SHOWN:
        rows.append(["", f"… {len(t.items) - TIES_SHOWN} more (see --format json)"])
    return "Ties", ["", ""], rows


SECTION = ReportSection("ties", single(_ties_section))
