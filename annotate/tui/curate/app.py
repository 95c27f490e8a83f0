"""The curator's app, in one of three modes: author new pairs, review others' examples blind,
or settle the disagreement queue. The screens call the `CurationDesk`; the app decides which
screen comes next (the next blind example, the next open disagreement, or "nothing left")."""

from __future__ import annotations

from sqlalchemy import Engine
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from annotate.curation.desk import CurationDesk
from annotate.curation.examples import ExampleView
from annotate.curation.review import ReviewFilter
from annotate.text import terminal_safe
from annotate.tui.crash import SafeCrash
from annotate.tui.curate.screens.adjudicate import AdjudicateScreen
from annotate.tui.curate.screens.author import AuthorScreen
from annotate.tui.curate.screens.common import ExampleScreen
from annotate.tui.curate.screens.confirm import ConfirmDiscard
from annotate.tui.curate.screens.done import NothingLeftScreen
from annotate.tui.curate.screens.review import ReviewScreen
from annotate.wording import count_of

AUTHOR, REVIEW, ADJUDICATE = "author", "review", "adjudicate"


class CurateApp(SafeCrash, App[None]):
    CSS_PATH = "curate.tcss"
    ENABLE_COMMAND_PALETTE = False  # curators get the keys they need, nothing else
    # Ctrl+Q, not q: in authoring mode every letter goes into a text box.
    BINDINGS = [Binding("ctrl+q", "request_quit", "Quit", priority=True)]
    # Narrower than the two columns need (the choices take 50 cells): one above the other.
    HORIZONTAL_BREAKPOINTS = [(0, "-stacked"), (80, "-side-by-side")]

    def __init__(
        self, desk: CurationDesk, mode: str = AUTHOR, start_from: ExampleView | None = None
    ) -> None:
        super().__init__()
        self.desk = desk
        self.mode = mode
        self.start_from = start_from
        """The example the author's first form is filled from (`--from ID`)."""
        self.title = terminal_safe(f"Curate {desk.info.name}")
        self.sub_title = terminal_safe(f"{desk.info.name} · {desk.curator} · {mode}")
        self.skipped: set[int] = set()
        """Examples passed over with Ctrl+N in this run: not shown again in this run (a
        reviewer's skips are also stored: next time they come last)."""
        self.reviews_done = 0
        self.settled = 0
        self.author_screen: AuthorScreen | None = None

    def on_mount(self) -> None:
        if self.mode == AUTHOR:
            self.author_screen = AuthorScreen(self.desk, self.start_from)
            self.push_screen(self.author_screen)
        else:
            self.push_screen(self._next_screen())

    def action_request_quit(self) -> None:
        """Ctrl+Q: quit, but ask first when the author has a pair half-written, or a reviewer
        or adjudicator a judgement chosen and not stored."""
        if isinstance(self.screen, ConfirmDiscard):
            self.exit()  # Ctrl+Q again on the question: yes, quit
            return
        question = self._unsaved_question()
        if question is None:
            self.exit()
            return

        def answered(discard: bool | None) -> None:
            if discard:
                self.exit()

        self.push_screen(question, answered)

    def _unsaved_question(self) -> ConfirmDiscard | None:
        """The question Ctrl+Q asks on this screen first, or None: nothing would be lost."""
        screen = self.screen
        if screen is self.author_screen and self.author_screen.has_unsaved_work():
            return ConfirmDiscard("Quit without saving this pair?")
        if isinstance(screen, ExampleScreen) and screen.has_unsaved_work():
            return ConfirmDiscard("Quit without saving?", screen.UNSAVED)
        return None

    @property
    def pairs_saved(self) -> int:
        return self.author_screen.saved if self.author_screen else 0

    def summary(self) -> str:
        """One line for the terminal after the app closes."""
        who, name = self.desk.curator, self.desk.info.name
        if self.mode == AUTHOR:
            return f"{who}: {count_of(self.pairs_saved, 'pair')} saved in set {name!r}."
        if self.mode == REVIEW:
            return f"{who}: {count_of(self.reviews_done, 'review')} saved in set {name!r}."
        return f"{who}: {count_of(self.settled, 'disagreement')} settled in set {name!r}."

    # --- what comes next ----------------------------------------------------------------------
    def _next_screen(self) -> Screen[None]:
        if self.mode == REVIEW:
            example, progress = self.desk.next_with_progress(self.skipped)
            if example is None:
                narrowed = self.desk.wanted.words()
                which = f"{narrowed} (your filter)" if narrowed else "by others in this set"
                return NothingLeftScreen(
                    "Nothing left to review.",
                    f"{self.summary()} Every example {which} has your opinion"
                    + (" or was skipped in this run." if self.skipped else "."),
                )
            return ReviewScreen(self.desk, example, progress)
        queue = [e for e in self.desk.queue() if e.example.id not in self.skipped]
        if not queue and self.skipped:
            return NothingLeftScreen(
                "No open disagreement left in this run.",
                f"{self.summary()} {count_of(len(self.skipped), 'disagreement')} passed over "
                "with Ctrl+N: still open, and offered again next time.",
            )
        if not queue:
            # With --override given, pointing at it again read as if it had not been taken.
            rule = (
                "You settle examples you did not review (your own too: you gave --override)."
                if self.desk.override_reason
                else "You settle examples you neither wrote nor reviewed (your own only with "
                "--override REASON)."
            )
            return NothingLeftScreen(
                "No open disagreement for you to settle.", f"{self.summary()} {rule}"
            )
        return AdjudicateScreen(self.desk, queue[0], len(queue))

    def _advance(self, example_id: int, skipped: bool) -> None:
        if skipped:
            self.skipped.add(example_id)
            if self.mode == REVIEW:
                self.desk.skip_review(example_id)  # remembered: to the back of the queue
        elif self.mode == REVIEW:
            self.reviews_done += 1
        else:
            self.settled += 1
        self.switch_screen(self._next_screen())

    def on_review_screen_done(self, message: ReviewScreen.Done) -> None:
        if message.origin is self.screen:  # a late second keypress must not skip a screen
            self._advance(message.example_id, message.skipped)

    def on_adjudicate_screen_done(self, message: AdjudicateScreen.Done) -> None:
        if message.origin is self.screen:
            self._advance(message.example_id, message.skipped)


def create_curate_app(
    engine: Engine,
    set_name: str,
    curator: str,
    *,
    review: bool = False,
    adjudicate: bool = False,
    wanted: ReviewFilter | None = None,
    override_reason: str = "",
    start_from: int | None = None,
) -> CurateApp:
    """The curation app for `curator` on set `set_name` (used by `annotate curate` and the
    tests); `wanted` narrows a reviewer's queue; `start_from` fills the author's first form
    from that example. Raises UserError before any screen appears when the set does not
    exist, or the example is not an active one of it."""
    if review and adjudicate:
        raise ValueError("review and adjudicate are two different modes")
    if start_from is not None and (review or adjudicate):
        raise ValueError("only the author starts a pair from an example")
    desk = CurationDesk.open(engine, set_name, curator, wanted, override_reason)
    example = desk.starting_point(start_from) if start_from is not None else None
    mode = REVIEW if review else ADJUDICATE if adjudicate else AUTHOR
    return CurateApp(desk, mode, example)
