"""29.3: a browser tab is bounded. A 1 MiB websocket frame or a 3000x3000 resize costs the
server nothing lasting (the tab's app process stays small and is gone once the tab is), 50
quick connect/close cycles leave no orphan and a new tab is served within 2 s, and past
--max-sessions the page is told why."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.integration.test_serve import GUIDELINES, read_screen_until, serve, served_study  # noqa: F401

pytestmark = pytest.mark.slow
RSS_LIMIT_KB = 400 * 1024
"""A tab's app process (Python, Textual, SQLAlchemy) stays well under 400 MB."""


def group_of(base: str) -> int:
    """The process group of the `annotate serve` listening on `base`'s port."""
    port = str(urlsplit(base).port)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in args and port.encode() in args:
            return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[2])
    raise AssertionError("no annotate serve process")


def apps_in(group: int, server_pid_group: int) -> list[tuple[int, int]]:
    """(pid, RSS in kB) of the processes in the server's group other than the server."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == server_pid_group:
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            status = (proc / "status").read_text()
        except OSError:
            continue
        if int(fields[2]) != group or fields[0] == "Z":
            continue
        rss = next(
            (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS")), 0
        )
        found.append((int(proc.name), rss))
    return found


async def wait_for_no_apps(group: int, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while apps_in(group, group):
        assert time.monotonic() < deadline, f"orphan app processes: {apps_in(group, group)}"
        await asyncio.sleep(0.1)  # bounded polling for the processes to end


def ws_url(base: str, width: int = 100, height: int = 30) -> str:
    return base.replace("http", "ws") + f"/ws?width={width}&height={height}"


async def test_a_huge_frame_and_a_huge_resize_leave_nothing_behind(serve):  # noqa: F811
    import aiohttp

    base = serve("--as", "ana")
    group = group_of(base)
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(ws_url(base), origin=base) as ws:
            await read_screen_until(ws, GUIDELINES)
            await ws.send_str('["stdin", "' + "x" * (1024 * 1024) + '"]')
            message = await ws.receive(timeout=10)
            assert message.type.name in ("CLOSE", "CLOSED", "CLOSING")
        for _, rss in apps_in(group, group):
            assert rss < RSS_LIMIT_KB
        await wait_for_no_apps(group)

        async with http.ws_connect(ws_url(base, 3000, 3000), origin=base) as ws:
            await read_screen_until(ws, GUIDELINES)
            await ws.send_json(["resize", {"width": 3000, "height": 3000}])
            await asyncio.sleep(0.5)  # let the app draw at the capped size
            assert all(rss < RSS_LIMIT_KB for _, rss in apps_in(group, group))
        await wait_for_no_apps(group)


async def test_quick_cycles_leave_no_orphan_and_a_new_tab_is_served_at_once(serve):  # noqa: F811
    import aiohttp

    base = serve("--as", "ana", "--max-sessions", "3")
    group = group_of(base)
    async with aiohttp.ClientSession() as http:

        async def time_to_a_tab() -> float:
            started = time.monotonic()
            async with http.ws_connect(ws_url(base), origin=base) as ws:
                await read_screen_until(ws, GUIDELINES, timeout=30)
            return time.monotonic() - started

        fresh = await time_to_a_tab()  # a tab on this machine now, before any cycle
        await wait_for_no_apps(group, seconds=15)
        for _ in range(50):
            ws = await http.ws_connect(ws_url(base), origin=base)
            await ws.close()
        after = await time_to_a_tab()
    # Within 2 s, as a tab of a fresh server is (the lock-out was 10-60 s); on a machine so
    # loaded that starting the app alone takes longer, within 1.5 times that.
    assert after < max(2.0, 1.5 * fresh), f"{after:.1f} s after the cycles, {fresh:.1f} s before"
    await wait_for_no_apps(group, seconds=15)


async def test_past_max_sessions_the_page_is_told_why(serve):  # noqa: F811
    import aiohttp

    base = serve("--as", "ana", "--max-sessions", "1")
    async with aiohttp.ClientSession() as http:
        first = await http.ws_connect(ws_url(base), origin=base)
        await read_screen_until(first, GUIDELINES)
        async with http.ws_connect(ws_url(base), origin=base) as second:
            message = await second.receive(timeout=10)
            assert message.type.name == "CLOSE" and message.data == 4503
            assert "1 pages are open already" in message.extra
        await first.close()
