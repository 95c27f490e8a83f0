"""The `annotate` command: parse, call the engine / scoring / report / formats, render.

Heavy libraries (Textual, pandas, statsmodels) are imported inside the commands that use them,
so that `annotate --help` and small commands start fast.
"""

from __future__ import annotations

import errno
import sys
import traceback

import typer

# isort: off
# Typer lists the commands in the order they are registered: these imports, in this order, are
# the order of `annotate --help` (and of the docs' command reference).
from annotate.cli import admin, console, context
from annotate.cli import gate, status, flags, simulate
from annotate.cli import groups, study, annotators, crowd, prolific
from annotate.cli import curate, data, demo, export, label, labels, plan, report, scoring

# isort: on
from annotate.cli.context import app
from annotate.cli.examples import attach as attach_examples
from annotate.cli.output import store_note
from annotate.errors import UserError
from annotate.text import redacted, terminal_safe

__all__ = [
    "admin",
    "annotators",
    "app",
    "console",
    "crowd",
    "curate",
    "data",
    "demo",
    "export",
    "flags",
    "gate",
    "groups",
    "label",
    "labels",
    "main",
    "plan",
    "prolific",
    "report",
    "scoring",
    "simulate",
    "status",
    "study",
]


attach_examples(app)  # every command's --help ends with an example (annotate/cli/examples.py)

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
        typer.echo(f"error: {terminal_safe(redacted(str(exc)))}", err=True)
        if (note := store_note(str(exc))) is not None:
            typer.echo(terminal_safe(note), err=True)
        sys.exit(EXIT_ERROR)
    except OSError as exc:
        # A path the system refused (a name too long, no room left, no permission) that no
        # check before it foresaw: said as the file and the reason, not as a traceback. A
        # write to an open file on a full disk names no file: said as the disk's state.
        if exc.filename is None and exc.errno not in FULL_DISK_ERRNOS:
            raise
        if debug_requested():
            traceback.print_exc()
        said = _refused_path(exc) if exc.filename is not None else _full_disk(exc)
        typer.echo(f"error: {terminal_safe(redacted(said))}", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as exc:
        if _busy_store(exc):
            if debug_requested():
                traceback.print_exc()
            reason = terminal_safe(redacted(str(exc.orig).strip().splitlines()[0]))
            typer.echo(f"error: {BUSY_STORE.format(reason=reason)}", err=True)
            sys.exit(EXIT_ERROR)
        if not _lost_store(exc):
            raise
        if debug_requested():
            traceback.print_exc()
        reason = terminal_safe(redacted(str(exc.orig).strip().splitlines()[0]))
        typer.echo(
            f"error: the store is unreachable ({reason}); check that the database server is "
            "running and reachable, then run the command again",
            err=True,
        )
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)


FULL_DISK_ERRNOS = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def _full_disk(exc: OSError) -> str:
    return f"the disk is full ({exc.strerror or exc}): free some space and run the command again"


def _refused_path(exc: OSError) -> str:
    """`cannot use PATH: reason`, with the second path of a rename or link when there is one."""
    where = str(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {exc.filename2}"
    return f"cannot use {where}: {exc.strerror or exc}"


BUSY_STORE = (
    "the store is busy ({reason}): another process held what this command had to change for "
    "longer than annotate waits, so the change was not made. Run the command again once that "
    "process has finished (stop everyone using the store before `annotate migrate`)"
)


def _busy_store(exc: Exception) -> bool:
    """A write that found the store locked by another process past every wait and retry
    (SQLite's busy_timeout; PostgreSQL's serialization failure): transient, not a bug."""
    if "sqlalchemy" not in sys.modules:
        return False
    from annotate.store.engine import is_transient

    return is_transient(exc)


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
    if context.debug_requested:
        return True
    from annotate.errors import UserError as BadSetting
    from annotate.settings import settings

    try:
        return settings().debug
    except BadSetting:
        return False
