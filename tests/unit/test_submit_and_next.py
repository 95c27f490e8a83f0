"""One commit per test keypress: the answer and the next item's lease go together."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.protocol.session import AnnotatorSession, Phase
from annotate.store.models import Label, Lease
from tests.engine_helpers import rte_study


def admitted(workspace, tmp_path: Path, **overrides) -> AnnotatorSession:
    ctx = rte_study(workspace.engine, tmp_path, train=2, gate_threshold=0.0, **overrides)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    while s.phase() is Phase.TRAINING:
        s.submit(s.next_item(), "entailment")
    return s


def test_answer_is_stored_and_the_next_item_is_leased(workspace, tmp_path: Path):
    s = admitted(workspace, tmp_path, test=3)
    first = s.next_item()
    second = s.submit_and_next(first, "entailment")
    assert second is not None and second.item_id != first.item_id and second.number == 2
    with Session(workspace.engine) as db:
        assert db.exec(select(Label.item_id).where(Label.phase == "test")).all() == [first.item_id]
        assert db.exec(select(Lease.item_id)).all() == [second.item_id]
    third = s.submit_and_next(second, "not_entailment")
    assert s.submit_and_next(third, "entailment") is None  # nothing left
    with Session(workspace.engine) as db:
        assert len(db.exec(select(Label).where(Label.phase == "test")).all()) == 3
        assert db.exec(select(Lease)).all() == []


def test_a_retried_answer_is_not_stored_twice(workspace, tmp_path: Path):
    s = admitted(workspace, tmp_path, test=3)
    first = s.next_item()
    nxt = s.submit_and_next(first, "entailment")
    again = s.submit_and_next(first, "entailment")  # e.g. a commit reported as failed
    assert again is not None and again.item_id == nxt.item_id  # the lease held is resumed
    with Session(workspace.engine) as db:
        labels = db.exec(select(Label).where(Label.phase == "test")).all()
    assert [(lab.item_id, lab.value) for lab in labels] == [(first.item_id, "entailment")]


def test_training_items_are_refused(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path, train=2)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    with pytest.raises(ValueError, match="test items"):
        s.submit_and_next(s.next_item(), "entailment")


def leases(workspace) -> list[int]:
    with Session(workspace.engine) as db:
        return sorted(db.exec(select(Lease.item_id)).all())


def test_the_next_item_is_the_one_lease_held_whatever_was_held_before(workspace, tmp_path: Path):
    """The answered item's lease becomes the next item's. One that ran out and was given back
    leaves nothing to move, and a second lease held beside it (left by another window) is
    given back too: either way the annotator then holds the next item alone."""
    s = admitted(workspace, tmp_path, test=4)
    first = s.next_item()
    with Session(workspace.engine) as db:  # the lease ran out and was given back
        for lease in db.exec(select(Lease)).all():
            db.delete(lease)
        db.commit()
    second = s.submit_and_next(first, "entailment")
    assert second is not None and leases(workspace) == [second.item_id]
    with Session(workspace.engine) as db:  # a second lease beside it, on another item
        held = db.exec(select(Lease)).one()
        db.add(
            Lease(
                study_id=held.study_id,
                item_id=first.item_id,
                annotator_id=held.annotator_id,
                expires_at=held.expires_at,
            )
        )
        db.commit()
    assert leases(workspace) == sorted([first.item_id, second.item_id])
    third = s.submit_and_next(second, "entailment")
    assert third is not None and leases(workspace) == [third.item_id]
    assert s.submit_and_next(third, "entailment") is not None
    assert len(leases(workspace)) == 1
