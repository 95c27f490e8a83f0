"""The test keypress's write path: one short transaction, served by an index, with writers
taking turns in the kernel rather than polling SQLite's lock."""

from __future__ import annotations

import functools
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import event

from annotate.errors import UserError
from annotate.protocol import assignment, gate
from annotate.protocol.session import AnnotatorSession, ItemTaken, Phase
from annotate.protocol.studies import get_annotator
from annotate.store.engine import write_connection
from annotate.store.models import utcnow
from annotate.store.turn import writer_turn
from annotate.workspace import open_workspace
from tests.engine_helpers import rte_study
from tests.unit.test_writer_turn import needs_native_lock


@pytest.fixture
def db_url(store_url: str) -> str:
    return store_url


def admitted(
    workspace, tmp_path: Path, study: str, name: str = "ana", **overrides
) -> AnnotatorSession:
    """`name` through training (threshold 0: admitted) on a new study, or on `study` if made,
    holding no test item yet: the first one, leased with the answer that passed the gate (for
    the feedback to have it ready), is given back, so the test's first next_item hands one
    out."""
    if not overrides.pop("existing", False):
        rte_study(workspace.engine, tmp_path, name=study, train=2, gate_threshold=0.0, **overrides)
    session = AnnotatorSession.open(workspace.engine, study, name, create_annotator=True)
    while session.phase() is Phase.TRAINING:
        session.submit(session.next_item(), "entailment")
    with write_connection(workspace.engine) as conn:
        assignment.release_leases(conn, session.ctx, session.annotator_id)
    return session


def test_a_test_keypress_is_one_transaction_of_few_statements(workspace, tmp_path: Path):
    session = admitted(workspace, tmp_path, "one")
    item = session.next_item()
    statements: list[str] = []
    commits: list[bool] = []
    engine = workspace.engine

    def on_statement(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    def on_commit(conn) -> None:  # type: ignore[no-untyped-def]
        commits.append(True)

    event.listen(engine, "before_cursor_execute", on_statement)
    event.listen(engine, "commit", on_commit)
    try:
        upcoming = session.submit_and_next(item, "entailment")
        in_answer = list(statements)
        statements.clear()
        progress = session.progress()  # the status line, asked right after the answer
    finally:
        event.remove(engine, "before_cursor_execute", on_statement)
        event.remove(engine, "commit", on_commit)
    writes = [s for s in in_answer if not s.startswith(("BEGIN", "SELECT pg_advisory"))]
    assert upcoming is not None and upcoming.item_id != item.item_id
    assert len(commits) == 1
    # count the label, insert it, give back the lease, choose the next item, lease it; then
    # where the annotator now stands: answers per phase and the gate's admission
    assert len(writes) <= 7, writes
    if engine.dialect.name == "postgresql":
        # one round trip each: the count with the label's insert and the lease given back,
        # and the next item with its lease
        assert len(writes) == 2 and "INSERT INTO lease" in writes[1], writes
    assert statements == [], "the status line reads nothing after the answer"
    assert progress.test_done == 1 and upcoming.number == 2
    assert session.progress() == progress  # asked again: read afresh, and the same


@pytest.mark.parametrize("cap", [None, 3])
def test_a_new_sessions_answer_reads_where_it_stands_once_inside_its_write(
    workspace, tmp_path: Path, cap: int | None
):
    """The page opens a session per request, with no figures kept: its answer reads the
    annotator's counts once, inside the answer's transaction (where a batch's cap needs them
    anyway), and nothing after the commit; the figures are what a fresh read says. Before,
    a capped batch counted twice in the write and the status line read twice after it."""
    overrides = {} if cap is None else {"max_test_items_per_annotator": cap}
    first = admitted(workspace, tmp_path, "page", **overrides)
    item = first.next_item()
    annotator = get_annotator(workspace.engine, "ana")
    for number in (2, 3):
        # as the page does for each request: the study loaded once, a session made anew
        session = AnnotatorSession(workspace.engine, first.ctx, annotator)
        answer = functools.partial(session.submit_and_next, item, "entailment")
        item, statements = count_statements(workspace.engine, answer, commits=True)
        assert statements.count("-- commit") == 1, statements
        commit = statements.index("-- commit")
        assert [s for s in statements[commit + 1 :] if not s.startswith("BEGIN")] == []
        # the annotator's own counts (the next item's query counts others' leases)
        counts = [s for s in statements if "count(" in s.lower() and "studyitem" not in s]
        assert len(counts) == 1 and "GROUP BY label.phase" in counts[0], counts
        assert item is not None and item.number == number
        kept, none_run = count_statements(workspace.engine, session.progress)
        assert none_run == [] and kept.test_done == number - 1
        assert kept == AnnotatorSession.open(workspace.engine, "page", "ana").progress()
    if cap is not None:  # the count read once still holds the batch to its cap
        session = AnnotatorSession(workspace.engine, first.ctx, annotator)
        assert session.submit_and_next(item, "entailment") is None
        assert session.progress().test_done == cap


def test_the_training_answer_that_makes_the_threshold_decision_reads_the_gate_once(
    workspace, tmp_path: Path
):
    """A training answer's write reads the item's gold, an earlier answer and the gate's word
    in one statement before storing; the last one's threshold rule decides from what the
    write read (no decision yet, the counts): no second read of either."""
    rte_study(workspace.engine, tmp_path, name="once", train=2, gate_threshold=0.0)
    session = AnnotatorSession.open(workspace.engine, "once", "ana", create_annotator=True)
    _, first = count_statements(
        workspace.engine, functools.partial(session.submit, session.next_item(), "entailment")
    )
    stored = next(i for i, s in enumerate(first) if s.startswith("INSERT INTO label"))
    before = [
        s
        for s in first[:stored]
        if s.lstrip().startswith("SELECT") and "pg_advisory_xact_lock" not in s  # not a read
    ]
    assert len(before) == 1, before  # gold, an earlier answer (a retry), the gate: one read
    last = session.next_item()
    feedback, statements = count_statements(
        workspace.engine, functools.partial(session.submit, last, "entailment")
    )
    assert feedback.gate_decided is True
    reads = [s for s in statements if s.lstrip().startswith("SELECT")]
    assert len([s for s in reads if "FROM gatedecision" in s]) == 1, reads
    assert not [s for s in reads if "FROM annotator JOIN label" in s], reads  # gate.trainee
    assert not [s for s in reads if "study.protocol" in s], reads  # the quota, known already
    assert AnnotatorSession.open(workspace.engine, "once", "ana").phase() is Phase.TEST


def test_an_item_taken_meanwhile_gives_its_lease_back(workspace, tmp_path: Path):
    """The lease of an item that others completed is released even though the answer is
    refused, so the annotator's next request is not blocked by it."""
    ana = admitted(workspace, tmp_path, "taken", test=1, annotators_per_item=1)
    bob = admitted(workspace, tmp_path, "taken", "bob", existing=True)
    item = ana.next_item()
    assert item is not None
    later = [utcnow()]
    bob.clock = lambda: later[0]
    later[0] += timedelta(minutes=ana.ctx.protocol.lease_minutes + 1)  # ana's lease ran out
    bobs = bob.next_item()
    assert bobs is not None and bobs.item_id == item.item_id
    bob.submit(bobs, "entailment")
    with pytest.raises(ItemTaken):
        ana.submit(item, "entailment")
    with workspace.engine.connect() as conn:
        leases = conn.execute(assignment.lease.select()).all()
    assert leases == []


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_next_item_query_is_served_by_its_index(workspace, tmp_path: Path):
    """No sort and no table scan: the index gives the order (the item's row then says whether
    its leases fill it: schema 16)."""
    session = admitted(workspace, tmp_path, "plan")
    compiled = assignment.NEXT_ITEM.compile(workspace.engine)
    given = compiled.construct_params(assignment.keys(session.ctx, session.annotator_id, utcnow()))
    params = tuple(given[name] for name in compiled.positiontup)
    with workspace.engine.connect() as conn:
        plan = " | ".join(
            r[3] for r in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + str(compiled), params)
        )
    assert "USING INDEX ix_studyitem_next" in plan, plan
    # Finished items (remaining 0) are skipped by a range seek, not walked over.
    assert "remaining>?" in plan, plan
    assert "TEMP B-TREE" not in plan and "SCAN studyitem" not in plan, plan


