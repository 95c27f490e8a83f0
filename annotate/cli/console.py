"""`annotate console [STUDY]`: the researcher's live view of the studies (a terminal app)."""

from __future__ import annotations

import typer

from annotate.cli.context import app, options


@app.command("console")
def console_command(
    ctx: typer.Context,
    study: str = typer.Argument(None, help="Open this study at once (default: the study list)"),
    researcher: str = typer.Option(
        None,
        "--as",
        help="Your name, recorded with the gate decisions and flag actions you make "
        "(default: your login name)",
    ),
) -> None:
    """The researcher's console: every study; one study live (labels per item, rate, ETA, each
    annotator, the status warnings, catch accuracy and drift); the gate with its warnings;
    flagged items; the report with charts.

    The live view only reads, in short transactions, so it never slows the annotators; it
    writes only what you confirm (gate decisions, flag actions). Quit with q;
    ? lists every key. In a browser: `annotate serve --console`."""
    # Textual costs ~0.3 s to import: only this command pays for it.
    from annotate.tui.console.app import create_console_app

    ws = options(ctx).workspace()
    tui = create_console_app(ws.engine, study, researcher=researcher)
    tui.run()
    if tui.return_code:  # the app crashed (its traceback is printed): not a success
        raise typer.Exit(tui.return_code)
