"""Crowd studies on the engine (issue 22): entry by platform link, pseudonyms, phases, codes,
a batch per worker, the two gates, and one annotator in several windows. No screen."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest
from sqlmodel import Session, select

from annotate.errors import UserError
from annotate.protocol import crowd
from annotate.protocol.crowd_config import CrowdConfig, read_config_file, with_codes
from annotate.protocol.session import AnnotatorSession, Phase
from annotate.protocol.windows import ContinuedElsewhere
from annotate.store.models import (
    Annotator,
    Label,
    LabelRevision,
    Lease,
    StudyItem,
    SurveyAnswer,
    Visit,
)
from tests.crowd_helpers import (
    CODES,
    STUDY_A,
    STUDY_B,
    arrive,
    crowd_study,
    gold,
    label_test,
    pid,
    prolific_query,
    train,
    wrong,
)


@pytest.fixture
def store(store_url: str):
    """A store on each backend in turn (SQLite, PostgreSQL): the rules that must hold under
    concurrency run on both."""
    from annotate.workspace import open_workspace

    ws = open_workspace(store_url, create=True)
    yield ws
    ws.engine.dispose()


# --- links ---------------------------------------------------------------------------------


def prolific(**kw) -> CrowdConfig:
    return CrowdConfig(platform="prolific", study_ids=[STUDY_A], **kw)


def test_a_prolific_link_gives_the_worker_id_study_and_session():
    entry = crowd.parse_link(prolific(), prolific_query(7))
    assert entry.platform == "prolific" and entry.platform_id == pid(7)
    assert entry.study_id == STUDY_A and entry.session_id == f"{507:024x}"
    assert entry.role == "all" and not entry.preview


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"STUDY_ID": STUDY_A}, "PROLIFIC_PID"),
        ({"PROLIFIC_PID": "w07", "STUDY_ID": STUDY_A}, "PROLIFIC_PID"),
        ({"PROLIFIC_PID": pid(1) + "0", "STUDY_ID": STUDY_A}, "PROLIFIC_PID"),
        ({"PROLIFIC_PID": pid(1)}, "STUDY_ID"),
        ({"PROLIFIC_PID": pid(1), "STUDY_ID": STUDY_A, "SESSION_ID": "x"}, "SESSION_ID"),
    ],
)
def test_a_malformed_prolific_link_is_refused_naming_the_field(query, named):
    with pytest.raises(crowd.CrowdRefusal, match=named):
        crowd.parse_link(prolific(), query)


def test_a_study_id_the_study_does_not_accept_is_refused():
    with pytest.raises(crowd.CrowdRefusal, match="not one this study accepts"):
        crowd.parse_link(prolific(), prolific_query(1, STUDY_B))
    with pytest.raises(crowd.CrowdRefusal, match="no platform study yet"):
        crowd.parse_link(CrowdConfig(platform="prolific"), prolific_query(1))


MTURK = {
    "workerId": "A2NJ2DR6IL0N29",
    "assignmentId": "3K4J6M3CXES74RFXQAPR431QHPQAGV",
    "hitId": "3PMBY0YE272GIWPNWIF8IH5RBHQ9C1",
    "turkSubmitTo": "https://workersandbox.mturk.com",
}


def test_mturk_preview_has_no_worker_and_cannot_enter(workspace, tmp_path: Path):
    crowd_study(workspace.engine, tmp_path, crowd_settings={"platform": "mturk", "study_ids": []})
    ctx = crowd.load_study(workspace.engine, "pilot")
    entry = crowd.parse_link(ctx, {**MTURK, "assignmentId": crowd.PREVIEW_ASSIGNMENT})
    assert entry.preview and entry.platform_id is None
    with pytest.raises(crowd.CrowdRefusal, match="preview"):
        crowd.enter_by_link(workspace.engine, "pilot", entry)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("assignmentId", "3ASSIGNX", "10 to 40 capitals and digits"),
        ("hitId", "3HIT", "10 to 40 capitals and digits"),
        ("workerId", "A1B2", "A then 5 to 31 capitals and digits"),
    ],
)
def test_an_mturk_id_of_the_wrong_length_is_refused_saying_the_length(field, value, said):
    """`3ASSIGNX` is capitals and digits, yet was refused as "an MTurk assignment id is
    capitals and digits": the reason the page gave was not the one that applied."""
    with pytest.raises(crowd.CrowdRefusal, match=said):
        crowd.parse_link(CrowdConfig(platform="mturk"), {**MTURK, field: value})


@pytest.mark.parametrize(
    "submit_to",
    [
        "https://evil.example.org",
        "http://www.mturk.com",
        "https://www.mturk.com/x",
        None,
        "https://[",  # not a URL at all: refused, not an error of the page
        "https://www.mturk.com:x",
    ],
)
def test_an_mturk_submit_address_that_is_not_mturks_is_refused(submit_to):
    query = {k: v for k, v in MTURK.items() if k != "turkSubmitTo"}
    if submit_to:
        query["turkSubmitTo"] = submit_to
    with pytest.raises(crowd.CrowdRefusal, match="turkSubmitTo"):
        crowd.parse_link(CrowdConfig(platform="mturk"), query)


