"""The annotator page under a crowd, measured from outside: `annotate serve` (uvicorn) on
SQLite, and simulated workers, each an async HTTP client that follows the page's own requests.

Two scenarios (`--scenario`):

crowd (the default; issue 38): the crowd's real path, request by request (bench/crowd_path.py):
Prolific link, consent, guidelines, training items with feedback, the gate, a test batch, the
exit survey and the code. Beside it in the same run, on a copy of the same store, the named
baseline: a bare Starlette page (bench/bare_page.py) that stores each answer with one insert
and shows the next item with one select, with the same durability (synchronous=FULL).
- paced: workers arriving over `--ramp` s, one answer per `--pace` s +- `--pace-spread`; per
  phase (arrival: link to first item; training answer to next item, feedback included; test
  answer to next item; exit: survey to code) p50/p99, answers/s, workers that reached the test
  batch and their code, server CPU per request and per answer, RSS, against the bare page;
  and the server CPU per test answer once every worker is at the test items (the crowd at its
  own pace, nobody arriving or training: what the whole run's figure adds those to);
- phase by phase: `--burst` workers arriving at once (first item p50/p99, the arrival burst),
  then all training, all testing, all leaving, as fast as the page answers, with the server's
  CPU per request of each phase: what an arrival, a training answer, a test answer and an exit
  cost, against the bare page's arrival and answer;
- invariants: at most k labels per item, distinct annotators, acknowledged = stored, `annotate
  check` clean, no arrival refused.

- `--postgres`: the same crowd on annotate over PostgreSQL (a throwaway server as in
  production: fsync and synchronous_commit on; tests/pg.py; the page connects through its
  Unix socket, as to a server on the same machine), after the SQLite runs, in the
  same session: latencies, answers/s and server CPU per answer (PostgreSQL's processes
  included, and annotate's processes alone) against annotate on SQLite.

- `--sync-delay-ms MS`: annotate and the bare page (SQLite) as on a slower disk, each sync
  held MS longer by strace's fault injection (needs strace): what a disk that syncs in
  milliseconds does to each, and whether annotate's grouped commits (store/sync_speed.py,
  store/group_commit.py) beat one commit per answer there.

- `--rounds N`: all of the above N times, alternating (annotate, the bare page, PostgreSQL;
  then again), each round on a fresh copy of the store, and then each figure's median over
  the rounds beside every round's value (bench/rounds.py): on a shared machine one run's
  ratios move by a tenth or more from one run to the next.

    python -m bench.bench_web [--workers 100] [--seconds 20] [--burst 100] [--server-workers N]
        [--postgres | --sync-delay-ms MS] [--rounds N]

signed-in (today's, issue 23): workers who sign in by name, already admitted, straight to test
items (no consent, no training): it measures the answer loop alone.

Runs, in one go:
- 50, 200 and 1,000 workers at a human pace of one answer per 5 s on average, arriving at
  random over `--ramp` seconds (one pace by default): labels stored, p50/p99 from answer to next item (all
  answers; those sent while workers were still arriving; in the pace after the last arrival,
  when the answers the arrivals held up come back as a wave; and after that, every worker at
  their own pace), the server's CPU per answer and its RSS (and per worker). A person does
  not answer on a metronome: each worker's time on an item is drawn from 5 s +- 50%
  (`--pace-spread 0.5`); `--pace-spread 0` makes every worker take exactly 5 s, which keeps
  the workers that one slow moment lined up answering together for the rest of the run;
- an arrival burst: 100 workers opening the page at once, p99 time to the first item;
- flat out: 8 workers answering as fast as the server allows, labels/s, against the engine
  alone (bench_concurrency's `submit_and_next` loop, 5 processes) in the same run: on a new
  server and a new store built as the engine's (the ratio), and on the server and store of
  the runs above, where the crowd left a thousand leases that the next-item query walks past;
- the terminal app through textual-serve (`serve --terminal`) with 20 tabs opened at once:
  time to the first screen, and RSS of the server with its tab processes;
- invariants after all runs: every item has at most k labels from distinct annotators, every
  answer the server acknowledged is stored (none lost), and `annotate check` is clean.

Targets (issue 23): 1,000 workers with p99 <= 100 ms and RSS <= 300 MB; burst p99 <= 1 s;
flat out >= 50% of the engine-only labels/s.

    python -m bench.bench_web --scenario signed-in [--seconds 20] [--workers 50 200 1000]
        [--terminal-tabs 20] [--server-workers N] [--ramp SECONDS] [--pace-spread FRACTION]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import print_rows, run_client
from bench.rounds import cpu_per_answer, phase_cpu
from bench.store_builder import build_study

ANNOTATE = (sys.executable, "-m", "annotate")
K = 5
PACE_S = 5.0
PACE_SPREAD = 0.5
"""A worker's time on an item: PACE_S +- this fraction of it, uniformly (mean PACE_S)."""
TICKET = re.compile(r'name="ticket" value="([^"]+)"')
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
ANSWERS = ("entailment", "not_entailment")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_tree(pid: int) -> list[int]:
    """`pid` and all its descendants (uvicorn's worker processes, textual-serve's tabs)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


def rss_mb(pid: int) -> float:
    """Resident memory of `pid` and all its descendants."""
    total = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def cpu_seconds(pid: int, reaped: bool = False) -> float:
    """CPU time (user and system) used so far by `pid` and all its descendants: the server's
    cost per answer, which a loaded machine inflates far less than it does latencies.
    `reaped`: with that of the descendants that have ended (PostgreSQL's backends, one per
    connection, end when their connection closes)."""
    total = 0
    for p in process_tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
        if reaped and p == pid:
            total += int(fields[13]) + int(fields[14])
    return total / os.sysconf("SC_CLK_TCK")


@dataclass
class Server:
    proc: subprocess.Popen
    base: str
    traced: bool = False
    """Run under strace (`slowed`): the server is strace's child."""

    @property
    def pid(self) -> int:
        """The server's own process, whose tree's CPU and memory are measured (not strace's)."""
        if not self.traced:
            return self.proc.pid
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text()
        return int(children.split()[0])

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def slowed(command: list[str], sync_delay_ms: float) -> list[str]:
    """`command` as on a disk whose every sync takes `sync_delay_ms` longer: strace's fault
    injection holds each fsync and fdatasync of the process and its children that long on its
    way back (seccomp-bpf: no other system call stops; about 0.05 ms more each, measured). The
    same for annotate and the bare page, so a run shows what a slower disk does to each."""
    if not sync_delay_ms:
        return command
    inject = f"inject=fsync,fdatasync:delay_exit={round(sync_delay_ms * 1000)}"
    return [
        *("strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=fsync,fdatasync", "-e", inject),
        *("-o", os.devnull, *command),
    ]


