"""The typer app and the options every command shares (which store to open)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup, TyperOption

try:  # typer 0.2x carries its own copy of click; older versions use click itself
    from typer._click.exceptions import NoSuchOption, UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import NoSuchOption, UsageError  # type: ignore[no-redef]

if TYPE_CHECKING:  # the store (SQLAlchemy) loads when a command opens it, not for --help
    from annotate.workspace import Workspace

ROW_ID = {"min": 1, "max": 2**63 - 1}
"""The range of an id of a row in the store (an example, a dataset, a flag): a 64-bit integer
on SQLite and PostgreSQL alike. A longer number is refused by the option as out of range; it
would overflow the database driver with a traceback."""

_WORDS = "annotate.cli.words"
_AFTER_GLOBALS = "annotate.cli.after_global_options"
"""ctx.meta keys: the words of the command line, and those from the command on."""


class AnnotateGroup(TyperGroup):
    """The `annotate` command. A global option given after the command (`annotate init --db
    x.db`) is an unknown option of that command, as click says; the error says instead where
    it goes. It is not moved there silently: a command may have an option of the same name
    (`study crowd --config`), and a mistyped line should not run as something else."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        ctx.meta[_WORDS] = list(args)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:
        ctx.meta[_AFTER_GLOBALS] = list(args)  # the command's name and every word after it
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except NoSuchOption as exc:
            hint = self._misplaced(ctx, exc.option_name)
            if hint is None:
                raise
            raise UsageError(hint, exc.ctx) from None

    def _misplaced(self, ctx: typer.Context, name: str) -> str | None:
        """The error for a global option `name` given after the command, with the command line
        that puts it before ("annotate --db x.db init"); None when `name` is not a global
        option."""
        takes_value = {
            opt: not (param.is_flag or param.count)
            for param in self.params
            if isinstance(param, TyperOption)
            for opt in (*param.opts, *param.secondary_opts)
            if opt != "--help"  # every command has its own
        }
        if name not in takes_value:
            return None
        words: list[str] = list(ctx.meta.get(_AFTER_GLOBALS, []))
        everything: list[str] = ctx.meta.get(_WORDS, words)
        before = everything[: len(everything) - len(words)]  # the global options given
        at = next((i for i, w in enumerate(words) if w == name or w.startswith(f"{name}=")), None)
        if at is None:
            return f"{name} is a global option: put it before the command"
        size = 2 if words[at] == name and takes_value[name] and at + 1 < len(words) else 1
        moved = words[at : at + size]
        del words[at : at + size]
        fixed = shlex.join([*before, *moved, *words])
        return f"{name} is a global option: put it before the command: {ctx.command_path} {fixed}"


app = typer.Typer(
    name="annotate",
    cls=AnnotateGroup,
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

db_typed: str | None = None
"""--db as typed on the command line (not from ANNOTATE_DB or the project file, which a copied
command meets again): the commands this one suggests need it too (output.store_note)."""

db_noted = False
"""This command has said once how to add --db to the commands it suggests."""


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
        exists=True,
        dir_okay=False,
        help="The project file (TOML): the store, task and protocol folders and the default "
        "protocol (default: the file ANNOTATE_CONFIG names, else annotate.toml in the current "
        "folder, if there is one).",
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
        help="Show the traceback behind an error (for bug reports). ANNOTATE_DEBUG=1 does too.",
    ),
    width: int = typer.Option(
        None,
        "--width",
        min=20,
        help="Draw tables this many columns wide (default: the terminal's width; when the "
        "output is a pipe or a file, as wide as the content, so no row is folded).",
    ),
) -> None:
    from annotate.settings import CONFIG_ENV, debug_from_env, project_file

    global debug_requested, width_requested, db_typed, db_noted
    debug = debug or debug_from_env()  # the settings' rule and message, not click's
    debug_requested = debug
    width_requested = width
    # typer carries its own copy of click: its ParameterSource, compared by name
    typed = getattr(ctx.get_parameter_source("db"), "name", None) == "COMMANDLINE"
    db_typed, db_noted = (db if typed else None), False
    if config is None and os.environ.get(CONFIG_ENV):
        # The settings' one line for a file that is not there (click's was a usage error).
        config = project_file()
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
