"""Keypress -> label committed -> next item rendered, in the real annotator app driven by Pilot,
on a store that holds 1,000,000 labels (200,000 complete test items x 5) plus open items.

The clock starts just before `pilot.press` and stops in `call_after_refresh` after the app has
switched to the next item's screen (`await pilot.press` itself waits for idle and
would overstate the latency). Targets: p50 <= 10 ms, p99 <= 30 ms.

Baseline in the same run: the engine alone on the same store, making the calls the app makes
for a test keypress (submit_and_next, then progress for the status line, which after a stored
test answer is the figures that answer's transaction confirmed: no query) with no screen, so
the ratio shows what the screen adds.

The presses come back to back, as no annotator reads that fast: the log checkpoint that the app
leaves for a pause (annotate/store/checkpoint.py) falls inside one keypress in a hundred here,
as SQLite's own would.

With `--runs N` the engine and the app are measured N times on the one store (a new annotator
each time), each run with the machine's load average, as the target is for a quiet machine.

    python -m bench.bench_keypress [--labels 1000000] [--presses 200] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import print_rows
from bench.store_builder import admitted_session, build_study


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure_app(engine, study: str, presses: int, name: str = "keypress") -> list[float]:
    from annotate.tui.app import create_app

    admitted_session(engine, study, name)
    app = create_app(engine, study, name)
    rendered: list[float] = []
    original = app.show_next

    async def show_next_and_stamp(*args: Any, **kwargs: Any) -> None:
        await original(*args, **kwargs)
        app.call_after_refresh(lambda: rendered.append(time.monotonic()))

    app.show_next = show_next_and_stamp  # type: ignore[method-assign]
    latencies = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")  # leave the guidelines screen
        await pilot.pause()
        for _ in range(presses):
            before = len(rendered)
            start = time.monotonic()
            await pilot.press("1")
            for _ in range(200):  # bounded wait for the refresh callback
                if len(rendered) > before:
                    break
                await pilot.pause()
            latencies.append(rendered[before] - start)
    return latencies


def measure_engine(engine, study: str, presses: int, name: str = "engine-only") -> list[float]:
    session = admitted_session(engine, study, name)
    item = session.next_item()
    times = []
    for _ in range(presses):
        start = time.monotonic()
        item = session.submit_and_next(item, "entailment")
        session.progress()
        times.append(time.monotonic() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=1_000_000)
    parser.add_argument("--presses", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    complete = args.labels // 5
    ms = 1000
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        build_start = time.monotonic()
        engine = build_study(
            str(Path(tmp) / "big.db"),
            complete + 2 * args.presses * args.runs + 10,
            complete=complete,
            name="big",
        )
        built = time.monotonic() - build_start
        for run in range(1, args.runs + 1):
            engine_times = measure_engine(engine, "big", args.presses, f"engine-only-{run}")
            app_times = asyncio.run(measure_app(engine, "big", args.presses, f"keypress-{run}"))
            load = os.getloadavg()[0]
            p50, p99 = statistics.median(app_times) * ms, percentile(app_times, 0.99) * ms
            e50 = statistics.median(engine_times) * ms
            e99 = percentile(engine_times, 0.99) * ms
            prefix = f"run {run} " if args.runs > 1 else ""
            rows += [
                (f"{prefix}app p50 (target <= 10 ms)", f"{p50:.1f} ms"),
                (f"{prefix}app p99 (target <= 30 ms)", f"{p99:.1f} ms"),
                (f"{prefix}engine only p50 (baseline)", f"{e50:.1f} ms"),
                (f"{prefix}engine only p99", f"{e99:.1f} ms"),
                (f"{prefix}app / engine (p50)", f"{p50 / e50:.2f}x"),
                (f"{prefix}load average (1 min, {os.cpu_count()} CPUs)", f"{load:.2f}"),
            ]
        engine.dispose()
    print_rows(
        f"keypress -> committed -> next item rendered ({args.labels:,} labels in the store, "
        f"built in {built:.0f} s)",
        rows,
    )


if __name__ == "__main__":
    main()