@needs_native_lock
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_writers_take_turns_and_the_next_one_goes_as_soon_as_the_lock_is_free(db_url: str):
    engine = open_workspace(db_url, create=True).engine
    second_in = threading.Event()

    def second() -> None:
        with writer_turn(engine):
            second_in.set()

    waiter = threading.Thread(target=second)
    with writer_turn(engine):
        waiter.start()
        assert not second_in.wait(timeout=0.3)  # queued while the first writer holds it
    assert second_in.wait(timeout=30)  # and in as soon as it lets go
    waiter.join(timeout=30)
    engine.dispose()


def count_statements(engine, call, *, commits: bool = False):  # type: ignore[no-untyped-def]
    """(what `call` returned, the SQL statements it ran); `commits`: with "-- commit" where
    each transaction committed."""
    statements: list[str] = []

    def on_statement(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    def on_commit(conn) -> None:  # type: ignore[no-untyped-def]
        statements.append("-- commit")

    event.listen(engine, "before_cursor_execute", on_statement)
    if commits:
        event.listen(engine, "commit", on_commit)
    try:
        return call(), statements
    finally:
        event.remove(engine, "before_cursor_execute", on_statement)
        if commits:
            event.remove(engine, "commit", on_commit)


def test_the_status_line_after_a_test_answer_is_what_the_store_says_with_no_query(
    workspace, tmp_path: Path
):
    """The figures after a stored test answer come from its transaction: the same as a fresh
    read (a new session's), and no transaction of their own. Asked again, it reads."""
    session = admitted(workspace, tmp_path, "status")
    item = session.next_item()
    session.progress()
    for _ in range(3):
        item = session.submit_and_next(item, "entailment")
        progress, statements = count_statements(workspace.engine, session.progress)
        assert statements == []
        fresh = AnnotatorSession.open(workspace.engine, "status", "ana").progress()
        assert progress == fresh
        assert progress.phase is Phase.TEST and progress.test_done == fresh.test_done
    again, statements = count_statements(workspace.engine, session.progress)
    assert again == progress and statements  # no answer in between: read from the store


def test_a_gate_decision_between_two_answers_is_seen_at_the_next_answer(workspace, tmp_path: Path):
    """A researcher who refuses the annotator while an item is on their screen: that answer
    is not stored, and the status line says what the store says (refused), not the figures
    of the answer before."""
    session = admitted(workspace, tmp_path, "revoked")
    item = session.next_item()
    session.progress()
    item = session.submit_and_next(item, "entailment")  # stored: its figures are kept
    gate.decide_manually(workspace.engine, session.ctx, "ana", False, reason="a test", force=True)
    with pytest.raises(UserError):
        session.submit_and_next(item, "entailment")
    progress = session.progress()
    # Her one stored answer was set aside with the refusal (protocol/set_aside.py): the
    # status line counts none, as the store does, not the one the session had seen.
    assert progress.phase is Phase.REJECTED and progress.test_done == 0
