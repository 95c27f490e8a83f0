"""The next training item comes with the feedback before it: "continue" shows it with no
request (page.js), and its answer time starts when it was shown, not when the feedback was
(Starlette's test client here; Chromium in test_page_browser.py)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from annotate.protocol.studies import add_annotator
from tests.web.support import labels, layout_study
from tests.web.test_page import client, screen, signed_in, ticket

pytest.importorskip("starlette")


@pytest.fixture
def three_training(workspace, tmp_path: Path) -> str:
    return layout_study(workspace.engine, tmp_path, "pair", test=2, training=3)


def ready_screen(response, phase: str = "training") -> str:
    """The screen ready in the feedback's <template>: an item of `phase`."""
    ready = re.search(r'<template id="upcoming">(.*?)</template>', response.text, re.S)
    assert ready is not None, "the feedback came without the next item"
    assert 'data-screen="item"' in ready[1] and f'data-phase="{phase}"' in ready[1]
    return ready[1]


def ready_ticket(response, phase: str = "training") -> str:
    return re.search(r'name="ticket" value="([^"]+)"', ready_screen(response, phase))[1]


def ana_on(workspace, study: str):
    """Ana signed in on the study's page: the client and the page's CSRF token."""
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    return c, signed_in(c)


def answer(c, token: str, ticket_value: str, **extra: str):
    """The answer "entailment" to the item the ticket names (`extra`: more form fields)."""
    form = {"csrf": token, "ticket": ticket_value, "answer": "entailment", **extra}
    return c.post("/answer", data=form)


def premise(html: str) -> str:
    return re.search(r'id="field-premise".*?</div>\s*</div>', html, re.S)[0]


def test_the_next_training_item_is_ready_in_the_feedback_and_its_time_starts_when_shown(
    workspace, three_training, monkeypatch
):
    c, token = ana_on(workspace, three_training)
    first = c.get("/")
    feedback = answer(c, token, ticket(first))
    assert screen(feedback) == "feedback"
    ready = ready_ticket(feedback)
    # The annotator read the feedback for 2.5 s, pressed "continue" (page.js counts the
    # 2.5 s) and answered the item 0.5 s later: the answer arrives 3 s on.
    from annotate.web.page import preamble

    now = preamble.utcnow
    monkeypatch.setattr(preamble, "utcnow", lambda: now() + timedelta(seconds=3))
    answer(c, token, ready, shown_after_ms="2500")
    first_label, second = labels(workspace.engine, three_training)
    assert second.item_id != first_label.item_id
    # Served with the feedback (as the first answer was stored), shown 2.5 s later: its
    # answer took 0.5 s, not the 3 s since the feedback.
    assert second.shown_at - first_label.answered_at >= timedelta(milliseconds=2500)
    assert timedelta(0) < second.answered_at - second.shown_at <= timedelta(milliseconds=600)


@pytest.mark.parametrize("after", ["", "abc", "-40", "1e9", "99999999999"])
def test_a_page_count_that_is_not_a_plain_number_of_milliseconds_moves_nothing(
    workspace, three_training, after
):
    c, token = ana_on(workspace, three_training)
    feedback = answer(c, token, ticket(c.get("/")))
    answer(c, token, ready_ticket(feedback), shown_after_ms=after)
    first_label, second = labels(workspace.engine, three_training)
    # Shown when it was served: the first answer's time (within this request's few ms).
    assert second.shown_at - first_label.answered_at < timedelta(seconds=1)


def test_a_count_past_the_answer_stops_at_the_answer_and_other_tickets_ignore_it(
    workspace, three_training
):
    c, token = ana_on(workspace, three_training)
    # An item the server showed (no feedback before it): the page's count is not asked for.
    shown = c.get("/")
    feedback = answer(c, token, ticket(shown), shown_after_ms="5000")
    answer(c, token, ready_ticket(feedback), shown_after_ms="86400000")
    first_label, second = labels(workspace.engine, three_training)
    assert first_label.answered_at - first_label.shown_at < timedelta(seconds=5)
    assert second.shown_at == second.answered_at  # a day later is capped at the answer


def test_what_is_ready_is_what_the_server_shows_on_continue_up_to_the_first_test_item(
    workspace, three_training
):
    """Each feedback has the next item ready, and "continue" without the script asks the
    server, which shows that same item: the next training item, and after the answer that
    passes the gate, the first test item (leased with that answer, so the server's
    "continue" shows the item the annotator holds)."""
    c, token = ana_on(workspace, three_training)
    item = c.get("/")
    for n in (1, 2, 3):
        assert f"Training {n - 1}/3" in item.text  # the answers given so far
        feedback = answer(c, token, ticket(item))
        assert screen(feedback) == "feedback"
        ready = ready_screen(feedback, "training" if n < 3 else "test")
        asked = c.get("/screen?next=1")
        assert premise(ready) == premise(asked.text)
        assert (
            re.search(r'status-text">([^<]*)', ready)[1]
            == (re.search(r'status-text">([^<]*)', asked.text)[1])
        )
        item = asked
    assert screen(item) == "item" and "Test" in item.text
    assert "Test phase: from now on there is no feedback." in item.text
    # The ready test item's answer is stored, and the next test item follows.
    following = answer(c, token, ready_ticket(feedback, "test"))
    assert screen(following) == "item" and "Test 1/" in following.text
    phases = [label.phase for label in labels(workspace.engine, three_training)]
    assert phases == ["training"] * 3 + ["test"]


def test_a_gate_that_does_not_decide_at_the_last_answer_leaves_continue_to_the_server(
    workspace, tmp_path
):
    """The median rule decides when the researcher closes training: the last training
    feedback has nothing ready, and "continue" shows the waiting screen."""
    study = layout_study(workspace.engine, tmp_path, "pair", test=2, training=2, gate_rule="median")
    c, token = ana_on(workspace, study)
    item = c.get("/")
    feedback = answer(c, token, ticket(item))
    item = c.get("/screen?next=1")
    feedback = answer(c, token, ticket(item))
    assert screen(feedback) == "feedback" and '<template id="upcoming">' not in feedback.text
    again = c.get("/")  # a reload on this feedback shows it again, storing nothing more
    assert screen(again) == "feedback" and "Right answer" in again.text
    assert len(labels(workspace.engine, study)) == 2
    assert screen(c.get("/screen?next=1")) == "waiting"


def test_a_reload_after_a_feedback_with_the_next_item_shows_that_item(workspace, three_training):
    """ "Continue" showed the ready item with no request: a reload (or a second tab) shows
    that item, not the feedback before it."""
    c, token = ana_on(workspace, three_training)
    feedback = answer(c, token, ticket(c.get("/")))
    reloaded = c.get("/")
    assert screen(reloaded) == "item"
    assert premise(reloaded.text) == premise(ready_screen(feedback))
