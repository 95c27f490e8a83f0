"""The first screen: the task, its guidelines, the label-prior hint and the keys."""

from __future__ import annotations

import re

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotate.protocol.session import Phase, Progress
from annotate.specs import ProtocolSpec, TaskSpec
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.messages import ScreenMessage
from annotate.tui.widgets.answer_bar import answer_keys_text
from annotate.tui.widgets.title import FittedHeader
from annotate.wording import count_of

PRIOR_HINTS = {
    "balanced": "Labels in this task are roughly balanced: each answer is about as common "
    "as the others.",
    "skewed": "Labels in this task are skewed: some answers are much more common than others.",
}
"""The GLUE FAQ told annotators whether a task's labels were balanced; "unknown" says nothing."""


LIST_ITEM = re.compile(r"([-*•]|\d+[.)])\s")


def reflow(guidelines: str) -> str:
    """The spec's guidelines rewrapped: the TOML files are hard-wrapped at ~95 columns, which on
    an 80-column terminal leaves a stray word on every other line. Paragraphs and list items
    keep their own lines; only the breaks inside them go."""
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", guidelines.strip()):
        lines: list[str] = []
        for line in paragraph.splitlines():
            stripped = line.strip()
            if lines and not LIST_ITEM.match(stripped):
                lines[-1] += " " + stripped
            else:
                lines.append(stripped)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def prior_hint(spec: TaskSpec, protocol: ProtocolSpec) -> str | None:
    if not protocol.label_prior_hint:
        return None
    return PRIOR_HINTS.get(spec.label_prior)


def where_you_are(progress: Progress, protocol: ProtocolSpec) -> str:
    if progress.phase is Phase.TRAINING:
        if progress.training_done:
            return (
                f"Welcome back: you have done {progress.training_done} of "
                f"{count_of(progress.training_quota, 'training item')}."
            )
        feedback = (
            "after each one you will see the right answer"
            if protocol.training_feedback
            else "you will not see the right answers"
        )
        return (
            f"You start with {count_of(progress.training_quota, 'training item')}: {feedback}. "
            "Then come the test items, without feedback."
        )
    if progress.stream_done:
        return (
            "Welcome back: you are in the test phase "
            f"({count_of(progress.stream_done, 'item')} done). "
            "There is no feedback on test items."
        )
    if progress.phase is Phase.TEST or progress.training_quota == 0:
        return "You start with the test items. There is no feedback on them."
    return "You have finished training."


COME_BACK = "run the same command later"
"""How to resume, in a terminal (the browser app says its own: open the page again)."""


def come_back_hint(app: object) -> str:
    return getattr(app, "COME_BACK", COME_BACK)


def keys_text(spec: TaskSpec, come_back: str = COME_BACK) -> Text:
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


class GuidelinesScreen(Screen[None]):
    BINDINGS = [Binding("enter", "start", "Start")]

    class Start(ScreenMessage):
        """The annotator has read the guidelines."""

    def __init__(
        self,
        spec: TaskSpec,
        protocol: ProtocolSpec,
        progress: Progress,
        preface: str | None = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.protocol = protocol
        self.progress = progress
        self.preface = preface
        """The researcher's own words above the task's guidelines (a crowd study's settings)."""

    def compose(self) -> ComposeResult:
        yield FittedHeader()
        with VerticalScroll(id="body"):
            yield Static(Text(self.spec.title, style="bold"), classes="dialog-title")
            if self.preface:
                yield Static(Text(reflow(self.preface)), id="preface")
            yield Static(Text(reflow(self.spec.guidelines)), id="guidelines")
            if (hint := prior_hint(self.spec, self.protocol)) is not None:
                yield Static(Text(hint, style="italic"), id="prior-hint")
            yield Static(keys_text(self.spec, come_back_hint(self.app)), id="keys")
        yield Static(
            Text.assemble(
                where_you_are(self.progress, self.protocol),
                " ",
                ("Press Enter to start.", "bold"),
            ),
            id="start-line",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#body").focus()

    def action_start(self) -> None:
        self.post_message(self.Start(self))