def start_server(db: str, study: str, *extra: str, sync_delay_ms: float = 0.0) -> Server:
    import httpx

    port = free_port()
    command = [*ANNOTATE, "--db", db, "serve", study, "--port", str(port), "--no-tokens", *extra]
    proc = subprocess.Popen(
        slowed(command, sync_delay_ms),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/", timeout=5).status_code == 200:
                return Server(proc, base, bool(sync_delay_ms))
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("annotate serve did not start")


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    """Seconds from sending an answer to having the next item."""
    sent_at: list[float] = field(default_factory=list)
    """When each of those answers was sent (monotonic clock)."""
    all_arrived: float | None = None
    """When the last worker of a paced run had its first item (monotonic clock)."""
    first_item: list[float] = field(default_factory=list)
    stored: int = 0
    """Answers the server acknowledged (it sent the next screen after committing them)."""
    errors: list[str] = field(default_factory=list)

    def sent_between(self, start: float, end: float = float("inf")) -> list[float]:
        """The latencies of answers sent from `start` to `end`, in seconds after the last
        worker of a paced run had arrived (negative: before)."""
        arrived = self.all_arrived if self.all_arrived is not None else float("inf")
        return [
            s
            for s, t in zip(self.latencies, self.sent_at, strict=True)
            if start <= t - arrived < end
        ]

    def arriving(self) -> list[float]:
        """Answers sent while workers were still arriving."""
        return self.sent_between(-float("inf"), 0.0)

    def settling(self, pace: float) -> list[float]:
        """Answers sent in the pace after the last arrival: the next answers of the workers
        whose first items the arrivals held up come in a wave."""
        return self.sent_between(0.0, pace)

    def held(self, pace: float) -> list[float]:
        """Answers sent once that wave had passed: the crowd at its own pace."""
        return self.sent_between(pace)

    def pct(self, values: list[float], q: float) -> float:
        ordered = sorted(values) or [0.0]
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


class Worker:
    """One simulated browser: its own aiohttp session (cookie jar, so its own signed session
    cookie and CSRF token) on its own keep-alive connection. aiohttp rather than httpx: a
    shared httpx pool scans every connection on each request (quadratic in the workers; at
    1,000 workers the client, not the server, was the bottleneck), and an httpx client per
    worker costs an SSL context each."""

    def __init__(self, base: str, name: str) -> None:
        import aiohttp

        self.name = name
        self.base = base
        self.http = aiohttp.ClientSession(
            base_url=base,
            headers={"Origin": base, "HX-Request": "true"},
            cookie_jar=aiohttp.CookieJar(unsafe=True),  # the server is an IP address
            connector=aiohttp.TCPConnector(limit=1),
            timeout=aiohttp.ClientTimeout(total=120),
        )
        self.csrf = ""
        self.page = ""

    async def post(self, path: str, data: dict[str, str]) -> str:
        import aiohttp

        for attempt in (1, 2):
            try:
                async with self.http.post(path, data={"csrf": self.csrf, **data}) as response:
                    response.raise_for_status()
                    return await response.text()
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                # A kept-alive connection the server closed as the request went out: a
                # browser sends it again on a new connection (the engine is idempotent).
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def arrive(self, tally: Tally) -> None:
        """Open the page and get to the first item, as a browser does."""
        t0 = time.perf_counter()
        async with self.http.get("/") as first:
            self.csrf = CSRF.search(await first.text())[1]
        await self.post("/signin", {"name": self.name})
        self.page = await self.post("/start", {})
        tally.first_item.append(time.perf_counter() - t0)

    async def answer(self, tally: Tally) -> bool:
        ticket = TICKET.search(self.page)
        if ticket is None:
            return False
        t0 = time.perf_counter()
        self.page = await self.post(
            "/answer", {"ticket": ticket[1], "answer": random.choice(ANSWERS)}
        )
        tally.latencies.append(time.perf_counter() - t0)
        tally.sent_at.append(time.monotonic() - (time.perf_counter() - t0))
        tally.stored += 1
        return True

    async def close(self) -> None:
        await self.http.close()


async def paced(
    base: str,
    names: list[str],
    seconds: float,
    pace: float,
    ramp: float | None = None,
    spread: float = PACE_SPREAD,
) -> Tally:
    """Workers arriving at random over `ramp` seconds (one pace interval unless given), then
    each taking `pace` seconds +- `spread` (a fraction of it, uniformly) on every item, until
    `seconds` after the start."""
    tally = Tally()
    end = time.monotonic() + seconds
    arrived = 0

    async def one(name: str) -> None:
        nonlocal arrived
        worker = Worker(base, name)
        try:
            await asyncio.sleep(random.uniform(0, pace if ramp is None else ramp))
            await worker.arrive(tally)
            arrived += 1
            if arrived == len(names):
                tally.all_arrived = time.monotonic()
            while time.monotonic() < end:
                await asyncio.sleep(pace * random.uniform(1 - spread, 1 + spread))
                if not await worker.answer(tally):
                    break
        except Exception as exc:  # counted and shown, the run goes on
            tally.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            await worker.close()

    await asyncio.gather(*(one(n) for n in names))
    return tally


async def burst(base: str, names: list[str]) -> Tally:
    tally = Tally()
    workers = [Worker(base, n) for n in names]
    results = await asyncio.gather(*(w.arrive(tally) for w in workers), return_exceptions=True)
    tally.errors += [repr(r) for r in results if isinstance(r, Exception)]
    await asyncio.gather(*(w.close() for w in workers))
    return tally


async def flat_out(base: str, names: list[str], seconds: float) -> Tally:
    tally = Tally()
    end = time.monotonic() + seconds

    async def one(name: str) -> None:
        worker = Worker(base, name)
        try:
            await worker.arrive(tally)
            while time.monotonic() < end and await worker.answer(tally):
                pass
        except Exception as exc:
            tally.errors.append(repr(exc))
        finally:
            await worker.close()

    await asyncio.gather(*(one(n) for n in names))
    return tally


async def terminal_tabs(base: str, tabs: int) -> tuple[list[float], int]:
    """Open `tabs` textual-serve websockets at once; seconds until each shows its sign-in."""
    import aiohttp

    times: list[float] = []
    failed = 0

    async def one(http: aiohttp.ClientSession) -> None:
        nonlocal failed
        t0 = time.perf_counter()
        try:
            url = base.replace("http", "ws") + "/ws?width=100&height=30"
            async with http.ws_connect(url, origin=base) as ws:
                seen = ""
                while "Sign in to study" not in seen:
                    msg = await ws.receive(timeout=300)
                    if msg.type.name != "BINARY":
                        raise RuntimeError(f"websocket {msg.type.name}")
                    seen += msg.data.decode("utf-8", errors="replace")
                times.append(time.perf_counter() - t0)
                await asyncio.sleep(2)  # every tab open at once when RSS is read
        except Exception:
            failed += 1

    async with aiohttp.ClientSession() as http:
        await asyncio.gather(*(one(http) for _ in range(tabs)))
    return times, failed


def invariants(engine, study: str, acknowledged: int, db: str) -> list[tuple[str, str]]:
    from sqlalchemy import text

    with engine.connect() as conn:
        most, repeats = conn.execute(
            text(
                "SELECT max(n), max(n - d) FROM (SELECT count(*) AS n, count(DISTINCT "
                "l.annotator_id) AS d FROM label l JOIN study s ON s.id = l.study_id WHERE "
                "s.name = :s AND l.phase = 'test' GROUP BY l.item_id) AS t"
            ),
            {"s": study},
        ).one()
        stored = conn.execute(
            text(
                "SELECT count(*) FROM label l JOIN study s ON s.id = l.study_id "
                "WHERE s.name = :s AND l.phase = 'test'"
            ),
            {"s": study},
        ).scalar()
    check = subprocess.run(
        [sys.executable, "-m", "annotate", "--db", db, "check"], capture_output=True, text=True
    )
    return [
        (
            f"every item <= {K} labels, distinct annotators",
            f"{'yes' if (most or 0) <= K and not repeats else 'NO'} (most {most})",
        ),
        (
            "no lost label (acknowledged = stored)",
            f"{'yes' if stored == acknowledged else 'NO'} ({acknowledged:,} / {stored:,})",
        ),
        ("annotate check", "clean" if check.returncode == 0 else "NOT CLEAN"),
    ]


def fresh_flat_out(
    folder: Path, args: argparse.Namespace, extra: tuple[str, ...]
) -> tuple[Tally, float, list[tuple[str, str]]]:
    """Flat out on a new server and a new store built as the engine's: the tally, the
    server's CPU seconds, and the invariants of that store."""
    study = "flat"
    db = str(folder / "flat.db")
    engine = build_study(db, args.items, k=K, annotators=args.flat_workers, name=study)
    server = start_server(db, study, *extra)
    try:
        cpu = cpu_seconds(server.pid)
        names = [f"{study}-a{i}" for i in range(args.flat_workers)]
        tally = run_client(flat_out(server.base, names, args.flat_seconds))
        cpu = cpu_seconds(server.pid) - cpu
    finally:
        server.stop()
    rows = invariants(engine, study, tally.stored, db)
    engine.dispose()
    return tally, cpu, rows


def engine_only(folder: Path, seconds: float) -> float:
    """bench_concurrency's figure: 5 processes looping submit_and_next, labels/s."""
    from bench.bench_concurrency import run_sessions

    study = "engine"
    engine = build_study(str(folder / "engine.db"), 20_000, k=K, annotators=5, name=study)
    engine.dispose()
    return run_sessions(str(folder / "engine.db"), study, 5, seconds).rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=("crowd", "signed-in"), default="crowd")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--workers", type=int, nargs="+", default=None, help="crowd: 100; signed-in: 50 200 1000"
    )
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--training", type=int, default=3, help="crowd: training items")
    parser.add_argument("--batch", type=int, default=10, help="crowd: test items per worker")
    parser.add_argument("--pace", type=float, default=PACE_S, help="crowd: seconds per item")
    parser.add_argument("--flat-workers", type=int, default=8)
    parser.add_argument("--flat-seconds", type=float, default=10.0)
    parser.add_argument("--terminal-tabs", type=int, default=20)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument(
        "--ramp",
        type=float,
        default=None,
        help=f"seconds over which paced workers arrive (default: one pace, {PACE_S:g} s)",
    )
    parser.add_argument(
        "--pace-spread",
        type=float,
        default=PACE_SPREAD,
        help="a worker's time on an item varies by this fraction of the pace, uniformly "
        f"(default {PACE_SPREAD:g}; 0: every worker exactly {PACE_S:g} s)",
    )
    parser.add_argument(
        "--server-workers", type=int, default=1, help="`annotate serve --workers N` processes"
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="crowd: also annotate on PostgreSQL (a throwaway server with fsync on), beside "
        "SQLite in the same run",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="crowd: run annotate and the bare page (and PostgreSQL) this many times, "
        "alternating, each on a fresh copy of the store, and give each figure's median",
    )
    parser.add_argument(
        "--sync-delay-ms",
        type=float,
        default=0.0,
        help="crowd, SQLite: run annotate and the bare page as on a disk whose every sync "
        "takes this much longer (strace's fault injection; needs strace)",
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds: at least 1")
    if args.rounds > 1 and args.scenario != "crowd":
        parser.error("--rounds: the crowd scenario only")
    if args.sync_delay_ms:
        import shutil

        if args.scenario != "crowd" or args.postgres:
            parser.error("--sync-delay-ms: the crowd scenario on SQLite only")
        if shutil.which("strace") is None:
            parser.error("--sync-delay-ms needs strace (Debian: apt install strace)")
    random.seed(7)
    if args.scenario == "crowd":
        crowd_main(args)
        return
    args.workers = args.workers or [50, 200, 1000]
    most = max([*args.workers, args.burst, args.flat_workers])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = str(folder / "web.db")
        study = "web"
        engine = build_study(db, args.items, k=K, annotators=most, name=study)
        names = [f"{study}-a{i}" for i in range(most)]
        extra = ("--workers", str(args.server_workers)) if args.server_workers > 1 else ()
        server = start_server(db, study, *extra)
        processes = f"{args.server_workers} uvicorn processes" if extra else "one uvicorn process"
        acknowledged = 0
        try:
            idle = rss_mb(server.pid)
            for n in args.workers:
                cpu = cpu_seconds(server.pid)
                tally = run_client(
                    paced(server.base, names[:n], args.seconds, PACE_S, args.ramp, args.pace_spread)
                )
                cpu = cpu_seconds(server.pid) - cpu
                acknowledged += tally.stored
                rss = rss_mb(server.pid)
                print_rows(
                    f"{n} workers, 1 answer / {PACE_S:g} s +- {args.pace_spread:.0%}, "
                    f"{args.seconds:g} s, {processes}, SQLite",
                    [
                        ("labels stored", f"{tally.stored:,}"),
                        (
                            "answer -> next item p50 / p99, all answers",
                            f"{tally.pct(tally.latencies, 0.5):.1f} / "
                            f"{tally.pct(tally.latencies, 0.99):.1f} ms",
                        ),
                        *(
                            (
                                f"  {what}",
                                f"{tally.pct(part, 0.5):.1f} / {tally.pct(part, 0.99):.1f} ms "
                                f"({len(part):,} answers)",
                            )
                            for what, part in (
                                ("while workers were still arriving", tally.arriving()),
                                (
                                    f"in the {PACE_S:g} s after the last arrival",
                                    tally.settling(PACE_S),
                                ),
                                ("after that (every worker at their pace)", tally.held(PACE_S)),
                            )
                        ),
                        (
                            "server CPU per answer (its arrival included)",
                            f"{cpu / max(tally.stored, 1) * 1000:.1f} ms",
                        ),
                        ("server RSS", f"{rss:.0f} MB (idle {idle:.0f} MB)"),
                        ("RSS per worker", f"{max(rss - idle, 0) / n * 1024:.0f} KB"),
                        ("errors", f"{len(tally.errors)}"),
                    ],
                )
                for error in sorted(set(tally.errors))[:3]:
                    print(f"    e.g. {error}")
            arrivals = run_client(burst(server.base, names[: args.burst]))
            acknowledged += arrivals.stored
            print_rows(
                f"arrival burst: {args.burst} workers open the page at once",
                [
                    (
                        "time to first item p50 / p99",
                        f"{arrivals.pct(arrivals.first_item, 0.5):.0f} / "
                        f"{arrivals.pct(arrivals.first_item, 0.99):.0f} ms",
                    ),
                    ("errors", f"{len(arrivals.errors)}"),
                ],
            )
            flat_cpu = cpu_seconds(server.pid)
            flat = run_client(flat_out(server.base, names[: args.flat_workers], args.flat_seconds))
            flat_cpu = cpu_seconds(server.pid) - flat_cpu
            acknowledged += flat.stored
            page_rate = flat.stored / args.flat_seconds
            server_rss = rss_mb(server.pid)
        finally:
            server.stop()
        rows = invariants(engine, study, acknowledged, db)
        engine.dispose()
        fresh, fresh_cpu, fresh_rows = fresh_flat_out(folder, args, extra)
        fresh_rate = fresh.stored / args.flat_seconds
        raw = engine_only(folder, args.flat_seconds)
        print_rows(
            f"flat out: {args.flat_workers} workers as fast as the page answers, "
            f"{args.flat_seconds:g} s",
            [
                ("page labels/s, new server and store (as the engine's)", f"{fresh_rate:,.0f}"),
                (
                    "  answer -> next item p50 / p99",
                    f"{fresh.pct(fresh.latencies, 0.5):.1f} / "
                    f"{fresh.pct(fresh.latencies, 0.99):.1f} ms",
                ),
                ("  server CPU per answer", f"{fresh_cpu / max(fresh.stored, 1) * 1000:.1f} ms"),
                ("page labels/s, the server and store of the runs above", f"{page_rate:,.0f}"),
                (
                    "  answer -> next item p50 / p99",
                    f"{flat.pct(flat.latencies, 0.5):.1f} / {flat.pct(flat.latencies, 0.99):.1f} ms",
                ),
                ("  server CPU per answer", f"{flat_cpu / max(flat.stored, 1) * 1000:.1f} ms"),
                ("engine only labels/s (bench_concurrency, 5 processes)", f"{raw:,.0f}"),
                ("ratio page to engine only", f"{fresh_rate / raw:.2f}x" if raw else "n/a"),
                (
                    "  on the server and store of the runs above",
                    f"{page_rate / raw:.2f}x" if raw else "n/a",
                ),
                ("errors", f"{len(fresh.errors) + len(flat.errors)}"),
            ],
        )
        print_rows("invariants after every run above", rows)
        print_rows("invariants of the new store's flat-out run", fresh_rows)
        if args.terminal_tabs:
            tui = start_server(db, study, "--terminal", "--max-sessions", str(args.terminal_tabs))
            try:
                idle_tui = rss_mb(tui.proc.pid)
                loop = asyncio.new_event_loop()
                peak = [0.0]

                async def with_rss() -> tuple[list[float], int]:
                    task = asyncio.ensure_future(terminal_tabs(tui.base, args.terminal_tabs))
                    while not task.done():
                        peak[0] = max(peak[0], rss_mb(tui.proc.pid))
                        await asyncio.sleep(0.5)
                    return task.result()

                times, failed = loop.run_until_complete(with_rss())
                loop.close()
            finally:
                tui.stop()
            n = args.terminal_tabs
            per_tab = max(peak[0] - idle_tui, 0) / n
            page_per_worker = max(server_rss - idle, 0) / max(args.workers) * 1024
            print_rows(
                f"textual-serve (serve --terminal): {n} tabs opened at once",
                [
                    (
                        "time to first screen p50 / max",
                        f"{Tally().pct(times, 0.5) / 1000:.1f} / "
                        f"{Tally().pct(times, 1) / 1000:.1f} s ({failed} failed)",
                    ),
                    ("server + tab processes RSS", f"{peak[0]:.0f} MB (idle {idle_tui:.0f} MB)"),
                    ("RSS per tab", f"{per_tab:.0f} MB"),
                    (
                        "ratio memory per worker, textual-serve to page",
                        f"{per_tab * 1024 / max(page_per_worker, 1):.0f}x",
                    ),
                ],
            )


def start_bare(db: str, study: str, workers: int, sync_delay_ms: float = 0.0) -> Server:
    """The bare page (bench/bare_page.py) on uvicorn, `workers` processes."""
    import httpx

    port = free_port()
    command = [
        *(sys.executable, "-m", "uvicorn", "bench.bare_page:app", "--port", str(port)),
        *("--log-level", "warning", "--no-access-log", "--workers", str(workers)),
    ]
    proc = subprocess.Popen(
        slowed(command, sync_delay_ms),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "BARE_DB": db, "BARE_STUDY": study},
        cwd=Path(__file__).resolve().parent.parent,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/up", timeout=5)  # any answer: it is up (404 here)
            return Server(proc, base, bool(sync_delay_ms))
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the bare page did not start")


def ms(tally, phase: str) -> str:
    n = len(tally.seconds[phase])
    return f"{tally.pct(phase, 0.5):.0f} / {tally.pct(phase, 0.99):.0f} ms ({n:,})"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def steady(tally) -> str:
    """Server CPU per test answer once every worker of a paced run was at the test items:
    without the arrivals and training that the whole run's figure includes."""
    value = tally.steady_cpu_per_test_answer()
    return "n/a (the run ended first)" if value is None else f"{value:.1f} ms"


def steady_ratio(a, b) -> str:
    x, y = a.steady_cpu_per_test_answer(), b.steady_cpu_per_test_answer()
    return ratio(x, y) if x is not None and y is not None else "n/a"


def crowd_main(args: argparse.Namespace) -> None:
    """The crowd scenario (module docstring): annotate and the bare page in one run, in
    `--rounds` rounds (bench/rounds.py), each on a fresh copy of the store."""
    import shutil

    from bench import crowd_path, rounds
    from tests import pg

    count = (args.workers or [100])[0]
    study = "crowd"
    batch, training = args.batch, args.training
    # Enough test items that every worker has a batch: k labels each.
    test_items = max(50, (count + args.burst) * batch // K + batch)
    processes = args.server_workers
    extra = ("--workers", str(processes)) if processes > 1 else ()
    figures: list[rounds.Figures] = []
    all_clean = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        built = str(folder / "built.db")
        crowd_path.build_crowd_store(
            built, test_items=test_items, training_items=training, batch=batch, k=K, name=study
        ).dispose()
        postgres = durable_postgres() if args.postgres else None
        try:
            for round_no in range(1, args.rounds + 1):
                if args.rounds > 1:
                    print(f"== round {round_no} of {args.rounds}")
                stores = {}
                for which in ("annotate", "bare"):
                    stores[which] = str(folder / f"{which}-{round_no}.db")
                    shutil.copy(built, stores[which])
                if postgres:  # built before the SQLite runs, as they are
                    stores["postgresql"] = postgres_database(postgres[0], round_no)
                    crowd_path.build_crowd_store(
                        stores["postgresql"],
                        test_items=test_items,
                        training_items=training,
                        batch=batch,
                        k=K,
                    ).dispose()
                results: dict[str, dict] = {}
                for which, db in stores.items():
                    pg_pid = postgres[1] if postgres and which == "postgresql" else None
                    # as annotate connects to a server on its own machine (the running guide)
                    served = pg.socket_url(db) if pg_pid else db
                    results[which] = crowd_run(
                        args, which, served, study, count, extra, processes, pg_pid
                    )
                rows = invariants_crowd(stores["annotate"], study, results["annotate"])
                report_crowd(args, results, count, processes, rows)
                holds = rounds.clean(rows)
                if postgres:
                    pg_rows = invariants_crowd(stores["postgresql"], study, results["postgresql"])
                    # Gone before the next round: PostgreSQL's autovacuum of this round's
                    # tables would run through the next round's PostgreSQL run.
                    drop_postgres_database(stores["postgresql"])
                    report_postgres(args, results, count, processes, pg_rows)
                    holds = holds and rounds.clean(pg_rows)
                figures.append(rounds.crowd_figures(results))
                all_clean += holds
        finally:
            if postgres:
                pg.stop(Path(postgres[2]))
    if args.rounds > 1:
        print_rows(
            f"over {args.rounds} rounds, alternating (each figure's median; every round's value)",
            [
                *rounds.summary_rows(figures),
                ("rounds whose invariants all held", f"{all_clean} of {args.rounds}"),
            ],
        )


def postgres_database(url: str, round_no: int) -> str:
    """An empty database for one round on the server of `url`: `url` itself (durable_postgres
    made it) for the first, a new one for each other (each round's crowd store is built
    afresh, as the SQLite stores are copied afresh)."""
    if round_no == 1:
        return url
    on_postgres_server(url, f'CREATE DATABASE "{url.rsplit("/", 1)[1]}_{round_no}"')
    return f"{url}_{round_no}"


def drop_postgres_database(url: str) -> None:
    on_postgres_server(url, f'DROP DATABASE "{url.rsplit("/", 1)[1]}"')


def on_postgres_server(url: str, statement: str) -> None:
    """One statement outside any transaction (CREATE or DROP DATABASE), run in the server's
    maintenance database, on the server of `url`."""
    from sqlalchemy import create_engine, text

    admin = create_engine(url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(statement))
    finally:
        admin.dispose()


def durable_postgres() -> tuple[str, int, str]:
    """A PostgreSQL server as in production (fsync on, synchronous_commit on) in `folder`,
    with a database for the study: its URL, the postmaster's pid, its folder. The tests'
    throwaway server (tests/pg.py) with durable settings."""
    from tests import pg

    server = pg.start(durable=True)  # its own folder: the server runs as another user
    on_postgres_server(server.url, "CREATE DATABASE bench")
    pid = int((server.folder / "data" / "postmaster.pid").read_text().split()[0])
    return server.url.rsplit("/", 1)[0] + "/bench", pid, str(server.folder)


def crowd_run(
    args: argparse.Namespace,
    which: str,
    db: str,
    study: str,
    count: int,
    extra: tuple[str, ...],
    processes: int,
    postgres_pid: int | None = None,
) -> dict:
    """One server (annotate on `db`, or the bare page) under the paced crowd, then phase by
    phase; the server's CPU includes PostgreSQL's own (`postgres_pid`) where it is used."""
    from bench import crowd_path

    training, batch = args.training, args.batch
    bare = which == "bare"
    delay = args.sync_delay_ms
    server = (
        start_bare(db, study, processes, delay)
        if bare
        else start_server(db, study, *extra, sync_delay_ms=delay)
    )
    offset = 10**6 if bare else 0

    def server_cpu() -> float:
        own = cpu_seconds(server.pid)
        return own if postgres_pid is None else own + cpu_seconds(postgres_pid, reaped=True)

    def make(n: int):
        if not bare:
            return crowd_path.CrowdWorker(server.base, n)
        # The bare page's worker answers as many items as annotate's does in all.
        return crowd_path.BareWorker(server.base, offset + n, training + batch)

    try:
        idle = rss_mb(server.pid)
        cpu0, own0 = server_cpu(), cpu_seconds(server.pid)
        t0 = time.monotonic()
        ramp = args.pace if args.ramp is None else args.ramp
        paced = run_client(
            crowd_path.paced_crowd(
                make, count, args.seconds, args.pace, ramp, args.pace_spread, cpu=server_cpu
            )
        )
        wall = time.monotonic() - t0
        cpu, own = server_cpu() - cpu0, cpu_seconds(server.pid) - own0
        rss = rss_mb(server.pid)
        phased = run_client(
            crowd_path.phase_by_phase(lambda n: make(count + n), args.burst, server_cpu)
        )
    finally:
        server.stop()
    return {
        "paced": paced,
        "wall": wall,
        "cpu": cpu,
        "own_cpu": own,  # annotate's (or the bare page's) processes alone
        "rss": rss,
        "idle": idle,
        "phased": phased,
    }


def report_crowd(
    args: argparse.Namespace,
    results: dict[str, dict],
    count: int,
    processes: int,
    rows: list[tuple[str, str]],
) -> None:
    a, b = results["annotate"], results["bare"]
    pa, pb = a["paced"], b["paced"]
    rate_a, rate_b = pa.answers / a["wall"], pb.answers / b["wall"]
    per_answer_a, per_answer_b = cpu_per_answer(a), cpu_per_answer(b)
    where = f"{processes} uvicorn process{'es' if processes > 1 else ''}, SQLite"
    if args.sync_delay_ms:
        where += f", every sync {args.sync_delay_ms:g} ms slower"
    print_rows(
        f"crowd path: {count} workers, 1 answer / {args.pace:g} s +- {args.pace_spread:.0%}, "
        f"{args.seconds:g} s, {where}; annotate | bare page",
        [
            (
                "arrival (link -> first item) p50 / p99",
                f"{ms(pa, 'arrival')} | {ms(pb, 'arrival')}",
            ),
            ("training answer -> next item p50 / p99", ms(pa, "training")),
            ("test answer -> next item p50 / p99", f"{ms(pa, 'test')} | {ms(pb, 'test')}"),
            ("exit (survey -> code) p50 / p99", ms(pa, "exit")),
            ("answers/s", f"{rate_a:.1f} | {rate_b:.1f}"),
            ("ratio answers/s annotate to bare page", ratio(rate_a, rate_b)),
            (
                "server CPU per request",
                f"{a['cpu'] / max(pa.requests, 1) * 1000:.1f} | "
                f"{b['cpu'] / max(pb.requests, 1) * 1000:.1f} ms",
            ),
            (
                "server CPU per answer (arrivals included)",
                f"{per_answer_a:.1f} | {per_answer_b:.1f} ms",
            ),
            ("ratio CPU per answer annotate to bare page", ratio(per_answer_a, per_answer_b)),
            (
                "server CPU per test answer, every worker at the test items",
                f"{steady(pa)} | {steady(pb)}",
            ),
            ("ratio of those, annotate to bare page", steady_ratio(pa, pb)),
            ("workers that reached the test batch", f"{pa.reached_test} of {count}"),
            ("workers that got their code", f"{pa.finished} of {count}"),
            ("server RSS", f"{a['rss']:.0f} MB (idle {a['idle']:.0f}) | {b['rss']:.0f} MB"),
            ("errors", f"{len(pa.errors)} | {len(pb.errors)}"),
        ],
    )
    for error in sorted(set(pa.errors + pb.errors))[:3]:
        print(f"    e.g. {error}")
    ta, tb = a["phased"]["tally"], b["phased"]["tally"]

    print_rows(
        f"phase by phase: {args.burst} workers at once, each phase as fast as the page answers; "
        "annotate | bare page",
        [
            (
                "arrival burst: first item p50 / p99",
                f"{ms(ta, 'arrival')} | {ms(tb, 'arrival')}",
            ),
            (
                "ratio arrival p99 annotate to bare page",
                ratio(ta.pct("arrival", 0.99), tb.pct("arrival", 0.99)),
            ),
            (
                "server CPU per arrival",
                f"{phase_cpu(a, 'arrival'):.1f} | {phase_cpu(b, 'arrival'):.1f} ms",
            ),
            (
                "server CPU per training answer (with feedback)",
                f"{phase_cpu(a, 'training'):.1f} ms",
            ),
            (
                "server CPU per test answer",
                f"{phase_cpu(a, 'test'):.1f} | {phase_cpu(b, 'test'):.1f} ms",
            ),
            ("server CPU per exit (survey and code)", f"{phase_cpu(a, 'exit'):.1f} ms"),
            (
                "ratio CPU training answer to test answer",
                ratio(phase_cpu(a, "training"), phase_cpu(a, "test")),
            ),
            (
                "ratio CPU test answer annotate to bare page",
                ratio(phase_cpu(a, "test"), phase_cpu(b, "test")),
            ),
            ("training answer -> next p50 / p99", ms(ta, "training")),
            ("test answer -> next p50 / p99", f"{ms(ta, 'test')} | {ms(tb, 'test')}"),
            ("workers that got their code", f"{ta.finished} of {args.burst}"),
            ("errors", f"{len(ta.errors)} | {len(tb.errors)}"),
        ],
    )
    for error in sorted(set(ta.errors + tb.errors))[:3]:
        print(f"    e.g. {error}")
    print_rows("invariants after the annotate runs", rows)


def report_postgres(
    args: argparse.Namespace,
    results: dict[str, dict],
    count: int,
    processes: int,
    rows: list[tuple[str, str]],
) -> None:
    """annotate on PostgreSQL beside annotate on SQLite, same crowd, same session."""
    from annotate.store.engine import SERVER_POOL_SIZE

    s, p = results["annotate"], results["postgresql"]
    ps, pp = s["paced"], p["paced"]

    def p99(r: dict, phase: str) -> float:
        return r["paced"].pct(phase, 0.99)

    print_rows(
        f"crowd path on PostgreSQL (fsync on, synchronous_commit on; through its Unix socket; "
        f"a pool of {SERVER_POOL_SIZE} + 10 connections per process): {count} workers, "
        f"{processes} uvicorn "
        f"process{'es' if processes > 1 else ''}; SQLite | PostgreSQL",
        [
            (
                "arrival (link -> first item) p50 / p99",
                f"{ms(ps, 'arrival')} | {ms(pp, 'arrival')}",
            ),
            (
                "training answer -> next item p50 / p99",
                f"{ms(ps, 'training')} | {ms(pp, 'training')}",
            ),
            ("test answer -> next item p50 / p99", f"{ms(ps, 'test')} | {ms(pp, 'test')}"),
            (
                "ratio p99 once arrived (test answers) PostgreSQL to SQLite",
                ratio(p99(p, "test"), p99(s, "test")),
            ),
            ("answers/s", f"{ps.answers / s['wall']:.1f} | {pp.answers / p['wall']:.1f}"),
            (
                "workers that reached the test batch",
                f"{ps.reached_test} | {pp.reached_test} of {count}",
            ),
            (
                "server CPU per answer (PostgreSQL's own included)",
                f"{cpu_per_answer(s):.1f} | {cpu_per_answer(p):.1f} ms",
            ),
            (
                "ratio CPU per answer PostgreSQL to SQLite",
                ratio(cpu_per_answer(p), cpu_per_answer(s)),
            ),
            (
                "  annotate's processes alone (PostgreSQL's not counted)",
                f"{cpu_per_answer(s, own=True):.1f} | {cpu_per_answer(p, own=True):.1f} ms, "
                f"{ratio(cpu_per_answer(p, own=True), cpu_per_answer(s, own=True))}",
            ),
            (
                "server CPU per test answer, every worker at the test items",
                f"{steady(ps)} | {steady(pp)}",
            ),
            ("ratio of those, PostgreSQL to SQLite", steady_ratio(pp, ps)),
            ("server RSS (annotate's processes)", f"{s['rss']:.0f} | {p['rss']:.0f} MB"),
            (
                "burst: first item p50 / p99",
                f"{ms(s['phased']['tally'], 'arrival')} | {ms(p['phased']['tally'], 'arrival')}",
            ),
            ("errors", f"{len(ps.errors)} | {len(pp.errors)}"),
        ],
    )
    for error in sorted(set(pp.errors))[:3]:
        print(f"    e.g. {error}")
    print_rows("invariants after the PostgreSQL runs", rows)


def invariants_crowd(db: str, study: str, result: dict) -> list[tuple[str, str]]:
    from annotate.workspace import open_workspace

    engine = open_workspace(db).engine
    acknowledged = result["paced"].test_answers + result["phased"]["tally"].test_answers
    rows = invariants(engine, study, acknowledged, db)
    engine.dispose()
    refused = [
        e
        for e in result["paced"].errors + result["phased"]["tally"].errors
        if "arrival" in e or "403" in e or "500" in e
    ]
    rows.append(("no arrival refused", "yes" if not refused else f"NO ({len(refused)})"))
    return rows


if __name__ == "__main__":
    main()
