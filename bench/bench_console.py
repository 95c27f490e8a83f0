"""What an open researcher console costs the annotators: the keypress benchmark (keypress ->
label committed -> next item rendered, bench_keypress) with a console open on the same study
in another process, against the same benchmark with no console.

The console is the real app (bench/console_worker.py), headless, polling at its real interval
(1 s): a cheap change check each second and, because the annotator's labels change the study
all the time, a refresh of the study screen after each check (the tracker reads only the new
labels). Runs alternate, without / with / without / with, each as a new annotator on the same
store, so drift of the machine shows in both. Target: with / without (p50) < 1.10.

    python -m bench.bench_console [--labels 1000000] [--presses 400] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_keypress import measure_app, percentile
from bench.common import print_rows
from bench.store_builder import build_study

STUDY = "big"


def open_console(url: str) -> subprocess.Popen:
    console = subprocess.Popen(
        [sys.executable, "-m", "bench.console_worker", url, STUDY],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert console.stdout is not None
    line = console.stdout.readline()  # blocks until the console has read the study once
    if line.strip() != "ready":
        console.kill()
        raise SystemExit(f"the console did not start: {line!r}")
    return console


def close_console(console: subprocess.Popen) -> dict:
    out, _ = console.communicate(input="", timeout=60)
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=int, default=1_000_000)
    parser.add_argument("--presses", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    complete = args.labels // 5
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "big.db")
        build_start = time.monotonic()
        engine = build_study(
            path, complete + 2 * args.rounds * args.presses + 10, complete=complete, name=STUDY
        )
        built = time.monotonic() - build_start
        url = f"sqlite:///{path}"
        without: list[float] = []
        with_console: list[float] = []
        consoles: list[dict] = []
        load_s: list[float] = []
        for n in range(args.rounds):
            without += asyncio.run(measure_app(engine, STUDY, args.presses, f"plain-{n}"))
            start = time.monotonic()
            console = open_console(url)
            load_s.append(time.monotonic() - start)
            try:
                with_console += asyncio.run(
                    measure_app(engine, STUDY, args.presses, f"watched-{n}")
                )
            finally:
                consoles.append(close_console(console))
        engine.dispose()
    ms = 1000
    p50, p50c = statistics.median(without) * ms, statistics.median(with_console) * ms
    p99, p99c = percentile(without, 0.99) * ms, percentile(with_console, 0.99) * ms
    polls = sum(c["polls"] for c in consoles)
    reloads = sum(c["reloads"] for c in consoles)
    poll_ms = statistics.median(c["poll_ms_median"] for c in consoles if c["poll_ms_median"])
    print_rows(
        f"keypress with a researcher console open ({args.labels:,} labels in the store, built "
        f"in {built:.0f} s; {args.rounds} x {args.presses} presses each way)",
        [
            ("keypress p50, no console (baseline)", f"{p50:.1f} ms"),
            ("keypress p50, console open", f"{p50c:.1f} ms"),
            ("keypress p99, no console", f"{p99:.1f} ms"),
            ("keypress p99, console open", f"{p99c:.1f} ms"),
            ("console / none, p50 (target < 1.10)", f"{p50c / p50:.2f}x"),
            ("console / none, p99", f"{p99c / p99:.2f}x"),
            ("console change checks (1 s apart)", f"{polls}"),
            ("console refreshes after a change", f"{reloads}"),
            ("console change check, median", f"{poll_ms:.1f} ms"),
            ("console first read of the study", f"{statistics.median(load_s):.1f} s"),
        ],
    )


if __name__ == "__main__":
    main()
