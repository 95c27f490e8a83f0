"""Which test item an annotator gets next: k distinct annotators per item, breadth-first, with
leases so an item on someone's screen is not handed to a (k+1)-th person.

Each test item carries `remaining`, the labels it still takes (annotate/completion.py): k at
first, one less per label, 1 again while an extra-annotator tie is open, 0 once the item is
complete or decided early (stop_when_decided). Only studies with those options look at the
votes after a label (`settle`); for every other study the counter alone decides.

This is the keypress's hot path, so it is SQLAlchemy Core on a Connection, not the ORM: the
statements are built once at import (SQLAlchemy then reuses their compiled form), and the answer
plus the next lease is one short write transaction of four statements (on SQLite the lease of the
answered item moves onto the next: MOVE_MINE). Every function here runs
inside the caller's write transaction, after `lock_annotator`. On SQLite that transaction holds
the database's write lock (BEGIN IMMEDIATE), so two annotators asking at the same moment are
served one after the other. On PostgreSQL they are served at the same time, and each rule holds
by a lock no wider than it needs:
- k labels per item: COUNT_LABEL checks and takes the count in one UPDATE of the item's row, whose
  row lock orders the answers of one item (and `settle`'s read of its votes after each one);
- an item handed to no more people than it takes: a hand-out locks the row of the item it picks
  (`_lease_free_item_pg`) and leases it only if, read after that lock, its labels still wanted
  exceed its live leases;
- one item on a person's screen, their batch, no item labelled twice: `lock_annotator`, taken
  first by every transaction of that person that hands out, fills or gives back test items."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    Select,
    and_,
    bindparam,
    cast,
    delete,
    exists,
    func,
    insert,
    literal_column,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError

from annotate import completion
from annotate.protocol import standing
from annotate.protocol.progress import as_utc
from annotate.protocol.studies import TEST, StudyContext
from annotate.store.models import GateDecision, Item, Label, Lease, StudyItem
from annotate.store.prepared import Prepared

label = Label.__table__  # type: ignore[attr-defined]
lease = Lease.__table__  # type: ignore[attr-defined]
study_item = StudyItem.__table__  # type: ignore[attr-defined]
item = Item.__table__  # type: ignore[attr-defined]
gate_decision = GateDecision.__table__  # type: ignore[attr-defined]

# Bound parameters (b_ + study, annotator, item, phase, now, expires: SQLAlchemy keeps the
# bare column names for the VALUES and SET clauses).
_STUDY, _ANNOTATOR, _ITEM = bindparam("b_study"), bindparam("b_annotator"), bindparam("b_item")
_PHASE, _NOW = bindparam("b_phase"), bindparam("b_now")

_ADMITTED = (
    select(gate_decision.c.admitted)
    .where(gate_decision.c.study_id == _STUDY, gate_decision.c.annotator_id == _ANNOTATOR)
    .order_by(gate_decision.c.id.desc())
    .limit(1)
    .scalar_subquery()
)
"""The annotator's latest gate decision (a later decision overrides an earlier one)."""

_MY_LABEL = exists().where(
    label.c.study_id == _STUDY,
    label.c.item_id == _ITEM,
    label.c.annotator_id == _ANNOTATOR,
    label.c.phase == _PHASE,
)

COUNT_LABEL = (
    update(study_item)
    .where(
        study_item.c.study_id == _STUDY,
        study_item.c.phase == _PHASE,
        study_item.c.item_id == _ITEM,
        study_item.c.remaining > 0,
        ~_MY_LABEL,
        _ADMITTED.is_(true()),
    )
    .values(n_labels=study_item.c.n_labels + 1, remaining=study_item.c.remaining - 1)
)
"""Count one more label on a test item unless it takes no more, the annotator answered it
before, or the gate has not admitted them. Check and decrement are one statement, so no
interleaving can give an item a label it does not take; when it matches no row,
`why_not_counted` says which rule refused."""

INSERT_LABEL = insert(label)
INSERT_LEASE = insert(lease)

RELEASE_MINE = delete(lease).where(lease.c.study_id == _STUDY, lease.c.annotator_id == _ANNOTATOR)

