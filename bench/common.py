"""Helpers shared by the benchmarks: run a measurement in a fresh process, report peak memory."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def peak_rss_mb() -> float:
    """Peak resident memory of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn: Callable[[], Any]) -> dict[str, float]:
    start = time.perf_counter()
    fn()
    return {"seconds": time.perf_counter() - start, "peak_rss_mb": peak_rss_mb()}


def run_client(simulation: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(simulation) with this process's garbage collector off meanwhile: the
    simulated browsers measure the server, and a full collection of their own objects (a
    thousand aiohttp sessions) paused them for 50-150 ms, which showed as that much more
    latency on every request under way, on whichever page was measured. A run allocates
    little that only the collector frees (the client peaked at 126 MB with 1,000 workers)."""
    gc.collect()
    gc.disable()
    try:
        return asyncio.run(simulation)
    finally:
        gc.enable()
        gc.collect()


def in_subprocess(module: str, *args: str) -> dict[str, float]:
    """Run `python -m module args…` and read the JSON it prints last: each measurement gets a
    process of its own so peak memory is its own."""
    out = subprocess.run(
        [sys.executable, "-m", module, *args], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def process_peak(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident MB of the process `args` (stdout discarded), read from
    its own rusage: the children's maximum (`RUSAGE_CHILDREN`) would be the largest so far."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, args)
    return seconds, usage.ru_maxrss / 1024


def print_rows(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(k) for k, _ in rows)
    print(title)
    for key, value in rows:
        print(f"  {key:<{width}}  {value}")


def alternated(
    calls: dict[str, Callable[[], object]],
    rounds: int,
    between: Callable[[], object] = lambda: None,
) -> dict[str, float]:
    """The median seconds of each of `calls`, run in turn `rounds` times (alternated: a drift
    of the machine falls on all of them alike); `between` runs untimed before each call."""
    times: dict[str, list[float]] = {key: [] for key in calls}
    for _ in range(rounds):
        for key, call in calls.items():
            between()
            start = time.perf_counter()
            call()
            times[key].append(time.perf_counter() - start)
    return {key: statistics.median(seconds) for key, seconds in times.items()}


def against_baseline(
    what: str, base: tuple[str, float], ours: tuple[str, float], ratio: str
) -> list[tuple[str, str]]:
    """The rows of a measurement against its baseline in the same run: each one's time (a name
    and seconds), then `ratio` (what the ratio says, "ours/baseline")."""
    (base_name, base_s), (ours_name, ours_s) = base, ours
    return [
        (f"{what}: {base_name} (baseline)", f"{1000 * base_s:.1f} ms"),
        (f"{what}: {ours_name}", f"{1000 * ours_s:.1f} ms"),
        (f"{what}: ratio {ratio}", f"{ours_s / base_s:.3f}x"),
    ]
