"""`annotate demo`: the whole protocol on the bundled demo data, in a throwaway folder."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from annotate.cli.context import app
from annotate.cli.output import say
from annotate.demo import DEMO_TASKS
from annotate.errors import UserError

USER_ACCURACY = 0.9
"""Accuracy of the simulated stand-in for the user under --simulate."""


@app.command()
def demo(
    headless: bool = typer.Option(
        False, "--simulate", help="Run headless: a simulated annotator takes your place"
    ),
    task: str = typer.Option(
        "rte", "--task", help=f"Demo task: {', '.join(DEMO_TASKS)} (or 'all' with --simulate)"
    ),
    folder: Path = typer.Option(
        None, "--dir", help="Folder for the demo store and report (default: a new temp folder)"
    ),
    name: str = typer.Option("you", "--as", help="Your annotator name"),
) -> None:
    """Try the protocol on the bundled demo data: training with feedback, the gate, then test
    items whose other four slots simulated co-annotators have filled; then the report."""
    from annotate.demo import build_demo_study
    from annotate.protocol.studies import load_study
    from annotate.workspace import open_workspace

    keys = list(DEMO_TASKS) if task == "all" else [task]
    if any(k not in DEMO_TASKS for k in keys):
        raise UserError(f"unknown demo task {task!r}; choose {', '.join(DEMO_TASKS)} or all")
    if task == "all" and not headless:
        raise UserError("--task all needs --simulate (you label one study at a time)")
    folder = folder or Path(tempfile.mkdtemp(prefix="annotate-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    ws = open_workspace(str(folder / "demo.db"), create=True)
    for key in keys:
        study = f"demo-{key}"
        try:
            load_study(ws.engine, study)  # a demo folder used again: carry on where it was
        except UserError:
            say(f"building {study}: importing demo data, simulated co-annotators at work …")
            build_demo_study(ws.engine, key)
        if headless:
            from annotate.simulate import simulate

            simulate(ws.engine, study, 1, USER_ACCURACY, seed=11, prefix=f"{name}-")
        else:
            from annotate.tui.app import create_app

            create_app(ws.engine, study, name, create_annotator=True).run()
        _write_reports(ws.engine, study, folder, show=headless)
    say(f"demo store: {folder / 'demo.db'} (use it with: annotate --db {folder / 'demo.db'} …)")


def _write_reports(engine, study: str, folder: Path, *, show: bool) -> None:
    import json

    from annotate.cli.output import console
    from annotate.report.build import study_report
    from annotate.report.render.markdown import render_markdown
    from annotate.report.render.table import render_table

    report = study_report(engine, study)
    data = report.to_json()
    markdown = folder / f"{study}-report.md"
    markdown.write_text(render_markdown(report) + "\n", encoding="utf-8")
    (folder / f"{study}-report.json").write_text(
        json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    if show:
        render_table(report, console())
    else:
        say(report.summary)
    say(f"report: {markdown} (and .json)")
