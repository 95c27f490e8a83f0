"""One annotator, several windows: the newest window of an annotator on a study is the live one.

A window (a terminal app, a browser tab, an arrival by platform link) claims itself with
`claim`, which records a visit (annotate/store/models.py: Visit) and marks the annotator's
earlier open windows superseded. Every answer of a claimed window is stored only inside a
transaction that first checks, in the same statement that notes the window's last activity,
that it is still the latest: an older window's answer is refused with ContinuedElsewhere
before anything is written. So two windows showing the same item can never both store an
answer, and neither shows feedback for an answer its user did not give: the newer window
stores and gets feedback for its own answer, the older says "continued in another window".

Front ends: a terminal app claims with `AnnotatorSession.claim_window("terminal")`; a page
that signs in by name and token claims with `claim_window("web")`; an arrival by platform
link is claimed by crowd.enter_by_link (then `attach_window(arrival.visit_id)`). A window that
gets ContinuedElsewhere (from next_item, submit, revise) shows CONTINUED and takes no more
answers; `heartbeat()` keeps a waiting window's time on task running.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, exists, func, or_, select, update

from annotate.errors import UserError
from annotate.store.engine import ANNOTATOR_LOCK_PG, lock_annotator
from annotate.store.models import Visit
from annotate.store.prepared import Prepared

visit = Visit.__table__  # type: ignore[attr-defined]

CONTINUED = "You continued in another window; this one no longer takes answers."


class ContinuedElsewhere(UserError):
    """A newer window of the same annotator took over: this window's answer was not stored."""

    def __init__(self) -> None:
        super().__init__(CONTINUED)


LATEST = select(func.max(visit.c.id)).where(
    visit.c.study_id == bindparam("b_study"), visit.c.annotator_id == bindparam("b_annotator")
)
"""The annotator's latest window on the study (the index ix_visit_study_annotator serves it)."""
_LATEST = LATEST.scalar_subquery()

NOT_QUIT = or_(visit.c.departed_at.is_(None), visit.c.outcome.is_not(None))
"""A window not left by a clean quit (`was_quit`): open, or ended by an exit."""

TOUCH = (
    update(visit)
    .where(and_(visit.c.id == bindparam("b_visit"), visit.c.id == _LATEST, NOT_QUIT))
    .values(
        last_seen_at=bindparam("b_now"),
        consent=func.coalesce(visit.c.consent, bindparam("b_consent")),
    )
)
"""Note the window's activity if, and only if, it is the annotator's latest and was not quit:
one statement, inside the answer's write transaction, so no newer window can claim in
between, and a window that was quit (a page's cookie replayed after Quit) stores nothing. A
consent given on the page and not stored yet (b_consent true) is stored with it: with the
worker's first answer, in the same commit; NULL leaves the window's consent as it is."""


_SUPERSEDE = Prepared(
    update(visit)
    .where(
        visit.c.study_id == bindparam("b_study"),
        visit.c.annotator_id == bindparam("b_annotator"),
        visit.c.superseded_at.is_(None),
    )
    .values(superseded_at=bindparam("b_now"))
)


_NEW_WINDOW = visit.insert()


_LOCKED = select(ANNOTATOR_LOCK_PG.label("taken")).cte("locked")
TOUCH_LOCKED_PG = TOUCH.add_cte(_LOCKED, nest_here=True).where(exists(select(_LOCKED.c.taken)))
"""PostgreSQL: lock_annotator's lock, then TOUCH, in one statement (one round trip fewer per
answer). The lock is taken before the window's row is (the WITH query is run for the EXISTS
before any row is updated), so it is still the transaction's first lock; what the transaction
reads after it is read after the lock, as before."""


_RUN_TOUCH, _RUN_TOUCH_LOCKED_PG = Prepared(TOUCH), Prepared(TOUCH_LOCKED_PG)


def claim(
    conn: Connection,
    study_id: int,
    annotator_id: int,
    now: datetime,
    *,
    client: str = "terminal",
    **fields: Any,
) -> int:
    """Record a new window (the live one from now on) and supersede the annotator's open
    ones; its id. `fields`: the link's Visit columns (link_role, platform_study_id, ...)."""
    _SUPERSEDE.run(conn, {"b_study": study_id, "b_annotator": annotator_id, "b_now": now})
    row = {
        "study_id": study_id,
        "annotator_id": annotator_id,
        "client": client,
        "arrived_at": now,
        "last_seen_at": now,
        "extras": fields.pop("extras", {}),
        **fields,
    }
    return int(conn.execute(_NEW_WINDOW, row).inserted_primary_key[0])