def test_an_mturk_worker_leaves_by_the_external_submit_form(workspace, tmp_path: Path):
    crowd_study(
        workspace.engine,
        tmp_path,
        max_test_items_per_annotator=2,
        crowd_settings={"platform": "mturk", "study_ids": []},
    )
    ctx = crowd.load_study(workspace.engine, "pilot")
    arrival = crowd.enter_by_link(workspace.engine, "pilot", crowd.parse_link(ctx, MTURK))
    session = AnnotatorSession.open(workspace.engine, "pilot", arrival.annotator)
    session.attach_window(arrival.visit_id)
    train(workspace.engine, session)
    assert label_test(session) == 2
    leave = crowd.exit_for(workspace.engine, "pilot", arrival.annotator)
    assert leave is not None and leave.outcome == "completed"
    assert leave.form_action == "https://workersandbox.mturk.com/mturk/externalSubmit"
    assert leave.form_fields["assignmentId"] == MTURK["assignmentId"]
    assert leave.form_fields["code"] == CODES["completed"] and leave.redirect_url is None
    from annotate.protocol import pay

    plan = pay.plan_pay(workspace.engine, ctx, "mturk", 1e9)  # any time on task pays something
    header, line = pay.bonus_lines(plan, "mturk")
    # MTurk has no bulk bonus: each line is one SendBonus call, with its required parameters.
    assert header == "WorkerId,AssignmentId,BonusAmount,Reason,UniqueRequestToken"
    worker, assignment, amount, reason, token = line.split(",")
    assert (worker, assignment) == (MTURK["workerId"], MTURK["assignmentId"])
    assert float(amount) == plan.workers[0].amount and "pilot" in reason
    assert 1 <= len(token) <= 64
    # The same payment gets the same token in a second run (MTurk then pays it once).
    again = pay.plan_pay(workspace.engine, ctx, "mturk", 1e9)
    assert pay.bonus_lines(again, "mturk")[1].split(",")[4] == token


def test_a_generic_link_takes_an_id_and_may_send_the_worker_on(workspace, tmp_path: Path):
    crowd_study(
        workspace.engine,
        tmp_path,
        crowd_settings={
            "platform": "link",
            "study_ids": [],
            "completion_url": "https://lab.example.org/done?c={code}",
        },
    )
    ctx = crowd.load_study(workspace.engine, "pilot")
    with pytest.raises(crowd.CrowdRefusal, match="id"):
        crowd.parse_link(ctx, {"id": "<script>"})
    entry = crowd.parse_link(ctx, {"id": "student-42"})
    arrival = crowd.enter_by_link(workspace.engine, "pilot", entry)
    assert crowd.record_consent(workspace.engine, "pilot", arrival.annotator, True) is None
    session = AnnotatorSession.open(workspace.engine, "pilot", arrival.annotator)
    train(workspace.engine, session, right=False)
    leave = crowd.exit_for(workspace.engine, "pilot", arrival.annotator)
    assert leave is not None and leave.outcome == "screened_out"
    assert leave.redirect_url == f"https://lab.example.org/done?c={CODES['screened_out']}"


def test_a_link_id_with_an_accented_letter_is_refused_in_words_that_say_why(workspace, tmp_path):
    """A generic link's id "anna.müller@uni.example" was refused with "an id is 1-64 letters,
    digits, . _ @ or -": ü is a letter, so the worker (and the researcher reading the page)
    could not see what was wrong with it."""
    crowd_study(workspace.engine, tmp_path, crowd_settings={"platform": "link", "study_ids": []})
    ctx = crowd.load_study(workspace.engine, "pilot")
    with pytest.raises(crowd.CrowdRefusal) as refused:
        crowd.parse_link(ctx, {"id": "anna.müller@uni.example"})
    assert str(refused.value) == (
        "This link cannot be used: its id is 'anna.müller@uni.example'; an id is 1-64 of A-Z, "
        "a-z, 0-9, . _ @ or - (no spaces, no accented letters)."
    )


# --- identity ------------------------------------------------------------------------------


def test_workers_get_stable_pseudonyms_and_the_platform_id_is_kept_apart(workspace, tmp_path: Path):
    crowd_study(workspace.engine, tmp_path)
    engine = workspace.engine
    ctx = crowd.load_study(engine, "pilot")
    first = crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, prolific_query(1)))
    second = crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, prolific_query(2)))
    again = crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, prolific_query(1)))
    assert (first.annotator, second.annotator, again.annotator) == ("w01", "w02", "w01")
    assert first.new and second.new and not again.new
    assert again.visit_id > first.visit_id
    with Session(engine) as s:
        w01 = s.exec(select(Annotator).where(Annotator.name == "w01")).one()
        assert (w01.platform, w01.platform_id, w01.token_hash) == ("prolific", pid(1), None)
    # The row an arrival hands back (a page keeps it for the worker's requests) is the stored
    # one, whether the worker is new or returning.
    for arrival in (first, again):
        row = arrival.row
        assert row is not None
        assert row.model_dump() == w01.model_dump()


@pytest.mark.parametrize(
    ("settings", "query", "worker"),
    [
        ({"platform": "prolific", "study_ids": [STUDY_A]}, prolific_query(1), pid(1)),
        ({"platform": "mturk", "study_ids": []}, MTURK, MTURK["workerId"]),
        ({"platform": "link", "study_ids": []}, {"id": "student-42", "study": "s1"}, "student-42"),
    ],
    ids=["prolific", "mturk", "link"],
)
def test_a_visit_keeps_what_submission_and_pay_need_and_never_the_worker_id(
    workspace, tmp_path: Path, settings: dict, query: dict, worker: str
):
    """A worker's platform id is on their annotator row alone: the visit keeps the link's
    other fields (MTurk's assignment and submit address, to submit and pay the work)."""
    crowd_study(workspace.engine, tmp_path, crowd_settings=settings)
    ctx = crowd.load_study(workspace.engine, "pilot")
    arrival = crowd.enter_by_link(workspace.engine, "pilot", crowd.parse_link(ctx, query))
    with Session(workspace.engine) as s:
        visit = s.get(Visit, arrival.visit_id)
        assert visit is not None
        stored = visit.model_dump()
    assert worker not in repr(stored)
    if settings["platform"] == "mturk":
        assert visit.extras["assignment_id"] == MTURK["assignmentId"]
        assert visit.extras["turk_submit_to"] == MTURK["turkSubmitTo"]


