"""Catch items in the report and the console (issue 16): each annotator's catch accuracy over
time and the drift warnings (the rule is `protocol.catch.drift`, the one the engine's `pause`
uses). Catch answers are read here and nowhere else in the report: scores, agreement and
submission files read test answers only.

    summary = catch_report(engine, "rte-2026")   # None when the study serves no catch items
"""

from __future__ import annotations

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotate.protocol import catch
from annotate.protocol.studies import StudyContext, load_study
from annotate.report.cells import pct
from annotate.report.model.schema import (
    CatchAnnotator,
    CatchPoint,
    CatchReport,
)
from annotate.report.sections.base import ReportSection
from annotate.store.models import Annotator, Label, StudyItem


def catch_report(engine: Engine, study: str | StudyContext) -> CatchReport | None:
    """Each annotator's catch accuracy over time and the drift warnings; None for a study that
    serves no catch items and has none."""
    ctx = load_study(engine, study) if isinstance(study, str) else study
    with Session(engine) as session:
        rows = session.execute(
            select(Annotator.id, Annotator.name, Label.phase, Label.correct, Label.answered_at)
            .join(Annotator, Annotator.id == Label.annotator_id)
            .where(
                Label.study_id == ctx.id,
                Label.phase.in_([catch.CATCH, catch.REFRESHER]),  # type: ignore[attr-defined]
            )
            .order_by(Label.answered_at, Label.id)
        ).all()
        if ctx.protocol.catch_rate <= 0 and not rows:
            return None
        pool_phases = {
            p
            for (p,) in session.execute(
                select(StudyItem.phase)
                .where(StudyItem.study_id == ctx.id, StudyItem.phase == catch.CATCH)
                .limit(1)
            )
        }
        reused = _pool_reuses_training(session, ctx) if pool_phases else False
        people: dict[int, tuple[str, list[tuple[bool, str]], int]] = {}
        for annotator_id, name, phase, correct, answered_at in rows:
            entry = people.setdefault(annotator_id, (name, [], 0))
            if phase == catch.CATCH:
                entry[1].append((bool(correct), answered_at.isoformat()))
            else:
                people[annotator_id] = (entry[0], entry[1], entry[2] + 1)
        annotators, warnings = [], []
        limit = catch.catch_threshold(session, ctx)
        for annotator_id, (name, answers, refreshed) in sorted(
            people.items(), key=lambda p: p[1][0]
        ):
            row = _annotator(name, answers, limit.value, refreshed)
            annotators.append(row)
            if row.first_drift_at is not None:
                warnings.append(
                    f"{name}: recent catch accuracy fell below {limit.describe()} at "
                    f"{row.first_drift_at}"
                    + (" (still below)" if row.drifting else " (recovered since)")
                )
            if row.drifting and catch.refresher_exhausted(session, ctx, annotator_id):
                warnings.append(catch.paused_warning(session, ctx, name))
    return CatchReport.model_construct(
        catch_rate=ctx.protocol.catch_rate,
        catch_action=ctx.protocol.catch_action,
        window=catch.WINDOW,
        min_answers=catch.MIN_ANSWERS,
        pool="training items reused (every dev item was a training item)"
        if reused
        else "dev items that were not training items",
        annotators=annotators,
        warnings=warnings,
    )


def _pool_reuses_training(session: Session, ctx: StudyContext) -> bool:
    training = set(
        session.scalars(
            select(StudyItem.item_id).where(
                StudyItem.study_id == ctx.id, StudyItem.phase == "training"
            )
        )
    )
    pool = set(
        session.scalars(
            select(StudyItem.item_id).where(
                StudyItem.study_id == ctx.id, StudyItem.phase == catch.CATCH
            )
        )
    )
    return bool(pool) and pool <= training


def _annotator(
    name: str, answers: list[tuple[bool, str]], threshold: float | None, refreshed: int
) -> CatchAnnotator:
    timeline, first_drift = [], None
    correct = [c for c, _ in answers]
    for n, (right, when) in enumerate(answers, start=1):
        recent = correct[max(0, n - catch.WINDOW) : n]
        timeline.append(
            CatchPoint.model_construct(
                n=n, answered_at=when, correct=right, recent_accuracy=sum(recent) / len(recent)
            )
        )
        if first_drift is None and catch.drift(correct[:n], threshold) is not None:
            first_drift = when
    now = catch.drift(correct, threshold)
    return CatchAnnotator.model_construct(
        name=name,
        n=len(answers),
        correct=sum(correct),
        accuracy=sum(correct) / len(correct) if correct else None,
        threshold=threshold,
        recent_accuracy=timeline[-1].recent_accuracy if timeline else None,
        drifting=now is not None,
        first_drift_at=first_drift,
        refresher_items=refreshed,
        timeline=timeline,
    )


CATCH_HEADERS = (
    "Annotator",
    "Catch answers",
    "Accuracy",
    "Recent",
    "Threshold",
    "Drift",
    "Refresher items",
    "Latest answers (oldest first)",
)


def catch_sections(c: CatchReport | None) -> list[tuple[str, list[str], list[list[str]]]]:
    """The report's catch section: one row per annotator, then the warnings."""
    if c is None:
        return []
    rows = []
    for a in c.annotators:
        trend = " ".join("✓" if p.correct else "✗" for p in a.timeline[-12:])
        rows.append(
            [
                a.name,
                str(a.n),
                pct(a.accuracy),
                pct(a.recent_accuracy),
                pct(a.threshold),
                "DRIFT" if a.drifting else ("recovered" if a.first_drift_at else "ok"),
                str(a.refresher_items),
                trend,
            ]
        )
    title = (
        f"Catch items (rate {c.catch_rate:g}, action {c.catch_action}; recent = last "
        f"{c.window}; {c.pool})"
    )
    sections = [(title, list(CATCH_HEADERS), rows)]
    if c.warnings:
        sections.append(("Drift warnings", ["Warning"], [[w] for w in c.warnings]))
    return sections


SECTION = ReportSection("catch", lambda r: catch_sections(r.catch))
