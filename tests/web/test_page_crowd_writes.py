"""What a crowd worker's way in costs the store (issue 38): an arrival by link is one write,
agreeing to the consent text is stored with the first answer (never without it), a training
answer and its feedback are one write, and a study's changed settings reach a running page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlmodel import Session, select

from annotate.protocol import crowd
from annotate.protocol.crowd_config import CrowdConfig, with_codes
from annotate.store.models import Label, SurveyAnswer, Visit
from tests.crowd_helpers import (
    CODES,
    STUDY_A,
    batch_study,
    prolific_query,
    short_study,
)
from tests.web.test_page import client, csrf, screen, ticket

pytest.importorskip("starlette")


@contextmanager
def commits(engine) -> Iterator[list[str]]:
    """The write transactions committed meanwhile (one entry per COMMIT)."""
    seen: list[str] = []

    def on_commit(conn) -> None:  # type: ignore[no-untyped-def]
        seen.append("commit")

    event.listen(engine, "commit", on_commit)
    try:
        yield seen
    finally:
        event.remove(engine, "commit", on_commit)


def consents(engine) -> list[bool | None]:
    with Session(engine) as s:
        return list(s.exec(select(Visit.consent).order_by(Visit.id)))


def study(workspace, tmp_path: Path) -> None:
    short_study(workspace.engine, tmp_path, consent="We keep your answers under a pseudonym.")


def test_an_arrival_is_one_write_and_consent_is_stored_with_the_first_answer(
    workspace, tmp_path: Path
):
    study(workspace, tmp_path)
    engine = workspace.engine
    c = client(engine, "pilot")
    with commits(engine) as arrival:
        consent = c.get("/", params=prolific_query(1))
        assert screen(consent) == "consent"
        guide = c.post("/consent", data={"csrf": csrf(consent), "agree": "yes"})
        assert screen(guide) == "guidelines"
        item = c.post("/start", data={"csrf": csrf(guide)})
        assert screen(item) == "item"
    assert len(arrival) == 1  # the worker and their window, together
    assert consents(engine) == [None]  # agreed on the page; nothing answered yet
    with commits(engine) as answer:
        feedback = c.post(
            "/answer", data={"csrf": csrf(item), "ticket": ticket(item), "answer": "entailment"}
        )
        assert screen(feedback) == "feedback"
    assert len(answer) == 1  # the answer, its consent and its feedback: one commit
    assert consents(engine) == [True]
    with Session(engine) as s:
        assert len(s.exec(select(Label)).all()) == 1
    again = c.get("/screen?next=1")
    assert screen(again) == "item"  # consent is not asked again in this session


def test_a_new_worker_is_not_asked_for_an_arrival_exit_the_engine_ruled_out(
    workspace, tmp_path: Path
):
    """A new worker has no gate decision and no consent stored: the engine says at entry that
    only a test link could turn them away, so neither the consent screen after the link nor
    the guidelines after agreeing ask whether they are turned away or consented before. A returning
    worker is asked (the gate may have rejected them meanwhile)."""
    study(workspace, tmp_path)
    engine = workspace.engine
    statements: list[str] = []

    def on_statement(conn, cursor, statement, *args) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", on_statement)
    try:
        browser = client(engine, "pilot")
        consent = browser.get("/", params=prolific_query(1))
        guide = browser.post("/consent", data={"csrf": csrf(consent), "agree": "yes"})
        first = list(statements)
        statements.clear()
        back = client(engine, "pilot").get("/", params=prolific_query(1))
    finally:
        event.remove(engine, "before_cursor_execute", on_statement)
    assert screen(consent) == "consent" and screen(guide) == "guidelines"
    assert screen(back) == "consent"
    # arrival_exit reads the link's role, needs_consent the stored consents
    assert not [s for s in first if "visit.link_role" in s or "visit.consent IS" in s], first
    assert [s for s in statements if "visit.link_role" in s]
    assert [s for s in statements if "visit.consent IS" in s]


def test_a_worker_who_agreed_but_answered_nothing_is_asked_again_on_return(
    workspace, tmp_path: Path
):
    study(workspace, tmp_path)
    c = client(workspace.engine, "pilot")
    consent = c.get("/", params=prolific_query(1))
    c.post("/consent", data={"csrf": csrf(consent), "agree": "yes"})
    back = client(workspace.engine, "pilot").get("/", params=prolific_query(1))
    assert screen(back) == "consent"  # nothing was stored under that agreement
    assert crowd.needs_consent(workspace.engine, "pilot", "w01")


def test_i_do_not_agree_is_stored_at_once(workspace, tmp_path: Path):
    study(workspace, tmp_path)
    c = client(workspace.engine, "pilot")
    consent = c.get("/", params=prolific_query(1))
    out = c.post("/consent", data={"csrf": csrf(consent), "agree": "no"})
    assert screen(out) == "exit" and CODES["no_consent"] in out.text
    assert consents(workspace.engine) == [False]


def test_changed_crowd_settings_reach_a_study_loaded_before(workspace, tmp_path: Path):
    study(workspace, tmp_path)
    engine = workspace.engine
    before = crowd.load_study(engine, "pilot")
    assert crowd.load_study(engine, "pilot") is before  # unchanged: validated once
    assert crowd.consent_text(before) == "We keep your answers under a pseudonym."
    changed = CrowdConfig(platform="prolific", study_ids=[STUDY_A], consent="New words.")
    crowd.set_config(engine, "pilot", with_codes(changed))
    after = crowd.load_study(engine, "pilot")
    assert crowd.consent_text(after) == "New words."


def test_the_answer_that_ends_the_batch_commits_once_and_the_survey_then_the_code_follow(
    workspace, tmp_path: Path
):
    """The last test answer of a batch is one commit: the page takes the engine's "no next
    item" as said, rather than asking again (a second write transaction only to find the batch
    done). The survey, then the exit with its code, follow; the survey's answer and the exit are one
    commit, and the exit is recorded once."""
    batch_study(workspace.engine, tmp_path)
    engine = workspace.engine
    c = client(engine, "pilot")
    page = c.get("/", params=prolific_query(1))
    page = c.post("/start", data={"csrf": csrf(page)})
    answered = 0
    while screen(page) in ("item", "feedback"):
        if screen(page) == "feedback":
            page = c.get("/screen?next=1")
            continue
        data = {"csrf": csrf(page), "ticket": ticket(page), "answer": "entailment"}
        with commits(engine) as committed:
            page = c.post("/answer", data=data)
        answered += 1
    assert screen(page) == "survey"
    assert len(committed) == 1, committed  # the last answer: one commit, no second write
    with commits(engine) as committed:
        done = c.post("/survey", data={"csrf": csrf(page), "q:remarks": "none"})
    assert screen(done) == "exit" and CODES["completed"] in done.text
    assert len(committed) == 1, committed  # the survey's answer and the exit: one write
    with Session(engine) as s:
        assert [v.outcome for v in s.exec(select(Visit))] == ["completed"]
        assert all(v.departed_at is not None for v in s.exec(select(Visit)))
        assert [(a.question, a.answer) for a in s.exec(select(SurveyAnswer))] == [
            ("remarks", "none")
        ]
        assert len(s.exec(select(Label).where(Label.phase == "test")).all()) == 2