def test_two_tabs_arriving_at_once_make_one_annotator(store, tmp_path: Path):
    workspace = store
    crowd_study(workspace.engine, tmp_path)
    engine = workspace.engine
    ctx = crowd.load_study(engine, "pilot")
    names: list[str] = []
    barrier = threading.Barrier(4)

    def go() -> None:
        barrier.wait()
        arrival = crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, prolific_query(9)))
        names.append(arrival.annotator)

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # One worker, one pseudonym in every tab. It is w01 unless a losing tab's number was drawn
    # first: on PostgreSQL a sequence never hands a number out twice, rolled back or not.
    assert len(set(names)) == 1 and len(names) == 4
    assert re.fullmatch(r"w0[1-4]", names[0])
    with Session(engine) as s:
        assert [a.name for a in s.exec(select(Annotator)).all()] == [names[0]]
        assert len(s.exec(select(Visit)).all()) == 4


class AllAtOnce:
    """Holds each worker's insert of their annotator until every arrival still under way has
    reached its own, or as many as can hold a connection at once (`capacity`, the engine's
    pool: the others wait for one of those): the arrivals read and write at the same moment,
    as on a busy server with several processes (threads alone rarely overlap that closely)."""

    def __init__(self, arrivals: int, capacity: int) -> None:
        self.active, self.waiting, self.round = arrivals, 0, 0
        self.capacity = capacity
        self.turn = threading.Condition()

    def _release_if_all_here(self) -> None:
        if self.waiting and self.waiting >= min(self.active, self.capacity):
            self.waiting, self.round = 0, self.round + 1
            self.turn.notify_all()

    def insert(self) -> None:
        with self.turn:
            mine = self.round
            self.waiting += 1
            self._release_if_all_here()
            self.turn.wait_for(lambda: self.round != mine, timeout=10)

    def done(self) -> None:
        with self.turn:
            self.active -= 1
            self._release_if_all_here()