_OTHERS_LEASING = (
    select(func.count())
    .where(
        lease.c.study_id == study_item.c.study_id,
        lease.c.item_id == study_item.c.item_id,
        lease.c.expires_at > _NOW,
    )
    .scalar_subquery()
)
_ROOM_BY_ROW = study_item.c.remaining > study_item.c.leased
"""The item takes more labels than it has leases, live or run out (store/lease_tally.py)."""
_FLOOR_PAST = study_item.c.lease_floor <= _NOW
"""One of the item's leases may have run out."""
_HAS_ROOM = or_(_ROOM_BY_ROW, and_(_FLOOR_PAST, study_item.c.remaining > _OTHERS_LEASING))
"""The item takes more labels than it has live leases: its row says so unless one of its
leases may have run out, and then they are counted."""
_TEST_PHASE = literal_column(f"'{TEST}'")
"""The phase written into the hand-out's statement (a constant of the code, never input): bound
as a parameter, PostgreSQL's generic plan assumed half of studyitem matched it and the server
planned the statement afresh at every hand-out."""
_MY_LABEL_OF_THE_ITEM = (
    label.c.study_id == study_item.c.study_id,
    label.c.item_id == study_item.c.item_id,
    label.c.annotator_id == _ANNOTATOR,
    label.c.phase == _TEST_PHASE,
)
_LABELLED_BY_ME = exists().where(*_MY_LABEL_OF_THE_ITEM)


def _walk(*terms: ColumnElement[bool]) -> Select[Any]:
    """The first of the study's test items that take more labels and meet `terms`."""
    return (
        select(study_item.c.item_id, item.c.source_id, item.c.fields)
        .join(item, item.c.id == study_item.c.item_id)
        .where(
            study_item.c.study_id == _STUDY,
            study_item.c.phase == _TEST_PHASE,
            study_item.c.remaining > 0,
            *terms,
        )
        # Breadth-first: the item closest to complete first, then the sample order. The index
        # ix_studyitem_next serves this order and the filter on its own (migration 0006), and
        # its range seek skips every finished item.
        .order_by(study_item.c.remaining, study_item.c.position)
        # Written in, as the phase: a bound LIMIT kept PostgreSQL from a generic plan.
        .limit(literal_column("1"))
    )


# Room before the annotator's own label: with many people at work the walk passes every item
# whose places are all leased, and SQLite checks the terms in this order. The item's row says
# so (schema 16): with 1,000 live leases on the first 200 items a hand-out took 30 us on SQLite
# instead of 125 (counting each item's leases).
NEXT_ITEM = _walk(_HAS_ROOM, ~_LABELLED_BY_ME)

HELD = (
    select(lease.c.item_id, item.c.source_id, item.c.fields)
    .join(item, item.c.id == lease.c.item_id)
    .where(
        lease.c.study_id == _STUDY, lease.c.annotator_id == _ANNOTATOR, lease.c.expires_at > _NOW
    )
    .order_by(lease.c.id)
    .limit(1)
)
"""The item already on this annotator's screen (after a crash or restart), if any."""

EXTEND = (
    update(lease)
    .where(lease.c.study_id == _STUDY, lease.c.annotator_id == _ANNOTATOR, lease.c.item_id == _ITEM)
    .values(expires_at=bindparam("b_expires"))
)

MOVE_MINE = (
    update(lease)
    .where(lease.c.study_id == _STUDY, lease.c.annotator_id == _ANNOTATOR)
    .values(item_id=_ITEM, expires_at=bindparam("b_expires"))
)
"""The annotator's lease moved onto their next item: what giving it back and leasing the next
item do, in one statement (and one index fewer to write: the annotator's stays as it is)."""

# The keypress's statements as it runs them (store/prepared.py: faster on SQLite).
_RUN_COUNT = Prepared(COUNT_LABEL)
_RUN_RELEASE = Prepared(RELEASE_MINE)
_RUN_NEXT = Prepared(NEXT_ITEM)
_RUN_LEASE = Prepared(INSERT_LEASE, ["study_id", "item_id", "annotator_id", "expires_at"])
_RUN_HELD = Prepared(HELD)
_RUN_EXTEND = Prepared(EXTEND)
_RUN_MOVE = Prepared(MOVE_MINE)


