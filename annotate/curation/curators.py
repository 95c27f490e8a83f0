"""Who a curator is: one person under every spelling of her name that `curator_key` takes for
the same (spaces around it, Unicode form, letter case).

A name is stored as the spelling first recorded for that curator: when "Léa" authored pairs
and later types `--as LÉA`, her reviews, skips and decisions are stored as "Léa", so every
comparison of stored names (her own examples left out of her review queue, her counts, the
coders of the agreement figures) is a plain equality, in SQL as in Python. A name nobody has
used yet is stored as typed (trimmed, NFC). Schema 19 merged the spellings a store held before.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Engine, func
from sqlmodel import Session, select

from annotate.curation.validation import curator_key, curator_name
from annotate.store.curation_models import (
    CurationDecision,
    CurationExample,
    CurationReview,
    CurationRevision,
    CurationSet,
    CurationSkip,
)

_NAMES = (
    (CurationSet.created_by, CurationSet.created_at),
    (CurationExample.author, CurationExample.created_at),
    (CurationRevision.changed_by, CurationRevision.changed_at),
    (CurationReview.reviewer, CurationReview.created_at),
    (CurationDecision.decided_by, CurationDecision.decided_at),
    (CurationSkip.reviewer, CurationSkip.skipped_at),
)
"""Every stored curator name, with the time its row was recorded."""


def _stamp(moment: datetime | None) -> float:
    # SQLite gives back naive datetimes (stored as UTC); PostgreSQL aware ones.
    if moment is None:
        return float("inf")
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _key(name: str) -> str | None:
    return curator_key(name) if name.strip() else None


def stored_name(session: Session, name: str | None) -> str:
    """`name` as the store knows this curator: the spelling first recorded for her in any
    curation table (any set), or the name as typed (trimmed, NFC) when she is new. A blank
    name is refused."""
    typed = curator_name(name)
    key = curator_key(typed)
    first: dict[str, float] = {}
    for column, time in _NAMES:
        for spelling, when in session.exec(select(column, func.min(time)).group_by(column)):
            if spelling and _key(spelling) == key:
                first[spelling] = min(first.get(spelling, float("inf")), _stamp(when))
    if not first:
        return typed
    return min(first, key=lambda spelling: (first[spelling], spelling))


def known_curator(engine: Engine, name: str | None) -> str:
    """`stored_name` in a session of its own (for a screen that shows who is working)."""
    with Session(engine) as session:
        return stored_name(session, name)
