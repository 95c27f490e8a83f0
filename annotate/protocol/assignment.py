"""Which test item an annotator gets next: k distinct annotators per item, breadth-first, with
leases so an item on someone's screen is not handed to a (k+1)-th person.

Every function here runs inside the caller's write transaction, after `lock_study`, so two
annotators asking at the same moment are served one after the other (SQLite: BEGIN IMMEDIATE;
PostgreSQL: an advisory lock per study)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, delete, exists, func, select, update
from sqlmodel import Session

from annotate.protocol.studies import TEST, StudyContext
from annotate.store.models import Label, Lease, StudyItem


def _my_live_lease(
    session: Session, ctx: StudyContext, annotator_id: int, now: datetime
) -> int | None:
    """The item already on this annotator's screen (after a crash or restart), if any."""
    return session.scalars(
        select(Lease.item_id)
        .where(Lease.study_id == ctx.id, Lease.annotator_id == annotator_id, Lease.expires_at > now)
        .order_by(Lease.id)
    ).first()


def lease_next_item(
    session: Session, ctx: StudyContext, annotator_id: int, now: datetime
) -> int | None:
    """Reserve and return the next test item for this annotator, or None when none is left
    for them. Resumes the item they held before, while its lease lasts."""
    expires = now + timedelta(minutes=ctx.protocol.lease_minutes)
    held = _my_live_lease(session, ctx, annotator_id, now)
    if held is not None:
        session.execute(
            update(Lease)
            .where(
                Lease.study_id == ctx.id, Lease.item_id == held, Lease.annotator_id == annotator_id
            )
            .values(expires_at=expires)
        )
        return held
    session.execute(
        delete(Lease).where(
            Lease.study_id == ctx.id, Lease.annotator_id == annotator_id, Lease.expires_at <= now
        )
    )
    others_leasing = (
        select(func.count())
        .where(
            Lease.study_id == StudyItem.study_id,
            Lease.item_id == StudyItem.item_id,
            Lease.expires_at > now,
        )
        .scalar_subquery()
    )
    labelled_by_me = exists().where(
        and_(
            Label.study_id == StudyItem.study_id,
            Label.item_id == StudyItem.item_id,
            Label.annotator_id == annotator_id,
            Label.phase == TEST,
        )
    )
    item_id = session.scalars(
        select(StudyItem.item_id)
        .where(
            StudyItem.study_id == ctx.id,
            StudyItem.phase == TEST,
            StudyItem.n_labels < ctx.k,
            ~labelled_by_me,
            StudyItem.n_labels + others_leasing < ctx.k,
        )
        # Breadth-first: the item closest to complete first, then the sample order.
        .order_by(StudyItem.n_labels.desc(), StudyItem.position)
        .limit(1)
    ).first()
    if item_id is None:
        return None
    session.add(
        Lease(study_id=ctx.id, item_id=item_id, annotator_id=annotator_id, expires_at=expires)
    )
    return item_id


def count_label(session: Session, ctx: StudyContext, item_id: int) -> bool:
    """Count one more label on a test item, unless it already has k. The check and the
    increment are one statement, so no interleaving can give an item k+1 labels."""
    result = session.execute(
        update(StudyItem)
        .where(
            StudyItem.study_id == ctx.id,
            StudyItem.phase == TEST,
            StudyItem.item_id == item_id,
            StudyItem.n_labels < ctx.k,
        )
        .values(n_labels=StudyItem.n_labels + 1)
    )
    return result.rowcount == 1


def release_leases(
    session: Session, ctx: StudyContext, annotator_id: int, item_id: int | None = None
) -> None:
    query = delete(Lease).where(Lease.study_id == ctx.id, Lease.annotator_id == annotator_id)
    if item_id is not None:
        query = query.where(Lease.item_id == item_id)
    session.execute(query)
