"""Render computed data: a rich table for people, JSON for programs. Text from data files and
from people is never parsed as markup."""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from annotate.wording import fixed

if TYPE_CHECKING:  # rich loads on first output, not for --help
    from rich.console import Console


UNFOLDED_WIDTH = 10_000
"""Output that is not a terminal (a pipe, a file) is drawn this wide: tables keep their
natural width and no row is folded, so `annotate status X | less` or `| grep` sees whole rows."""


def console(stderr: bool = False) -> Console:
    """A console for stdout (or stderr) at the width the output wants: `--width N` if given,
    else the terminal's, else (piped) unfolded."""
    from rich.console import Console

    from annotate.cli import context

    stream = sys.stderr if stderr else sys.stdout
    width = context.width_requested
    if width is None and not _is_terminal(stream):
        width = UNFOLDED_WIDTH
    return Console(stderr=stderr, highlight=False, width=width)


def _is_terminal(stream: Any) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def print_json(data: Any, indent: int | None = 2) -> None:
    """JSON keeps every string exactly (a program reads it), but escapes the characters a
    terminal would obey, as \\uXXXX: the same JSON value, harmless if it lands on a screen.
    json.dumps already escapes C0; DEL, C1 and bidi controls it leaves raw."""
    if indent is None:  # compact: the C encoder, no whitespace (a report can be megabytes)
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str)
    else:
        text = json.dumps(data, indent=indent, ensure_ascii=False, default=str)
    sys.stdout.write(_UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def print_table(
    rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]], title: str | None = None
) -> None:
    """`columns` are (key, heading); every cell is plain text."""
    from rich.table import Table

    from annotate.terminal_text import SafeText as Text

    # A str title would be parsed as markup: a Text is shown as written.
    table = Table(title=None if title is None else Text(title), title_justify="left")
    for _, heading in columns:
        table.add_column(heading, overflow="fold")
    for row in rows:
        table.add_row(*(Text(_cell(row.get(key))) for key, _ in columns))
    console().print(table)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return fixed(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def say(message: str) -> None:
    from annotate.terminal_text import SafeText as Text

    # soft_wrap: a message's line is never folded, so paths and commands in it copy whole.
    console().print(Text(message), soft_wrap=True)
    note_store(message)


def warn(message: str) -> None:
    from annotate.terminal_text import SafeText as Text

    console(stderr=True).print(Text(message), soft_wrap=True)
    note_store(message)


SUGGESTED = re.compile(r"`annotate\s")
"""How a message quotes a command to run next."""


def store_note(message: str) -> str | None:
    """After the first message of a command that suggests an `annotate` command, when --db was
    typed: that a suggestion copied as written reaches the default store, and what to add
    (the URL's password masked, so it is not printed again). None otherwise."""
    from annotate.cli import context
    from annotate.text import redacted_url

    db = context.db_typed
    if db is None or context.db_noted or not SUGGESTED.search(message):
        return None
    context.db_noted = True
    shown = shlex.quote(redacted_url(db))
    masked = " (*** is the password you gave)" if shown != shlex.quote(db) else ""
    return (
        "note: the command suggested above, as written, uses the default store: run it as "
        f"`annotate --db {shown} …` (or set ANNOTATE_DB={shown}){masked}"
    )


def note_store(message: str) -> None:
    """Say `store_note` (on stderr) after `message`, printed by its caller, when it applies."""
    if (note := store_note(message)) is not None:
        warn(note)