@dataclass(frozen=True)
class Leased:
    """The item an annotator now holds, with what the screen needs of it."""

    item_id: int
    source_id: str
    fields: dict[str, Any]


class Refusal(Enum):
    ANSWERED_BEFORE = "answered before"  # a retried commit: the stored answer stands
    NOT_ADMITTED = "not admitted"
    FULL = "item takes no more labels"
    BATCH_DONE = "the annotator's batch is complete"  # max_test_items_per_annotator


_MY_TEST_COUNT = select(func.count()).where(
    label.c.study_id == _STUDY, label.c.annotator_id == _ANNOTATOR, label.c.phase == _PHASE
)
_RUN_MY_TEST_COUNT = Prepared(_MY_TEST_COUNT)


def batch_done(
    conn: Connection, ctx: StudyContext, annotator_id: int, mine: int | None = None
) -> bool:
    """Whether the annotator has labelled their batch (max_test_items_per_annotator); checked
    inside the locked write transaction, so concurrent windows cannot exceed it. `mine`: their
    test labels, where the transaction has counted them already."""
    if ctx.protocol.max_test_items_per_annotator is None:
        return False
    if mine is None:
        params = keys(ctx, annotator_id, datetime.min)
        mine = int(_RUN_MY_TEST_COUNT.run(conn, params).scalar() or 0)
    return batch_full(ctx, mine)


def batch_full(ctx: StudyContext, mine: int) -> bool:
    """Whether `mine` test labels fill the annotator's batch (max_test_items_per_annotator):
    the rule batch_done applies, for a caller that has the count already (standing.batch_full,
    which the roster asks too)."""
    return standing.batch_full(ctx.protocol.max_test_items_per_annotator, mine)


_ITEM_VALUES = select(label.c.value).where(
    label.c.study_id == _STUDY, label.c.item_id == _ITEM, label.c.phase == TEST
)
_SET_REMAINING = (
    update(study_item)
    .where(
        study_item.c.study_id == _STUDY,
        study_item.c.phase == TEST,
        study_item.c.item_id == _ITEM,
    )
    .values(remaining=bindparam("b_remaining"))
)


def rule_of(ctx: StudyContext) -> completion.Rule:
    p = ctx.protocol
    return completion.Rule(p.annotators_per_item, p.tie_rule, p.stop_when_decided)


def settle(conn: Connection, ctx: StudyContext, item_id: int) -> None:
    """After a label is stored: how many more the item takes, from its votes. Only for studies
    whose votes matter (extra-annotator ties, stop_when_decided); one indexed read and one
    write, inside the keypress's transaction."""
    if not rule_of(ctx).needs_votes:
        return
    _, wanted = _counted(conn, ctx, item_id)
    conn.execute(_SET_REMAINING, {"b_study": ctx.id, "b_item": item_id, "b_remaining": wanted})


def _counted(conn: Connection, ctx: StudyContext, item_id: int) -> tuple[int, int]:
    """The item's test labels and how many more it takes by the study's rule."""
    values = list(conn.execute(_ITEM_VALUES, {"b_study": ctx.id, "b_item": item_id}).scalars())
    collapse = {o.value: o.collapses_to or o.value for o in ctx.spec.answer_scale}
    units = completion.unit_votes(values, ctx.spec.kind, collapse)
    return len(values), completion.labels_wanted(units, len(values), rule_of(ctx))


_SET_COUNTS = _SET_REMAINING.values(
    n_labels=bindparam("b_n_labels"), remaining=bindparam("b_remaining")
)


def recount(conn: Connection, ctx: StudyContext, item_id: int) -> None:
    """After labels of an item were set aside (protocol/set_aside.py): its counter and the
    labels it takes again, from the labels it keeps, by the study's rule (what `check`
    verifies)."""
    n, wanted = _counted(conn, ctx, item_id)
    params = {"b_study": ctx.id, "b_item": item_id, "b_n_labels": n, "b_remaining": wanted}
    conn.execute(_SET_COUNTS, params)


