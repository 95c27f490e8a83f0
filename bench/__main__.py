"""Run every benchmark of the project and print one table: `python -m bench`.

Each `bench/bench_*.py` runs in a fresh process (`python -m bench.bench_NAME`), with its own
defaults, so the figures are the ones its docstring describes and a note can quote them from
one command. A benchmark reports through `bench.common.print_rows` (a title line, then
indented `key  value` lines, where the keys name the baseline and the target); this reads
those lines back, so a new benchmark joins the table by following the same convention.

    python -m bench                      # all, as text
    python -m bench --only import report # some of them
    python -m bench --format markdown    # a table to paste into notes
    python -m bench --list
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROW = re.compile(r"^  (\S.*?)\s{2,}(\S.*)$")
"""An indented `key  value` line of print_rows (the key padded with at least two spaces)."""
TIMEOUT_S = 3600


@dataclass(frozen=True)
class Figure:
    bench: str
    section: str
    measure: str
    value: str

    @property
    def is_ratio(self) -> bool:
        return "ratio" in self.measure.lower() or bool(re.search(r"\d(\.\d+)?x\b", self.value))


def discover() -> list[str]:
    """The benchmarks: bench/bench_*.py, by name without the prefix."""
    return sorted(p.stem.removeprefix("bench_") for p in BENCH_DIR.glob("bench_*.py"))


def parse(bench: str, output: str) -> list[Figure]:
    """print_rows blocks -> figures; other lines (progress, notes) are ignored."""
    figures, section = [], ""
    for line in output.splitlines():
        if match := ROW.match(line):
            figures.append(Figure(bench, section, match.group(1), match.group(2)))
        elif line.strip() and not line.startswith(" "):
            section = line.strip()
    return figures


def run(bench: str) -> tuple[list[Figure], float, str | None]:
    """Run one benchmark: its figures, its wall time, and an error (None when it passed)."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", f"bench.bench_{bench}"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=BENCH_DIR.parent,
        )
    except subprocess.TimeoutExpired:
        return [], time.perf_counter() - start, f"timed out after {TIMEOUT_S} s"
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [], seconds, f"exit {done.returncode}: {last}"
    return parse(bench, done.stdout), seconds, None


def environment() -> str:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=BENCH_DIR
    ).stdout.strip()
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, commit {commit or '?'}, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}"
    )


def render_text(figures: list[Figure]) -> str:
    """One table; each section's title on a row of its own, its figures indented below."""
    rows: list[tuple[str, str, str]] = []
    last: tuple[str, str] | None = None
    for f in figures:
        if f.section and (f.bench, f.section) != last:
            rows.append((f.bench, f.section, ""))
        last = (f.bench, f.section)
        mark = "  <- against the baseline" if f.is_ratio else ""
        rows.append(("" if f.section else f.bench, f"  {f.measure}", f.value + mark))
    headings = ("benchmark", "measure", "figure")
    widths = [max(len(r[i]) for r in [headings, *rows]) for i in range(2)]
    lines = [f"{headings[0]:<{widths[0]}}  {headings[1]:<{widths[1]}}  {headings[2]}"]
    lines.append(f"{'-' * widths[0]}  {'-' * widths[1]}  {'-' * len(headings[2])}")
    lines += [f"{b:<{widths[0]}}  {m:<{widths[1]}}  {v}".rstrip() for b, m, v in rows]
    return "\n".join(lines)


def render_markdown(figures: list[Figure]) -> str:
    lines = ["| benchmark | section | measure | figure |", "|---|---|---|---|"]
    for f in figures:
        value = f"**{f.value}**" if f.is_ratio else f.value
        lines.append(f"| {f.bench} | {f.section} | {f.measure} | {value} |".replace("\n", " "))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these benchmarks")
    parser.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and stop")
    args = parser.parse_args(argv)
    names = discover()
    if args.list:
        print("\n".join(names))
        return 0
    if args.only:
        unknown = sorted(set(args.only) - set(names))
        if unknown:
            parser.error(f"no benchmark {', '.join(unknown)} (have: {', '.join(names)})")
        names = [n for n in names if n in args.only]
    figures: list[Figure] = []
    failures: list[str] = []
    for name in names:
        print(f"running {name} …", file=sys.stderr, flush=True)
        found, seconds, error = run(name)
        figures += found
        figures.append(Figure(name, "", "wall time of the benchmark run", f"{seconds:.0f} s"))
        if error:
            failures.append(f"{name}: {error}")
    if args.format == "json":
        print(
            json.dumps(
                {
                    "environment": environment(),
                    "figures": [asdict(f) for f in figures],
                    "failures": failures,
                },
                indent=2,
            )
        )
    else:
        print(environment())
        print(render_markdown(figures) if args.format == "markdown" else render_text(figures))
        for failure in failures:
            print(f"FAILED {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
