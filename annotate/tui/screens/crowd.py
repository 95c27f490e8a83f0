"""The screens of a crowd study around the protocol: consent, the exit survey, the exit with
its completion code, and the window another window took over. What they say comes from the
engine (annotate/protocol/crowd.py); they only collect keys and show it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from annotate.presentation.answer_keys import ScreenKeys
from annotate.presentation.guidelines import reflow
from annotate.protocol.crowd import Exit
from annotate.protocol.crowd_config import SurveyQuestion
from annotate.protocol.windows import CONTINUED
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.messages import ScreenMessage
from annotate.tui.widgets.title import FittedHeader


class ConsentScreen(Screen[None]):
    """The researcher's consent text; a agrees, n does not (and ends the study)."""

    BINDINGS = [
        Binding("a", "agree", "I agree"),
        Binding("n", "decline", "I do not agree"),
    ]

    class Answered(ScreenMessage):
        def __init__(self, origin: Screen, agree: bool) -> None:
            super().__init__(origin)
            self.agree = agree

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield FittedHeader()
        with VerticalScroll(id="body"):
            yield Static(Text("Consent", style="bold"), classes="dialog-title")
            yield Static(Text(reflow(self.text)), id="consent")
        yield Static(
            Text.assemble(
                ("Press a", "bold"),
                " if you agree to take part, ",
                ("n", "bold"),
                " if you do not.",
            ),
            id="start-line",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#body").focus()

    def help_keys(self) -> ScreenKeys:
        return ScreenKeys(False, [("a", "I agree"), ("n", "I do not agree")])

    def action_agree(self) -> None:
        self.post_message(self.Answered(self, True))

    def action_decline(self) -> None:
        self.post_message(self.Answered(self, False))


class SurveyScreen(Screen[None]):
    """One question of the exit survey: a choice by its number, or free text and Enter.
    Enter on nothing skips a question that is not required."""

    class Answered(ScreenMessage):
        def __init__(self, origin: Screen, question: SurveyQuestion, answer: str) -> None:
            super().__init__(origin)
            self.question = question
            self.answer = answer

    def __init__(self, question: SurveyQuestion, number: int, of: int) -> None:
        super().__init__()
        self.question = question
        self.number = number
        self.of = of

    def compose(self) -> ComposeResult:
        q = self.question
        yield FittedHeader()
        with Vertical(classes="message-box"):
            yield Static(
                Text(f"A last question ({self.number} of {self.of})", style="bold"),
                classes="message-title",
            )
            yield Static(Text(q.prompt), id="survey-prompt")
            if q.kind == "choice":
                lines = [
                    Text.assemble((f" {n} ", "bold reverse"), f" {c}")
                    for n, c in enumerate(q.choices, 1)
                ]
                yield Static(Text("\n").join(lines), id="survey-choices")
            else:
                yield Input(placeholder="your answer", max_length=q.max_length, id="survey-text")
            how = "Press the number of your answer." if q.kind == "choice" else "Enter sends it."
            if not q.required:
                how += (
                    " Enter on nothing skips the question."
                    if q.kind == "text"
                    else (" Enter skips the question.")
                )
            yield Static(Text(how, style="italic"), id="survey-hint")
        yield Footer()

    def on_mount(self) -> None:
        if self.question.kind == "text":
            self.query_one(Input).focus()

    def on_key(self, event) -> None:
        q = self.question
        if q.kind != "choice":
            return
        if event.key.isdigit() and 1 <= int(event.key) <= len(q.choices):
            event.stop()
            self.post_message(self.Answered(self, q, q.choices[int(event.key) - 1]))
        elif event.key == "enter" and not q.required:
            event.stop()
            self.post_message(self.Answered(self, q, ""))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip() or not self.question.required:
            self.post_message(self.Answered(self, self.question, event.value))


class ExitScreen(Screen[None]):
    """The end: why, and the completion code to give the platform (q leaves, as anywhere)."""

    def __init__(self, leave: Exit) -> None:
        super().__init__()
        self.leave = leave

    def compose(self) -> ComposeResult:
        yield FittedHeader()
        with Vertical(classes="message-box"):
            yield Static(Text("Thank you", style="bold"), classes="message-title")
            yield Static(Text(self.leave.message), id="exit-message")
            yield Static(
                Text.assemble("Your completion code: ", (self.leave.code, "bold reverse")),
                id="exit-code",
            )
            if self.leave.redirect_url:
                yield Static(Text(f"To finish, open {self.leave.redirect_url}"), id="exit-redirect")
            yield Static(Text("Press q to leave."), id="exit-leave")
        yield Footer()


@dataclass(frozen=True)
class DroppedAnswer:
    """An answer given in a window that another one had taken over: it was not stored."""

    answer: str
    comment: str | None


class ContinuedScreen(Screen[None]):
    """A newer window of the same annotator took over: this one takes no more answers. When
    an answer given here was refused for it, the screen says so, with its flag comment."""

    def __init__(self, dropped: DroppedAnswer | None = None) -> None:
        super().__init__()
        self.dropped = dropped

    def compose(self) -> ComposeResult:
        yield FittedHeader()
        with Vertical(classes="message-box"):
            yield Static(Text("Continued in another window", style="bold"), classes="message-title")
            yield Static(Text(self.message()), id="message")
        yield Footer()

    def message(self) -> str:
        saved = "Every answer given here before is saved"
        if self.dropped is None:
            return f"{CONTINUED} {saved}; go on in the other window. Press q to leave."
        lost = f"The answer you just gave here ({self.dropped.answer}) was"
        if self.dropped.comment:
            lost = lost.removesuffix(" was") + f" and its comment “{self.dropped.comment}” were"
        return (
            f"{CONTINUED} {lost} not saved: give it again in the other window. "
            f"{saved}. Press q to leave."
        )