def touching(
    conn: Connection,
    study_id: int,
    annotator_id: int,
    visit_id: int | None,
    now: datetime,
    *,
    consent: bool = False,
    lock: bool = False,
) -> tuple[Prepared, dict[str, Any]] | None:
    """Inside an answer's transaction, the statement that refuses (with `touched`, given its
    result: ContinuedElsewhere) unless this window is the latest and was not quit, and its
    parameters, to run alone or with statements that need nothing from it
    (store.prepared.run_together). None: an unclaimed session (visit_id None: library use,
    the simulator) is not checked. `consent`: the worker agreed on this window; stored now
    unless an answer is stored. `lock`: take lock_annotator's lock first, in the same
    statement on PostgreSQL (elsewhere it is taken here, first; with no window to check, the
    caller takes it)."""
    if visit_id is None:
        return None
    in_statement = lock and conn.dialect.name == "postgresql"
    if lock and not in_statement:
        lock_annotator(conn, study_id, annotator_id)
    params = {
        "b_visit": visit_id,
        "b_study": study_id,
        "b_annotator": annotator_id,
        "b_now": now,
        "b_consent": True if consent else None,
    }
    return (_RUN_TOUCH_LOCKED_PG if in_statement else _RUN_TOUCH), params


def touched(result: Any) -> None:
    """Refuse (ContinuedElsewhere) unless the statement of `touching` found the window open."""
    if result.rowcount != 1:
        raise ContinuedElsewhere()


OPEN = select(visit.c.id).where(visit.c.id == bindparam("b_visit"), visit.c.id == _LATEST, NOT_QUIT)
"""The window, if it is the annotator's latest and was not quit: what TOUCH asks, as a read."""
_RUN_OPEN = Prepared(OPEN)


def is_open(conn: Connection, study_id: int, annotator_id: int, visit_id: int) -> bool:
    """Whether the window is the annotator's latest and was not quit, in one indexed read: a
    screen that reads before it shows asks this instead of `is_live` and `was_quit` apart."""
    params = {"b_visit": visit_id, "b_study": study_id, "b_annotator": annotator_id}
    return _RUN_OPEN.run(conn, params).first() is not None


def is_live(conn: Connection, study_id: int, annotator_id: int, visit_id: int) -> bool:
    latest = conn.execute(LATEST, {"b_study": study_id, "b_annotator": annotator_id}).scalar()
    return latest == visit_id


_LINK_ROLE_BY_ID = Prepared(select(visit.c.link_role).where(visit.c.id == bindparam("b_visit")))


def serves_test_items(conn: Connection, visit_id: int | None) -> bool:
    """Whether this window may be given test items: not one opened by the training link of a
    two-study gate (Prolific study A), whose reward pays for training only, whatever the
    gate rule. A trainee the gate admits there (a threshold rule, or a late trainee judged
    against a closed median) leaves with the training-done code; their batch is the test
    study's (B). A window of no link (a terminal, the simulator) is not limited."""
    if visit_id is None:
        return True
    return _LINK_ROLE_BY_ID.run(conn, {"b_visit": visit_id}).scalar() != "training"


def was_quit(conn: Connection, visit_id: int) -> bool:
    """Whether the window was left by a clean quit (`depart` with no exit outcome): a page's
    signed cookie naming it no longer opens a session, so a copy of the cookie replayed after
    Quit signs nobody in. An exit (crowd.exit_for: departed with its outcome) stays open to
    show its code again."""
    row = _NOT_QUIT_BY_ID.run(conn, {"b_visit": visit_id}).first()
    return row is None or not row[0]


_NOT_QUIT_BY_ID = Prepared(select(NOT_QUIT).where(visit.c.id == bindparam("b_visit")))
"""Built once, as every statement a screen or an arrival runs: SQLAlchemy builds a statement
and its cache key on every call otherwise (a tenth of an arrival's CPU went to that)."""


def depart(conn: Connection, visit_id: int, now: datetime) -> None:
    """A clean quit or an exit: the window's time on task ends now (once)."""
    conn.execute(_DEPART, {"b_visit": visit_id, "b_now": now})


_DEPART = (
    update(visit)
    .where(visit.c.id == bindparam("b_visit"), visit.c.departed_at.is_(None))
    .values(departed_at=bindparam("b_now"), last_seen_at=bindparam("b_now"))
)
