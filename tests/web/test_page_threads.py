"""How many store calls a page process runs at once on SQLite, and where: one at a time on its
event loop where the store's disk syncs quickly (threads of a process hand Python's lock back
and forth at every statement, which costs more than grouping their commits saves, and handing
each call to a thread and back costs more than the loop gains meanwhile), four on threads where
it syncs slowly (their answers share commits), as many as ANNOTATE_SQLITE_THREADS says where it
is set (0: on the loop)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from annotate.protocol.studies import add_annotator
from tests.engine_helpers import disk_syncing_in
from tests.web.support import labels, layout_study
from tests.web.test_page import client, screen, signed_in, ticket

LOOP = "the event loop"


def calls_at_once(page, calls: int, together: int) -> set[int | str]:
    """Run `calls` store calls at once as the page runs them, each waiting (at most a second)
    for `together` of them to be running; the threads that ran them (LOOP: the event loop's
    own)."""
    meeting = threading.Barrier(together, timeout=1)
    loop_thread: list[int] = []

    def call() -> int | str:
        meeting.wait()
        ident = threading.get_ident()
        return LOOP if ident in loop_thread else ident

    async def run_all() -> list[int | str]:
        loop_thread.append(threading.get_ident())
        return await asyncio.gather(*(page.run(call) for _ in range(calls)))

    return set(asyncio.run(run_all()))


def test_a_page_process_runs_its_store_calls_on_its_event_loop_on_a_disk_that_syncs_quickly(
    workspace, tmp_path, monkeypatch
):
    disk_syncing_in(monkeypatch, 0.0003)  # a local SSD
    layout_study(workspace.engine, tmp_path, "pair", test=3)
    page = client(workspace.engine, "pair").app.state.page
    assert calls_at_once(page, 3, 1) == {LOOP}  # one after the other, no thread
    with pytest.raises(threading.BrokenBarrierError):
        calls_at_once(page, 2, 2)  # the second never runs while the first waits for it
    assert page.threads is None
    page.shutdown()


def test_the_page_on_its_event_loop_stores_answers_and_shows_the_next_item(
    workspace, tmp_path, monkeypatch
):
    """The whole page with no thread for the store: training with its feedback, then every
    test item, each answer stored before the next screen."""
    disk_syncing_in(monkeypatch, 0.0003)
    study = layout_study(workspace.engine, tmp_path, "pair", test=3)
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, study, require_tokens=False)
    page = c.app.state.page
    token = signed_in(c)
    shown = c.get("/")
    assert "Training" in shown.text
    feedback = c.post(
        "/answer", data={"csrf": token, "ticket": ticket(shown), "answer": "entailment"}
    )
    assert screen(feedback) == "feedback"
    for answered in range(1, 4):
        shown = c.get("/")
        assert screen(shown) == "item" and "Test" in shown.text
        c.post("/answer", data={"csrf": token, "ticket": ticket(shown), "answer": "entailment"})
        assert len([x for x in labels(workspace.engine, study) if x.phase == "test"]) == answered
    assert screen(c.get("/")) != "item"  # the batch is done
    assert page.threads is None  # no thread was ever made


def test_sqlite_threads_lets_a_page_process_run_that_many_store_calls_at_once(
    workspace, tmp_path, monkeypatch
):
    monkeypatch.setenv("ANNOTATE_SQLITE_THREADS", "3")
    layout_study(workspace.engine, tmp_path, "pair", test=3)
    page = client(workspace.engine, "pair").app.state.page
    assert len(calls_at_once(page, 3, 3)) == 3  # all three running together
    page.shutdown()


def test_a_page_process_on_a_disk_that_syncs_slowly_runs_four_store_calls_at_once(
    workspace, tmp_path, monkeypatch
):
    disk_syncing_in(monkeypatch, 0.002)
    layout_study(workspace.engine, tmp_path, "pair", test=3)
    page = client(workspace.engine, "pair").app.state.page
    assert len(calls_at_once(page, 4, 4)) == 4  # four running together: their commits group
    with pytest.raises(threading.BrokenBarrierError):
        calls_at_once(page, 5, 5)  # not five
    page.shutdown()


def test_sqlite_threads_decides_whatever_the_disk(workspace, tmp_path, monkeypatch):
    disk_syncing_in(monkeypatch, 0.002)
    monkeypatch.setenv("ANNOTATE_SQLITE_THREADS", "1")
    layout_study(workspace.engine, tmp_path, "pair", test=3)
    page = client(workspace.engine, "pair").app.state.page
    ran_on = calls_at_once(page, 2, 1)
    assert len(ran_on) == 1 and LOOP not in ran_on  # one thread, not the loop
    with pytest.raises(threading.BrokenBarrierError):
        calls_at_once(page, 2, 2)
    page.shutdown()


def test_sqlite_threads_zero_has_the_event_loop_make_the_store_calls_whatever_the_disk(
    workspace, tmp_path, monkeypatch
):
    disk_syncing_in(monkeypatch, 0.002)
    monkeypatch.setenv("ANNOTATE_SQLITE_THREADS", "0")
    layout_study(workspace.engine, tmp_path, "pair", test=3)
    page = client(workspace.engine, "pair").app.state.page
    assert calls_at_once(page, 2, 1) == {LOOP}
    page.shutdown()


@pytest.mark.parametrize("value", ["-1", "65", "four"])
def test_a_thread_count_that_makes_no_sense_is_refused_naming_the_variable(value, monkeypatch):
    from annotate.errors import UserError
    from annotate.settings import settings

    monkeypatch.setenv("ANNOTATE_SQLITE_THREADS", value)
    with pytest.raises(UserError, match=f"ANNOTATE_SQLITE_THREADS='{value}'"):
        settings()
