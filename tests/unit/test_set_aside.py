"""An annotator refused after admission: their test labels are set aside (in no score, vote or
export of the test phase), their items take labels again, and admitting them again counts the
labels back where the items still take one. Engine first (both backends), then the CLI and the
report a researcher reads."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import select, text
from sqlmodel import Session

from annotate.errors import UserError
from annotate.export.label_table import PHASES, label_table
from annotate.protocol import assignment, gate
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.report.data.loading import load_study_data
from annotate.store.check import check_store
from annotate.store.engine import make_engine
from annotate.store.models import Annotator, Label, StudyItem
from annotate.store.schema import create_schema
from tests.engine_helpers import rte_study
from tests.label_fixtures import imported_crowd

WAIT_S = 30
"""Bound on waiting for a thread that should go on at once (only a hang reaches it)."""


def annotate_all(engine, study: str, name: str, answer: str = "entailment") -> int:
    """`name` trains (admitted by the threshold) and labels every test item offered; how many."""
    session = AnnotatorSession.open(engine, study, name, create_annotator=True)
    labelled = 0
    while (item := session.next_item()) is not None:
        session.submit(item, answer)
        labelled += item.phase == "test"
    assert session.phase() in (Phase.TEST, Phase.DONE)
    return labelled


def tallies(engine) -> list[tuple[int, int]]:
    """(n_labels, remaining) of every test item, in item order."""
    with Session(engine) as s:
        rows = s.execute(
            select(StudyItem.n_labels, StudyItem.remaining)
            .where(StudyItem.phase == "test")
            .order_by(StudyItem.item_id)
        )
        return [tuple(r) for r in rows]


def phases_of(engine, name: str) -> list[str]:
    with Session(engine) as s:
        return list(
            s.execute(
                select(Label.phase)
                .join(Annotator, Annotator.id == Label.annotator_id)
                .where(Annotator.name == name, Label.phase != "training")
            ).scalars()
        )


def store_is_clean(engine) -> None:
    report = check_store(engine)
    assert report.violations == [], report.violations


def a_store(new_store_url):  # type: ignore[no-untyped-def]
    engine = make_engine(new_store_url())
    create_schema(engine)
    return engine


def test_refusing_an_admitted_annotator_sets_their_labels_aside_and_reopens_items(
    new_store_url, tmp_path: Path
):
    engine = a_store(new_store_url)
    ctx = rte_study(engine, tmp_path, train=2, test=6, gate_threshold=0.5, annotators_per_item=3)
    for name in ("ana", "ben", "cy"):
        assert annotate_all(engine, "pilot", name) == 6
    assert tallies(engine) == [(3, 0)] * 6  # every item full

    plan = gate.preview_manual(engine, ctx, "cy", admit=False)
    assert plan.warnings == [] and "6 test labels will be set aside" in plan.notes[0]
    decision = gate.decide_manually(engine, ctx, "cy", False, reason="answered in 0.2 s")
    assert decision.set_aside == 6 and "6 test labels set aside" in decision.labels_note()
    assert phases_of(engine, "cy") == ["set-aside"] * 6
    assert tallies(engine) == [(2, 1)] * 6  # each item takes a label again
    store_is_clean(engine)
    data = load_study_data(engine, "pilot")
    assert set(data.labels["annotator"].astype(str)) == {"ana", "ben"}
    assert {m["name"]: m.get("set_aside", 0) for m in data.roster}["cy"] == 6
    assert [r["test_labels_set_aside"] for r in gate.gate_overview(engine, ctx)] == [0, 0, 6]

    # Admitted again: their labels count again, the items full once more.
    back = gate.decide_manually(engine, ctx, "cy", True, reason="the clock was wrong")
    assert (back.restored, back.kept_aside) == (6, 0)
    assert phases_of(engine, "cy") == ["test"] * 6 and tallies(engine) == [(3, 0)] * 6
    store_is_clean(engine)

    # Refused once more, and a newcomer fills the reopened items: admitted again, cy's labels
    # stay aside (the items take no more), and nothing is counted twice.
    assert gate.decide_manually(engine, ctx, "cy", False, reason="again").set_aside == 6
    assert annotate_all(engine, "pilot", "dee") == 6
    again = gate.decide_manually(engine, ctx, "cy", True, reason="to look")
    assert (again.restored, again.kept_aside) == (0, 6)
    assert "0 set-aside test labels counted again, 6 kept aside" in again.labels_note()
    assert tallies(engine) == [(3, 0)] * 6
    store_is_clean(engine)
    engine.dispose()


def test_an_item_decided_early_takes_labels_again_when_a_vote_is_set_aside(
    new_store_url, tmp_path: Path
):
    """With stop_when_decided, two agreeing labels of three decide an item: set one aside and
    the item needs two more, by the study's rule, not one more by the counter alone."""
    engine = a_store(new_store_url)
    ctx = rte_study(
        engine,
        tmp_path,
        train=2,
        test=4,
        gate_threshold=0.5,
        annotators_per_item=3,
        stop_when_decided=True,
    )
    for name in ("ana", "ben"):
        annotate_all(engine, "pilot", name)
    assert tallies(engine) == [(2, 0)] * 4  # decided: 2 of 3 agree
    gate.decide_manually(engine, ctx, "ben", False, reason="copied ana's answers")
    assert tallies(engine) == [(1, 2)] * 4
    store_is_clean(engine)
    engine.dispose()