def keys(ctx: StudyContext, annotator_id: int, now: datetime) -> dict[str, Any]:
    """The bound parameters every statement here shares."""
    return {
        "b_study": ctx.id,
        "b_annotator": annotator_id,
        "b_phase": TEST,
        "b_now": now,
    }


def lease_next_item(
    conn: Connection,
    ctx: StudyContext,
    annotator_id: int,
    now: datetime,
    *,
    resume: bool = True,
    mine: int | None = None,
    moving: bool = False,
) -> Leased | None:
    """Reserve and return the next test item for this annotator, or None when none is left
    for them. Resumes the item they held before while its lease lasts (`resume=False` when
    the caller has just released their leases, which saves a query). `mine`: their test
    labels, where the transaction has counted them already (batch_done). `moving`: the
    caller has just stored the answer to the item they held and kept its lease (not on
    PostgreSQL, whose count gives it back): that lease moves onto the next item, or goes."""
    params = keys(ctx, annotator_id, now)
    params["b_expires"] = now + timedelta(minutes=ctx.protocol.lease_minutes)
    if batch_done(conn, ctx, annotator_id, mine):
        if resume or moving:  # else the caller has just given them back
            _RUN_RELEASE.run(conn, params)
        return None
    if resume:
        held = _RUN_HELD.run(conn, params).first()
        if held is not None:
            _RUN_EXTEND.run(conn, {**params, "b_item": held.item_id})
            return Leased(held.item_id, held.source_id, held.fields)
        _RUN_RELEASE.run(conn, params)  # only expired ones are left
    if conn.dialect.name == "postgresql":
        row = _lease_free_item_pg(conn, params)
        return None if row is None else Leased(row.item_id, row.source_id, row.fields)
    # While moving, the answered item's lease is still there: it counts only on that item,
    # which the annotator has labelled now, so NEXT_ITEM passes it over all the same.
    row = _RUN_NEXT.run(conn, params).first()
    if row is None:
        if moving:
            _RUN_RELEASE.run(conn, params)
        return None
    if not (moving and _moved(conn, {**params, "b_item": row.item_id})):
        _RUN_LEASE.run(
            conn,
            {
                "study_id": ctx.id,
                "item_id": row.item_id,
                "annotator_id": annotator_id,
                "expires_at": params["b_expires"],
            },
        )
    return Leased(row.item_id, row.source_id, row.fields)


@dataclass(frozen=True)
class HeldElsewhere:
    """Test items an annotator has not labelled that take more labels but are all on other
    people's screens: one comes back to them if its hold runs out unanswered (a window closed
    without quitting keeps its item until then)."""

    items: int
    first_back_in: timedelta
    """How long until the first of those holds runs out, unless its annotator answers or
    keeps on (a live window keeps its hold)."""

    @property
    def minutes(self) -> int:
        """`first_back_in` in whole minutes, rounded up (at least 1), as a screen says it."""
        return max(1, math.ceil(self.first_back_in.total_seconds() / 60))


_HELD_BY_OTHERS = (
    select(func.count(func.distinct(lease.c.item_id)), func.min(lease.c.expires_at))
    .select_from(
        study_item.join(
            lease,
            and_(
                lease.c.study_id == study_item.c.study_id, lease.c.item_id == study_item.c.item_id
            ),
        )
    )
    .where(
        study_item.c.study_id == _STUDY,
        study_item.c.phase == _TEST_PHASE,
        study_item.c.remaining > 0,
        lease.c.annotator_id != _ANNOTATOR,
        lease.c.expires_at > _NOW,
        ~_LABELLED_BY_ME,
    )
)


def held_elsewhere(
    conn: Connection, ctx: StudyContext, annotator_id: int, now: datetime
) -> HeldElsewhere | None:
    """Where lease_next_item has just found no item for the annotator: the items that may
    still come to them, held by others, or None when nothing is left for them (their batch is
    done, or every item has its labels or theirs: standing.nothing_left, which the roster asks
    for everyone at once, and which calls them "done")."""
    if batch_done(conn, ctx, annotator_id):
        return None
    count, first_back = conn.execute(_HELD_BY_OTHERS, keys(ctx, annotator_id, now)).one()
    if not count:
        return None
    return HeldElsewhere(int(count), as_utc(first_back) - as_utc(now))


