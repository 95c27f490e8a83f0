"""Many annotators asking for test items at once. On PostgreSQL a hand-out locks the item it
picks, not the whole study, so annotators are served side by side; every rule the study's lock
kept still holds: no item handed to more people than it takes, one item per person, nobody
told their answer was not needed, and nobody told the study is finished while its last items
are merely being handed out to others."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, func, select, text

from annotate.protocol import assignment, catch
from annotate.protocol.session import AnnotatorSession, ItemTaken
from annotate.protocol.views import ItemView
from annotate.store.engine import write_connection
from annotate.store.models import Label, Lease, StudyItem
from tests.engine_helpers import catch_study
from tests.unit.test_keypress_path import admitted

POSTGRES_ONLY = pytest.mark.parametrize(
    "backend", [pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
WAIT_S = 30
"""Bound on waiting for a thread that should finish at once (only a hang reaches it)."""


@pytest.fixture
def db_url(store_url: str) -> str:
    return store_url


def _over_k(conn, k: int) -> list[tuple[int, int]]:
    """(item, labels + live leases) of the items above k: one statement, one snapshot."""
    labels = (
        select(func.count())
        .where(Label.item_id == StudyItem.item_id, Label.phase == "test")
        .scalar_subquery()
    )
    leases = select(func.count()).where(Lease.item_id == StudyItem.item_id).scalar_subquery()
    rows = conn.execute(select(StudyItem.item_id, labels + leases).where(StudyItem.phase == "test"))
    return [(i, n) for i, n in rows if n > k]


def _holding_two(conn) -> list[int]:
    rows = conn.execute(
        select(Lease.annotator_id).group_by(Lease.annotator_id).having(func.count() > 1)
    )
    return list(rows.scalars())


def test_many_annotators_at_once_fill_each_item_to_k_holding_one_item_each(
    workspace, tmp_path: Path
):
    """Eight annotators answer flat out, two of them in two windows each. Watched all along:
    no item ever has more labels and reservations than k, nobody ever holds two items; at the
    end every item has k labels from k people and no answer was refused as not needed."""
    k, n_items = 3, 24
    first = admitted(workspace, tmp_path, "crowd", test=n_items, annotators_per_item=k)
    people = [first] + [
        admitted(workspace, tmp_path, "crowd", f"a{n}", existing=True) for n in range(1, 8)
    ]
    # A second window of two people: the same annotator in a session of its own.
    windows = people + [AnnotatorSession(s.engine, s.ctx, s.annotator) for s in people[:2]]
    refused: list[int] = []
    errors: list[str] = []
    done = threading.Event()

    def work(session: AnnotatorSession) -> None:
        try:
            item = session.next_item()
            while item is not None:
                try:
                    item = session.submit_and_next(item, "entailment")
                except ItemTaken:
                    refused.append(item.item_id)
                    item = session.next_item()
        except Exception as exc:  # every failure fails the test below
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(s,)) for s in windows]
    for t in threads:
        t.start()
    watcher_done = threading.Thread(target=lambda: ([t.join() for t in threads], done.set()))
    watcher_done.start()
    checks, broken = 0, []
    with workspace.engine.connect() as conn:
        while not done.is_set():
            broken += [("over k", x) for x in _over_k(conn, k)]
            broken += [("two items", a) for a in _holding_two(conn)]
            conn.rollback()  # the next check reads afresh
            checks += 1
    watcher_done.join()
    assert errors == [] and broken == [] and checks > 0
    assert refused == []  # no lease ran out and no item stops early: every answer was needed
    with workspace.engine.connect() as conn:
        labels = conn.execute(
            select(Label.item_id, Label.annotator_id).where(Label.phase == "test")
        ).all()
        counts = conn.execute(select(StudyItem.n_labels).where(StudyItem.phase == "test"))
        assert list(counts.scalars()) == [k] * n_items
        assert conn.execute(select(func.count()).select_from(Lease)).scalar() == 0
    assert len(labels) == len(set(labels)) == k * n_items  # k distinct people per item
    assert set(Counter(item for item, _ in labels).values()) == {k}


class HeldOpen:
    """Hold chosen annotators' hand-outs open: their transaction stops right after leasing,
    until let go (the engine's own hand-out runs; only its commit waits)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.holding: dict[int, threading.Event] = {}
        self.let_go: dict[int, threading.Event] = {}
        self.item_locks: dict[int, int] = {}
        original = assignment.lease_next_item

        def lease_next_item(conn: Connection, ctx, annotator_id: int, now, **kw: Any) -> Any:
            leased = original(conn, ctx, annotator_id, now, **kw)
            if annotator_id in self.holding:
                # The study's item rows this transaction holds locked: those another
                # connection's SKIP LOCKED read passes over.
                with conn.engine.connect() as other:
                    rows = "FROM studyitem WHERE study_id = :study AND phase = 'test'"
                    every = other.execute(text(f"SELECT count(*) {rows}"), {"study": ctx.id})
                    free = other.execute(
                        text(f"SELECT count(*) FROM (SELECT id {rows} FOR UPDATE SKIP LOCKED) f"),
                        {"study": ctx.id},
                    )
                    self.item_locks[annotator_id] = every.scalar() - free.scalar()
                    other.rollback()
                self.holding[annotator_id].set()
                self.let_go[annotator_id].wait(timeout=120)
            return leased

        monkeypatch.setattr(assignment, "lease_next_item", lease_next_item)

    def start(self, session: AnnotatorSession, got: dict[str, ItemView | None]) -> threading.Thread:
        """`session`'s next_item in a thread, returned once its hand-out is open."""
        self.holding[session.annotator_id] = threading.Event()
        self.let_go[session.annotator_id] = threading.Event()
        thread = in_thread(session, got)
        assert self.holding[session.annotator_id].wait(timeout=WAIT_S)
        return thread

    def release(self, session: AnnotatorSession) -> None:
        self.let_go[session.annotator_id].set()

    def release_all(self) -> None:
        for event in self.let_go.values():
            event.set()


def in_thread(
    session: AnnotatorSession,
    got: dict[str, ItemView | None],
    then: Callable[[], None] = lambda: None,
) -> threading.Thread:
    def run() -> None:
        got[session.annotator.name] = session.next_item()
        then()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@POSTGRES_ONLY
def test_a_hand_out_does_not_wait_for_another_annotators_open_hand_out(
    workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Ana's hand-out is still open (not committed) when Bob asks: Bob gets an item at once,
    the next one in the order, not the one Ana is taking, which stays locked by her alone."""
    ana = admitted(workspace, tmp_path, "open", test=20, annotators_per_item=2)
    bob = admitted(workspace, tmp_path, "open", "bob", existing=True)
    held = HeldOpen(monkeypatch)
    got: dict[str, ItemView | None] = {}
    ana_thread = held.start(ana, got)
    bob_served = threading.Event()
    try:
        bob_thread = in_thread(bob, got, bob_served.set)
        served = bob_served.wait(timeout=WAIT_S)
    finally:
        held.release_all()
    ana_thread.join(WAIT_S)
    bob_thread.join(WAIT_S)
    assert served, "Bob's hand-out waited for Ana's transaction"
    anas, bobs = got["ana"], got["bob"]
    assert anas is not None and bobs is not None and anas.item_id != bobs.item_id
    # Of the candidates her hand-out walked, it locked the one it leased, no other.
    assert held.item_locks[ana.annotator_id] == 1
    again = ana.next_item(), bob.next_item()  # both leases committed: each resumes their own
    assert [v.item_id if v else None for v in again] == [anas.item_id, bobs.item_id]


@POSTGRES_ONLY
@pytest.mark.parametrize("k", [1, 2])
def test_the_last_item_being_handed_out_is_waited_for_not_reported_finished(
    workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, k: int
):
    """One item left, Ana's hand-out of it open: Bob waits for it to commit, then gets the
    item if it takes a second person (k = 2), or hears that nothing is left (k = 1)."""
    ana = admitted(workspace, tmp_path, "last", test=1, annotators_per_item=k)
    bob = admitted(workspace, tmp_path, "last", "bob", existing=True)
    held = HeldOpen(monkeypatch)
    got: dict[str, ItemView | None] = {}
    ana_thread = held.start(ana, got)
    bob_served = threading.Event()
    bob_thread = in_thread(bob, got, bob_served.set)
    try:
        assert not bob_served.wait(timeout=0.5)  # not "finished" while the item is locked
    finally:
        held.release_all()
    assert bob_served.wait(timeout=WAIT_S)
    ana_thread.join(WAIT_S)
    bob_thread.join(WAIT_S)
    anas, bobs = got["ana"], got["bob"]
    assert anas is not None
    assert (bobs.item_id if bobs else None) == (anas.item_id if k == 2 else None)


@POSTGRES_ONLY
def test_an_item_that_filled_while_waited_for_sends_the_hand_out_to_the_next(
    workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Two items left, k = 1, Ana's and Carol's hand-outs of them open. Bob waits; when Ana's
    commits, her item is full and Bob moves on to Carol's, and is told nothing is left only
    once Carol's has committed too."""
    ana = admitted(workspace, tmp_path, "two", test=2, annotators_per_item=1)
    carol = admitted(workspace, tmp_path, "two", "carol", existing=True)
    bob = admitted(workspace, tmp_path, "two", "bob", existing=True)
    held = HeldOpen(monkeypatch)
    got: dict[str, ItemView | None] = {}
    threads = [held.start(ana, got), held.start(carol, got)]
    bob_served = threading.Event()
    threads.append(in_thread(bob, got, bob_served.set))
    try:
        assert not bob_served.wait(timeout=0.5)
        held.release(ana)
        threads[0].join(WAIT_S)
        assert not bob_served.wait(timeout=0.5)  # Carol's item may still be his
    finally:
        held.release_all()
    assert bob_served.wait(timeout=WAIT_S)
    for t in threads:
        t.join(WAIT_S)
    anas, carols = got["ana"], got["carol"]
    assert anas is not None and carols is not None and anas.item_id != carols.item_id
    assert got["bob"] is None


def test_first_catch_items_asked_at_once_draw_the_catch_pool_once(workspace, tmp_path: Path):
    """The one study-wide write left under the study's lock: six annotators' first catch items
    at the same moment draw the pool once, and all get its first item."""
    ctx = catch_study(workspace.engine, tmp_path)
    start = threading.Barrier(6)
    got: dict[int, int | None] = {}
    errors: list[str] = []

    def first_catch_item(annotator_id: int) -> None:
        start.wait(timeout=WAIT_S)
        try:
            with write_connection(workspace.engine) as conn:
                got[annotator_id] = catch._next_from_pool(conn, ctx, annotator_id, catch.CATCH)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=first_catch_item, args=(n,)) for n in range(1, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    with workspace.engine.connect() as conn:
        pool = conn.execute(
            select(StudyItem.item_id)
            .where(StudyItem.study_id == ctx.id, StudyItem.phase == catch.CATCH)
            .order_by(StudyItem.position)
        ).scalars()
        drawn = list(pool)
    assert errors == []
    assert len(drawn) == len(set(drawn)) == 40  # every dev item once (all were training items)
    assert set(got.values()) == {drawn[0]}
