"""Crowd studies on the annotator page: entry by Prolific, MTurk and generic links, consent,
the exit survey, the final code with the platform's way back, MTurk's preview, and one worker
in two tabs, or in a tab and the terminal app (the newest window takes the answers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from annotate.protocol.session import AnnotatorSession
from tests.crowd_helpers import CODES, crowd_study, prolific_query, short_study
from tests.web.support import labels
from tests.web.test_page import ORIGIN, client, csrf, screen, ticket

pytest.importorskip("starlette")
MTURK = {
    "workerId": "A1B2C3D4E5F6",
    "assignmentId": "3ABCDEF1234567",
    "hitId": "3HITHIT1234567",
    "turkSubmitTo": "https://workersandbox.mturk.com",
}


def answer_all(c, page) -> object:
    """Answer every item the page shows (training feedback moved past) until it stops."""
    for _ in range(40):
        name = screen(page)
        if name == "feedback":
            page = c.get("/screen?next=1")  # "continue"
        elif name == "item":
            page = c.post(
                "/answer",
                data={"csrf": csrf(page), "ticket": ticket(page), "answer": "entailment"},
            )
        else:
            return page
    raise AssertionError("the page never stopped serving items")


def test_a_prolific_worker_consents_works_answers_the_survey_and_gets_the_code(
    workspace, tmp_path: Path
):
    short_study(
        workspace.engine,
        tmp_path,
        consent="We store your answers under a pseudonym.\n\nYou may stop at any time.",
        survey=[{"name": "hard", "prompt": "How <b>hard</b>?", "kind": "choice",
                 "choices": ["easy", "hard"]}],
    )  # fmt: skip
    c = client(workspace.engine, "pilot")
    entered = c.get("/", params=prolific_query(1), follow_redirects=False)
    assert entered.status_code == 303 and entered.headers["location"] == "/"
    consent = c.get("/")  # the ids are gone from the address; the cookie knows the worker
    assert screen(consent) == "consent" and "under a pseudonym" in consent.text
    guide = c.post("/consent", data={"csrf": csrf(consent), "agree": "yes"})
    assert screen(guide) == "guidelines"
    page = c.post("/start", data={"csrf": csrf(guide)})
    survey = answer_all(c, page)
    assert screen(survey) == "survey" and "How &lt;b&gt;hard&lt;/b&gt;?" in survey.text
    done = c.post("/survey", data={"csrf": csrf(survey), "q:hard": "hard"})
    assert screen(done) == "exit"
    assert CODES["completed"] in done.text
    assert (
        f'href="https://app.prolific.com/submissions/complete?cc={CODES["completed"]}"' in done.text
    )
    again = c.get("/")  # a reload shows the same exit, recorded once
    assert screen(again) == "exit" and CODES["completed"] in again.text
    late = c.get("/revise")  # what the worker was paid for stands
    assert screen(late) == "exit" and CODES["completed"] in late.text
    c.get("/", params=prolific_query(1))  # the link opened again: a new window, same answers
    assert screen(c.get("/revise")) == "exit"
    stored = labels(workspace.engine, "pilot")
    assert [label.phase for label in stored].count("test") == 3


def test_i_do_not_agree_ends_with_the_no_consent_code(workspace, tmp_path: Path):
    crowd_study(workspace.engine, tmp_path, crowd_settings={"consent": "Agree?"})
    c = client(workspace.engine, "pilot")
    consent = c.get("/", params=prolific_query(2))
    out = c.post("/consent", data={"csrf": csrf(consent), "agree": "no"})
    assert screen(out) == "exit" and CODES["no_consent"] in out.text


def test_a_worker_arriving_once_the_study_is_full_leaves_at_once_with_study_full(
    workspace, tmp_path: Path
):
    """Every test item had its labels: a worker arriving by the link (new, or one who had
    opened it before and not started) was still asked to consent, read the guidelines and do
    the whole training, and only then given the study_full code. They leave at once now."""
    crowd_study(
        workspace.engine, tmp_path, train=2, test=2, gate_threshold=0.0, annotators_per_item=1,
        crowd_settings={"consent": "Agree?"},
    )  # fmt: skip
    early = client(workspace.engine, "pilot").get("/", params=prolific_query(3))
    assert screen(early) == "consent"  # came, and left before starting
    c = client(workspace.engine, "pilot")
    consent = c.get("/", params=prolific_query(1))
    guide = c.post("/consent", data={"csrf": csrf(consent), "agree": "yes"})
    done = answer_all(c, c.post("/start", data={"csrf": csrf(guide)}))
    assert screen(done) == "exit" and CODES["completed"] in done.text
    for n in (2, 3):  # a new worker; the one who came before
        late = client(workspace.engine, "pilot").get("/", params=prolific_query(n))
        assert screen(late) == "exit" and CODES["study_full"] in late.text, n


def test_the_first_answer_to_the_consent_text_stands(workspace, tmp_path: Path):
    """A worker who declined is shown their exit on every screen, and a later "I agree" (the
    form reloaded) does not take them back in; one who agreed and works on is not turned
    away by an "I do not agree" left open in another tab."""
    short_study(workspace.engine, tmp_path, consent="Agree?")
    declined = client(workspace.engine, "pilot")
    form = declined.get("/", params=prolific_query(2))
    assert (
        CODES["no_consent"]
        in declined.post("/consent", data={"csrf": csrf(form), "agree": "no"}).text
    )
    for again in (
        declined.get("/"),
        declined.post("/consent", data={"csrf": csrf(form), "agree": "yes"}),
        declined.post("/start", data={"csrf": csrf(form)}),
        # Nor does any other form or screen hand them an item to label.
        declined.post("/answer", data={"csrf": csrf(form), "ticket": "x", "answer": "1"}),
        declined.post("/survey", data={"csrf": csrf(form)}),
        declined.get("/revise"),
        declined.get("/screen?next=1"),
    ):
        assert screen(again) == "exit" and CODES["no_consent"] in again.text
    assert labels(workspace.engine, "pilot") == []

    # A worker who has not answered the consent text is asked it, whatever they ask for.
    silent = client(workspace.engine, "pilot")
    form = silent.get("/", params=prolific_query(4))
    for asked in (
        silent.post("/answer", data={"csrf": csrf(form), "ticket": "x", "answer": "1"}),
        silent.post("/survey", data={"csrf": csrf(form)}),
        silent.post("/reclaim", data={"csrf": csrf(form)}),
        silent.get("/revise"),
    ):
        assert screen(asked) == "consent"
    assert labels(workspace.engine, "pilot") == []

    agreed = client(workspace.engine, "pilot")
    stale = agreed.get("/", params=prolific_query(3))
    guidelines = agreed.post("/consent", data={"csrf": csrf(stale), "agree": "yes"})
    item = agreed.post("/start", data={"csrf": csrf(guidelines)})
    page = agreed.post(
        "/answer", data={"csrf": csrf(item), "ticket": ticket(item), "answer": "entailment"}
    )
    assert screen(agreed.post("/consent", data={"csrf": csrf(stale), "agree": "no"})) != "exit"
    done = answer_all(agreed, agreed.get("/screen?next=1") if screen(page) == "feedback" else page)
    assert screen(done) == "exit" and CODES["completed"] in done.text
    assert CODES["no_consent"] not in done.text


def test_a_crowd_page_without_a_session_says_to_open_the_link_on_every_screen(
    workspace, tmp_path: Path
):
    """Workers enter by their link only: no screen offers a sign-in form they cannot use."""
    crowd_study(workspace.engine, tmp_path)
    c = client(workspace.engine, "pilot")
    for page in (c.get("/"), c.get("/screen"), c.get("/screen?next=1"), c.get("/revise")):
        assert screen(page) == "link" and "Your annotator name" not in page.text


def test_a_worker_arriving_while_the_store_is_away_gets_in_once_it_is_back(
    workspace, tmp_path: Path
):
    """A link opened while the database server was down showed "Store unreachable", whose
    retries asked for the current screen without the link's ids: once the server was back
    the worker was told to open their link again. The retries now make the arrival itself."""
    import html
    from urllib.parse import urlencode

    import psycopg
    from sqlalchemy import event
    from sqlalchemy.exc import OperationalError

    short_study(workspace.engine, tmp_path, consent="We store your answers.")
    c = client(workspace.engine, "pilot")

    def gone(*_args) -> None:
        raise OperationalError("SELECT", {}, psycopg.OperationalError("server closed"))

    event.listen(workspace.engine, "before_cursor_execute", gone)
    try:
        away = c.get("/", params=prolific_query(1))
    finally:
        event.remove(workspace.engine, "before_cursor_execute", gone)
    assert away.status_code == 503 and screen(away) == "unreachable"
    again = f"/?{urlencode(prolific_query(1))}"
    shown = html.escape(again)  # & as &amp; in the attribute
    assert f'hx-get="{shown}"' in away.text and f'href="{shown}"' in away.text
    back = c.get(again, headers={"HX-Request": "true"})  # the retry, followed to the screen
    assert screen(back) == "consent"


def test_mturk_preview_shows_the_guidelines_and_the_exit_posts_to_mturk(workspace, tmp_path: Path):
    crowd_study(
        workspace.engine,
        tmp_path,
        train=2,
        test=2,
        gate_threshold=0.0,
        crowd_settings={"platform": "mturk", "study_ids": []},
    )
    c = client(workspace.engine, "pilot")
    preview = c.get("/", params={**MTURK, "assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert screen(preview) == "preview" and "accept the task" in preview.text
    assert 'name="ticket"' not in preview.text
    page = c.get("/", params=MTURK)
    page = c.post("/start", data={"csrf": csrf(page)})
    done = answer_all(c, page)
    assert screen(done) == "exit"
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in done.text
    assert f'name="assignmentId" value="{MTURK["assignmentId"]}"' in done.text
    # Every response of an MTurk study (the page the exit is swapped into too) lets MTurk's
    # worker sites frame it and its form go to MTurk's submit hosts; nothing else.
    for response in (page, done):
        policy = response.headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert set(directives["form-action"].split()) == {
            "'self'",
            "https://www.mturk.com",
            "https://workersandbox.mturk.com",
            "https://worker.mturk.com",
        }
        assert set(directives["frame-ancestors"].split()) == {
            "https://worker.mturk.com",
            "https://workersandbox.mturk.com",
        }
        assert directives["default-src"] == "'self'"
        assert "x-frame-options" not in response.headers


def test_a_study_not_on_mturk_keeps_refusing_frames_and_foreign_forms(workspace, tmp_path):
    crowd_study(workspace.engine, tmp_path)
    c = client(workspace.engine, "pilot")
    page = c.get("/", params=prolific_query(1))
    policy = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy and "form-action 'self';" in policy
    assert page.headers["x-frame-options"] == "DENY"


def test_a_bad_link_is_refused_with_the_reason_and_no_sign_in_form(workspace, tmp_path):
    crowd_study(workspace.engine, tmp_path)
    c = client(workspace.engine, "pilot")
    refused = c.get("/", params={"PROLIFIC_PID": "<script>", "STUDY_ID": "x"})
    assert refused.status_code == 403 and screen(refused) == "refused"
    assert "<script>" not in refused.text and "PROLIFIC_PID" in refused.text
    bare = c.get("/")
    assert screen(bare) == "link" and 'name="token"' not in bare.text
    assert c.post("/signin", data={"csrf": "x", "name": "w01"}).status_code == 403


def test_two_tabs_of_one_worker_the_newer_takes_the_answers(workspace, tmp_path: Path):
    crowd_study(workspace.engine, tmp_path, train=2, test=3, gate_threshold=0.0)
    first, second = client(workspace.engine, "pilot"), client(workspace.engine, "pilot")
    old = first.post("/start", data={"csrf": csrf(first.get("/", params=prolific_query(3)))})
    new = second.post("/start", data={"csrf": csrf(second.get("/", params=prolific_query(3)))})
    assert screen(old) == screen(new) == "item"
    refused = first.post(
        "/answer", data={"csrf": csrf(old), "ticket": ticket(old), "answer": "entailment"}
    )
    assert screen(refused) == "continued" and "another window" in refused.text
    taken = second.post(
        "/answer", data={"csrf": csrf(new), "ticket": ticket(new), "answer": "not_entailment"}
    )
    assert screen(taken) == "feedback"
    assert [label.value for label in labels(workspace.engine, "pilot")] == ["not_entailment"]
    back = first.post("/reclaim", data={"csrf": csrf(old)})  # "continue here instead"
    assert screen(back) in ("guidelines", "item")


def test_a_tab_and_the_terminal_app_the_newer_window_takes_the_answers(workspace, tmp_path):
    from annotate.protocol.tokens import add_annotator_with_token
    from tests.web.support import layout_study

    study = layout_study(workspace.engine, tmp_path, "pair", test=2)
    _, token = add_annotator_with_token(workspace.engine, "ana")
    c = client(workspace.engine, study)
    form = csrf(c.get("/"))
    c.post("/signin", data={"csrf": form, "name": "ana", "token": token})
    page = c.post("/start", data={"csrf": form})
    terminal = AnnotatorSession.open(workspace.engine, study, "ana")
    terminal.claim_window("terminal")  # `annotate label` opened after the page
    refused = c.post("/answer", data={"csrf": form, "ticket": ticket(page), "answer": "entailment"})
    assert screen(refused) == "continued"
    assert labels(workspace.engine, study) == []
    item = terminal.next_item()
    assert item is not None and terminal.submit(item, "entailment") is not None
    assert re.search(r"another window", refused.text)
    assert ORIGIN.startswith("http://127.0.0.1")


def test_a_cookie_of_another_store_signs_nobody_in_though_the_secret_is_the_same(
    workspace, tmp_path: Path, monkeypatch
):
    """One ANNOTATE_WEB_SECRET for a lab's servers: a worker's cookie from a server of another
    store (where pseudonyms are numbered afresh) is not that store's worker of the same name."""
    from annotate.workspace import open_workspace

    monkeypatch.setenv("ANNOTATE_WEB_SECRET", "one key for every server of the lab")
    short_study(workspace.engine, tmp_path / "ours")
    victim = client(workspace.engine, "pilot")
    victim.get("/", params=prolific_query(1))  # w01 of our store
    assert screen(victim.get("/")) == "guidelines"
    same = client(workspace.engine, "pilot")  # another process serving our study
    same.cookies.update(victim.cookies)
    assert screen(same.get("/")) == "guidelines"
    other = open_workspace(f"sqlite:///{tmp_path / 'other.db'}", create=True)
    try:
        short_study(other.engine, tmp_path / "other")
        attacker = client(other.engine, "pilot")
        attacker.get("/", params=prolific_query(99))  # w01 of the other store
        page = attacker.get("/")
        assert screen(page) == "guidelines"
    finally:
        other.engine.dispose()
    replayed = client(workspace.engine, "pilot")
    replayed.cookies.update(attacker.cookies)
    assert screen(replayed.get("/")) == "link"  # not our w01: nobody, open your link
    assert screen(replayed.post("/start", data={"csrf": csrf(page)})) == "link"  # refused
    assert [label.annotator_id for label in labels(workspace.engine, "pilot")] == []