def test_refusing_someone_without_test_labels_changes_no_item(new_store_url, tmp_path: Path):
    engine = a_store(new_store_url)
    ctx = rte_study(engine, tmp_path, train=2, test=4, gate_rule="manual", annotators_per_item=3)
    session = AnnotatorSession.open(engine, "pilot", "ana", create_annotator=True)
    session.submit(session.next_item(), "entailment")
    assert gate.preview_manual(engine, ctx, "ana", admit=False).notes == []
    decision = gate.decide_manually(engine, ctx, "ana", False, reason="left")
    assert decision.set_aside == 0 and decision.labels_note() is None
    assert tallies(engine) == [(0, 3)] * 4
    engine.dispose()


def test_the_thank_you_words_say_whether_the_test_answers_are_used(workspace, tmp_path: Path):
    """Both front ends' closing words (presentation/closing.py): refused after test answers,
    the researcher ended their part and the answers are not used; refused with none, the
    study does not need them for its test items. The researcher's reason is never said."""
    from annotate.presentation.closing import refusal_lines

    engine = workspace.engine
    ctx = rte_study(engine, tmp_path, train=2, test=4, gate_threshold=0.5, annotators_per_item=3)
    annotate_all(engine, "pilot", "ana")
    ben = AnnotatorSession.open(engine, "pilot", "ben", create_annotator=True)
    for _ in range(2):  # training only: admitted by the threshold, no test answer yet
        ben.submit(ben.next_item(), "entailment")
    for name in ("ana", "ben"):
        gate.decide_manually(engine, ctx, name, False, reason="secret note")
    ana = AnnotatorSession.open(engine, "pilot", "ana").progress()
    assert (ana.phase, ana.set_aside, ana.refused_in_test) == (Phase.REJECTED, 4, True)
    said = " ".join(refusal_lines(ana))
    assert "The researcher has ended your part in this study" in said
    assert "will not be used" in said and "will not need you" not in said
    ben_now = AnnotatorSession.open(engine, "pilot", "ben").progress()
    assert (ben_now.set_aside, ben_now.refused_in_test) == (0, False)
    assert "will not need you for its test items" in " ".join(refusal_lines(ben_now))
    assert not any("secret" in line for line in refusal_lines(ana) + refusal_lines(ben_now))


