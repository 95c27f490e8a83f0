"""MkDocs hook: the command reference (docs/reference.md) is generated from the Typer app when
the site is built, so it cannot drift from what `annotate COMMAND --help` says.

docs/reference.md holds the introduction and the line `<!-- commands -->`, which this hook
replaces with one section per command: what it does, its usage, its arguments, options and
subcommands as tables, and its examples. `python docs/hooks/reference.py` prints the generated
Markdown (tests/test_docs.py checks it names every command with its options).

Written here rather than with mkdocs-click: Typer (0.29) builds its commands on a Click of its
own (`typer._click`), whose options are not `click.Option`, so mkdocs-click lists no option
of any command. Each parameter's own help record (`get_help_record`) is what `--help` prints.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MARKER = "<!-- commands -->"
WIDTH = 100


def _cell(text: str, code: bool = False) -> str:
    """Text for one Markdown table cell, on one line. In a code span the table keeps pipes as
    text and entities stay as written; elsewhere pipes and angle brackets are escaped."""
    text = " ".join(text.split())
    if code:
        return text
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _paragraphs(text: str) -> str:
    """A help text as Markdown paragraphs: Typer's `\\b` (keep lines as written) becomes a
    text block; other paragraphs are joined into running text with code spans kept."""
    out = []
    for block in text.strip().split("\n\n"):
        if block.startswith("\b"):
            body = block.removeprefix("\b").strip("\n")
            out.append(f"```text\n{body}\n```")
        elif block.strip():
            out.append(" ".join(block.split()).replace("<", "&lt;").replace(">", "&gt;"))
    return "\n\n".join(out)


def _table(heading: str, columns: tuple[str, str], rows: list[tuple[str, str]]) -> list[str]:
    if not rows:
        return []
    lines = [f"**{heading}**", "", f"| {columns[0]} | {columns[1]} |", "|---|---|"]
    lines += [f"| `{_cell(name, code=True)}` | {_cell(text)} |" for name, text in rows]
    return [*lines, ""]


def command_sections() -> Iterator[tuple[str, list[str]]]:
    """(`annotate PATH`, its Markdown lines) for the app and every command, groups first."""
    import typer.main

    from annotate.cli import app

    root = typer.main.get_command(app)
    context_type: Any = root.context_class  # typer's own Click's Context

    def walk(command: Any, ctx: Any) -> Iterator[tuple[str, list[str]]]:
        lines = [_paragraphs(command.help or ""), ""]
        usage = " ".join(command.collect_usage_pieces(ctx))
        lines += ["**Usage**", "", "```text", f"{ctx.command_path} {usage}", "```", ""]
        records = [(p, p.get_help_record(ctx)) for p in command.get_params(ctx)]
        records = [(p, r) for p, r in records if r is not None and not p.hidden]
        arguments = [r for p, r in records if p.param_type_name == "argument"]
        options = [r for p, r in records if p.param_type_name != "argument"]
        lines += _table("Arguments", ("Argument", "Description"), arguments)
        lines += _table("Options", ("Option", "Description"), options)
        subcommands = getattr(command, "commands", {})
        lines += _table(
            "Commands",
            ("Command", "Description"),
            [(name, sub.get_short_help_str(1000)) for name, sub in subcommands.items()],
        )
        if command.epilog:
            lines += [_paragraphs(command.epilog), ""]
        yield ctx.command_path, lines
        for name, sub in subcommands.items():
            sub_ctx = context_type(sub, info_name=name, parent=ctx, max_content_width=WIDTH)
            yield from walk(sub, sub_ctx)

    top = context_type(root, info_name="annotate", max_content_width=WIDTH, terminal_width=WIDTH)
    yield from walk(root, top)


def markdown() -> str:
    return "\n".join(
        f"## `{path}`\n\n" + "\n".join(lines).rstrip() + "\n" for path, lines in command_sections()
    )


def on_page_markdown(text: str, page, config, files) -> str:  # MkDocs' hook signature
    if page.file.src_uri == "reference.md":
        if MARKER not in text:
            raise ValueError(f"docs/reference.md lost its {MARKER} line")
        return text.replace(MARKER, markdown())
    return text


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.stdout.write(markdown())
