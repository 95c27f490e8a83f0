"""`?`: every key of every console screen, over the current screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from annotate.terminal_text import SafeText as Text

KEYS: list[tuple[str, list[tuple[str, str]]]] = [
    ("Anywhere", [("?", "this help"), ("q", "quit"), ("tab", "next table or field")]),
    ("Studies", [("↑ ↓", "choose a study"), ("enter, o", "open it")]),
    (
        "Study (live)",
        [
            ("g", "the gate: trainees, close, admit, reject"),
            ("f", "flagged items"),
            ("r", "the report with charts"),
            ("escape", "back to the studies"),
        ],
    ),
    (
        "Gate",
        [
            ("c", "close training (median rule)"),
            ("a / x", "admit / reject the chosen trainee"),
            ("escape", "back"),
        ],
    ),
    (
        "Confirmation",
        [
            ("enter", "confirm (a reason is required)"),
            ("ctrl+f", "confirm despite the warnings (force)"),
            ("escape", "cancel"),
        ],
    ),
    (
        "Flags",
        [
            ("v", "mark the chosen flag resolved"),
            ("x", "exclude its item from scoring"),
            ("i", "include an excluded item again"),
            ("escape", "back"),
        ],
    ),
    ("Report", [("u", "build the report again with the new labels"), ("escape", "back")]),
]


def keys_text() -> Text:
    text = Text()
    for section, keys in KEYS:
        text.append(f"{section}\n", style="bold")
        for key, what in keys:
            text.append(f"  {key:<8}", style="bold cyan")
            text.append(f" {what}\n")
    return text


class ConsoleHelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark", "close", "Close"),
        Binding("q", "app.quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog"):
            yield Static(Text("Keys", style="bold"), classes="dialog-title")
            yield Static(keys_text(), id="help-keys")
            yield Static(
                Text(
                    "The study screen updates by itself within 2 s of any new label.\n"
                    "Escape or ? closes this help.",
                    style="dim",
                )
            )

    def on_mount(self) -> None:
        self.query_one("#help-dialog").focus()

    def action_close(self) -> None:
        self.dismiss()
