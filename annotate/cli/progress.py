"""Progress bars for long commands (report, export, simulate): rich.progress on stderr, with
an ETA, only when stderr is a terminal, so piped or captured output never holds a bar."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from annotate.progress_hook import ProgressHook, silent


@contextmanager
def progress_bars() -> Iterator[ProgressHook]:
    """A hook that draws one bar per job (the text before the first `:` of what it is told),
    removed when the command ends; a silent hook when stderr is not a terminal."""
    if not _stderr_is_terminal():
        yield silent
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from annotate.text import terminal_safe

    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bars:
        tasks: dict[str, int] = {}

        def hook(what: str, done: int, total: int) -> None:
            job = what.split(":", 1)[0]
            text = terminal_safe(what)
            if job not in tasks:
                tasks[job] = bars.add_task(text, total=max(total, 1))
            bars.update(tasks[job], description=text, completed=done, total=max(total, 1))

        yield hook


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
