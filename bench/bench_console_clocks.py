"""The console's clock tick: every second the Study screen redraws each annotator's "last
activity" cell ("12 s ago") in place, and the table measures its columns again on its next
idle. Timed here: that idle's column measuring, on the console's own table
(`annotate.tui.console.table.Table`, headless), at 50, 200 and 1,000 annotators.

Baseline in the same run: Textual's own `DataTable._update_column_widths` on the same table and
the same updated cells, which measures the whole column again for each updated cell narrower
than the column (quadratic in the annotators). Target: the console's tick at 200 annotators
<= 1/10 of the baseline's, and under 10 ms.

    python -m bench.bench_console_clocks [--sizes 50,200,1000] [--ticks 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from annotate.tui.console.table import Column, Table
from bench.common import against_baseline, print_rows

COLUMNS = (
    Column("name", "Annotator"),
    Column("phase", "Phase"),
    Column("test", "Test"),
    Column("last", "Last activity"),
)
AGES = ("5 s ago", "12 s ago", "3 min ago", "14 min ago", "2 h ago")
"""Cells of several widths, as a live study's are: most are narrower than the widest."""


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Table(id="t")


def rows(n: int, tick: int) -> list[tuple[str, list[Text]]]:
    return [
        (f"a{i}", [Text(f"a{i}"), Text("test"), Text(str(i)), Text(AGES[(i + tick) % 5])])
        for i in range(n)
    ]


def tick(table: Table, n: int, step: int, measure_columns) -> float:  # type: ignore[no-untyped-def]
    """One clock tick as `StudyScreen.show_clocks` makes it, then the idle's measuring."""
    for key, cells in rows(n, step):
        table.update_cell(key, "last", cells[3], update_width=True)
    cells = set(table._updated_cells)
    table._updated_cells.clear()
    start = time.perf_counter()
    measure_columns(table, cells)
    return time.perf_counter() - start


async def measure(sizes: list[int], ticks: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    app = TableApp()
    async with app.run_test(size=(160, 50)) as pilot:
        table = app.query_one(Table)
        for n in sizes:
            table.fill(COLUMNS, rows(n, 0))
            await pilot.pause()
            times: dict[str, list[float]] = {"textual": [], "console": []}
            for step in range(1, 2 * ticks + 1):  # alternated, each on the same table
                name = "textual" if step % 2 else "console"
                method = (
                    DataTable._update_column_widths if step % 2 else Table._update_column_widths
                )
                times[name].append(tick(table, n, step, method))
            out += against_baseline(
                f"{n} annotators",
                ("textual DataTable", statistics.median(times["textual"])),
                ("console Table", statistics.median(times["console"])),
                "console/baseline",
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,200,1000")
    parser.add_argument("--ticks", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print_rows(
        "Console clock tick: column measuring after the relative times are redrawn",
        asyncio.run(measure(sizes, args.ticks)),
    )


if __name__ == "__main__":
    main()