def _moved(conn: Connection, params: dict[str, Any]) -> bool:
    """MOVE_MINE: True if the annotator's one lease now holds the next item. False if they
    held none (it ran out and was given back), or more than one (the unique constraint
    refuses to move two onto one item, and the statement alone is undone): then every lease
    of theirs is given back, and the caller leases the item afresh."""
    try:
        if _RUN_MOVE.run(conn, params).rowcount == 1:
            return True
    except IntegrityError:
        pass
    _RUN_RELEASE.run(conn, params)
    return False


def count_label(
    conn: Connection, ctx: StudyContext, annotator_id: int, item_id: int, mine: int | None = None
) -> bool:
    """COUNT_LABEL for one item: whether the label may be stored (the count is then taken).
    Taken, it also says the gate's latest word is "admitted" (COUNT_LABEL requires it).
    `mine`: as for batch_done."""
    if batch_done(conn, ctx, annotator_id, mine):
        return False
    params = keys(ctx, annotator_id, datetime.min)
    return _RUN_COUNT.run(conn, {**params, "b_item": item_id}).rowcount == 1


_LABEL_COLUMNS = (
    "study_id",
    "item_id",
    "annotator_id",
    "phase",
    "value",
    "correct",
    "shown_at",
    "answered_at",
    "flag",
    "comment",
    "revisions",
)
"""A label row's columns (views.label_row), bound as l_<column> in _STORE_COUNTED_PG."""
_RUN_INSERT_LABEL = Prepared(INSERT_LABEL, _LABEL_COLUMNS)
_COUNTED = COUNT_LABEL.returning(study_item.c.item_id).cte("counted")
_STORE_COUNTED_PG = (
    insert(label)
    .from_select(
        list(_LABEL_COLUMNS),
        select(*(bindparam(f"l_{c}", type_=label.c[c].type) for c in _LABEL_COLUMNS)).select_from(
            _COUNTED
        ),
    )
    .add_cte(
        RELEASE_MINE.where(exists(select(_COUNTED.c.item_id))).cte("released"),
        nest_here=True,
    )
    .returning(label.c.id)
)
"""PostgreSQL: COUNT_LABEL, the label's insert if it counted, and then giving back the
annotator's leases, in one statement (data-modifying WITH queries): one round trip instead of
three for every test answer. The insert and the release read only what the count returned,
so they happen exactly when it counted, as the three statements did one after the other."""
_RUN_STORE_COUNTED_PG = Prepared(_STORE_COUNTED_PG)


def count_and_store(
    conn: Connection,
    ctx: StudyContext,
    annotator_id: int,
    row: dict[str, Any],
    mine: int | None = None,
) -> tuple[bool, bool]:
    """COUNT_LABEL for the label `row` (views.label_row) and, if it counted, its insert: (it
    counted and is stored, the annotator's leases were given back too). On PostgreSQL one
    statement does all three; elsewhere the caller gives the leases back (release_leases)."""
    if batch_done(conn, ctx, annotator_id, mine):
        return False, False
    if conn.dialect.name == "postgresql":
        params = {**keys(ctx, annotator_id, datetime.min), "b_item": row["item_id"]}
        params.update({f"l_{c}": row[c] for c in _LABEL_COLUMNS})
        stored = _RUN_STORE_COUNTED_PG.run(conn, params).first() is not None
        return stored, stored
    if not count_label(conn, ctx, annotator_id, row["item_id"], mine):
        return False, False
    insert_label(conn, row)
    return True, False


def insert_label(conn: Connection, row: dict[str, Any]) -> None:
    """Store the label `row` (views.label_row), counted or not needing a count (training)."""
    _RUN_INSERT_LABEL.run(conn, row)


def inserting_label(row: dict[str, Any]) -> tuple[Prepared, dict[str, Any]]:
    """insert_label's statement and parameters, to run with others (prepared.run_together)."""
    return _RUN_INSERT_LABEL, row