def test_thirty_two_workers_arriving_at_once_are_all_let_in_under_distinct_names(
    store, tmp_path: Path
):
    """Issue 38: a pseudonym comes from the database, so simultaneous arrivals of different
    workers never compete for a name (the old count + 1 refused some on PostgreSQL)."""
    from sqlalchemy import event

    engine = store.engine
    crowd_study(engine, tmp_path)
    ctx = crowd.load_study(engine, "pilot")
    width = 32
    # SQLAlchemy's default pool, as make_engine leaves it: 5 connections and 10 more at need.
    # Holding all 32 inserts for one moment would hold the pool's 15 connections while the
    # other arrivals wait for one, each round only ending at its timeout.
    together = AllAtOnce(width, capacity=15)
    if engine.dialect.name == "postgresql":  # SQLite's writers take turns: no race to stage

        @event.listens_for(engine, "before_cursor_execute")
        def hold(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
            if statement.lstrip().upper().startswith("INSERT INTO ANNOTATOR"):
                together.insert()

    refused: list[str] = []
    names: list[str] = []
    barrier = threading.Barrier(width)

    def go(n: int) -> None:
        barrier.wait()
        try:
            entry = crowd.parse_link(ctx, prolific_query(n))
            names.append(crowd.enter_by_link(engine, "pilot", entry).annotator)
        except UserError as exc:
            refused.append(str(exc))
        finally:
            together.done()

    threads = [threading.Thread(target=go, args=(100 + i,)) for i in range(width)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert refused == []
    assert len(names) == len(set(names)) == width
    with Session(engine) as s:
        rows = s.exec(select(Annotator)).all()
    assert sorted(a.name for a in rows) == sorted(names)
    assert {a.platform_id for a in rows} == {pid(100 + n) for n in range(width)}


# --- phases, codes, batches ----------------------------------------------------------------


def test_threshold_gate_in_one_session_leads_to_test_or_the_screen_out_code(
    workspace, tmp_path: Path
):
    crowd_study(workspace.engine, tmp_path, max_test_items_per_annotator=5)
    engine = workspace.engine
    good, bad = arrive(engine, "pilot", 1), arrive(engine, "pilot", 2)
    train(engine, good)
    train(engine, bad, right=False)
    assert good.phase() is Phase.TEST and bad.phase() is Phase.REJECTED
    assert crowd.exit_for(engine, "pilot", "w01") is None  # test items still to do
    refused = crowd.exit_for(engine, "pilot", "w02")
    assert refused is not None and refused.outcome == "screened_out"
    assert refused.redirect_url == (
        f"https://app.prolific.com/submissions/complete?cc={CODES['screened_out']}"
    )
    assert label_test(good) == 5  # the batch: then no further item
    done = crowd.exit_for(engine, "pilot", "w01")
    assert done is not None and (done.outcome, done.code) == ("completed", CODES["completed"])
    assert crowd.exit_for(engine, "pilot", "w01") == done  # recorded once, same code again
    with Session(engine) as s:
        visits = {v.annotator_id: v for v in s.exec(select(Visit))}
        assert {v.outcome for v in visits.values()} == {"completed", "screened_out"}
        assert all(v.departed_at is not None and v.outcome_at is not None for v in visits.values())
        assert crowd.outcome_counts(s, 1)["completed"] == 1


def test_a_worker_back_after_their_end_leaves_at_arrival_with_the_same_code(
    workspace, tmp_path: Path
):
    """A worker who completed their batch opens the link again (a new window, their code
    lost): they get the code at arrival, not the guidelines and a Start; one with items left
    goes in."""
    crowd_study(workspace.engine, tmp_path, max_test_items_per_annotator=2)
    engine = workspace.engine
    done, busy = arrive(engine, "pilot", 1), arrive(engine, "pilot", 2)
    train(engine, done)
    train(engine, busy)
    label_test(done)
    first = crowd.exit_for(engine, "pilot", "w01", visit_id=done.visit_id)
    assert first is not None and first.outcome == "completed"
    again = crowd.arrival_exit(arrive(engine, "pilot", 1))
    assert again is not None and (again.outcome, again.code) == ("completed", CODES["completed"])
    assert crowd.arrival_exit(arrive(engine, "pilot", 2)) is None  # test items still to do


def test_a_worker_counts_their_own_batch_not_the_studys_test_items(workspace, tmp_path: Path):
    """A worker with a batch of 5 of the study's 20 test items read "Test 0/20" over their
    first item, and was thanked for finishing at "Test 4/20": they count their batch."""
    from annotate.presentation.progress import describe_progress

    crowd_study(workspace.engine, tmp_path, max_test_items_per_annotator=5)
    worker = arrive(workspace.engine, "pilot", 1)
    train(workspace.engine, worker)
    assert describe_progress("test", worker.progress()).plain == "Test 0/5"
    worker.submit(worker.next_item(), "entailment")
    assert describe_progress("test", worker.progress()).plain == "Test 1/5"


def test_a_worker_refused_mid_test_is_told_their_answers_are_not_used(workspace, tmp_path: Path):
    """Refused by hand after answering test items (their answers set aside): the exit keeps
    screened_out's code, but its words neither thank them for training answers only nor promise
    pay for answers the researcher took out (the submission is theirs to review)."""
    from annotate.protocol import gate
    from annotate.protocol.studies import load_study

    crowd_study(workspace.engine, tmp_path, max_test_items_per_annotator=5)
    engine = workspace.engine
    worker = arrive(engine, "pilot", 1)
    train(engine, worker)
    for _ in range(2):
        worker.submit(worker.next_item(), "entailment")
    gate.decide_manually(engine, load_study(engine, "pilot"), "w01", False, reason="too fast")
    peeked = crowd.peek_exit(engine, "pilot", "w01")
    refused = crowd.exit_for(engine, "pilot", "w01")
    assert refused is not None and peeked is not None and peeked.message == refused.message
    assert (refused.outcome, refused.code) == ("screened_out", CODES["screened_out"])
    assert refused.message == crowd.SET_ASIDE_TEXT
    assert "paid" not in refused.message and "training answers" not in refused.message
    assert crowd.exit_for(engine, "pilot", "w01") == refused  # recorded: the same words again


def test_i_do_not_agree_ends_with_the_no_consent_code(workspace, tmp_path: Path):
    crowd_study(workspace.engine, tmp_path, crowd_settings={"consent": "You may stop any time."})
    engine = workspace.engine
    arrive(engine, "pilot", 1)
    assert crowd.needs_consent(engine, "pilot", "w01")
    leave = crowd.record_consent(engine, "pilot", "w01", False)
    assert leave is not None and (leave.outcome, leave.code) == ("no_consent", CODES["no_consent"])
    arrive(engine, "pilot", 2)
    assert crowd.record_consent(engine, "pilot", "w02", True) is None
    assert not crowd.needs_consent(engine, "pilot", "w02")
    arrive(engine, "pilot", 2)  # a second arrival is not asked again
    assert not crowd.needs_consent(engine, "pilot", "w02")


def test_a_worker_who_took_their_code_cannot_change_an_answer(workspace, tmp_path: Path):
    """What the worker was paid for is what the report counts."""
    crowd_study(workspace.engine, tmp_path, train=2, test=3, gate_threshold=0.0)
    engine = workspace.engine
    session = arrive(engine, "pilot", 1)
    train(engine, session)
    label_test(session)
    item, value = session.last_answer()
    done = crowd.exit_for(engine, "pilot", session.annotator.name, visit_id=session.visit_id)
    assert done is not None and done.outcome == "completed"
    with pytest.raises(UserError, match="your answers stand"):
        session.last_answer()
    with pytest.raises(UserError, match="your answers stand"):
        session.revise(item, "not_entailment" if value == "entailment" else "entailment")
    # Nor on the link opened again: a new window of theirs, where nothing has exited yet.
    again = arrive(engine, "pilot", 1)
    with pytest.raises(UserError, match="your answers stand"):
        again.last_answer()
    with pytest.raises(UserError, match="your answers stand"):
        again.revise(item, "not_entailment" if value == "entailment" else "entailment")
    with Session(engine) as s:
        assert s.exec(select(LabelRevision)).all() == []


def test_a_second_mturk_assignment_with_no_work_of_its_own_is_not_completed_again(
    workspace, tmp_path: Path
):
    """One batch of work is completed (and paid) once: the same worker on another assignment
    (another HIT of the batch) with nothing left to answer leaves with study_full; the first
    assignment's link opened again shows its code again."""
    crowd_study(
        workspace.engine,
        tmp_path,
        max_test_items_per_annotator=2,
        crowd_settings={"platform": "mturk", "study_ids": []},
    )
    engine = workspace.engine
    ctx = crowd.load_study(engine, "pilot")

    def visit(assignment: str) -> crowd.Exit | None:
        link = {**MTURK, "assignmentId": assignment}
        arrival = crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, link))
        session = AnnotatorSession.open(engine, "pilot", arrival.annotator)
        session.attach_window(arrival.visit_id)
        train(engine, session)
        label_test(session)
        return crowd.exit_for(engine, "pilot", arrival.annotator, visit_id=arrival.visit_id)

    first = visit(MTURK["assignmentId"])
    assert first is not None and first.outcome == "completed"
    second = visit("3SECONDASSIGNMENT")
    assert second is not None and second.outcome == "study_full"
    assert second.form_fields["code"] == CODES["study_full"]
    assert second.form_fields["assignmentId"] == "3SECONDASSIGNMENT"
    again = visit(MTURK["assignmentId"])
    assert again is not None and again.outcome == "completed"
    assert again.form_fields["code"] == CODES["completed"]


