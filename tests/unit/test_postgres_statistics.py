"""On PostgreSQL the planner does its part well from the first worker on: a study just made has
figures for its items (store.engine.refresh_statistics), so a hand-out's check of one item reads
that item's row, not the whole study's index (and a server that refuses the analysis still gets
its study); a hand-out looks up the annotator's own label by the item whatever the label table's
figures say; and the next training item's statement is planned once for all its runs, not
afresh at each."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from psycopg.sql import Literal
from sqlalchemy import event, select
from sqlalchemy.exc import OperationalError

from annotate.protocol import assignment, session
from annotate.protocol.studies import add_annotator, load_study
from annotate.store.engine import write_connection
from annotate.store.models import StudyItem
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study
from tests.unit.test_protocol import train

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


def _scans_of(plan: dict, relation: str) -> list[dict]:
    """Every node of a plan that reads `relation`, by its table or one of its indexes."""
    found = [plan] if plan.get("Relation Name") == relation else []
    for child in plan.get("Plans", []):
        found += _scans_of(child, relation)
    return found


def test_a_hand_out_looks_up_the_annotators_own_label_by_the_item(store_url, tmp_path: Path):
    """The label table's figures as autovacuum leaves them in a study's first minutes, taken
    while it held training answers only: the plan PostgreSQL keeps for every later hand-out
    (a generic plan) still reads the annotator's label of each item with room by that item,
    not every label of the study."""
    engine = open_workspace(store_url, create=True).engine
    ctx = rte_study(engine, tmp_path, train=6, test=400, gate_threshold=0.0)
    crowd = [
        session.AnnotatorSession.open(engine, "pilot", f"w{i}", create_annotator=True)
        for i in range(12)
    ]
    for worker in crowd:
        train(worker)
    with engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT")
        conn.exec_driver_sql("ANALYZE label")
        compiled = assignment._LEASE_FIRST_FREE.compile(dialect=conn.dialect)
        names: list[str] = []

        def numbered(found: re.Match[str]) -> str:
            if found[1] not in names:
                names.append(found[1])
            return f"${names.index(found[1]) + 1}"

        sql = re.sub(r"%\((\w+)\)s", numbered, compiled.string)
        now = datetime.now(UTC)
        values = compiled.construct_params(
            {**assignment.keys(ctx, crowd[0].annotator_id, now), "b_expires": now}
        )
        conn.exec_driver_sql("SET plan_cache_mode = force_generic_plan")
        conn.exec_driver_sql(f"PREPARE first_free AS {sql}")
        driver = conn.connection.driver_connection
        given = ", ".join(Literal(values[name]).as_string(driver) for name in names)
        plan = conn.exec_driver_sql(f"EXPLAIN (FORMAT JSON) EXECUTE first_free({given})").scalar()
    plan = plan if isinstance(plan, list) else json.loads(plan)
    scans = _scans_of(plan[0]["Plan"], "label")
    assert scans, plan
    for scan in scans:
        reads_by_item = "item_id" in scan.get("Index Cond", "") + scan.get("Filter", "")
        assert scan.get("Parent Relationship") == "SubPlan" and reads_by_item, scan
    engine.dispose()


def test_the_next_training_item_is_planned_once_for_every_run(store_url, tmp_path: Path):
    engine = open_workspace(store_url, create=True).engine
    ctx = rte_study(engine, tmp_path, train=3, test=2000)  # as a crowd study: few to train on
    annotator_id = add_annotator(engine, "ana").id
    params = {"b_study": ctx.id, "b_annotator": annotator_id}
    with write_connection(engine) as conn:
        # psycopg prepares a statement on the server at its fifth run; PostgreSQL then plans
        # its first five runs for their values and decides whether one plan does for all
        items = [session._RUN_NEXT_TRAINING_ITEM.run(conn, params).first() for _ in range(12)]
        plans = conn.exec_driver_sql(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE strpos(statement, 'FROM item JOIN studyitem') > 0"
        ).all()
    assert len({item.id for item in items}) == 1  # nothing was answered: the same first item
    assert plans and plans[0].generic_plans > 0 and plans[0].custom_plans <= 5, plans
    engine.dispose()


def test_a_server_that_refuses_the_analysis_still_gets_its_study(store_url, tmp_path: Path):
    engine = open_workspace(store_url, create=True).engine

    def refuse(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        if statement.startswith("ANALYZE"):
            raise OperationalError(statement, {}, Exception("canceling statement: lock timeout"))

    event.listen(engine, "before_cursor_execute", refuse)
    try:
        ctx = rte_study(engine, tmp_path, train=3, test=10)
    finally:
        event.remove(engine, "before_cursor_execute", refuse)
    assert load_study(engine, "pilot").id == ctx.id
    engine.dispose()
