"""The key lists: the answer keys of a task (the terminal's answer bar, both help screens)
and every other key, with how to come back."""

from __future__ import annotations

from collections.abc import Callable

from annotate.specs import LabelOption, TaskSpec
from annotate.terminal_text import SafeText as Text

INLINE_LIMIT = 24
"""Options with texts up to this long share a line; longer ones (STS-B's anchors, RTE's
explanations) get a line each so nothing is cut at 80 columns."""

KEY_STYLE = "bold reverse"

COME_BACK = "run the same command later"
"""How to resume, in a terminal (the page says its own: open the page again)."""

Show = Callable[[LabelOption], Text]
"""How one option is drawn: `plain`, or the terminal answer bar's clickable keys."""


def key(name: str) -> Text:
    return Text(f" {name} ", style=KEY_STYLE)


def plain(option: LabelOption) -> Text:
    return Text.assemble(key(option.key), " ", Text(option.text))


LINE_WIDTH = 76
"""What one line of keys may take: 80 columns less the bar's padding and a margin."""

GAP = "   "


def option_lines(options: list[LabelOption], show: Show = plain) -> Text:
    """`1 Positive  2 Negative` on one line, or one option per line when the texts are long.
    Short options that do not fit one line at 80 columns (CB's 7-point scale) go in columns
    of one width, so the rows line up instead of wrapping wherever the line ends."""
    parts = [show(o) for o in options]
    if any(len(o.text) > INLINE_LIMIT for o in options):
        return Text("\n").join(parts)
    line = Text(GAP).join(parts)
    if line.cell_len <= LINE_WIDTH:
        return line
    width = max(p.cell_len for p in parts)
    per_row = max(1, (LINE_WIDTH + len(GAP)) // (width + len(GAP)))
    rows = []
    for start in range(0, len(parts), per_row):
        row = parts[start : start + per_row]
        for part in row[:-1]:
            part.append(" " * (width - part.cell_len))
        rows.append(Text(GAP).join(row))
    return Text("\n").join(rows)


def answer_keys_text(spec: TaskSpec, show: Show = plain) -> Text:
    """The answer keys of this task, each option drawn by `show`."""
    if spec.kind == "multi_answer":
        judge = Text("   ").join(show(o) for o in spec.answer_options())
        return Text.assemble(
            judge, "  the marked answer   ", key("↑↓"), " move   ", key("Enter"), " submit"
        )
    if spec.kind == "entity_choice":
        return Text.assemble(
            key("1 2 3…"),
            " name an entity by its number   ",
            key("↑↓"),
            " move   ",
            key("Enter"),
            " choose it",
        )
    return option_lines(spec.answer_options(), show)


def keys_text(spec: TaskSpec, come_back: str = COME_BACK) -> Text:
    """Every key: the answer keys, then the others (`come_back`: how to resume after q)."""
    commands = [
        ("f", "flag the item, with a comment (sent with your answer)"),
        ("u", "go back and change your previous test answer"),
        ("PgUp/PgDn", "scroll a long passage"),
        ("?", "help: keys and these guidelines"),
        ("q", f"quit; {come_back} to continue where you stopped"),
    ]
    lines = [Text("Answer keys", style="bold"), answer_keys_text(spec), Text("")]
    lines.append(Text("Other keys", style="bold"))
    lines += [Text.assemble((f" {k} ", "bold reverse"), f" {what}") for k, what in commands]
    return Text("\n").join(lines)
