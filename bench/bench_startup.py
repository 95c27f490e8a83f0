"""Start-up: `annotate --help` against `python -c "import typer"` (the floor of any typer
command) in the same run, and `annotate label` to its first screen on a 100,000-item study.

The label run is the real command in a pseudo-terminal (100x30): the clock runs from spawning
the process until the first screen's text (the task title and the annotator's name in the
header) has been written to the terminal.

Targets: --help median <= 0.5 s and <= 2x import typer; label first screen <= 1.0 s.

    python -m bench.bench_startup [--runs 7] [--items 100000]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from bench.common import print_rows
from bench.store_builder import admitted_session, build_study

ANNOTATE = [sys.executable, "-m", "annotate"]
FIRST_SCREEN_TIMEOUT_S = 30


def wall(argv: list[str], runs: int) -> float:
    """Median wall time of running argv to completion."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def first_screen(db: str, study: str, name: str) -> float:
    """Seconds from spawning `annotate label` until `name` (in the header) reaches the pty."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*ANNOTATE, "--db", db, "label", study, "--as", name],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    try:
        while name.encode() not in seen:
            if time.perf_counter() - start > FIRST_SCREEN_TIMEOUT_S:
                raise RuntimeError(f"no first screen; the terminal got: {seen[-500:]!r}")
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                seen += os.read(master, 65536)
        return time.perf_counter() - start
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--items", type=int, default=100_000)
    args = parser.parse_args()
    typer_s = wall([sys.executable, "-c", "import typer"], args.runs)
    help_s = wall([*ANNOTATE, "--help"], args.runs)
    label_help_s = wall([*ANNOTATE, "label", "--help"], args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "start.db")
        engine = build_study(db, args.items, complete=args.items // 2, name="start")
        admitted_session(engine, "start", "firstscreen")
        engine.dispose()
        screens = [first_screen(db, "start", "firstscreen") for _ in range(max(3, args.runs // 2))]
    label_s = statistics.median(screens)
    print_rows(
        f"start-up, median of {args.runs} runs",
        [
            ('python -c "import typer" (baseline)', f"{typer_s:.3f} s"),
            ("annotate --help (target <= 0.5 s)", f"{help_s:.3f} s"),
            ("ratio --help to import typer (target <= 2x)", f"{help_s / typer_s:.2f}x"),
            ("annotate label --help", f"{label_help_s:.3f} s"),
            (
                f"annotate label to first screen, {args.items:,} items (target <= 1.0 s)",
                f"{label_s:.3f} s",
            ),
        ],
    )


if __name__ == "__main__":
    main()
