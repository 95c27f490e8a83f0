"""MkDocs hook: the command reference (docs/reference.md) is generated from the Typer app when
the site is built, so it shows exactly what `annotate COMMAND --help` prints.

docs/reference.md holds the introduction and the line `<!-- commands -->`, which this hook
replaces with one section per command. `python docs/hooks/reference.py` prints the generated
Markdown (tests/test_docs.py checks it names every command).
"""

from __future__ import annotations

import sys
from pathlib import Path

MARKER = "<!-- commands -->"
WIDTH = 100


def command_help() -> list[tuple[str, str]]:
    """(`annotate PATH`, its --help text) for the app and every command, groups first."""
    import click
    import typer.main

    from annotate.cli import app

    root = typer.main.get_command(app)
    found: list[tuple[str, str]] = []

    def walk(command: click.Command, ctx: click.Context) -> None:
        found.append((ctx.command_path, command.get_help(ctx).rstrip()))
        for name in getattr(command, "commands", {}):
            sub = command.commands[name]  # type: ignore[attr-defined]
            walk(sub, click.Context(sub, info_name=name, parent=ctx, max_content_width=WIDTH))

    top = click.Context(root, info_name="annotate", max_content_width=WIDTH, terminal_width=WIDTH)
    walk(root, top)
    return found


def markdown() -> str:
    parts = []
    for path, text in command_help():
        parts.append(f"## `{path}`\n\n```text\n{text}\n```\n")
    return "\n".join(parts)


def on_page_markdown(text: str, page, config, files) -> str:  # MkDocs' hook signature
    if page.file.src_uri == "reference.md":
        if MARKER not in text:
            raise ValueError(f"docs/reference.md lost its {MARKER} line")
        return text.replace(MARKER, markdown())
    return text


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.stdout.write(markdown())
