"""The gate's phases do not overlap (issue 15, item 9): training is never cut short by
gate_min_items, and no training answer is taken after a decision. Engine only, no screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.protocol import gate
from annotate.protocol.session import AnnotatorSession, Phase, TrainingClosed
from annotate.store.models import GateDecision, Label
from tests.engine_helpers import rte_study


def training_labels(engine) -> int:
    with Session(engine) as s:
        return len(s.exec(select(Label).where(Label.phase == "training")).all())


def decisions(engine) -> list[GateDecision]:
    with Session(engine) as s:
        return list(s.exec(select(GateDecision)).all())


def test_a_minimum_below_the_training_items_does_not_cut_training_short(workspace, tmp_path: Path):
    rte_study(workspace.engine, tmp_path, train=6, gate_min_items=2, gate_threshold=0.5)
    session = AnnotatorSession.open(workspace.engine, "pilot", "ana", create_annotator=True)
    for n in range(1, 7):
        item = session.next_item()
        assert item is not None and item.phase == "training" and item.number == n
        feedback = session.submit(item, "entailment")
        assert feedback is not None
        # No decision before the last training item, however many the minimum asks for.
        assert (feedback.gate_decided is None) is (n < 6)
        assert session.phase() is (Phase.TRAINING if n < 6 else Phase.TEST)
    assert len(decisions(workspace.engine)) == 1 and decisions(workspace.engine)[0].n_items == 6


def test_no_training_answer_after_a_decision(workspace, tmp_path: Path):
    ctx = rte_study(workspace.engine, tmp_path, train=6, gate_rule="manual")
    session = AnnotatorSession.open(workspace.engine, "pilot", "ana", create_annotator=True)
    session.submit(session.next_item(), "entailment")
    on_screen = session.next_item()  # the second training item is on the screen ...
    assert on_screen is not None
    gate.decide_manually(
        workspace.engine, ctx, "ana", admit=False, reason="test"
    )  # ... when she is refused
    with pytest.raises(TrainingClosed, match="training is closed"):
        session.submit(on_screen, "entailment")
    assert training_labels(workspace.engine) == 1
    assert session.phase() is Phase.REJECTED and session.next_item() is None


def test_a_refused_annotator_who_comes_back_gets_nothing_to_answer(workspace, tmp_path: Path):
    rte_study(workspace.engine, tmp_path, train=2, gate_threshold=1.0)
    session = AnnotatorSession.open(workspace.engine, "pilot", "ana", create_annotator=True)
    answers = iter(["not_entailment", "not_entailment"])  # gold alternates: one is wrong
    while (item := session.next_item()) is not None:
        session.submit(item, next(answers))
    again = AnnotatorSession.open(workspace.engine, "pilot", "ana")
    assert again.phase() is Phase.REJECTED and again.next_item() is None
    assert training_labels(workspace.engine) == 2


def test_a_threshold_decision_stores_only_what_judged_it(workspace, tmp_path: Path):
    """A fixed threshold judges each trainee alone: the decision keeps their score and items,
    not every other trainee's (it did, so 1,000 crowd workers stored a million entries, and
    each decision read and wrote them all)."""
    rte_study(workspace.engine, tmp_path, train=2, gate_threshold=0.5)
    for name in ("ana", "ben", "cy", "dee"):
        session = AnnotatorSession.open(workspace.engine, "pilot", name, create_annotator=True)
        while (item := session.next_item()) is not None and item.phase == "training":
            session.submit(item, "entailment" if name != "cy" else "not_entailment")
    made = decisions(workspace.engine)
    assert len(made) == 4 and all(d.cohort == [] for d in made)
    expected = {}
    with Session(workspace.engine) as s:
        for d in made:
            right = s.exec(
                select(Label).where(
                    Label.annotator_id == d.annotator_id,
                    Label.phase == "training",
                    Label.correct == True,  # noqa: E712
                )
            ).all()
            expected[d.annotator_id] = (len(right) / 2, len(right) / 2 >= 0.5)
    assert {d.annotator_id: (d.score, d.admitted) for d in made} == expected
    assert all(d.n_items == 2 and d.threshold == 0.5 for d in made)


def test_refusing_by_hand_gives_back_the_item_on_their_screen(workspace, tmp_path: Path):
    """ana is refused while a test item is on her screen: she can no longer answer it, so it
    goes to the next annotator at once, not after her lease runs out (30 minutes), and the
    study can finish."""
    ctx = rte_study(
        workspace.engine, tmp_path, train=1, test=1, gate_threshold=0.0, annotators_per_item=1
    )
    ana, bo = (
        AnnotatorSession.open(workspace.engine, "pilot", name, create_annotator=True)
        for name in ("ana", "bo")
    )
    for session in (ana, bo):
        session.submit(session.next_item(), "entailment")  # trained: admitted by the rule
    held = ana.next_item()
    assert held is not None and held.phase == "test"
    assert bo.next_item() is None  # on ana's screen
    gate.decide_manually(workspace.engine, ctx, "ana", admit=False, reason="copied answers")
    given = bo.next_item()
    assert given is not None and given.item_id == held.item_id
    bo.submit(given, "entailment")
    assert bo.study_complete()


def test_a_comma_list_of_names_is_told_to_give_the_option_once_per_name(
    cli, workspace, tmp_path: Path
):
    """`--admit ana,ben` was "no annotator named 'ana,ben'": the fix is to give the option once
    per name. A name may hold a comma, so a trainee named so is decided as named."""
    rte_study(workspace.engine, tmp_path, train=2, gate_rule="manual")
    for name in ("ana", "ben", "Lee, Kim"):
        session = AnnotatorSession.open(workspace.engine, "pilot", name, create_annotator=True)
        for _ in range(2):
            session.submit(session.next_item(), "entailment")
    listed = cli("gate", "pilot", "--admit", "ana,ben", "--reason", "in person")
    assert listed.code == 1
    assert "give --admit once per name: --admit ana --admit ben" in listed.stderr
    assert "the gate was not changed" in listed.stderr
    refused = cli("gate", "pilot", "--reject", "ana, ben", "--reason", "copied")
    assert "give --reject once per name: --reject ana --reject ben" in refused.stderr
    named = cli("gate", "pilot", "--admit", "Lee, Kim", "--reason", "in person")
    assert named.code == 0, named.stderr


def test_several_manual_decisions_are_all_or_none(cli, workspace, tmp_path: Path):
    # `gate --admit A --admit B` with B mistyped, or B mid-training, admitted A and then said
    # "the gate was not changed"; one name in --admit and --reject was decided twice.
    rte_study(workspace.engine, tmp_path, train=2, gate_rule="manual")
    trained = AnnotatorSession.open(workspace.engine, "pilot", "ana", create_annotator=True)
    for _ in range(2):
        trained.submit(trained.next_item(), "entailment")
    AnnotatorSession.open(workspace.engine, "pilot", "ben", create_annotator=True)
    typo = cli("gate", "pilot", "--admit", "ana", "--admit", "bne", "--reason", "in person")
    assert typo.code == 1 and "no annotator named 'bne'" in typo.stderr
    # A mistyped name is a typo, not a new annotator to add: the study's trainees are named.
    assert "the trainees of pilot: ana)" in typo.stderr and "annotator add" not in typo.stderr
    # A reason with no --admit/--reject (or --close) was accepted and silently ignored.
    idle = cli("gate", "pilot", "--reason", "in person", "--by", "me")
    assert idle.code == 1 and "--reason and --by only go with a decision" in idle.stderr
    warned = cli("gate", "pilot", "--admit", "ana", "--admit", "ben", "--reason", "in person")
    assert warned.code == 1 and "the gate was not changed: ben is still mid-training" in (
        warned.stderr
    )
    both = cli("gate", "pilot", "--admit", "ana", "--reject", "ana", "--reason", "in person")
    assert both.code == 1 and "ana: both admitted and refused" in both.stderr
    assert decisions(workspace.engine) == []
    assert cli("gate", "pilot", "--admit", "ana", "--reason", "in person").code == 0
    assert [d.admitted for d in decisions(workspace.engine)] == [True]


def test_closing_again_with_nobody_to_decide_keeps_the_first_closes_record(
    cli, workspace, tmp_path: Path
):
    # the second close decided nobody, yet its record replaced the first's in `gate` and the
    # report: "forced past 1 warning …; why: a pilot" became "Training closed by … at …"
    ctx = rte_study(workspace.engine, tmp_path, train=2, gate_rule="median", gate_min_items=2)
    for name in ("ana", "ben"):
        session = AnnotatorSession.open(workspace.engine, "pilot", name, create_annotator=True)
        for _ in range(2):
            session.submit(session.next_item(), "entailment")
    first = cli("gate", "pilot", "--close", "--force", "--reason", "a pilot")
    assert first.code == 0, first.stderr
    again = cli("gate", "pilot", "--close", "--by", "someone-else")
    assert again.code == 0, again.stderr
    assert "closing changes nobody" in again.stdout
    closure = gate.closure_of(workspace.engine, ctx)
    assert closure is not None and closure.forced and closure.reason == "a pilot"
    assert "why: a pilot" in again.stdout.splitlines()[-1]


def test_closing_says_each_decision_once(cli, workspace, tmp_path: Path):
    """`gate --close` printed each trainee's reason three times: the plan, one line per
    decision, then the overview's reason lines. The plan says it; the table keeps the rest."""
    rte_study(workspace.engine, tmp_path, train=2, gate_rule="median", gate_min_items=2)
    for name, second in (("ana", "entailment"), ("ben", "not_entailment")):
        session = AnnotatorSession.open(workspace.engine, "pilot", name, create_annotator=True)
        for answer in ("entailment", second):
            session.submit(session.next_item(), answer)
    closed = cli("gate", "pilot", "--close", "--force", "--reason", "a pilot")
    assert closed.code == 0, closed.stderr
    for name in ("ana", "ben"):
        lines = [x for x in closed.stdout.splitlines() if not x.startswith("│")]
        said = [x for x in lines if "median" in x and name in x]
        assert len(said) == 1, said
    assert "Annotator" in closed.stdout  # the overview table is still there
