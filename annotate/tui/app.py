"""The annotator app: guidelines, then items until the protocol says stop.

The app is the only part of the TUI that talks to the engine (`AnnotatorSession`): screens post
messages (answered, continue, re-check) and the app stores, then decides what comes next from
what the engine says. An answer is committed before the next screen is built, so `kill -9`
loses at most the item on the screen; a new app resumes where the engine says.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from annotate.errors import UserError
from annotate.presentation.feedback import revised_answer
from annotate.protocol import crowd
from annotate.protocol.answers import describe
from annotate.protocol.catch import REFRESHER_ITEMS
from annotate.protocol.crowd_config import CrowdConfig
from annotate.protocol.session import (
    NOTHING_TO_REVISE,
    AnnotatorSession,
    ItemTaken,
    ItemView,
    Phase,
)
from annotate.protocol.studies import TEST
from annotate.protocol.windows import ContinuedElsewhere
from annotate.store.engine import HELD, is_full_disk, is_held, is_store_gone
from annotate.text import terminal_safe
from annotate.tui.crash import SafeCrash
from annotate.tui.screens.guidelines import GuidelinesScreen
from annotate.tui.screens.messages import ScreenMessage
from annotate.wording import count_of

if TYPE_CHECKING:  # later screens load after the first one is on the terminal (_preload)
    from annotate.tui.screens.discard import Unsent
    from annotate.tui.screens.feedback import FeedbackScreen
    from annotate.tui.screens.item import ItemScreen
    from annotate.tui.screens.phases import FinishedScreen, WaitingScreen

T = TypeVar("T")


class LabelApp(SafeCrash, App[None]):
    CSS_PATH = "app.tcss"
    ENABLE_COMMAND_PALETTE = False  # annotators get the keys they need, nothing else
    continued_elsewhere = False
    """A newer window of this annotator took over this one (ContinuedScreen); a class default,
    as the served tab's app (web/app.py) does not run this class's __init__."""

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    CLIENT = "terminal"
    """What kind of window this is, as its visit records it (windows.py)."""

    poll_seconds: float = 5.0
    """How often the waiting screen asks whether the gate has decided (tests shorten it)."""
    RECONNECT_FIRST_S: float = 0.5
    RECONNECT_MAX_S: float = 8.0
    """The pause before trying an unreachable store again doubles from the first to the max."""
    # Class-level, so the browser tab's app (web/app.py), made without this __init__, has them.
    held_answer: ItemScreen.Answered | None = None
    """An answer the screen said it keeps while the store is away, not stored yet."""
    dropped_answer: str | None = None
    """The held answer the annotator chose to discard by quitting (described), or None."""
    IDLE_S: float = 0.5
    """No key for this long: the annotator is reading, and the store does the upkeep the
    keypresses left (AnnotatorSession.idle)."""

    def __init__(self, session: AnnotatorSession, study: str, annotator: str) -> None:
        super().__init__()
        self.session = session
        self.title = terminal_safe(session.spec.title)
        self.sub_title = terminal_safe(f"{study} · {annotator}")
        self.started = time.monotonic()
        self.shown_test = False
        """Whether a test item has been shown in this run (to announce the phase change)."""
        self.last_answer = time.monotonic()
        """When the annotator last answered: reading since then (IDLE_S)."""
        self.last_not_needed = False
        """The last answer came after others had completed its item (its lease ran out)."""
        self.release_failed: str | None = None
        """Why the item on screen could not be given back at Quit (it stays leased until its
        lease runs out), or None."""

    @property
    def crowd(self) -> CrowdConfig | None:
        """A crowd study's settings (consent, survey, codes); None for any other study."""
        return crowd.config_of(self.session.ctx) if self.session is not None else None

    # --- routing ------------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self.session.visit_id is None:  # an app built on a session of its own (the web app)
            self.session.claim_window(self.CLIENT)
        self.set_interval(self.IDLE_S, self._when_idle)
        self.set_interval(self.poll_seconds, self._refused_meanwhile)
        progress = self.session.progress()
        if self.crowd is not None:
            if self._crowd_finish(self.push_screen):  # back after leaving: say so first
                return
            if crowd.needs_consent(*self._who()):
                from annotate.tui.screens.crowd import ConsentScreen

                self.push_screen(ConsentScreen(self.crowd.consent or ""))
                return
        elif progress.phase is Phase.REJECTED:  # nothing to start: say so first, not "start"
            from annotate.tui.screens.phases import RejectedScreen

            self.push_screen(RejectedScreen(progress, self.poll_seconds))
            return
        elif progress.paused:  # catch items paused them: say so first, not "start"
            from annotate.tui.screens.phases import PausedScreen

            self.push_screen(PausedScreen(progress))
            return
        elif (
            progress.phase is Phase.TEST
            and progress.test_done
            and self.session.nothing_left(progress.test_done)
        ):  # back with every item they can take labelled: say so, not "start"
            from annotate.tui.screens.phases import FinishedScreen

            self.push_screen(FinishedScreen(progress))
            return
        if progress.stream_done == 0 and self.session.study_complete():
            from annotate.tui.screens.phases import StudyCompleteScreen

            self.push_screen(StudyCompleteScreen(progress))  # before any training
            return
        # back while the gate decides (phase() first makes the decisions no researcher needs)
        if progress.phase is Phase.WAITING and self.session.phase() is Phase.WAITING:
            from annotate.tui.screens.phases import WaitingScreen

            self.push_screen(WaitingScreen(progress, self.poll_seconds))
            return
        self._push_guidelines(progress)

    def _push_guidelines(self, progress) -> None:
        spec, protocol = self.session.spec, self.session.ctx.protocol
        preface = self.crowd.guidelines if self.crowd is not None else None
        self.push_screen(GuidelinesScreen(spec, protocol, progress, preface))
        self.call_after_refresh(self._preload)

    # --- a crowd study's phases (annotate/protocol/crowd.py decides) --------------------------
    def _who(self) -> tuple[Engine, str, str]:
        return self.session.engine, self.session.ctx.study.name, self.session.annotator.name

    async def on_consent_screen_answered(self, message) -> None:
        if not self._is_current(message):
            return
        engine, study, name = self._who()
        leave = crowd.record_consent(
            engine, study, name, message.agree, visit_id=self.session.visit_id
        )
        if leave is not None:
            from annotate.tui.screens.crowd import ExitScreen

            self.switch_screen(ExitScreen(leave))
            return
        self.pop_screen()
        self._push_guidelines(self.session.progress())

    def _crowd_finish(self, show: Callable[[Screen], object] | None = None) -> bool:
        """Where the worker has nothing left to do: the next survey question or the exit
        (True), or nothing here to show (False: waiting for the gate). `show`: how to put the
        screen up (default: in place of the current one)."""
        from annotate.tui.screens.crowd import ExitScreen, SurveyScreen

        show = show or self.switch_screen
        if crowd.peek_exit(*self._who(), visit_id=self.session.visit_id) is None:
            return False
        due = crowd.survey_due(*self._who())
        if due:
            total = len(self.crowd.survey) if self.crowd else len(due)
            show(SurveyScreen(due[0], total - len(due) + 1, total))
            return True
        leave = crowd.exit_for(*self._who(), visit_id=self.session.visit_id)
        if leave is None:
            return False
        show(ExitScreen(leave))
        return True

    async def on_survey_screen_answered(self, message) -> None:
        if not self._is_current(message):
            return
        engine, study, name = self._who()
        try:
            crowd.record_survey(engine, study, name, {message.question.name: message.answer})
        except UserError as exc:
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
            return
        self._crowd_finish()

    def _continued_elsewhere(self, dropped: ItemScreen.Answered | None = None) -> None:
        """A newer window took over; `dropped` is the answer given here that it refused."""
        from annotate.tui.screens.crowd import ContinuedScreen, DroppedAnswer

        self.continued_elsewhere = True  # the last words send the annotator there
        self.clear_notifications()
        lost = None
        if dropped is not None:
            lost = DroppedAnswer(describe(self.session.spec, dropped.answer), dropped.comment)
        self.switch_screen(ContinuedScreen(lost))

    @staticmethod
    def _preload() -> None:
        """Import the screens that come after the guidelines while the annotator reads them."""
        from annotate.tui.screens import feedback, help, item, phases  # noqa: F401

    async def _refused_meanwhile(self) -> None:
        """An item on screen while the researcher refuses the annotator (`gate --reject`, the
        console): the thank-you screen comes by itself, as the waiting screen's decisions do,
        rather than after an answer the store would only turn away. Only read; a screen
        being revised, or under a dialog, is left to its next tick."""
        from annotate.tui.screens.item import ItemScreen

        screen = self.screen_stack[-1] if self.screen_stack else None
        if not isinstance(screen, ItemScreen) or screen.revising:
            return
        with self._polling():
            if self.session.phase() is Phase.REJECTED and self.screen is screen:
                await self._show_next()

    def _when_idle(self) -> None:
        if time.monotonic() - self.last_answer >= self.IDLE_S:
            self.session.idle()

    # --- the one path for a store that is away -------------------------------------------------
    def hold(
        self, retry: Callable[[], object], attempt: int, what: str, exc: BaseException | None = None
    ) -> None:
        """The store is unreachable (or its disk full, or its file gone): say so, and `retry`
        after a growing pause. Every store call a screen makes comes here on such a failure,
        never to a crash: nothing was written, and the calls are safe to repeat."""
        delay = min(self.RECONNECT_FIRST_S * 2**attempt, self.RECONNECT_MAX_S)
        trouble = "store unreachable"
        if exc is not None and is_full_disk(exc):
            trouble = "the store's disk is full"
        elif exc is not None and is_store_gone(exc):
            trouble = "the store's file is gone"
        self.clear_notifications()
        self.notify(
            f"{trouble}, retrying… ({what}; next try in {delay:g} s)",
            severity="warning",
            timeout=delay + 1,
            markup=False,
        )
        self.set_timer(delay, partial(self._held_retry, retry))

    def _held_retry(self, retry: Callable[[], object]) -> object:
        """A held call, tried again unless the app has begun to close meanwhile (Textual stops
        its timers while it closes, and one already due still fires): with its screens gone
        there is nothing to show it on, and the call would fail where none may (None then)."""
        return retry() if self.is_running else None

    def back_after_hold(self, attempt: int) -> None:
        if attempt:
            self.clear_notifications()
            self.notify("The store is back.", markup=False)

    async def show_next(
        self, item: ItemView | None = None, *, fetched: bool = False, attempt: int = 0
    ) -> None:
        """Show what the engine says comes next (`item`, when the caller already `fetched` it);
        held and retried while the store is away."""
        try:
            await self._show_next(item, fetched=fetched)
        except HELD as exc:
            if not is_held(exc):
                raise
            retry = partial(self.show_next, item, fetched=fetched, attempt=attempt + 1)
            self.hold(retry, attempt, "the next item waits", exc)
            return
        self.back_after_hold(attempt)

    async def _show_next(self, item: ItemView | None = None, *, fetched: bool = False) -> None:
        from annotate.tui.screens.item import ItemScreen
        from annotate.tui.screens.phases import (
            FinishedScreen,
            HeldScreen,
            PausedScreen,
            RejectedScreen,
            WaitingScreen,
        )

        if not fetched:
            try:
                item = self.session.next_item()
            except ContinuedElsewhere:
                self._continued_elsewhere()
                return
        progress = self.session.progress()
        screen: Screen[None]
        if item is None and self.crowd is not None and self._crowd_finish():
            return
        if item is not None:
            if item.phase == TEST and not self.shown_test:
                self.shown_test = True
                if progress.training_quota and not progress.stream_done:
                    self.notify(
                        "Test phase: from now on there is no feedback.", timeout=6, markup=False
                    )
            if item.refresher and item.number == 1:
                refresher_items = progress.refresher_total or REFRESHER_ITEMS
                self.notify(
                    f"A short refresher: {count_of(refresher_items, 'training item')} with "
                    "feedback, then back to the test items.",
                    timeout=8,
                    markup=False,
                )
            current = self.screen
            if isinstance(current, ItemScreen) and not current.revising:
                await current.show_item(item, progress)  # same layout: refill, no rebuild
                return
            screen = ItemScreen(self.session.spec, item, progress, self.started)
        elif progress.phase in (Phase.WAITING, Phase.TRAINING):
            screen = WaitingScreen(progress, self.poll_seconds)
        elif progress.phase is Phase.REJECTED:
            screen = RejectedScreen(progress, self.poll_seconds)
        elif progress.paused:
            screen = PausedScreen(progress)
        elif (held := self.session.held_elsewhere()) is not None:
            if isinstance(self.screen, HeldScreen):
                self.screen.refresh_with(progress, held)  # still waiting: same screen
                return
            screen = HeldScreen(progress, held, self.poll_seconds)
        else:
            screen = FinishedScreen(progress, last_not_needed=self.last_not_needed)
        self.switch_screen(screen)

    def _is_current(self, message: ScreenMessage) -> bool:
        return message.origin is self.screen

    async def on_guidelines_screen_start(self, message: GuidelinesScreen.Start) -> None:
        if self._is_current(message):
            self.session.heartbeat()  # time on task: reading the guidelines counts
            await self.show_next()

    async def on_feedback_screen_continue(self, message: FeedbackScreen.Continue) -> None:
        if self._is_current(message):
            await self.show_next()

    async def on_waiting_screen_recheck(self, message: WaitingScreen.Recheck) -> None:
        if not self._is_current(message):
            return
        if not self.session.heartbeat():  # waiting counts as time on task, while it is live
            self._continued_elsewhere()
            return
        with self._polling():
            if self.session.phase() is not Phase.WAITING:
                await self._show_next()

    async def on_rejected_screen_recheck(self, message) -> None:
        """Still refused, the screen stays; admitted by hand since, the test items come. Only
        read: the thank-you screen is not time on task."""
        if self._is_current(message):
            with self._polling():
                if self.session.phase() is not Phase.REJECTED:
                    await self._show_next()

    async def on_held_screen_recheck(self, message) -> None:
        """Ask for an item again; while the store is away the screen just asks again later."""
        if self._is_current(message):
            with self._polling():
                await self._show_next()

    @contextlib.contextmanager
    def _polling(self) -> Iterator[None]:
        """A screen's own re-check: while the store is away it says so and asks again at its
        next tick (no retry of its own, which would pile up beside the ticks)."""
        try:
            yield
        except HELD as exc:
            if not is_held(exc):
                raise
            self.notify(
                "store unreachable, retrying… (the screen checks again shortly)",
                severity="warning",
                markup=False,
            )

    # --- answers ------------------------------------------------------------------------------
    async def on_item_screen_answered(self, message: ItemScreen.Answered) -> None:
        await self._answer_until_stored(message, attempt=0)

    async def _answer_until_stored(self, message: ItemScreen.Answered, attempt: int) -> None:
        """Store the answer. While the store is unreachable (a PostgreSQL server restarting,
        a network gone) the screen stays, with the answer in hand, and the store is tried
        again after a growing pause (at most RECONNECT_MAX_S); the writes are idempotent, so
        a commit whose outcome was lost is safe to repeat."""
        if message.origin not in self.screen_stack:
            self.held_answer = None  # its screen is gone (taken over, closing)
            return
        if not self._is_current(message):
            # Help or a dialog over the item: the kept answer waits for it to close.
            retry = partial(self._answer_until_stored, message, attempt)
            self.set_timer(self.RECONNECT_FIRST_S, partial(self._held_retry, retry))
            return
        try:
            await self._answer(message)
        except ContinuedElsewhere:
            self.held_answer = None
            return  # the screen says so already: nothing was stored
        except HELD as exc:
            if not is_held(exc):
                raise
            self.held_answer = message
            retry = partial(self._answer_until_stored, message, attempt + 1)
            self.hold(retry, attempt, "your answer is kept", exc)
            return
        self.held_answer = None
        if attempt:
            self.clear_notifications()
            self.notify("The store is back: your answer is saved.", markup=False)

    async def _answer(self, message: ItemScreen.Answered) -> None:
        self.last_answer = time.monotonic()
        if message.revising:
            self._revise(message)
            return
        if message.item.phase == TEST:
            await self._answer_test_item(message)
            return
        feedback = self._stored(
            lambda: self.session.submit(
                message.item,
                message.answer,
                answered_at=message.answered_at,
                flag=message.flag,
                comment=message.comment,
            ),
            message,
        )
        if feedback is not None and self.session.ctx.protocol.training_feedback:
            from annotate.tui.screens.feedback import FeedbackScreen

            progress = self.session.progress()
            self.switch_screen(
                FeedbackScreen(
                    self.session.spec,
                    message.item,
                    message.answer,
                    feedback,
                    progress,
                    self.started,
                )
            )
            return
        await self.show_next()

    async def _answer_test_item(self, message: ItemScreen.Answered) -> None:
        """Store the answer and reserve the next item in one commit (no feedback in test)."""
        stored = False

        def store() -> ItemView | None:
            nonlocal stored
            upcoming = self.session.submit_and_next(
                message.item,
                message.answer,
                answered_at=message.answered_at,
                flag=message.flag,
                comment=message.comment,
            )
            stored = True
            return upcoming

        upcoming = self._stored(store, message)
        await self.show_next(upcoming, fetched=stored)

    def _stored(self, call: Callable[[], T], message: ItemScreen.Answered) -> T | None:
        """Store `message`'s answer; a refusal becomes a notification (the screen then moves
        on), and the answer the refusal dropped is said, never passed over."""
        try:
            stored = call()
        except ContinuedElsewhere:
            self._continued_elsewhere(message)
            raise
        except ItemTaken as exc:  # the lease ran out and others completed the item
            self.last_not_needed = True
            self.notify(terminal_safe(str(exc)), severity="warning", markup=False)
        except UserError as exc:
            if is_held(exc):
                raise  # a full disk, a store gone: the answer is kept and tried again
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
        else:
            self.last_not_needed = False
            return stored
        return None

    def _revise(self, message: ItemScreen.Answered) -> None:
        try:
            self.session.revise(message.item, message.answer)
        except ContinuedElsewhere:
            self._continued_elsewhere()
            return
        except UserError as exc:
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
        else:
            self.notify(revised_answer(self.session.spec, message.answer), markup=False)
        self.pop_screen()

    def on_item_screen_revise_requested(self, message: ItemScreen.ReviseRequested) -> None:
        self._revise_requested(message)

    def on_finished_screen_revise_requested(self, message: FinishedScreen.ReviseRequested) -> None:
        """`u` on "All done": the same revision as from an item screen (same engine call)."""
        self._revise_requested(message)

    def _revise_requested(self, message: ScreenMessage, attempt: int = 0) -> None:
        if not self._is_current(message):
            return
        try:
            self._open_revision()
        except HELD as exc:
            if not is_held(exc):
                raise
            retry = partial(self._revise_requested, message, attempt + 1)
            self.hold(retry, attempt, "your last answer opens when it is back", exc)
            return
        self.back_after_hold(attempt)

    def _open_revision(self) -> None:
        try:
            last = self.session.last_answer()
        except UserError as exc:  # the answers stand (the window took its exit)
            self.notify(terminal_safe(str(exc)), severity="error", markup=False)
            return
        if last is None:
            self.notify(NOTHING_TO_REVISE, markup=False)
            return
        item, value = last
        from annotate.tui.screens.item import ItemScreen

        self.push_screen(
            ItemScreen(
                self.session.spec,
                item,
                self.session.progress(),
                self.started,
                revising=True,
                previous=value,
            )
        )

    # --- keys anywhere ------------------------------------------------------------------------
    def action_help(self) -> None:
        from annotate.tui.screens.help import HelpScreen, keys_of

        if not isinstance(self.screen, HelpScreen):
            keys = keys_of(self.screen)  # the keys of the screen it is opened from
            self.push_screen(HelpScreen(self.session.spec, self.session.ctx.protocol, keys))

    async def action_quit(self) -> None:
        """Give back the leased item, so nobody waits for the lease to expire, then leave. Work
        not yet sent (a flag goes with the answer; MultiRC judgements with their submission)
        is not dropped silently: the annotator is asked first, and keeping it goes back to
        the item."""
        unsent = self.unsent()
        if unsent is not None:
            from annotate.tui.screens.discard import DiscardModal

            if not isinstance(self.screen, DiscardModal):
                self.push_screen(DiscardModal(unsent), self._quit_if_discarded)
            return
        await self._leave()

    async def _quit_if_discarded(self, discard: bool | None) -> None:
        if discard:
            await self._leave()

    def unsent(self) -> Unsent | None:
        """What quitting would lose, or None: a flag typed in the open flag dialog or attached
        to the item on screen and not yet sent (its comment, "" for none), and candidates
        judged on an item screen and not yet submitted (the topmost such screen's), and an
        answer kept while the store is away and not stored yet."""
        from annotate.tui.screens.discard import Unsent
        from annotate.tui.screens.flag import FlagModal
        from annotate.tui.screens.item import ItemScreen

        flag: str | None = None
        judged: tuple[int, int] | None = None
        for screen in reversed(self.screen_stack):
            if flag is None and isinstance(screen, FlagModal) and (typed := screen.typed().strip()):
                flag = typed
            if not isinstance(screen, ItemScreen):
                continue
            if flag is None and screen.flag and not screen.answered:
                flag = screen.comment or ""
            judged = judged or screen.unsent_judgements()
        held = None
        if self.held_answer is not None:  # kept while the store is away, not stored yet
            held = describe(self.session.spec, self.held_answer.answer)
        if flag is None and judged is None and held is None:
            return None
        return Unsent(flag, *(judged or (0, 0)), held=held)

    async def _leave(self) -> None:
        if self.held_answer is not None:  # the annotator chose to discard it (DiscardModal)
            self.dropped_answer = describe(self.session.spec, self.held_answer.answer)
        # Giving back the item on screen is a courtesy (its lease runs out by itself), so a
        # store that cannot be written now (read-only, full, unreachable) never keeps the
        # annotator from leaving: the command's summary says what was not given back.
        try:
            self.session.release()
        except (DBAPIError, UserError) as exc:
            self.release_failed = _store_reason(exc)
        self.farewell()
        self.exit()

    def farewell(self) -> None:
        """Said as the annotator leaves, before the app ends: nothing here (`annotate label`
        prints its last words once the screen has closed); a browser tab says them itself."""


def _store_reason(exc: BaseException) -> str:
    """The database's own words for a failed write, one line, safe for a terminal."""
    reason = getattr(exc, "reason", None) or getattr(exc, "orig", None) or exc
    return terminal_safe(str(reason).splitlines()[0] if str(reason) else type(exc).__name__)


def create_app(
    engine: Engine, study: str, annotator: str, *, create_annotator: bool = False
) -> LabelApp:
    """The annotator app for `annotator` on `study` (used by `annotate label` and the tests).
    Raises UserError before any screen appears when the study or annotator does not exist."""
    session = AnnotatorSession.open(engine, study, annotator, create_annotator=create_annotator)
    session.claim_window("terminal")  # a window opened before this one stops taking answers
    return LabelApp(session, study, annotator)