def test_the_first_answer_to_the_consent_text_stands(workspace, tmp_path: Path):
    """A later answer in the same window (a stale form) changes nothing: the declined keep
    their exit, the agreed go on; an agreement the page holds unstored counts as first."""
    crowd_study(workspace.engine, tmp_path, crowd_settings={"consent": "You may stop any time."})
    engine = workspace.engine
    no = arrive(engine, "pilot", 1)
    first = crowd.record_consent(engine, "pilot", "w01", False, visit_id=no.visit_id)
    again = crowd.record_consent(engine, "pilot", "w01", True, visit_id=no.visit_id)
    assert first is not None and again == first and again.outcome == "no_consent"
    yes = arrive(engine, "pilot", 2)
    assert crowd.record_consent(engine, "pilot", "w02", True, visit_id=yes.visit_id) is None
    assert crowd.record_consent(engine, "pilot", "w02", False, visit_id=yes.visit_id) is None
    held = arrive(engine, "pilot", 3)
    stale = crowd.record_consent(engine, "pilot", "w03", False, visit_id=held.visit_id, held=True)
    assert stale is None and not crowd.needs_consent(engine, "pilot", "w03")
    with Session(engine) as s:
        stored = {v.annotator_id: (v.consent, v.outcome) for v in s.exec(select(Visit))}
    assert sorted(stored.values(), key=str) == sorted(
        [(False, "no_consent"), (True, None), (True, None)], key=str
    )


def test_batches_fill_every_item_to_k_breadth_first_under_concurrency(store, tmp_path: Path):
    """20 items x k=3 = 60 labels, batches of at most 10, seven workers answering at once:
    every item ends with exactly k labels, nobody exceeds their batch, each worker with an
    answer leaves with the completion code; a worker arriving afterwards finds the study full."""
    engine = store.engine
    crowd_study(engine, tmp_path, annotators_per_item=3, max_test_items_per_annotator=10)
    sessions = [arrive(engine, "pilot", n) for n in range(1, 8)]
    for s in sessions:
        train(engine, s)
    done: dict[str, int] = {}

    def work(s: AnnotatorSession) -> None:
        done[s.annotator.name] = label_test(s)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(done.values()) <= 10 and sum(done.values()) == 60
    with Session(engine) as s:
        rows = s.exec(select(StudyItem).where(StudyItem.phase == "test")).all()
        assert {row.n_labels for row in rows} == {3}
    for name, n in done.items():
        leave = crowd.exit_for(engine, "pilot", name)
        assert leave is not None and leave.outcome == ("completed" if n else "study_full")
    late = arrive(engine, "pilot", 8)
    leave = crowd.exit_for(engine, "pilot", late.annotator.name)
    assert leave is not None and (leave.outcome, leave.code) == ("study_full", CODES["study_full"])


def test_the_exit_survey_is_asked_then_stored(workspace, tmp_path: Path):
    survey = [
        {
            "name": "difficulty",
            "prompt": "How hard?",
            "kind": "choice",
            "choices": ["easy", "hard"],
        },
        {"name": "remarks", "prompt": "Anything else?", "max_length": 20},
        {"name": "age", "prompt": "Your age group?", "kind": "choice", "choices": ["<30", "30+"],
         "required": True},
    ]  # fmt: skip
    crowd_study(
        workspace.engine,
        tmp_path,
        max_test_items_per_annotator=1,
        crowd_settings={"survey": survey},
    )
    engine = workspace.engine
    session = arrive(engine, "pilot", 1)
    assert crowd.survey_due(engine, "pilot", "w01") == []  # not finished yet
    train(engine, session)
    label_test(session)
    due = ["difficulty", "remarks", "age"]
    assert [q.name for q in crowd.survey_due(engine, "pilot", "w01")] == due
    with pytest.raises(UserError, match="please answer “Your age group\\?”"):
        crowd.record_survey(engine, "pilot", "w01", {"age": ""})
    with pytest.raises(UserError, match="choose one of easy, hard"):
        crowd.record_survey(engine, "pilot", "w01", {"difficulty": "medium"})
    with pytest.raises(UserError, match="at most 20"):
        crowd.record_survey(engine, "pilot", "w01", {"remarks": "x" * 21})
    crowd.record_survey(engine, "pilot", "w01", {"remarks": " "})  # skipped
    assert [q.name for q in crowd.survey_due(engine, "pilot", "w01")] == ["difficulty", "age"]
    crowd.record_survey(engine, "pilot", "w01", {"difficulty": "hard", "remarks": "late"})
    assert [q.name for q in crowd.survey_due(engine, "pilot", "w01")] == ["age"]
    crowd.record_survey(engine, "pilot", "w01", {"age": "30+"})
    assert crowd.survey_due(engine, "pilot", "w01") == []
    with Session(engine) as s:
        assert {(a.question, a.answer) for a in s.exec(select(SurveyAnswer))} == {
            ("difficulty", "hard"),
            ("age", "30+"),
        }