def why_not_counted(
    conn: Connection, ctx: StudyContext, annotator_id: int, item_id: int
) -> Refusal:
    """The rule that refused COUNT_LABEL (the rare path: looked up only after a refusal)."""
    params = {**keys(ctx, annotator_id, datetime.min), "b_item": item_id}
    if conn.execute(select(_MY_LABEL), params).scalar():
        return Refusal.ANSWERED_BEFORE
    if not conn.execute(select(_ADMITTED), params).scalar():
        return Refusal.NOT_ADMITTED
    if batch_done(conn, ctx, annotator_id):
        return Refusal.BATCH_DONE
    return Refusal.FULL


def release_leases(
    conn: Connection, ctx: StudyContext, annotator_id: int, answered: int | None = None
) -> None:
    """Give back the annotator's leases in the study, after an answer (`answered` names its
    item) or a quit. An annotator has one item on the screen, so every lease they hold goes,
    expired ones included, and the next lease can be taken without looking for one to resume."""
    _RUN_RELEASE.run(conn, keys(ctx, annotator_id, datetime.min))


# --- PostgreSQL: a hand-out locks the item it picks, not the study ------------------------------
# Hand-outs of different items run side by side. A hand-out locks the item's row (studyitem)
# before it leases it, so two never lease one item at once: the second passes the item over for
# the next in the breadth-first order (SKIP LOCKED; or, when every item with room is locked,
# waits for the first), and reads the first's lease once that has committed (READ COMMITTED:
# each statement reads what was committed before it began, and PostgreSQL makes a commit
# visible before it lets the transaction's locks go). Breadth-first holds as under the study
# lock, except that an item being handed out, or answered, at that very moment is passed over.
# An answer locks the row of the item it counts (COUNT_LABEL), and the lease's trigger
# (store/lease_tally.py) writes the rows of the items whose leases it takes or gives back: a
# hand-out holds the row it leases already, an answer the row it counts, and neither then waits
# for a row another holds (SKIP LOCKED), so these locks close no cycle. An answer takes one
# label wanted and gives back its lease in one commit, which a hand-out's check reads entirely
# or not at all, so a lease granted when labels wanted exceeded live leases stays one an answer
# can fill, as under the study lock (a lease that ran out, or an item decided early by its
# votes, can still make an answer unneeded, as before).

_MAY_HAVE_ROOM = or_(_ROOM_BY_ROW, _FLOOR_PAST)
_LABELLED_BY_ME_PROBED = exists(
    select(literal_column("1")).where(*_MY_LABEL_OF_THE_ITEM).offset(literal_column("0"))
)
_FIRST_FREE = _walk(_MAY_HAVE_ROOM, _HAS_ROOM, ~_LABELLED_BY_ME_PROBED).with_for_update(
    of=study_item, skip_locked=True
)
"""The first item in the breadth-first order that has room and whose row no other transaction
holds, locked (a job queue's SKIP LOCKED): an item another hand-out is leasing, or an answer
is counting, at that moment is passed over.

Written for PostgreSQL's planner, which orders a row's checks by their estimated cost and
plans the check of the annotator's own label by the label table's figures:
- _MAY_HAVE_ROOM is _HAS_ROOM without its count of leases: a check of the row alone, so the
  cheapest, it is made first, and an item whose places are all leased (the walk passes a few
  hundred with 1,000 people at work) costs no more than reading its row. Measured under that
  crowd (EXPLAIN ANALYZE once a second): 190-270 rows passed, 80-170 buffers, 0.16 ms at the
  median against 0.07 ms once few leases were left: about 0.1 ms of the 3.1 ms of CPU a
  PostgreSQL test answer costs. An index that passed full items over would have to hold
  `leased`, and every lease taken or given back would then write the item's index entries
  (no HOT update);
- the annotator's label is looked up item by item, by the label's own key, for the items with
  room only (OFFSET 0 keeps PostgreSQL from turning NOT EXISTS into a join). As a join, with
  the figures of a label table still nearly empty or holding training answers only (autovacuum
  takes a minute or more to analyse it), the planner read the annotator's labels through
  uq_label, whose second column is the item's: every label of the study, at each hand-out.
  That was a tenth of PostgreSQL's time per crowd answer until the table was analysed."""

