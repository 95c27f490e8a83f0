"""The key lists: the answer keys of a task (the terminal's answer bar, both help screens)
and every other key, with how to come back."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

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


def option_lines(options: list[LabelOption], show: Show = plain, width: int = LINE_WIDTH) -> Text:
    """`1 Positive  2 Negative` on one line, or one option per line when the texts are long.
    Short options that do not fit one line of `width` (CB's 7-point scale at 80 columns) go
    in columns of one width, so the rows line up instead of wrapping wherever the line ends."""
    parts = [show(o) for o in options]
    if any(len(o.text) > INLINE_LIMIT for o in options):
        return Text("\n").join(parts)
    line = Text(GAP).join(parts)
    if line.cell_len <= width:
        return line
    column = max(p.cell_len for p in parts)
    per_row = max(1, (width + len(GAP)) // (column + len(GAP)))
    rows = []
    for start in range(0, len(parts), per_row):
        row = parts[start : start + per_row]
        for part in row[:-1]:
            part.append(" " * (column - part.cell_len))
        rows.append(Text(GAP).join(row))
    return Text("\n").join(rows)


def fill(parts: list[Text], width: int) -> Text:
    """`parts` on one line, or on as many as `width` needs, each line broken between parts
    (never inside "Enter  choose it")."""
    lines: list[Text] = []
    for part in parts:
        if lines and lines[-1].cell_len + len(GAP) + part.cell_len <= width:
            lines[-1] = Text.assemble(lines[-1], GAP, part)
        else:
            lines.append(part)
    return Text("\n").join(lines)


def answer_keys_text(spec: TaskSpec, show: Show = plain, width: int = LINE_WIDTH) -> Text:
    """The answer keys of this task, each option drawn by `show`, in lines of `width` (a
    terminal narrower than 80 columns passes its own)."""
    if spec.kind == "multi_answer":
        judge = Text(GAP).join(show(o) for o in spec.answer_options())
        return fill(
            [
                Text.assemble(judge, "  the marked answer"),
                Text.assemble(key("↑↓"), " move"),
                Text.assemble(key("Enter"), " submit"),
            ],
            width,
        )
    if spec.kind == "entity_choice":
        return fill(
            [
                Text.assemble(key("1 2 3…"), " name an entity by its number"),
                Text.assemble(key("↑↓"), " move"),
                Text.assemble(key("Enter"), " choose it"),
            ],
            width,
        )
    return option_lines(spec.answer_options(), show, width)


def typed_key(keys: Collection[str], typed: str, char: str) -> tuple[str | None, str]:
    """Keys of several characters (a rating scale past 9: "10") typed one at a time: the key
    that `typed` then `char` completes, or None and what is typed so far. A key that begins a
    longer one ("1" of "10") waits for the next character, or Enter (`typed` then answers);
    a character that continues nothing starts afresh."""
    for attempt in (typed + char, char):
        longer = any(k != attempt and k.startswith(attempt) for k in keys)
        if attempt in keys and not longer:
            return attempt, ""
        if longer:
            return None, attempt
    return None, ""


def typed_keys_hint(spec: TaskSpec) -> Text | None:
    """How to type the keys of several characters, and those a longer one begins; None when
    every key is one keystroke."""
    keys = [o.key for o in spec.answer_options()]
    if all(len(k) == 1 for k in keys):
        return None
    parts = []
    for k in keys:
        if len(k) > 1:
            parts.append(Text.assemble(key(k), f" type {' then '.join(k)}"))
        elif any(other != k and other.startswith(k) for other in keys):
            parts.append(Text.assemble(key(k), f" type {k} then Enter"))
    return Text("; ").join(parts)


Command = tuple[str, str]
"""A key and what it does, as a help line says it."""

SCROLL_PASSAGE: Command = ("PgUp/PgDn", "scroll a long passage")
SCROLL_PINNED: Command = ("Shift+↑/↓", "scroll the question or hypothesis pinned below it")
CONTINUE: Command = ("Enter/Space", "continue")
RECHECK: Command = ("r", "check now instead of waiting for the next check")
REVISE_LAST: Command = ("u", "go back and change your last test answer")


@dataclass(frozen=True)
class ScreenKeys:
    """The keys of one screen, for its help: its answer keys (the item screen's only) and its
    other keys; `?` and `q`, which work on every screen, come after them."""

    answers: bool
    commands: list[Command]


def item_keys(pinned: bool = False) -> ScreenKeys:
    """The item screen's keys (`pinned`: it shows a pinned question or hypothesis)."""
    commands = [
        ("f", "flag the item, with a comment (sent with your answer)"),
        ("u", "go back and change your previous test answer"),
        SCROLL_PASSAGE,
    ]
    return ScreenKeys(True, commands + ([SCROLL_PINNED] if pinned else []))


def feedback_keys(pinned: bool = False) -> ScreenKeys:
    """A training answer's feedback: no answer keys (the answer is given)."""
    return ScreenKeys(False, [CONTINUE, SCROLL_PASSAGE] + ([SCROLL_PINNED] if pinned else []))


def waiting_keys() -> ScreenKeys:
    """Waiting for the gate, or for an item another annotator holds."""
    return ScreenKeys(False, [RECHECK])


def finished_keys(can_revise: bool) -> ScreenKeys:
    """All done (`can_revise`: a last test answer may still be changed) or turned away."""
    return ScreenKeys(False, [REVISE_LAST] if can_revise else [])


def keys_text(
    spec: TaskSpec,
    come_back: str = COME_BACK,
    width: int = LINE_WIDTH,
    keys: ScreenKeys | None = None,
) -> Text:
    """Every key of a screen (`keys`; default: the item screen's): the answer keys (in lines
    of `width`, as `answer_keys_text`), then the others (`come_back`: how to resume after q)."""
    keys = keys or item_keys()
    commands = [
        *keys.commands,
        ("?", "help: keys and these guidelines"),
        ("q", f"quit; {come_back} to continue where you stopped"),
    ]
    lines: list[Text] = []
    if keys.answers:
        lines += [Text("Answer keys", style="bold"), answer_keys_text(spec, width=width), Text("")]
        lines.append(Text("Other keys", style="bold"))
    lines += [Text.assemble((f" {k} ", "bold reverse"), f" {what}") for k, what in commands]
    return Text("\n").join(lines)