# --- the median gate as two platform studies ------------------------------------------------


def test_the_median_gate_as_two_platform_studies(workspace, tmp_path: Path):
    engine = workspace.engine
    crowd_study(
        engine,
        tmp_path,
        gate_rule="median",
        gate_min_items=6,
        crowd_settings={"study_ids": [], "training_study_id": STUDY_A, "test_study_id": STUDY_B},
    )
    # Training link (study A): three workers train and leave with the training-done code.
    for n, right in ((1, True), (2, True), (3, False)):
        session = arrive(engine, "pilot", n, STUDY_A)
        train(engine, session, right=right)
        leave = crowd.exit_for(engine, "pilot", session.annotator.name)
        assert leave is not None and (leave.outcome, leave.code) == (
            "training_done",
            CODES["training_done"],
        )
    ctx = crowd.load_study(engine, "pilot")
    from annotate.protocol import gate

    gate.close_training(
        engine, ctx, force=True, reason="two-study design: closed by the researcher"
    )
    assert crowd.admitted_ids(engine, ctx, "prolific") == [pid(1), pid(2)]
    # Test link (study B): the admitted go straight to test; anyone else is refused with a code.
    admitted = arrive(engine, "pilot", 1, STUDY_B)
    assert crowd.exit_for(engine, "pilot", "w01") is None
    assert admitted.next_item().phase == "test"
    for n in (3, 4):
        other = arrive(engine, "pilot", n, STUDY_B)
        leave = crowd.exit_for(engine, "pilot", other.annotator.name)
        assert leave is not None and (leave.outcome, leave.code) == (
            "not_admitted",
            CODES["not_admitted"],
        )


# --- one annotator, several windows --------------------------------------------------------


def test_two_windows_on_one_training_item_keep_one_answer_and_honest_feedback(
    workspace, tmp_path: Path
):
    engine = workspace.engine
    crowd_study(engine, tmp_path)
    old = arrive(engine, "pilot", 1)
    shown_old = old.next_item()
    new = arrive(engine, "pilot", 1)  # the same worker opens the link in a second tab
    shown_new = new.next_item()
    assert shown_old.item_id == shown_new.item_id
    truth = gold(engine, shown_new)
    feedback = new.submit(shown_new, truth)
    assert feedback.answer_text == feedback.gold_text  # the new tab's own (right) answer
    with pytest.raises(ContinuedElsewhere, match="another window"):
        old.submit(shown_old, wrong(truth))
    with pytest.raises(ContinuedElsewhere):
        old.next_item()
    with Session(engine) as s:
        labels = s.exec(select(Label)).all()
        assert [(label.value, label.correct) for label in labels] == [(truth, True)]


def test_two_terminal_windows_on_one_test_item_keep_the_newer_answer(workspace, tmp_path: Path):
    engine = workspace.engine
    rte = crowd_study(engine, tmp_path)
    first = AnnotatorSession.open(engine, "pilot", "ana", create_annotator=True)
    first.claim_window()
    train(engine, first)
    on_first = first.next_item()
    second = AnnotatorSession.open(engine, "pilot", "ana")
    second.claim_window()
    on_second = second.next_item()
    assert on_first.item_id == on_second.item_id  # the lease is the annotator's, not the window's
    after = second.submit_and_next(on_second, "entailment")
    with pytest.raises(ContinuedElsewhere):
        first.submit_and_next(on_first, "not_entailment")
    first.release()  # the older window quits: the newer keeps its item
    assert second.submit_and_next(after, "entailment") is not None
    with Session(engine) as s:
        mine = s.exec(select(Label).where(Label.phase == "test", Label.study_id == rte.id)).all()
        assert [label.value for label in mine] == ["entailment", "entailment"]


def test_a_crowd_file_with_a_mistyped_outcome_says_codes_once(tmp_path: Path):
    """A `[codes]` table with a typo said "invalid crowd settings: codes: codes: unknown
    outcome 'complete' …", the key twice; a code with a space said "codes: codes.completed: …"."""
    path = tmp_path / "crowd.toml"
    for codes, said in (
        (
            'complete = "DONE1"',
            "unknown outcome 'complete' (known: completed, screened_out, study_full, "
            "no_consent, training_done, not_admitted)",
        ),
        ('completed = "DONE 1"', "'DONE 1' for completed is not 1-64 of A-Z, a-z, 0-9, - or _"),
    ):
        path.write_text(f'platform = "link"\n[codes]\n{codes}\n')
        with pytest.raises(UserError) as refused:
            read_config_file(path)
        assert str(refused.value) == f"{path}: invalid crowd settings: codes: {said}"


