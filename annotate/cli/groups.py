"""The command groups whose commands live in several modules: `study` and `annotator`.

Their commands are registered by annotate/cli/study.py and annotators.py (create, list, show,
add, token) and by annotate/cli/crowd.py (`study crowd`, `annotator show`); this module is
below all of them, so none imports another to reach a group.
"""

from __future__ import annotations

import typer

from annotate.cli.context import app

study_app = typer.Typer(help="Create and inspect studies.", no_args_is_help=True)
annotator_app = typer.Typer(help="Manage annotators.", no_args_is_help=True)
app.add_typer(study_app, name="study")
app.add_typer(annotator_app, name="annotator")
