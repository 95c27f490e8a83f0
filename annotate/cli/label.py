"""`annotate label STUDY --as NAME`: the annotator's terminal app."""

from __future__ import annotations

import typer

from annotate.cli.context import app, options
from annotate.cli.output import say
from annotate.errors import UserError

TOKEN_ENV = "ANNOTATE_TOKEN"  # annotate.settings: Settings.token
"""For scripts: the token, instead of the prompt."""


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

    An annotator registered with a token is asked for it first (scripts: set ANNOTATE_TOKEN).
    Quit any time with q; running the same command again continues where you stopped."""
    from annotate.presentation.answer_keys import COME_BACK
    from annotate.presentation.closing import words_on_leaving
    from annotate.protocol.studies import load_study
    from annotate.protocol.tokens import authenticate, labelling_as, needs_token

    # Textual costs ~0.3 s to import: only this command pays for it.
    from annotate.tui.app import create_app

    ws = options(ctx).workspace()
    load_study(ws.engine, study)  # a mistyped study fails before anyone is asked for a token
    labelling_as(ws.engine, name)
    if needs_token(ws.engine, name):
        authenticate(ws.engine, name, ask_token(name))
    tui = create_app(ws.engine, study, name, create_annotator=create)
    tui.run()
    if tui.return_code:  # the app crashed (its traceback is printed): not a success
        raise typer.Exit(tui.return_code)
    elsewhere = tui.continued_elsewhere
    dropped = tui.dropped_answer
    for line in words_on_leaving(
        name, tui.session, study, COME_BACK, elsewhere=elsewhere, dropped=dropped
    ):
        say(line)
    if tui.release_failed:
        say(
            "The item on screen stays reserved for you until its lease runs out: the store "
            f"could not be written ({tui.release_failed})."
        )


def ask_token(name: str) -> str:
    """The annotator's token: from $ANNOTATE_TOKEN, else typed at a prompt that does not echo."""
    from annotate.settings import settings

    token = settings().token
    if token:
        return token
    try:
        return typer.prompt(f"Token for {name}", hide_input=True)
    except typer.Abort:  # no terminal to ask on, or Ctrl+C / Ctrl+D at the prompt
        raise UserError(
            f"annotator {name!r} needs a token: type it at the prompt or set {TOKEN_ENV}"
        ) from None
