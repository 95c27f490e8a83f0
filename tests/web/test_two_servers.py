"""Two `annotate serve` processes on one store serve one study: the page keeps nothing between
requests, so a worker's requests may alternate between them, and the engine's assignment still
gives every item exactly k annotators (no over-assignment), each at most once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from annotate.protocol.studies import add_annotator
from tests.integration.test_serve import free_port, get
from tests.web.support import labels, layout_study

pytestmark = pytest.mark.slow
httpx = pytest.importorskip("httpx")

START_TIMEOUT_S = 30
ANNOTATE = (sys.executable, "-m", "annotate")
K = 2
WORKERS = 6
ITEMS = 8


def start_server(
    db_url: str, study: str, secret: str | None, *extra: str
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ANNOTATE_WEB_SECRET"}
    if secret is not None:
        env["ANNOTATE_WEB_SECRET"] = secret
    proc = subprocess.Popen(
        [*ANNOTATE, "--db", db_url, "serve", study, "--port", str(port), "--no-tokens", *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"annotate serve exited: {proc.stderr.read().decode()}")
        try:
            if get(base + "/")[0] == 200:
                return proc, base
        except OSError:
            time.sleep(0.1)  # bounded polling for the server to come up
    pytest.fail("annotate serve did not answer in time")


def worker(name: str, bases: list[str], errors: list[str], *, fresh: bool = False) -> None:
    """Sign in on one server, then send each request to the other one in turn (`fresh`: on a
    new connection each, so one port's server processes share the requests)."""
    turn = 0

    def url(path: str) -> str:
        nonlocal turn
        turn += 1
        return bases[turn % len(bases)] + path

    try:
        limits = httpx.Limits(max_keepalive_connections=0) if fresh else httpx.Limits()
        with httpx.Client(timeout=30, limits=limits) as c:
            first = c.get(url("/"))
            csrf = re.search(r'name="csrf" value="([^"]+)"', first.text)[1]

            def post(path: str, data: dict) -> httpx.Response:
                base = bases[(turn + 1) % len(bases)]
                return c.post(url(path), data={"csrf": csrf, **data}, headers={"Origin": base})

            post("/signin", {"name": name})
            page = post("/start", {})
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                ticket = re.search(r'name="ticket" value="([^"]+)"', page.text)
                if ticket is not None:
                    page = post("/answer", {"ticket": ticket[1], "answer": "entailment"})
                elif 'data-screen="held"' in page.text:
                    # The items left are on others' screens for a moment: ask again, as the
                    # held screen does by itself (every poll_seconds; sooner here).
                    time.sleep(0.05)
                    page = c.get(url("/"))
                else:
                    break
            if 'data-screen="finished"' not in page.text:
                errors.append(f"{name} did not finish: {page.text[-300:]}")
    except Exception as exc:  # reported by the test, with the worker's name
        errors.append(f"{name}: {exc!r}")


def test_two_server_processes_on_one_store_never_over_assign(store_url: str, tmp_path: Path):
    """On SQLite (two processes, one host) and PostgreSQL (as two hosts would share it)."""
    run_workers(
        store_url,
        tmp_path,
        lambda db, study: [start_server(db, study, "one-secret-for-both") for _ in range(2)],
    )


def serve_workers_2(db: str, study: str) -> list[tuple[subprocess.Popen, str]]:
    """One `serve --workers 2` (no ANNOTATE_WEB_SECRET): its two processes on one port."""
    return [start_server(db, study, None, "--workers", "2")]


def test_serve_workers_runs_processes_on_one_port_that_act_as_one_server(tmp_path: Path):
    """`serve --workers 2` with no ANNOTATE_WEB_SECRET: both processes run, and workers whose
    every request is a new connection (spread over the processes by the kernel) all finish,
    so each process takes the others' cookies and the assignment holds."""
    children = run_workers(f"sqlite:///{tmp_path / 'w.db'}", tmp_path, serve_workers_2, fresh=True)
    assert not [pid for pid in children if Path(f"/proc/{pid}").exists()]  # stopped with it


@pytest.mark.postgres
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_serve_workers_reach_postgresql_on_their_machine_through_its_socket(
    store_url: str, tmp_path: Path
):
    """The URL the running guide gives for a server on the same machine (its socket's folder
    as `host`, no address): `serve --workers 2` and `check` take it, and every worker
    finishes with the assignment intact."""
    import psycopg

    from tests import pg

    local = pg.socket_url(store_url)
    assert "@/" in local and "127.0.0.1" not in local
    with psycopg.connect(local.replace("+psycopg", ""), connect_timeout=10) as conn:
        # no client address: the connection came through the Unix socket, not TCP
        assert conn.execute("SELECT inet_client_addr()").fetchone()[0] is None
    assert len(run_workers(local, tmp_path, serve_workers_2, fresh=True)) == 2


def server_processes(supervisor: int) -> list[int]:
    """The `--workers` processes under `supervisor` (uvicorn spawns them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmd = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == supervisor and b"spawn_main" in cmd:
                found.append(int(entry.name))
    return found


def run_workers(store_url: str, tmp_path: Path, start, *, fresh: bool = False) -> list[int]:
    """WORKERS workers label a k=2 study on the servers `start` gives; the `--workers`
    processes seen (with `fresh`)."""
    from annotate.workspace import open_workspace

    workspace = open_workspace(store_url, create=True)
    study = layout_study(
        workspace.engine,
        tmp_path,
        "pair",
        test=ITEMS,
        training_items=0,
        annotators_per_item=K,
    )
    for n in range(WORKERS):
        add_annotator(workspace.engine, f"w{n}")
    servers = start(store_url, study)
    try:
        children = server_processes(servers[0][0].pid)
        if fresh:  # one port: its server processes are all up before the workers come
            assert len(children) == 2
        errors: list[str] = []
        bases = [b for _, b in servers]
        threads = [
            threading.Thread(target=worker, args=(f"w{n}", bases, errors), kwargs={"fresh": fresh})
            for n in range(WORKERS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == []
    finally:
        for proc, _ in servers:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
    test = [label for label in labels(workspace.engine, study) if label.phase == "test"]
    per_item = Counter(label.item_id for label in test)
    assert len(per_item) == ITEMS and set(per_item.values()) == {K}
    assert len({(label.item_id, label.annotator_id) for label in test}) == len(test)
    workspace.engine.dispose()
    check = subprocess.run([*ANNOTATE, "--db", store_url, "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    return children


def listening_sockets(port: int) -> int:
    """Listening TCP sockets on `port` (Linux /proc/net/tcp: state 0A)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for r in rows if r.split()[1].endswith(f":{port:04X}") and r.split()[3] == "0A")


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


