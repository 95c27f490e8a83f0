"""How long computations tell a front end how far they are, without knowing how it is shown.

The engine, the report and the exports take an optional `ProgressHook` and call it as they go:
`hook("report: agreement (bootstrap)", 2, 6)`. The text before the first `:` names the job (one
bar per job); the rest says what it is doing now. The command line draws a bar on a terminal
(annotate/cli/progress.py); everything else passes nothing and `silent` is used.
"""

from __future__ import annotations

from collections.abc import Callable

ProgressHook = Callable[[str, int, int], None]
"""(what, done, total): `done` of `total` steps of the job named before the first `:`."""


def silent(what: str, done: int, total: int) -> None:
    """The hook when nobody is watching."""


class Steps:
    """A job of a known number of named steps: `steps.next("agreement (bootstrap)")` reports
    the step about to run; `done()` the end."""

    def __init__(self, hook: ProgressHook | None, job: str, total: int) -> None:
        self.hook = hook or silent
        self.job = job
        self.total = total
        self.count = 0

    def next(self, step: str) -> None:
        self.hook(f"{self.job}: {step}", self.count, self.total)
        self.count += 1

    def done(self) -> None:
        self.hook(f"{self.job}: done", self.total, self.total)
