"""Each test item's lease count on its own row (schema 16, store/lease_tally.py): the triggers
keep it through every path that takes, moves or gives back a lease, the next-item walk trusts
it only while none of the item's leases can have run out, and `annotate check` reports a count
that went wrong."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select, update

from annotate.protocol.session import AnnotatorSession, ItemTaken
from annotate.protocol.studies import TEST
from annotate.store.check import check_store
from annotate.store.models import Label, Lease, StudyItem, utcnow
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study
from tests.unit.test_protocol import train

LEASE_MINUTES = 5


def counts_are_exact(engine) -> None:  # type: ignore[no-untyped-def]
    """Every test item's counter equals its leases, and its floor is no later than the first
    of them to run out (none without leases)."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(StudyItem.item_id, StudyItem.leased, StudyItem.lease_floor).where(
                StudyItem.phase == TEST
            )
        ).all()
        leases = conn.execute(
            select(Lease.item_id, func.count(), func.min(Lease.expires_at)).group_by(Lease.item_id)
        ).all()
    held = {item: (n, first) for item, n, first in leases}
    for item, leased, floor in rows:
        n, first = held.get(item, (0, None))
        assert leased == n, (item, leased, n)
        assert (floor is None) == (n == 0) and (floor is None or floor <= first), (item, floor)
    assert [v.check for v in check_store(engine).violations] == []


def room_for(engine, annotator_id: int, now) -> list[int]:  # type: ignore[no-untyped-def]
    """The items, in the breadth-first order, that take more labels than they have live
    leases and that the annotator has not labelled: counted from the leases themselves."""
    with engine.connect() as conn:
        items = conn.execute(
            select(StudyItem.item_id, StudyItem.remaining)
            .where(StudyItem.phase == TEST, StudyItem.remaining > 0)
            .order_by(StudyItem.remaining, StudyItem.position)
        ).all()
        live = dict(
            conn.execute(
                select(Lease.item_id, func.count())
                .where(Lease.expires_at > now)
                .group_by(Lease.item_id)
            ).all()
        )
        mine = set(
            conn.execute(
                select(Label.item_id).where(Label.annotator_id == annotator_id, Label.phase == TEST)
            ).scalars()
        )
    return [i for i, left in items if left > live.get(i, 0) and i not in mine]


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.integers(1, 3),
    n_items=st.integers(1, 5),
    steps=st.lists(
        st.tuples(
            st.integers(0, 3), st.sampled_from(["ask", "answer", "answer and next", "quit", "wait"])
        ),
        max_size=40,
    ),
)
def test_the_counts_stay_exact_and_the_walk_passes_over_no_item_with_room(
    tmp_path_factory, new_store_url, k: int, n_items: int, steps
):
    """Four annotators ask, answer (the lease given back, or moved onto the next item), quit or
    let every lease run out, in any order: after each step every item's lease count is exact,
    and an item handed out afresh is the first in the breadth-first order that has room for
    that annotator by the leases themselves (an item whose leases ran out included)."""
    tmp = tmp_path_factory.mktemp("tally")
    ws = open_workspace(new_store_url(), create=True)
    ctx = rte_study(
        ws.engine, tmp, train=1, test=n_items, annotators_per_item=k, lease_minutes=LEASE_MINUTES
    )
    now = [utcnow()]
    crowd = [
        AnnotatorSession.open(
            ws.engine, ctx.study.name, f"a{i}", create_annotator=True, clock=lambda: now[0]
        )
        for i in range(4)
    ]
    for s in crowd:
        train(s)
    shown: dict[int, object] = {}
    for who, action in steps:
        s = crowd[who]
        if action == "wait":
            now[0] += timedelta(minutes=LEASE_MINUTES + 1)
        elif action == "quit":
            s.release()
            shown.pop(who, None)
        elif action == "ask" or who not in shown:
            with ws.engine.connect() as conn:
                holding = conn.execute(
                    select(Lease.item_id).where(
                        Lease.annotator_id == s.annotator_id, Lease.expires_at > now[0]
                    )
                ).first()
            expected = room_for(ws.engine, s.annotator_id, now[0])
            item = s.next_item()
            if holding is None:  # handed out afresh, not resumed
                assert (item.item_id if item else None) == (expected[0] if expected else None)
            if item is not None:
                shown[who] = item
        else:
            try:
                upcoming = (
                    s.submit_and_next(shown.pop(who), "entailment")
                    if action == "answer and next"
                    else s.submit(shown.pop(who), "entailment")
                )
            except ItemTaken:  # its lease ran out and others filled it
                upcoming = None
            if upcoming is not None:
                shown[who] = upcoming
        counts_are_exact(ws.engine)
    ws.engine.dispose()


def test_check_reports_a_lease_count_that_went_wrong(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path, test=2, annotators_per_item=2)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    train(s)
    held = s.next_item()
    assert held is not None
    counts_are_exact(workspace.engine)
    with workspace.engine.begin() as conn:
        conn.execute(
            update(StudyItem)
            .where(StudyItem.item_id == held.item_id, StudyItem.phase == TEST)
            .values(leased=0)
        )
    found = [(v.check, v.detail, v.item) for v in check_store(workspace.engine).violations]
    assert found == [("lease_counter", "lease counter says 0, the store holds 1", held.source_id)]
