"""How a crowd study's workers left, counted as the platform counts them: per platform study
(Prolific's study A and study B each have their own submissions) and per completion code.
The one definition of "abandoned" lives here too; `status`, the console and the datasheet ask.

    exits = exit_counts(session, ctx)       # [ExitCount("6650…d0", "training", "training_done",
                                            #   "TRAINED7", 30), ("6650…d1", "test", …), …]
    gone = abandoned_workers(session, ctx, now)   # {annotator id: pseudonym}

Abandoned: a worker who has a visit to a platform study that ended without an exit (no code:
a closed tab, a lost connection, Quit, a submission returned on Prolific) and was quiet for
longer than a lease lasts, and who has no exit from that platform study at all. A worker who
left with any code (study_full too) did not abandon; one who closed a tab and came back to
finish did not either.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlmodel import Session

from annotate.protocol.crowd_config import CrowdConfig
from annotate.protocol.studies import StudyContext
from annotate.store.models import Annotator, Visit, utcnow


@dataclass(frozen=True)
class ExitCount:
    platform_study: str | None
    """The platform study the workers left (None: a link that names none)."""
    link: str
    """Which link of the annotate study it is: all, training or test."""
    outcome: str
    code: str
    workers: int
    """Workers whose latest exit from this platform study has this code."""


def exit_counts(session: Session, ctx: StudyContext, config: CrowdConfig) -> list[ExitCount]:
    """Workers per (platform study, exit code), each worker once per platform study (their
    latest exit there); sorted by platform study, then the order of the outcomes."""
    latest = (
        select(func.max(Visit.id).label("last"))
        .where(Visit.study_id == ctx.id, Visit.outcome.is_not(None))
        .group_by(Visit.annotator_id, Visit.platform_study_id)
        .subquery()
    )
    rows = session.execute(
        select(Visit.platform_study_id, Visit.link_role, Visit.outcome, func.count())
        .join(latest, Visit.id == latest.c.last)
        .group_by(Visit.platform_study_id, Visit.link_role, Visit.outcome)
    ).all()
    roles = config.accepted
    order = list(config.codes)
    counts = [
        ExitCount(
            study,
            roles.get(study or "", role or "all"),
            str(outcome),
            config.codes.get(str(outcome), ""),
            int(n),
        )
        for study, role, outcome, n in rows
    ]
    counts.sort(
        key=lambda c: (
            c.platform_study or "",
            order.index(c.outcome) if c.outcome in order else len(order),
        )
    )
    return counts


def abandoned_workers(
    session: Session, ctx: StudyContext, now: datetime | None = None
) -> dict[int, str]:
    """Workers who abandoned (see the module docstring): annotator id -> pseudonym."""
    quiet_since = (now or utcnow()) - timedelta(minutes=ctx.protocol.lease_minutes)
    quiet = session.execute(
        select(Visit.annotator_id, Visit.platform_study_id).where(
            Visit.study_id == ctx.id,
            Visit.superseded_at.is_(None),
            Visit.outcome.is_(None),
            Visit.last_seen_at < quiet_since,
        )
    ).all()
    if not quiet:
        return {}
    exited = set(
        session.execute(
            select(Visit.annotator_id, Visit.platform_study_id)
            .where(Visit.study_id == ctx.id, Visit.outcome.is_not(None))
            .distinct()
        ).all()
    )
    ids = {aid for aid, study in quiet if (aid, study) not in exited}
    names = session.execute(select(Annotator.id, Annotator.name).where(Annotator.id.in_(ids)))
    return {int(aid): str(name) for aid, name in names.all()}
