"""Request keys: the ledger of calls to Prolific that change money, a submission or a study.

    entry = ledger.begin(engine, ctx, "approve:SUB", "approve", "SUB", {...})  # before the call
    ... the call ...
    ledger.finish(engine, "approve:SUB", {...})                               # after it

A key written and never finished is a call that may have been made before a crash: the next
run checks Prolific (a submission's status) before asking again, and never repeats a payment.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotate.platforms.prolific.client import ProlificError
from annotate.protocol.studies import StudyContext
from annotate.store.engine import write_session
from annotate.store.models import ProlificRequest, utcnow

PENDING, DONE, FAILED = "pending", "done", "failed"


@dataclass(frozen=True)
class Entry:
    key: str
    kind: str
    target: str
    state: str
    detail: dict[str, Any]
    created_at: datetime
    done_at: datetime | None


def _entry(row: ProlificRequest) -> Entry:
    return Entry(
        row.key, row.kind, row.target, row.state, dict(row.detail), row.created_at, row.done_at
    )


def get(engine: Engine, key: str) -> Entry | None:
    with Session(engine) as session:
        row = session.scalars(select(ProlificRequest).where(ProlificRequest.key == key)).first()
        return None if row is None else _entry(row)


def entries(engine: Engine, ctx: StudyContext, kind: str | None = None) -> list[Entry]:
    with Session(engine) as session:
        query = select(ProlificRequest).where(ProlificRequest.study_id == ctx.id)
        if kind is not None:
            query = query.where(ProlificRequest.kind == kind)
        return [_entry(r) for r in session.scalars(query.order_by(ProlificRequest.id))]


def begin(
    engine: Engine,
    ctx: StudyContext,
    key: str,
    kind: str,
    target: str,
    detail: dict[str, Any] | None = None,
) -> Entry:
    """Store the request key before the call (pending); an existing key is returned as it is,
    but one whose call Prolific refused (failed) is pending again: it is asked again."""
    found = get(engine, key)
    if found is not None and found.state == FAILED:
        with write_session(engine) as session:
            row = session.scalars(select(ProlificRequest).where(ProlificRequest.key == key)).one()
            row.state, row.done_at = PENDING, None
            session.flush()
            return _entry(row)
    if found is not None:
        return found
    with write_session(engine) as session:
        row = ProlificRequest(
            study_id=ctx.id, key=key, kind=kind, target=target, detail=detail or {}
        )
        session.add(row)
        session.flush()
        return _entry(row)


@contextmanager
def asking(engine: Engine, key: str) -> Iterator[None]:
    """Around the call of a begun key: a call Prolific certainly did not act on (refused, or
    never reached) marks the key failed, so nothing counts it as made or paid and the next run
    asks again; any other failure leaves it pending, a call that may have been made."""
    try:
        yield
    except ProlificError as exc:
        if exc.refused:
            finish(engine, key, {"refused": str(exc)}, state=FAILED)
        raise


def finish(
    engine: Engine, key: str, detail: dict[str, Any] | None = None, *, state: str = DONE
) -> None:
    """The call was answered: mark its key done (or failed), keeping what the answer said."""
    with write_session(engine) as session:
        row = session.scalars(select(ProlificRequest).where(ProlificRequest.key == key)).one()
        row.state = state
        row.done_at = utcnow()
        if detail:
            row.detail = {**row.detail, **detail}
