"""The typer app and the options every command shares (which store to open)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
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
        help="Store URL or SQLite path (default: the project file's db, else annotate.db in the "
        "current folder; postgresql+psycopg://user@host/db for teams on several machines).",
    ),
    config: Path = typer.Option(
        None,
        "--config",
        envvar="ANNOTATE_CONFIG",
        exists=True,
        dir_okay=False,
        help="The project file (TOML): the store, task and protocol folders and the default "
        "protocol (default: annotate.toml in the current folder, if there is one).",
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
    if config is not None:
        _use_project_file(ctx, config)
    ctx.obj = Options(db=db, debug=debug)


def _use_project_file(ctx: typer.Context, path: Path) -> None:
    """The settings (annotate/settings.py) read the project file ANNOTATE_CONFIG names: set for
    the command, it reaches every process the command starts too (serve's workers and
    sessions). It is put back when the command ends, for callers that run several in one
    process."""
    from annotate.settings import CONFIG_ENV

    before = os.environ.get(CONFIG_ENV)
    os.environ[CONFIG_ENV] = str(path.resolve())

    def put_back() -> None:
        if before is None:
            os.environ.pop(CONFIG_ENV, None)
        else:
            os.environ[CONFIG_ENV] = before

    ctx.call_on_close(put_back)


def options(ctx: typer.Context) -> Options:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, Options) else Options()
