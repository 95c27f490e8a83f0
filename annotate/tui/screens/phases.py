"""Screens between and after the items: waiting for the gate, refused, finished."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from annotate.presentation.answer_keys import ScreenKeys, finished_keys, waiting_keys
from annotate.presentation.closing import refusal_lines
from annotate.protocol.assignment import HeldElsewhere
from annotate.protocol.session import Progress
from annotate.terminal_text import SafeText as Text
from annotate.tui.screens.guidelines import come_back_hint
from annotate.tui.screens.messages import ScreenMessage
from annotate.tui.widgets.title import FittedHeader
from annotate.wording import count_of, seconds


def items(n: int, kind: str) -> str:
    return count_of(n, f"{kind} item")


class MessageScreen(Screen[None]):
    """A centred message with the annotator's counts; q leaves."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def title_text(self) -> str:
        raise NotImplementedError

    def lines(self) -> list[str]:
        raise NotImplementedError

    def help_keys(self) -> ScreenKeys:
        """The keys of this screen for its help: `?` and `q` only (a subclass adds its own)."""
        return finished_keys(False)

    def compose(self) -> ComposeResult:
        yield FittedHeader()
        with Vertical(classes="message-box"):
            yield Static(Text(self.title_text(), style="bold"), classes="message-title")
            yield Static(Text("\n\n".join(self.lines())), id="message")
        yield Footer()


class WaitingScreen(MessageScreen):
    """Training is done and the gate (median or manual rule) has not decided yet. Re-checks on
    its own, so the annotator can leave the terminal open and be moved on when admitted."""

    BINDINGS = [Binding("r", "recheck", "Check now")]

    def help_keys(self) -> ScreenKeys:
        return waiting_keys()

    class Recheck(ScreenMessage):
        """Time to ask the engine again whether the gate has decided."""

    def __init__(self, progress: Progress, poll_seconds: float) -> None:
        super().__init__(progress)
        self.poll_seconds = poll_seconds

    def title_text(self) -> str:
        return "Training finished — waiting for admission to the test phase"

    def lines(self) -> list[str]:
        p = self.progress
        return [
            f"You answered {items(p.training_done, 'training')}, {p.training_accuracy:.0%} right. "
            "Thank you!",
            "The researcher decides who goes on to the test items once everyone has finished "
            "training. This screen checks by itself every "
            f"{seconds(self.poll_seconds)} and moves on as soon as you are admitted.",
            f"You can also press q to leave and {come_back_hint(self.app)}.",
        ]

    def on_mount(self) -> None:
        self.set_interval(self.poll_seconds, self.action_recheck)

    def action_recheck(self) -> None:
        self.post_message(self.Recheck(self))


class HeldScreen(MessageScreen):
    """No test item is free for the annotator now, but some they have not labelled are on
    other people's screens (protocol HeldElsewhere): one may come back to them. Re-checks
    on its own and shows it as soon as one does; "all done" comes once none is left."""

    BINDINGS = [Binding("r", "recheck", "Check now")]

    def help_keys(self) -> ScreenKeys:
        return waiting_keys()

    class Recheck(ScreenMessage):
        """Time to ask the engine again for an item."""

    def __init__(self, progress: Progress, held: HeldElsewhere, poll_seconds: float) -> None:
        super().__init__(progress)
        self.held = held
        self.poll_seconds = poll_seconds

    def title_text(self) -> str:
        return "No item for you right now"

    def lines(self) -> list[str]:
        held, n = self.held, self.held.items
        on_screens = "is on another annotator's screen" if n == 1 else "are on others' screens"
        return [
            f"You labelled {items(self.progress.stream_done, 'test')}; your answers are saved.",
            f"{count_of(n, 'item')} you have not labelled {on_screens}. If one is left "
            f"unanswered, it comes to you: the first within {count_of(held.minutes, 'minute')}.",
            f"This screen checks by itself every {seconds(self.poll_seconds)}. You can also "
            "press q to leave: nothing is lost.",
        ]

    def refresh_with(self, progress: Progress, held: HeldElsewhere) -> None:
        """The same wait with newer figures: the text is refilled, the screen kept."""
        self.progress, self.held = progress, held
        self.query_one("#message", Static).update(Text("\n\n".join(self.lines())))

    def on_mount(self) -> None:
        self.set_interval(self.poll_seconds, self.action_recheck)

    def action_recheck(self) -> None:
        self.post_message(self.Recheck(self))


class StudyCompleteScreen(MessageScreen):
    """Someone opens a study whose test items all have their labels: told at once, before
    any training that could lead nowhere."""

    def title_text(self) -> str:
        return "This study is complete"

    def lines(self) -> list[str]:
        return [
            "Every test item already has all the labels it needs, so there is nothing to "
            "label here and no training to do. Thank you for coming!",
            "Press q to leave.",
        ]


class RejectedScreen(MessageScreen):
    """The gate refused the annotator. A researcher may still admit them by hand
    (Phase.awaits_researcher): the screen checks quietly, and moves on to the test items if so."""

    class Recheck(ScreenMessage):
        """Time to ask the engine again whether the annotator is still refused."""

    def __init__(self, progress: Progress, poll_seconds: float) -> None:
        super().__init__(progress)
        self.poll_seconds = poll_seconds

    def on_mount(self) -> None:
        if self.progress.phase.awaits_researcher:
            self.set_interval(self.poll_seconds, self.action_recheck)

    def action_recheck(self) -> None:
        self.post_message(self.Recheck(self))

    def title_text(self) -> str:
        return "Thank you for your work"

    def lines(self) -> list[str]:
        return [*refusal_lines(self.progress), "Press q to leave."]


class FinishedScreen(MessageScreen):
    """No test item is left for the annotator. Their last test answer can still be revised,
    as from an item screen (the engine says whether it may be)."""

    BINDINGS = [Binding("u", "revise", "Revise previous")]

    class ReviseRequested(ScreenMessage):
        """The annotator asked to go back to their last test answer."""

    def __init__(self, progress: Progress, *, last_not_needed: bool = False) -> None:
        super().__init__(progress)
        self.last_not_needed = last_not_needed
        """The last answer came after others had completed its item: it was not stored."""

    def title_text(self) -> str:
        return "All done — thank you!"

    def lines(self) -> list[str]:
        p = self.progress
        saved = "Your answers are saved."
        if self.last_not_needed:
            saved = (
                "Your last answer was not needed: other annotators completed that item while "
                "it waited. Every answer before it is saved."
            )
        keys = "Press u to change your last answer, or q to leave." if p.stream_done else ""
        return [
            f"You labelled {items(p.stream_done, 'test')}. No item is left for you in this study.",
            f"{saved} {keys or 'Press q to leave.'}",
        ]

    def help_keys(self) -> ScreenKeys:
        return finished_keys(bool(self.progress.stream_done))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # No test answer to go back to (every item filled before theirs came): no `u`.
        return bool(self.progress.stream_done) if action == "revise" else True

    def action_revise(self) -> None:
        self.post_message(self.ReviseRequested(self))


class PausedScreen(MessageScreen):
    """Catch items said the annotator drifted and every refresher item was used already: no
    more test items until the researcher decides (they are warned)."""

    def title_text(self) -> str:
        return "Paused — thank you so far"

    def lines(self) -> list[str]:
        p = self.progress
        return [
            f"You labelled {items(p.stream_done, 'test')}; your answers are saved.",
            "Some recent answers on check items did not match, and the refresher items are "
            "used up, so no more test items are shown to you for now. The researcher has been "
            "told and will get in touch.",
            "Press q to leave.",
        ]
