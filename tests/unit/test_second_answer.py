"""A second answer to an item the annotator already answered, in the same window (two tabs of
one browser share it): the same value is a retry that resumes; another value is refused and
said, and the first answer stands (the engine's rule, without any screen)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.protocol.answers import AnsweredDifferently, describe
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.store.models import Label
from tests.engine_helpers import rte_study


def two_tabs(workspace, tmp_path: Path, **overrides) -> AnnotatorSession:
    ctx = rte_study(workspace.engine, tmp_path, train=2, gate_threshold=0.0, **overrides)
    s = AnnotatorSession.open(workspace.engine, ctx.study.name, "ana", create_annotator=True)
    s.claim_window("page")  # one window: both tabs send its cookie
    return s


def stored(workspace, phase: str) -> list[tuple[int, object]]:
    with Session(workspace.engine) as db:
        rows = db.exec(select(Label).where(Label.phase == phase).order_by(Label.id)).all()
        return [(row.item_id, row.value) for row in rows]


def test_a_test_answer_sent_again_with_the_same_value_resumes(workspace, tmp_path: Path):
    s = two_tabs(workspace, tmp_path, test=3)
    while s.phase() is Phase.TRAINING:
        s.submit(s.next_item(), "entailment")
    item = s.next_item()
    following = s.submit_and_next(item, "entailment")
    again = s.submit_and_next(item, "entailment")  # the second tab, or a retried commit
    assert again is not None and again.item_id == following.item_id
    assert stored(workspace, "test") == [(item.item_id, "entailment")]


def test_a_test_answer_sent_again_with_another_value_is_refused(workspace, tmp_path: Path):
    s = two_tabs(workspace, tmp_path, test=3)
    while s.phase() is Phase.TRAINING:
        s.submit(s.next_item(), "entailment")
    item = s.next_item()
    following = s.submit_and_next(item, "entailment")  # the first tab
    with pytest.raises(AnsweredDifferently) as refused:
        s.submit_and_next(item, "not_entailment")  # the second tab, on the same item
    said = str(refused.value)
    assert "already answered" in said and "was not stored" in said
    assert f"“{describe(s.spec, 'entailment')}”" in said  # the answer that stands
    assert f"“{describe(s.spec, 'not_entailment')}”" in said  # the one refused
    assert stored(workspace, "test") == [(item.item_id, "entailment")]
    with pytest.raises(AnsweredDifferently):  # submit (no next) keeps the same rule
        s.submit(item, "not_entailment")
    assert s.next_item().item_id == following.item_id  # the lease the first tab took stands


def test_a_training_answer_sent_again_with_another_value_is_refused(workspace, tmp_path: Path):
    s = two_tabs(workspace, tmp_path, test=2)
    item = s.next_item()
    first = s.submit(item, "entailment")
    again = s.submit(item, "entailment")  # a reload on the feedback: the same feedback
    assert again.answer_text == first.answer_text == describe(s.spec, "entailment")
    with pytest.raises(AnsweredDifferently, match="was not stored"):
        s.submit(item, "not_entailment")
    assert stored(workspace, "training") == [(item.item_id, "entailment")]