def test_the_cli_and_the_report_say_what_was_set_aside(cli, workspace, tmp_path: Path):
    rte_study(
        workspace.engine, tmp_path, train=2, test=4, gate_threshold=0.5, annotators_per_item=2
    )
    for name in ("ana", "ben"):
        annotate_all(workspace.engine, "pilot", name)
    refused = cli("gate", "pilot", "--reject", "ben", "--reason", "answered in 0.2 s")
    assert refused.code == 0, refused.stderr
    assert "ben: 4 test labels set aside" in refused.stdout
    assert "ben: rejected, answered in 0.2 s (4 test labels set aside)" in refused.stdout
    report = cli("report", "pilot", "--format", "markdown")
    assert report.code == 0, report.stderr
    assert "4 test labels set aside by rejections, in no score or vote: ben 4" in report.stdout
    as_json = cli("report", "pilot", "--format", "json").json()
    roster = {m["name"]: m["set_aside"] for m in as_json["gate"]["roster"]}
    assert roster == {"ana": 0, "ben": 4}
    every = label_table(workspace.engine, "pilot", PHASES)  # `export --phase all`
    assert (
        sorted(r["phase"] for r in every.rows if r["annotator"] == "ben")
        == ["set-aside"] * 4 + ["training"] * 2
    )
    assert all(r["phase"] != "test" for r in every.rows if r["annotator"] == "ben")


def test_a_refusal_while_everyone_answers_leaves_counts_exact(new_store_url, tmp_path: Path):
    """The researcher refuses cy while cy and three others are answering, each in a thread of
    their own: none of cy's labels stays counted (one in flight either ends before the
    refusal and is set aside, or is refused), and every item's counter is its labels."""
    engine = a_store(new_store_url)
    ctx = rte_study(engine, tmp_path, train=2, test=40, gate_threshold=0.5, annotators_per_item=3)
    sessions = {}
    for name in ("ana", "ben", "cy", "dee"):
        session = AnnotatorSession.open(engine, "pilot", name, create_annotator=True)
        while (item := session.next_item()) is not None and item.phase == "training":
            session.submit(item, "entailment")
        sessions[name] = session
    started = threading.Barrier(5)
    refusing = threading.Event()
    """Set as the researcher begins to refuse cy: a refusal seen before it would be wrong (set
    before the refusal's commit, which cy's thread may meet before this thread goes on)."""
    answered: dict[str, int] = {}

    def answer(name: str) -> None:
        session, n = sessions[name], 0
        started.wait()
        while (item := session.next_item()) is not None:
            try:
                session.submit(item, "entailment")
            except UserError:  # cy, refused: "test items need a passing gate decision"
                assert name == "cy" and refusing.is_set()
                break
            n += 1
        answered[name] = n

    threads = [threading.Thread(target=answer, args=(n,)) for n in sessions]
    for t in threads:
        t.start()
    started.wait()
    while not answered and sum(n for n, _ in tallies(engine)) < 12:
        time.sleep(0.001)  # (polling the store for progress, not waiting a fixed time)
    refusing.set()
    decision = gate.decide_manually(engine, ctx, "cy", False, reason="answered in 0.2 s")
    for t in threads:
        t.join()
    assert "test" not in phases_of(engine, "cy")
    assert phases_of(engine, "cy").count("set-aside") >= decision.set_aside
    store_is_clean(engine)
    counted = sum(n for n, _ in tallies(engine))
    assert (
        counted
        == sum(answered[n] for n in ("ana", "ben", "dee"))
        == 3 * 40 - sum(r for _, r in tallies(engine))
    )
    engine.dispose()


