"""A study's state follows its data, under every gate rule: `training` until someone is
admitted, `test` while test items lack labels, `complete` when every test item has its k.

The stored `study.state` is only set by `gate --close` (and at creation); a threshold or manual
gate never touches it, so it is not trusted on its own: everything that shows a state asks here.
"""

from __future__ import annotations

from sqlalchemy import case, func, select
from sqlmodel import Session

from annotate.store.models import GateDecision, StudyItem

TRAINING = "training"
TEST = "test"
COMPLETE = "complete"


def derived_state(session: Session, study_id: int, k: int, stored: str) -> str:
    """training | test | complete, from the labels and the gate decisions."""
    total, complete = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((StudyItem.n_labels >= k, 1), else_=0)), 0),
        ).where(StudyItem.study_id == study_id, StudyItem.phase == TEST)
    ).one()
    if total and complete >= total:
        return COMPLETE
    if stored == TEST:
        return TEST
    admitted = session.scalar(
        select(func.count()).where(
            GateDecision.study_id == study_id, GateDecision.admitted.is_(True)
        )
    )
    return TEST if admitted else TRAINING
