"""Diagnostic sets: create, open and list them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, func
from sqlmodel import Session, select

from annotate.curation.curators import stored_name
from annotate.curation.validation import curator_name
from annotate.errors import UserError
from annotate.store.curation_models import CurationExample, CurationSet
from annotate.store.engine import write_session
from annotate.taxonomy import LABEL_SCHEMES
from annotate.wording import shell_word


@dataclass(frozen=True)
class SetInfo:
    id: int
    name: str
    scheme: str
    """Either three-way or two-way (the keys of LABEL_SCHEMES)."""
    created_by: str
    created_at: datetime
    sources: list[dict[str, Any]]

    @property
    def labels(self) -> tuple[str, ...]:
        return LABEL_SCHEMES[self.scheme]

    @classmethod
    def of(cls, row: CurationSet) -> SetInfo:
        assert row.id is not None
        return cls(row.id, row.name, row.labels, row.created_by, row.created_at, row.sources)


def set_row(session: Session, name: str, *, for_update: bool = False) -> CurationSet:
    """The set called `name`. With `for_update`, PostgreSQL locks its row so that concurrent
    writers number new examples one after the other (SQLite holds the write lock already)."""
    query = select(CurationSet).where(CurationSet.name == name)
    if for_update:
        query = query.with_for_update()
    row = session.exec(query).first()
    if row is None:
        raise UserError(
            f"no curation set named {name!r}; create it with `annotate curate create "
            f"{shell_word(name)}` or `annotate curate import {shell_word(name)} FILE`"
        )
    return row


def create_set(
    engine: Engine, name: str, *, scheme: str = "three-way", created_by: str = ""
) -> SetInfo:
    name = name.strip()
    if not name:
        raise UserError("a curation set needs a name")
    created_by = curator_name(created_by) if created_by else ""
    if scheme not in LABEL_SCHEMES:
        raise UserError(f"unknown label scheme {scheme!r}; use {', '.join(LABEL_SCHEMES)}")
    with write_session(engine) as session:
        created_by = stored_name(session, created_by) if created_by else ""
        if session.exec(select(CurationSet).where(CurationSet.name == name)).first():
            raise UserError(f"a curation set named {name!r} exists already")
        row = CurationSet(name=name, labels=scheme, created_by=created_by)
        session.add(row)
        session.flush()
        return SetInfo.of(row)


def load_set(engine: Engine, name: str) -> SetInfo:
    with Session(engine) as session:
        return SetInfo.of(set_row(session, name))


def set_rows(engine: Engine) -> list[dict[str, Any]]:
    """Every set with its number of active and retired examples."""
    with Session(engine) as session:
        counts = {
            (set_id, retired): n
            for set_id, retired, n in session.exec(
                select(CurationExample.set_id, CurationExample.retired, func.count()).group_by(
                    CurationExample.set_id, CurationExample.retired
                )
            )
        }
        rows = session.exec(select(CurationSet).order_by(CurationSet.name)).all()
        return [
            {
                "name": row.name,
                "labels": row.labels,
                "examples": counts.get((row.id, False), 0),
                "retired": counts.get((row.id, True), 0),
                "created_by": row.created_by,
                "created_at": row.created_at.isoformat(timespec="seconds"),
            }
            for row in rows
        ]