@pytest.mark.parametrize(
    "backend", [pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
def test_a_refusal_recounts_an_item_after_the_answer_it_is_counting(
    new_store_url, tmp_path: Path, monkeypatch
):
    """PostgreSQL, where the refusal and another's answer run at once: ana's answer to an item
    ben labelled has counted it and holds it, uncommitted, when ben is refused. The refusal
    waits for that answer and recounts the item with ana's label in it; read before, its
    counter would be written back one short."""
    engine = a_store(new_store_url)
    ctx = rte_study(engine, tmp_path, train=2, test=1, gate_threshold=0.5, annotators_per_item=3)
    annotate_all(engine, "pilot", "ben")
    ana = AnnotatorSession.open(engine, "pilot", "ana", create_annotator=True)
    while (item := ana.next_item()) is not None and item.phase == "training":
        ana.submit(item, "entailment")
    counted, go_on = threading.Event(), threading.Event()
    settle = assignment.settle

    def held_settle(conn, ctx_, item_id):  # type: ignore[no-untyped-def]
        settle(conn, ctx_, item_id)
        counted.set()  # ana's label is counted and stored, not yet committed
        assert go_on.wait(WAIT_S)

    monkeypatch.setattr(assignment, "settle", held_settle)
    answering = threading.Thread(target=ana.submit, args=(item, "entailment"))
    answering.start()
    assert counted.wait(WAIT_S)
    decisions: list[gate.Decision] = []
    refusing = threading.Thread(
        target=lambda: decisions.append(
            gate.decide_manually(engine, ctx, "ben", False, reason="copied answers")
        )
    )
    refusing.start()
    with engine.connect() as watch:  # until the refusal waits for a lock (ana's)
        waiting = text(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        deadline = time.monotonic() + WAIT_S
        while watch.execute(waiting).scalar() == 0:
            assert time.monotonic() < deadline, "the refusal never waited for ana's answer"
            watch.rollback()
    go_on.set()
    answering.join(WAIT_S)
    refusing.join(WAIT_S)
    assert decisions and decisions[0].set_aside == 1
    assert tallies(engine) == [(1, 2)]  # ana's label, counted; ben's set aside
    store_is_clean(engine)
    engine.dispose()


def test_a_set_aside_flag_is_still_on_its_test_item(cli, workspace, tmp_path: Path):
    """cy flagged a broken test item, then was refused: excluding that item shows their flag
    "excluded" (as a counted label's would be), not "open" for ever, in `flags` and `status`."""
    rte_study(
        workspace.engine, tmp_path, train=2, test=4, gate_threshold=0.5, annotators_per_item=2
    )
    session = AnnotatorSession.open(workspace.engine, "pilot", "cy", create_annotator=True)
    while (item := session.next_item()) is not None and item.phase == "training":
        session.submit(item, "entailment")
    assert item is not None
    session.submit(item, "entailment", flag=True, comment="the premise is cut off")
    assert cli("gate", "pilot", "--reject", "cy", "--reason", "answered in 0.2 s").code == 0
    assert cli("flags", "pilot", "--exclude", item.source_id, "--reason", "cut off").code == 0
    listed = cli("flags", "pilot", "--format", "json").json()
    assert [f["state"] for f in listed["flags"]] == ["excluded"]
    status = cli("status", "pilot", "--format", "json").json()
    assert status["flags"]["open"] == 0 and status["flags"]["excluded"] == 1


def test_admitted_again_with_their_labels_kept_aside_is_no_dropout(cli, workspace, tmp_path):
    """ben is refused, dee fills the items, ben is admitted again: his labels stay aside (no
    room), and the report says so; he answered every item, so he is not listed as having
    abandoned the study."""
    rte_study(
        workspace.engine, tmp_path, train=2, test=4, gate_threshold=0.5, annotators_per_item=2
    )
    for name in ("ana", "ben"):
        annotate_all(workspace.engine, "pilot", name)
    assert cli("gate", "pilot", "--reject", "ben", "--reason", "answered in 0.2 s").code == 0
    annotate_all(workspace.engine, "pilot", "dee")
    again = cli("gate", "pilot", "--admit", "ben", "--reason", "the clock was wrong")
    assert "0 set-aside test labels counted again, 4 kept aside" in again.stdout
    report = cli("report", "pilot", "--format", "markdown", "--bootstrap", "0")
    assert report.code == 0, report.stderr
    assert "Gate decisions: 3 admitted, 0 rejected" in report.stdout
    assert "ben 4 (admitted again, kept aside: no room left)" in report.stdout
    attrition = cli("report", "pilot", "--format", "json").json()["datasheet"]["attrition"]
    assert attrition["abandoned"] == 0 and attrition["abandoned_names"] == []


def test_an_item_reopened_is_not_handed_again_to_whoever_answered_it(new_store_url, tmp_path: Path):
    """ben, refused then admitted again when dee had filled his items, has his answers kept
    aside. dee is refused in turn: the items take labels again, and ben's answers count there
    (he is admitted, they fit) instead of the items being handed to him a second time."""
    engine = a_store(new_store_url)
    ctx = rte_study(engine, tmp_path, train=2, test=2, gate_threshold=0.5, annotators_per_item=2)
    annotate_all(engine, "pilot", "ana")
    ben = AnnotatorSession.open(engine, "pilot", "ben", create_annotator=True)
    while (item := ben.next_item()) is not None:
        ben.submit(item, "entailment")
    gate.decide_manually(engine, ctx, "ben", False, reason="answered in 0.2 s")
    annotate_all(engine, "pilot", "dee")
    back = gate.decide_manually(engine, ctx, "ben", True, reason="the clock was wrong")
    assert (back.restored, back.kept_aside) == (0, 2)
    assert gate.decide_manually(engine, ctx, "dee", False, reason="copied").set_aside == 2
    assert phases_of(engine, "ben") == ["test"] * 2 and tallies(engine) == [(2, 0)] * 2
    assert ben.next_item() is None  # nothing he has answered comes back
    store_is_clean(engine)
    engine.dispose()


def test_prolific_sync_says_a_completed_worker_was_refused_not_that_labels_are_missing(
    new_store_url, tmp_path: Path
):
    """A worker who completed the batch and was then refused is not approved by sync: the
    reason it gives names the refusal and the labels set aside, not "no test label"."""
    from annotate.platforms.prolific.sync import _why_not
    from annotate.store.models import Visit

    engine = a_store(new_store_url)
    ctx = rte_study(engine, tmp_path, train=2, test=3, gate_threshold=0.5, annotators_per_item=2)
    annotate_all(engine, "pilot", "w07")
    gate.decide_manually(engine, ctx, "w07", False, reason="answered in 0.2 s")
    with Session(engine) as s:
        who = s.scalar(select(Annotator.id).where(Annotator.name == "w07"))
    visit = Visit(study_id=ctx.id, annotator_id=who, outcome="completed")
    why = _why_not(engine, ctx, visit, None, {"completed": "C1"})
    assert why is not None and why.startswith("completed, then refused at the gate")
    assert "3 test labels set aside" in why
    # Refused before taking their code (screened_out, whose page promises them no pay now):
    # left for the researcher too; screened out in training, approved as before.
    visit = Visit(study_id=ctx.id, annotator_id=who, outcome="screened_out")
    why = _why_not(engine, ctx, visit, None, {"screened_out": "S1"})
    assert why is not None and why.startswith("refused at the gate after answering test items")
    trainee = AnnotatorSession.open(engine, "pilot", "w08", create_annotator=True).annotator
    visit = Visit(study_id=ctx.id, annotator_id=trainee.id, outcome="screened_out")
    assert _why_not(engine, ctx, visit, None, {"screened_out": "S1"}) is None
    engine.dispose()


def test_refusing_a_worker_of_imported_labels_says_nothing_refills_their_items(
    cli, workspace, tmp_path: Path
):
    """Labels imported from a crowd platform: refusing a worker takes their labels out of the
    score, and the gate, its preview and the report say so without promising that the items
    take labels again (nothing here collects more) or calling the refusal one after an
    admission (the platform screened the workers)."""
    spammer = imported_crowd(cli, tmp_path, past_k=True)
    words = cli("status", "crowd", "--format", "json").json()["test_labels"]["words"]
    assert words == "10 test labels (9 planned + 1 past k, as imported), complete"
    refused = cli("gate", "crowd", "--reject", spammer, "--reason", "answered no to all")
    assert refused.code == 0, refused.stderr
    said = " ".join(refused.stdout.split())
    assert f"{spammer}: 3 test labels set aside" in said
    assert "nothing here collects more" in said and "take a label again" not in said
    report = cli("report", "crowd", "--format", "markdown")
    assert report.code == 0, report.stderr
    assert "3 test labels set aside by rejections" in report.stdout
    words = cli("status", "crowd", "--format", "json").json()["test_labels"]["words"]
    assert words.endswith("2 short (set aside; imported labels: none are collected here)")
    assert "after admission" not in report.stdout
    assert cli("check").code == 0
    # Admitted again, every label counts as imported, p0's fourth included (p0 had room for
    # none once A3Z's label was set aside): none kept for want of room, since nothing here
    # hands the items out.
    from annotate.protocol.studies import load_study

    ctx = load_study(workspace.engine, "crowd")
    (note,) = gate.preview_manual(workspace.engine, ctx, spammer, admit=True).notes
    assert note.endswith("3 set-aside test labels will count again as imported")
    again = cli("gate", "crowd", "--admit", spammer, "--reason", "misread")
    assert again.code == 0, again.stderr
    assert f"{spammer}: 3 set-aside test labels counted again" in again.stdout
    assert "kept aside" not in again.stdout
    assert "set aside by rejections" not in cli("report", "crowd", "--format", "markdown").stdout
    assert cli("check").code == 0


def test_the_datasheet_counts_and_times_no_set_aside_answer(cli, workspace, tmp_path: Path):
    """ben trains at 10 s an answer, answers the test at 1 s and is refused: his 4 test answers
    are set aside. The datasheet's time on task gives him the answers, minutes and median of
    the labels that count (2 training answers, 20 s, no test answer), not 6 answers whose
    median leaves 4 out."""
    from datetime import timedelta

    from tests.tui.console_support import StepClock, label_as

    rte_study(
        workspace.engine, tmp_path, train=2, test=4, gate_threshold=0.5, annotators_per_item=2
    )
    label_as(
        workspace.engine, "pilot", "ana", test_items=4, clock=StepClock(step=timedelta(seconds=10))
    )
    fast = StepClock(step=timedelta(seconds=10))
    session = label_as(workspace.engine, "pilot", "ben", test_items=0, clock=fast)
    fast.step = timedelta(seconds=1)
    while (item := session.next_item()) is not None:
        session.submit(item, "entailment", answered_at=fast())
    session.release()
    assert cli("gate", "pilot", "--reject", "ben", "--reason", "answered in 1 s").code == 0
    report = cli("report", "pilot", "--format", "json", "--bootstrap", "0").json()
    times = {a["name"]: a for a in report["datasheet"]["time_on_task"]["annotators"]}
    # ana: 2 training + 4 test answers at 10 s: 60 s = 1 min, median 10 s.
    assert times["ana"]["n_labels"] == 6 and times["ana"]["median_seconds"] == pytest.approx(10)
    assert times["ana"]["total_minutes"] == pytest.approx(1.0)
    # ben: the 2 training answers at 10 s only (20 s); no test answer counts, so no median.
    assert times["ben"]["n_labels"] == 2 and times["ben"]["median_seconds"] is None
    assert times["ben"]["total_minutes"] == pytest.approx(20 / 60)
    assert report["datasheet"]["time_on_task"]["total_minutes"] == pytest.approx(80 / 60)
    markdown = cli("report", "pilot", "--format", "markdown", "--bootstrap", "0").stdout
    assert "Answers (training and test, set-aside ones left out)" in markdown


def _refuse_an_imported_worker(cli, tmp_path: Path) -> None:
    """A study of three workers' imported labels (k = 3), the third refused by hand."""
    spammer = imported_crowd(cli, tmp_path)
    assert cli("gate", "crowd", "--reject", spammer, "--reason", "all no").code == 0


def test_status_after_refusing_a_worker_of_imported_labels_does_not_ask_for_admissions(
    cli, tmp_path: Path
):
    """A refusal in a study of imported labels leaves items short of k for good: `status`
    does not call the study stuck until more annotators are admitted (none can be)."""
    _refuse_an_imported_worker(cli, tmp_path)
    warnings = cli("status", "crowd", "--format", "json").json()["warnings"]
    assert not any("admitted" in w for w in warnings), warnings


def test_refusing_a_worker_of_imported_labels_fails_no_training(cli, tmp_path: Path):
    """Nobody trained in a study of imported labels: the datasheet's training pass rate
    does not count a hand refusal of one of its workers as a failed training."""
    _refuse_an_imported_worker(cli, tmp_path)
    report = cli("report", "crowd", "--format", "json", "--bootstrap", "20").json()
    attrition = report["datasheet"]["attrition"]
    assert attrition["rejected"] == 1 and attrition["completed_training"] == 0
    assert attrition["training_pass_rate"]["value"] is None
