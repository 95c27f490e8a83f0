"""The `annotate` command: parse, call the engine / scoring / report / formats, render.

Heavy libraries (Textual, pandas, statsmodels) are imported inside the commands that use them,
so that `annotate --help` and small commands start fast.
"""

from __future__ import annotations

import sys

import typer

from annotate.cli import admin, curate, data, demo, export, label, report, scoring, study
from annotate.cli.context import app
from annotate.errors import UserError

__all__ = [
    "admin",
    "app",
    "curate",
    "data",
    "demo",
    "export",
    "label",
    "main",
    "report",
    "scoring",
    "study",
]


def main() -> None:
    """Console entry point: user mistakes become one line on stderr and exit status 2."""
    try:
        app()
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
