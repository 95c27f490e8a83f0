"""What a training answer's feedback has ready for "continue" (Feedback.upcoming), on the
engine without a screen, on both backends: the next training item; after the answer that
passes the threshold gate, the first test item, leased in that answer's transaction, which is
the item next_item then gives; nothing where "continue" must ask (catch items)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import func, select

from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.studies import TEST, TRAINING
from annotate.store.models import Lease
from annotate.workspace import open_workspace
from tests.engine_helpers import catch_study, rte_study


def leases(engine, annotator_id: int) -> list[int]:
    with engine.connect() as conn:
        query = select(Lease.item_id).where(Lease.annotator_id == annotator_id)
        return list(conn.execute(query).scalars())


def test_the_next_training_item_then_the_first_test_item_leased_with_the_passing_answer(
    store_url: str, tmp_path: Path
):
    ws = open_workspace(store_url, create=True)
    rte_study(ws.engine, tmp_path, name="s", train=2, test=6, gate_threshold=0.0)
    s = AnnotatorSession.open(ws.engine, "s", "ana", create_annotator=True)
    first = s.next_item()
    assert first is not None and first.phase == TRAINING
    feedback = s.submit(first, "entailment")
    ready = feedback.upcoming
    assert ready is not None and ready.phase == TRAINING and ready.number == 2
    assert ready.item_id != first.item_id
    assert leases(ws.engine, s.annotator_id) == []  # a training item takes no lease
    assert s.next_item().item_id == ready.item_id  # what "continue" asks the server for

    passing = s.submit(ready, "entailment")
    assert passing.gate_decided is True
    test_item = passing.upcoming
    assert test_item is not None and test_item.phase == TEST and test_item.number == 1
    assert leases(ws.engine, s.annotator_id) == [test_item.item_id]  # held with the answer
    assert s.phase() is Phase.TEST
    # "continue" through the server gives the item held, and still one lease.
    assert s.next_item().item_id == test_item.item_id
    assert leases(ws.engine, s.annotator_id) == [test_item.item_id]
    s.submit_and_next(test_item, "entailment")
    with ws.engine.connect() as conn:
        held = conn.execute(select(func.count()).select_from(Lease)).scalar()
    assert held == 1  # the answered item's lease given back, the next one taken
    ws.engine.dispose()


def test_a_retried_answer_and_a_study_with_catch_items_leave_continue_to_the_server(
    workspace, tmp_path: Path
):
    catch_study(workspace.engine, tmp_path, name="c", gate_threshold=0.0, catch_rate=0.5)
    s = AnnotatorSession.open(workspace.engine, "c", "ana", create_annotator=True)
    item = s.next_item()
    feedback = s.submit(item, "entailment")
    assert feedback.upcoming is not None  # training: the next training item
    again = s.submit(item, "entailment")  # the same answer sent twice (a retry)
    assert again.upcoming is None
    while (item := s.next_item()) is not None and item.phase == TRAINING:
        feedback = s.submit(item, "entailment")
    assert feedback.gate_decided is True
    assert feedback.upcoming is None  # catch items are served by their own rules
    assert leases(workspace.engine, s.annotator_id) != []  # "continue" leased one
