"""On PostgreSQL a study is ready for its crowd as soon as it is made: the planner has figures
for its items (store.engine.refresh_statistics), so a hand-out's check of one item reads that
item's row, not the whole study's index."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from annotate.protocol import assignment
from annotate.protocol.studies import add_annotator
from annotate.store.models import StudyItem
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.parametrize("backend", ["postgresql"], indirect=True),
]


def _indexes(plan: dict) -> set[str]:
    """Every index a plan reads."""
    found = {plan["Index Name"]} if "Index Name" in plan else set()
    for child in plan.get("Plans", []):
        found |= _indexes(child)
    return found


def test_a_hand_out_checks_the_item_by_its_own_row_in_a_study_just_made(store_url, tmp_path: Path):
    engine = open_workspace(store_url, create=True).engine
    ctx = rte_study(engine, tmp_path, train=6, test=400)
    annotator_id = add_annotator(engine, "ana").id
    with engine.connect() as conn:
        item_id = conn.execute(
            select(StudyItem.item_id).where(StudyItem.study_id == ctx.id, StudyItem.phase == "test")
        ).scalar()
        params = {
            **assignment.keys(ctx, annotator_id, datetime.now(UTC)),
            "b_item": item_id,
            "b_expires": datetime.now(UTC),
        }
        lease = assignment.LEASE_IF_ROOM.compile(dialect=conn.dialect)
        plan = conn.exec_driver_sql(
            f"EXPLAIN (FORMAT JSON) {lease.string}", lease.construct_params(params)
        ).scalar()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    used = _indexes(plan[0]["Plan"])
    assert "uq_studyitem" in used and "ix_studyitem_next" not in used, used
    engine.dispose()