@pytest.mark.skipif(sys.platform != "linux", reason="only Linux spreads SO_REUSEPORT's connections")
def test_serve_workers_spreads_connections_opened_at_once_over_its_processes(tmp_path: Path):
    """Connections opened in the same instant (a crowd's burst) reach both `--workers`
    processes, each on its own listening socket; and a second server on the port is refused
    rather than joining them."""
    import socket

    from annotate.workspace import open_workspace

    workspace = open_workspace(f"sqlite:///{tmp_path / 'w.db'}", create=True)
    study = layout_study(workspace.engine, tmp_path, "pair", test=2, training_items=0)
    workspace.engine.dispose()
    db = f"sqlite:///{tmp_path / 'w.db'}"
    proc, base = start_server(db, study, None, "--workers", "2")
    port = int(base.rsplit(":", 1)[1])
    connections: list[socket.socket] = []
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while listening_sockets(port) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # bounded polling for the second process to listen
        assert listening_sockets(port) == 2  # one socket per process, none shared
        connections = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
        for c in connections:
            c.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        for c in connections:
            assert c.recv(12).startswith(b"HTTP/1.1 200")  # accepted and answered
        rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
        served = {  # the server ends of the 16 connections
            r.split()[9]
            for r in rows
            if r.split()[1].endswith(f":{port:04X}") and r.split()[3] == "01"
        }
        per_process = [len(served & socket_inodes(pid)) for pid in server_processes(proc.pid)]
        assert sorted(per_process)[0] > 0 and sum(per_process) == 16, per_process
        second = subprocess.run(
            [*ANNOTATE, "--db", db, "serve", study, "--port", str(port), "--no-tokens"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode != 0 and "already in use" in second.stderr
    finally:
        for c in connections:
            c.close()
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
