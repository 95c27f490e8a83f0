"""The test labels of an annotator refused after the gate admitted them: set aside, not scored.

A researcher who refuses an annotator already in the test phase (a worker whose answers came
faster than the sentences can be read) does not want those answers in the human score or in
any item's majority. Their test labels are set aside: kept in the store, under a phase of
their own that nothing reading test labels reads (scores, votes, agreement, exports of the test
phase, `check`'s counts), and every item they labelled takes a label again, its counter and
what it still takes recounted by the study's rule. Admitted again, their set-aside labels count
again where the item still takes a label (the rules a new answer meets: room, their batch,
not answered before); the others stay set aside.

Runs inside the gate decision's write transaction (protocol/gate.py), after the decision: the
decision and its labels change together or not at all."""

from __future__ import annotations

from sqlalchemy import Connection, delete, func, select, update

from annotate.protocol import assignment
from annotate.protocol.studies import TEST, StudyContext
from annotate.store.engine import lock_annotator
from annotate.store.models import Label, StudyItem

SET_ASIDE = "set-aside"
"""The phase of a test label set aside with its annotator's refusal."""

label = Label.__table__  # type: ignore[attr-defined]
study_item = StudyItem.__table__  # type: ignore[attr-defined]


def _theirs(ctx: StudyContext, annotator_id: int, phase: str):  # type: ignore[no-untyped-def]
    return (
        label.c.study_id == ctx.id,
        label.c.annotator_id == annotator_id,
        label.c.phase == phase,
    )


def set_aside(conn: Connection, ctx: StudyContext, annotator_id: int) -> int:
    """Set aside the annotator's test labels; their items take labels again. How many."""
    items = list(conn.execute(select(label.c.item_id).where(*_theirs(ctx, annotator_id, TEST))))
    if not items:
        return 0
    item_ids = sorted(item_id for (item_id,) in items)
    # Others admitted again whose answers on these items were kept aside (the items were full):
    # counted below, where they now fit, or the items would be handed to them a second time.
    # Their locks before the items' rows, as their own answers take them (no batch overrun).
    others = conn.scalars(
        select(label.c.annotator_id)
        .distinct()
        .where(
            label.c.study_id == ctx.id,
            label.c.phase == SET_ASIDE,
            label.c.item_id.in_(item_ids),
            label.c.annotator_id != annotator_id,
        )
        .order_by(label.c.annotator_id)
    ).all()
    for other in others:
        lock_annotator(conn, ctx.id, other)
    # The items' rows first, in one order (others' answers count on them meanwhile: a count
    # read before their label committed would be written back stale). SQLite: a no-op.
    conn.execute(
        select(study_item.c.item_id)
        .where(
            study_item.c.study_id == ctx.id,
            study_item.c.phase == TEST,
            study_item.c.item_id.in_(item_ids),
        )
        .order_by(study_item.c.item_id)
        .with_for_update()
    )
    # Refused, admitted again (a label kept aside: its item took no more), handed that item
    # when it took labels again, and refused once more: one answer of theirs per item and
    # phase (uq_label), so the later answer, counted until now, is the one kept.
    conn.execute(
        delete(label).where(*_theirs(ctx, annotator_id, SET_ASIDE), label.c.item_id.in_(item_ids))
    )
    conn.execute(update(label).where(*_theirs(ctx, annotator_id, TEST)).values(phase=SET_ASIDE))
    for item_id in item_ids:
        assignment.recount(conn, ctx, item_id)
    for other in others:  # refused now (their latest decision): nothing is counted
        _count_back(conn, ctx, other, item_ids)
    return len(item_ids)


def restore(
    conn: Connection, ctx: StudyContext, annotator_id: int, *, imported: bool = False
) -> tuple[int, int]:
    """Count the annotator's set-aside labels again where their items still take a label, in
    the order they were given: (counted again, still set aside). The gate must have admitted
    them already (COUNT_LABEL requires it). `imported`: the study's labels came from a file
    (import-labels), which counted every one, over k included, and nothing collects more:
    every label of theirs counts again, as imported."""
    if not imported:
        return _count_back(conn, ctx, annotator_id)
    item_ids = conn.scalars(
        select(label.c.item_id).where(*_theirs(ctx, annotator_id, SET_ASIDE))
    ).all()
    conn.execute(update(label).where(*_theirs(ctx, annotator_id, SET_ASIDE)).values(phase=TEST))
    for item_id in sorted(item_ids):
        assignment.recount(conn, ctx, item_id)
    return len(item_ids), 0


def _count_back(
    conn: Connection, ctx: StudyContext, annotator_id: int, item_ids: list[int] | None = None
) -> tuple[int, int]:
    """restore, on `item_ids` only when given."""
    only = () if item_ids is None else (label.c.item_id.in_(item_ids),)
    rows = conn.execute(
        select(label.c.id, label.c.item_id)
        .where(*_theirs(ctx, annotator_id, SET_ASIDE), *only)
        .order_by(label.c.id)
    ).all()
    restored = 0
    for label_id, item_id in rows:
        if assignment.count_label(conn, ctx, annotator_id, item_id):
            conn.execute(update(label).where(label.c.id == label_id).values(phase=TEST))
            assignment.settle(conn, ctx, item_id)
            restored += 1
    return restored, len(rows) - restored


def counts(conn: Connection, study_id: int) -> dict[int, int]:
    """Set-aside test labels per annotator of the study (those with any)."""
    rows = conn.execute(
        select(label.c.annotator_id, func.count())
        .where(label.c.study_id == study_id, label.c.phase == SET_ASIDE)
        .group_by(label.c.annotator_id)
    )
    return {annotator_id: n for annotator_id, n in rows}
