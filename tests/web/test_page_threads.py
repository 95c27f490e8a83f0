"""How many store calls a page process runs at once on SQLite: one where the store's disk syncs
quickly (two threads of a process hand Python's lock back and forth at every statement, which
costs more than grouping their commits saves), four where it syncs slowly (their answers share
commits), as many as ANNOTATE_SQLITE_THREADS says where it is set."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.engine_helpers import disk_syncing_in
from tests.web.support import layout_study
from tests.web.test_page import client


def calls_at_once(page, calls: int, together: int) -> set[int]:
    """Run `calls` store calls at once on the page's threads, each waiting (at most a second)
    for `together` of them to be running; the threads that ran them."""
    meeting = threading.Barrier(together, timeout=1)

    def call() -> int:
        meeting.wait()
        return threading.get_ident()

    async def run_all() -> list[int]:
        return await asyncio.gather(*(page.run(call) for _ in range(calls)))

    return set(asyncio.run(run_all()))


def test_a_page_process_runs_one_store_call_at_a_time_on_a_disk_that_syncs_quickly(
    workspace, tmp_path, monkeypatch
):
    disk_syncing_in(monkeypatch, 0.0003)  # a local SSD
    layout_study(workspace.engine, tmp_path, "pair", test=3)
    page = client(workspace.engine, "pair").app.state.page
    assert len(calls_at_once(page, 3, 1)) == 1  # one after the other, on one thread
    with pytest.raises(threading.BrokenBarrierError):
        calls_at_once(page, 2, 2)  # the second never runs while the first waits for it
    page.shutdown()


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
    with pytest.raises(threading.BrokenBarrierError):
        calls_at_once(page, 2, 2)
    page.shutdown()


@pytest.mark.parametrize("value", ["0", "65", "four"])
def test_a_thread_count_that_makes_no_sense_is_refused_naming_the_variable(value, monkeypatch):
    from annotate.errors import UserError
    from annotate.settings import settings

    monkeypatch.setenv("ANNOTATE_SQLITE_THREADS", value)
    with pytest.raises(UserError, match=f"ANNOTATE_SQLITE_THREADS='{value}'"):
        settings()
