"""The report's flagged-items section: every flag an annotator raised (with the comment and the
item's text verbatim), what the researcher did about it, and the items excluded from scoring
with their effect on the score (the report's scores leave excluded items out; this section
gives the task score with them put back, so the effect is visible).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine

from annotate import specs
from annotate.protocol.flags import EXCLUDED, OPEN, RESOLVED, list_flags
from annotate.report.data.loading import StudyData, with_excluded_items
from annotate.report.model.schema import (
    ExcludedItem,
    FlaggedItem,
    FlagsReport,
    StudyReport,
)
from annotate.report.sections.base import ReportSection
from annotate.wording import count_of, fixed


def item_fields(spec: specs.TaskSpec, fields: dict[str, Any]) -> list[tuple[str, Any]]:
    """The fields an annotator saw, (label as the task names it, value), in the task's order:
    what `flags`, the report and the console's flags screen all show of a flagged item."""
    shown = [f for f in spec.fields if f.shown and f.label and f.name in fields]
    if not shown:
        return list(fields.items())
    return [(f.label, fields[f.name]) for f in shown]


def item_text(spec: specs.TaskSpec, fields: dict[str, Any]) -> str:
    """The text an annotator saw, field by field, verbatim (sanitised only when shown)."""
    return "\n".join(f"{label}: {value}" for label, value in item_fields(spec, fields))


def build_flags_report(
    engine: Engine,
    data: StudyData,
    report: StudyReport,
    point_score: Callable[[StudyData], float | None],
) -> FlagsReport:
    """`point_score`: a study's task score without intervals (build.point_task_score)."""
    flags = list_flags(engine, data.study_id)
    rows = [
        FlaggedItem.model_construct(
            label_id=f.label_id,
            source_id=f.source_id,
            annotator=f.annotator,
            synthetic=f.synthetic,
            phase=f.phase,
            comment=f.comment,
            text=item_text(data.spec, f.fields),
            state=f.state,
            by=f.by,
            reason=f.reason,
            at=f.at.isoformat(timespec="seconds") if f.at else None,
        )
        for f in flags
    ]
    labels_per_item = (
        data.excluded_labels["item_id"].value_counts().to_dict()
        if data.excluded_labels is not None
        else {}
    )
    excluded = [
        ExcludedItem.model_construct(
            source_id=str(e["source_id"]),
            by=str(e["by"]),
            reason=str(e["reason"]),
            at=str(e["at"]),
            n_labels=int(labels_per_item.get(item_id, 0)),
        )
        for item_id, e in data.excluded.items()
    ]
    section = FlagsReport.model_construct(
        n_flags=len(rows),
        open=sum(r.state == OPEN for r in rows),
        resolved=sum(r.state == RESOLVED for r in rows),
        excluded=sum(r.state == EXCLUDED for r in rows),
        flagged=rows,
        excluded_items=excluded,
    )
    if excluded:
        without = report.task_score.value
        with_them = point_score(with_excluded_items(data)) if report.has_gold else None
        section.task_score_without_excluded = without
        section.task_score_with_excluded = with_them
        section.note = _effect_note(len(excluded), without, with_them)
    return section


def _effect_note(n: int, without: float | None, with_them: float | None) -> str:
    what = f"{count_of(n, 'item')} excluded from scoring and agreement by the researcher"
    if without is None or with_them is None:
        return f"{what}; the study has no score to compare"
    delta = (without - with_them) * 100
    return (
        f"{what}: task score {fixed(without * 100, 1)} without them, "
        f"{fixed(with_them * 100, 1)} with them ({fixed(delta, 1, sign=True)} points)"
    )


def flags_sections(r: FlagsReport) -> list[tuple[str, list[str], list[list[str]]]]:
    """Rendered by render.sections (table and Markdown): flags, then excluded items."""
    out = []
    if r.flagged:
        rows = [
            [
                f.source_id,
                f.annotator + (" (synthetic)" if f.synthetic else ""),
                f.phase,
                f.comment or "",
                f.text,
                f.state + (f" by {f.by}: {f.reason}" if f.by else ""),
            ]
            for f in r.flagged
        ]
        title = (
            f"Flagged items: {count_of(r.n_flags, 'flag')} ({r.open} open, {r.resolved} resolved, "
            f"{r.excluded} on excluded items)"
        )
        out.append((title, ["Item", "Annotator", "Phase", "Comment", "Text", "State"], rows))
    if r.excluded_items:
        rows = [[e.source_id, str(e.n_labels), e.by, e.reason, e.at] for e in r.excluded_items]
        if r.note:
            rows.append([r.note, "", "", "", ""])
        out.append(
            (
                "Items excluded from scoring and agreement",
                ["Item", "Labels", "By", "Reason", "At"],
                rows,
            )
        )
    return out


SECTION = ReportSection("flags", lambda r: flags_sections(r.flags) if r.flags else [])
