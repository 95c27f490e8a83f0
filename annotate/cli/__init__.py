"""The `annotate` command: parse, call the engine / scoring / report / formats, render.

Heavy libraries (Textual, pandas, statsmodels) are imported inside the commands that use them,
so that `annotate --help` and small commands start fast.
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from annotate.cli import (
    admin,
    console,
    context,
    crowd,
    curate,
    data,
    demo,
    export,
    label,
    plan,
    report,
    scoring,
    study,
)
from annotate.cli.context import app
from annotate.errors import UserError
from annotate.text import terminal_safe

__all__ = [
    "admin",
    "app",
    "console",
    "crowd",
    "curate",
    "data",
    "demo",
    "export",
    "label",
    "main",
    "plan",
    "report",
    "scoring",
    "study",
]


EXIT_ERROR = 1
"""A runtime error: a missing study, a bad store, refused input. Usage errors (an unknown
option, a missing argument) keep click's status 2, so scripts can tell the two apart."""


def main() -> None:
    """Console entry point: user mistakes become one line on stderr and exit status 1 (a
    traceback only with --debug or ANNOTATE_DEBUG=1)."""
    try:
        app()
    except UserError as exc:
        if debug_requested():
            traceback.print_exc()
        typer.echo(f"error: {terminal_safe(str(exc))}", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as exc:
        if not _lost_store(exc):
            raise
        if debug_requested():
            traceback.print_exc()
        reason = terminal_safe(str(exc.orig).strip().splitlines()[0])
        typer.echo(
            f"error: the store is unreachable ({reason}); check that the database server is "
            "running and reachable, then run the command again",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


def _lost_store(exc: Exception) -> bool:
    """A dropped database connection. SQLAlchemy is looked at only if a command loaded it:
    `--help` and the commands without a store never import it."""
    if "sqlalchemy" not in sys.modules:
        return False
    from sqlalchemy.exc import DBAPIError

    from annotate.store.engine import is_disconnect

    return isinstance(exc, DBAPIError) and is_disconnect(exc)


def debug_requested() -> bool:
    # The environment as well as the option: the error may come before the option is parsed.
    return context.debug_requested or os.environ.get("ANNOTATE_DEBUG", "").lower() in (
        "1",
        "true",
        "yes",
    )