def test_crowd_settings_file_is_checked(tmp_path: Path):
    path = tmp_path / "crowd.toml"
    path.write_text('platform = "prolific"\nstudy_ids = ["nope"]\n')
    with pytest.raises(UserError, match=r"crowd.toml: invalid crowd settings: .*Prolific study id"):
        read_config_file(path)
    path.write_text(f'study_ids = ["{STUDY_A}"]\n[codes]\nfinished = "X"\n')
    with pytest.raises(UserError, match="unknown outcome 'finished'"):
        read_config_file(path, "prolific")
    path.write_text('platform = "mturk"\n')
    with pytest.raises(UserError, match="--crowd prolific"):
        read_config_file(path, "prolific")
    kept = with_codes(CrowdConfig(platform="link"), {"completed": "OLDCODE1"})
    assert kept.codes["completed"] == "OLDCODE1" and len(kept.codes) == 6


def test_a_store_from_before_schema_9_migrates_and_takes_a_crowd_study(tmp_path: Path):
    """The 0.1.0 store (tests/migration), migrated: its annotators have no platform, its
    studies none of the crowd settings, and one of them can become a crowd study."""
    import shutil

    from annotate.store import schema
    from annotate.store.engine import make_engine
    from tests.unit.test_migrations import OLD_STORE

    path = tmp_path / "old.db"
    shutil.copy(OLD_STORE, path)
    engine = make_engine(f"sqlite:///{path}")
    schema.migrate_store(engine)
    with Session(engine) as s:
        people = s.exec(select(Annotator)).all()
        assert people and all(a.platform is None and a.platform_id is None for a in people)
        assert s.exec(select(Visit)).all() == []
    crowd.set_config(engine, "old-rte", with_codes(CrowdConfig(platform="link")))
    ctx = crowd.load_study(engine, "old-rte")
    arrival = crowd.enter_by_link(engine, "old-rte", crowd.parse_link(ctx, {"id": "p-1"}))
    assert arrival.new and arrival.annotator.startswith("w")
    engine.dispose()


def test_a_training_cap_decides_the_gate_after_that_many_items(workspace, tmp_path: Path):
    engine = workspace.engine
    crowd_study(engine, tmp_path, max_training_items_per_annotator=3, gate_min_items=3)
    session = arrive(engine, "pilot", 1)
    seen = []
    while (item := session.next_item()) is not None and item.phase == "training":
        seen.append(item.item_id)
        session.submit(item, gold(engine, item))
    assert len(seen) == 3 and item is not None and item.phase == "test"
    progress = session.progress()
    assert (progress.training_done, progress.training_quota) == (3, 3)
    with Session(engine) as s:
        assert len(s.exec(select(StudyItem).where(StudyItem.phase == "training")).all()) == 6


def test_a_survey_answer_says_what_is_still_asked_then_records_the_exit_with_the_last(
    workspace, tmp_path: Path
):
    """answer_survey (the page's): the questions still open after these answers, and with the
    last of them the exit, recorded once (asking again gives the same exit, time included)."""
    survey = [
        {"name": "difficulty", "prompt": "How hard?", "kind": "choice",
         "choices": ["easy", "hard"]},
        {"name": "remarks", "prompt": "Anything else?"},
    ]  # fmt: skip
    crowd_study(
        workspace.engine, tmp_path, max_test_items_per_annotator=1,
        crowd_settings={"survey": survey},
    )  # fmt: skip
    engine = workspace.engine
    session = arrive(engine, "pilot", 1)
    train(engine, session)
    with pytest.raises(crowd.SurveyNotDue):
        crowd.answer_survey(engine, "pilot", "w01", {"remarks": "early"})
    label_test(session)
    with pytest.raises(UserError, match="choose one of easy, hard"):
        crowd.answer_survey(engine, "pilot", "w01", {"difficulty": "medium"})
    due, leave = crowd.answer_survey(engine, "pilot", "w01", {"remarks": " "})  # skipped
    assert ([q.name for q in due], leave) == (["difficulty"], None)
    with Session(engine) as s:
        assert s.exec(select(Visit)).one().outcome is None  # still in the survey
    due, leave = crowd.answer_survey(engine, "pilot", "w01", {"difficulty": "hard"})
    assert due == [] and leave is not None
    assert (leave.outcome, leave.code) == ("completed", CODES["completed"])
    with Session(engine) as s:
        visit = s.exec(select(Visit)).one()
        assert (visit.outcome, visit.outcome_at, visit.departed_at is not None) == (
            "completed",
            leave.at,
            True,
        )
        assert visit.extras["survey_skipped"] == ["remarks"]
        assert [(a.question, a.answer) for a in s.exec(select(SurveyAnswer))] == [
            ("difficulty", "hard")
        ]
        assert s.exec(select(Lease)).all() == []  # nothing held past the exit
    again = crowd.answer_survey(engine, "pilot", "w01", {"difficulty": "easy"})
    assert again == ([], leave)  # the first answer kept, the exit as recorded
    assert crowd.exit_for(engine, "pilot", "w01") == leave


