"""The typer app and the options every command shares (which store to open)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a command opens it, not for --help
    from annotate.workspace import Workspace

app = typer.Typer(
    name="annotate",
    help="Measure human performance on GLUE/SuperGLUE-style tasks, following the published "
    "two-phase protocol, and curate diagnostic examples.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
)


class Format(StrEnum):
    table = "table"
    json = "json"


debug_requested = False
"""--debug (or ANNOTATE_DEBUG) was given: `main` prints the traceback behind an error."""

width_requested: int | None = None
"""--width N: tables and text are drawn N columns wide (default: the terminal's width, or
unfolded when the output is not a terminal)."""


@dataclass
class Options:
    db: str | None = None
    debug: bool = False

    def workspace(self, create: bool = False, any_schema: bool = False) -> Workspace:
        from annotate.workspace import open_workspace

        return open_workspace(self.db, create=create, any_schema=any_schema)


def _print_version(value: bool) -> None:
    if value:
        from annotate import __version__
        from annotate.store.schema import SCHEMA_HEAD

        typer.echo(f"annotate {__version__} (store schema {int(SCHEMA_HEAD)})")
        raise typer.Exit()


@app.callback()
def _global_options(
    ctx: typer.Context,
    db: str = typer.Option(
        None,
        "--db",
        envvar="ANNOTATE_DB",
        help="Store URL or SQLite path (default: annotate.db in the current folder; "
        "postgresql+psycopg://user@host/db for teams on several machines).",
    ),
    version: bool = typer.Option(
        False,
        "--version",
        is_eager=True,
        callback=_print_version,
        help="Print the version of annotate (and the store schema it reads) and exit.",
    ),
    debug: bool = typer.Option(
        False,
        "--debug",
        envvar="ANNOTATE_DEBUG",
        help="Show the traceback behind an error (for bug reports).",
    ),
    width: int = typer.Option(
        None,
        "--width",
        min=20,
        help="Draw tables this many columns wide (default: the terminal's width; when the "
        "output is a pipe or a file, as wide as the content, so no row is folded).",
    ),
) -> None:
    global debug_requested, width_requested
    debug_requested = debug
    width_requested = width
    ctx.obj = Options(db=db, debug=debug)


def options(ctx: typer.Context) -> Options:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Options) else Options()
