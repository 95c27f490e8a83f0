"""`annotate label STUDY --as NAME`: the annotator's terminal app."""

from __future__ import annotations

import typer

from annotate.cli.context import app, options
from annotate.cli.output import say


@app.command("label")
def label_command(
    ctx: typer.Context,
    study: str = typer.Argument(..., help="The study to work on"),
    name: str = typer.Option(..., "--as", help="Your annotator name"),
    create: bool = typer.Option(
        False, "--create", help="Register NAME as a new annotator if it is not known yet"
    ),
) -> None:
    """Label items of a study: guidelines, training with feedback, then the test items.

    Quit any time with q; running the same command again continues where you stopped."""
    # Textual costs ~0.3 s to import: only this command pays for it.
    from annotate.tui.app import create_app

    ws = options(ctx).workspace()
    tui = create_app(ws.engine, study, name, create_annotator=create)
    tui.run()
    progress = tui.session.progress()
    say(
        f"{name}: {progress.training_done} training and {progress.test_done} test answers "
        f"saved in study {study!r}."
    )