def test_time_on_task_covers_reading_and_waiting_until_the_exit(workspace, tmp_path: Path):
    """Arrival at 10:00, the guidelines read until 10:05 (a heartbeat), waiting for a median
    gate until 10:20, then the training-done exit at 10:30: 30 minutes on task."""
    from datetime import UTC, datetime

    from annotate.protocol.pay import time_on_task

    engine = workspace.engine
    crowd_study(
        engine,
        tmp_path,
        gate_rule="median",
        crowd_settings={"study_ids": [], "training_study_id": STUDY_A, "test_study_id": STUDY_B},
    )
    at = {"now": datetime(2026, 12, 1, 10, 0, tzinfo=UTC)}

    def clock() -> datetime:
        return at["now"]

    ctx = crowd.load_study(engine, "pilot")
    arrival = crowd.enter_by_link(
        engine, "pilot", crowd.parse_link(ctx, prolific_query(1)), clock=clock
    )
    session = crowd.open_session(engine, "pilot", arrival, clock=clock)
    at["now"] = at["now"].replace(minute=5)
    assert session.heartbeat()
    at["now"] = at["now"].replace(minute=20)
    while (item := session.next_item()) is not None:
        session.submit(item, gold(engine, item))
    at["now"] = at["now"].replace(minute=30)
    leave = crowd.exit_for(engine, "pilot", "w01", clock=clock)
    assert leave is not None and leave.outcome == "training_done"
    with Session(engine) as s:
        assert time_on_task(s, ctx.id) == {1: 30 * 60}
    other = crowd.open_session(
        engine,
        "pilot",
        crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, prolific_query(1))),
    )
    assert other.heartbeat() and not session.heartbeat()  # the older window is no longer live


def test_the_test_link_of_a_study_without_training_admits_as_the_worker_arrives(
    workspace, tmp_path: Path
):
    """A study with no training items admits each worker by its automatic rule when first
    asked (a decision recorded then): a worker on the test link whose way is asked before any
    item is admitted there and goes in, not sent away as not admitted."""
    engine = workspace.engine
    crowd_study(
        engine,
        tmp_path,
        training_items=0,
        crowd_settings={"study_ids": [], "training_study_id": STUDY_A, "test_study_id": STUDY_B},
    )
    ctx = crowd.load_study(engine, "pilot")
    arrival = crowd.enter_by_link(
        engine, "pilot", crowd.parse_link(ctx, prolific_query(1, STUDY_B))
    )
    assert crowd.peek_exit(engine, "pilot", arrival.annotator) is None
    assert crowd.end_of(engine, "pilot", arrival.annotator) == ([], None)
    session = AnnotatorSession.open(engine, "pilot", arrival.annotator)
    assert session.phase() is Phase.TEST


@pytest.mark.parametrize("rule", ["threshold", "median"])
def test_the_training_exit_says_whether_the_gate_has_admitted_the_worker(
    workspace, tmp_path: Path, rule: str
):
    """The training link's exit: a worker the gate has admitted as they finished (a threshold
    rule decides each trainee by itself) is told so, not that it "is decided once everyone has
    trained"; one waiting on an open median gate is told that, as before."""
    engine = workspace.engine
    two_studies = {"study_ids": [], "training_study_id": STUDY_A, "test_study_id": STUDY_B}
    crowd_study(engine, tmp_path, gate_rule=rule, crowd_settings=two_studies)
    ctx = crowd.load_study(engine, "pilot")
    arrival = crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, prolific_query(1)))
    session = crowd.open_session(engine, "pilot", arrival)
    while (item := session.next_item()) is not None:
        session.submit(item, gold(engine, item))
    leave = crowd.exit_for(engine, "pilot", "w01")
    assert leave is not None and leave.outcome == "training_done"
    if rule == "threshold":
        assert leave.message == crowd.ADMITTED_TEXT
        assert "decided once everyone has trained" not in leave.message
    else:
        assert leave.message == crowd.OUTCOME_TEXT["training_done"]
    assert crowd.exit_for(engine, "pilot", "w01") == leave  # the same words when asked again


@pytest.mark.parametrize("rule", ["threshold", "median"])
def test_the_exit_survey_waits_for_the_test_study_of_a_worker_admitted_in_training(
    workspace, tmp_path: Path, rule: str
):
    """Training (study A) then test (study B): a worker the gate admitted as they finished A
    was asked the exit survey there ("How hard were the items?" before any test item) and
    never at the end of B. Their run ends after B: the survey is asked there, once. One whose
    gate is still open may never be back: asked at the end of A, as before."""
    engine = workspace.engine
    survey = [{"name": "difficulty", "prompt": "How hard?", "kind": "choice",
               "choices": ["easy", "hard"]}]  # fmt: skip
    two_studies = {"study_ids": [], "training_study_id": STUDY_A, "test_study_id": STUDY_B}
    crowd_study(
        engine,
        tmp_path,
        gate_rule=rule,
        max_test_items_per_annotator=1,
        crowd_settings={**two_studies, "survey": survey},
    )
    ctx = crowd.load_study(engine, "pilot")
    session = crowd.open_session(
        engine,
        "pilot",
        crowd.enter_by_link(engine, "pilot", crowd.parse_link(ctx, prolific_query(1))),
    )
    while (item := session.next_item()) is not None:
        session.submit(item, gold(engine, item))
    due, leave = crowd.end_of(engine, "pilot", "w01")
    if rule == "median":  # not admitted yet: the end of A may be the end of their run
        assert [q.name for q in due] == ["difficulty"] and leave is None
        return
    assert due == [] and leave is not None and leave.outcome == "training_done"
    with pytest.raises(crowd.SurveyNotDue):
        crowd.record_survey(engine, "pilot", "w01", {"difficulty": "easy"})
    arrival = crowd.enter_by_link(
        engine, "pilot", crowd.parse_link(ctx, prolific_query(1, STUDY_B))
    )
    label_test(crowd.open_session(engine, "pilot", arrival))
    due, leave = crowd.end_of(engine, "pilot", "w01", visit_id=arrival.visit_id)
    assert [q.name for q in due] == ["difficulty"] and leave is None