_THE_ITEM = (
    study_item.c.study_id == _STUDY,
    study_item.c.phase == _PHASE,
    study_item.c.item_id == _ITEM,
)
_WAIT_FOR_ITEM = select(study_item.c.id).where(*_THE_ITEM).with_for_update()
LEASE_IF_ROOM = (
    insert(lease)
    .from_select(
        ["study_id", "item_id", "annotator_id", "expires_at"],
        select(
            cast(_STUDY, Integer),
            cast(_ITEM, Integer),
            cast(_ANNOTATOR, Integer),
            cast(bindparam("b_expires"), lease.c.expires_at.type),
        ).where(exists().where(*_THE_ITEM, _HAS_ROOM)),
    )
    .returning(lease.c.id)  # whether it leased (an INSERT's rowcount is not reported)
)
"""Lease the item (its row locked) if it still takes more labels than it has live leases
(_HAS_ROOM), read afresh: another hand-out may have leased it after the candidates were read."""

_PICKED = _FIRST_FREE.add_columns(_ROOM_BY_ROW.label("roomy")).cte("picked")
_LEASE_FIRST_FREE = select(
    _PICKED.c.item_id, _PICKED.c.source_id, _PICKED.c.fields, _PICKED.c.roomy
).add_cte(
    insert(lease)
    .from_select(
        ["study_id", "item_id", "annotator_id", "expires_at"],
        select(
            cast(_STUDY, Integer),
            _PICKED.c.item_id,
            cast(_ANNOTATOR, Integer),
            cast(bindparam("b_expires"), lease.c.expires_at.type),
        ).where(_PICKED.c.roomy),
    )
    .cte("leased")
)
"""_FIRST_FREE and, when the item's row says it has room (`roomy`), its lease, in one statement
(a data-modifying WITH query): one round trip fewer for nearly every hand-out. The row is read
as it was locked: FOR UPDATE waits for, or skips, a transaction changing it and reads the latest
committed version of a row changed since the statement began (READ COMMITTED). Every lease
taken or given back on the item writes that row (store/lease_tally.py), and none can while it
is locked, so `leased` then counts every lease the item has, live or run out, and `remaining >
leased` is room read afresh, as LEASE_IF_ROOM reads it. An item with room only once the leases
that ran out are counted (its floor is past) is not leased here: the count of its leases would
be read as the statement began, so LEASE_IF_ROOM, a statement of its own, counts them."""

_RUN_LEASE_FIRST_FREE, _RUN_WAIT_FOR_ITEM = Prepared(_LEASE_FIRST_FREE), Prepared(_WAIT_FOR_ITEM)
_RUN_LEASE_IF_ROOM = Prepared(LEASE_IF_ROOM)


def _lease_free_item_pg(conn: Connection, params: dict[str, Any]) -> Any:
    """Lease the first item in the breadth-first order that has room and that no other hand-out
    is locking; the row (item_id, source_id, fields), or None when no item is left for the
    annotator (never merely because the items left are being handed out to others).

    While every item with room is locked by others (the study's last items), it waits for the
    first one's lock, then reads again. A wait can close a cycle only if this hand-out already holds
    an item that filled while it was being locked, and another such hand-out waits for that
    one: PostgreSQL then rolls one back as a deadlock, which the session runs again
    (session._retry). Rare as that is, it beats the alternative of waiting only in item order,
    which leaves a hand-out that may not wait reading again in a loop, possibly forever."""
    while True:
        row = _RUN_LEASE_FIRST_FREE.run(conn, params).first()
        if row is not None and row.roomy:
            return row  # leased by the same statement
        if row is None:
            row = _RUN_NEXT.run(conn, params).first()
            if row is None:
                return None  # nothing has room for this annotator: not merely locked
            _RUN_WAIT_FOR_ITEM.run(conn, {**params, "b_item": row.item_id})
        if _RUN_LEASE_IF_ROOM.run(conn, {**params, "b_item": row.item_id}).first() is not None:
            return row
        # It filled meanwhile (its lock stays held until the commit): read again.
