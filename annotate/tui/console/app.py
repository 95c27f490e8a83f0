"""The researcher's console app: the studies, then one study live, its gate, flags and report.

Live: about once a second the app asks the store for its change stamp (max ids and a count, in
one short read-only transaction: `annotate.protocol.progress.change_stamp`). Only when the stamp
moved does the screen on top read its data again, so labels written by any process on any host
show within two poll intervals, and an idle study costs one tiny query a second.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import Engine
from textual.app import App
from textual.binding import Binding

from annotate.login import login_name
from annotate.protocol.progress import ChangeStamp, change_stamp
from annotate.protocol.studies import StudyContext, load_study
from annotate.text import terminal_safe
from annotate.tui.console.screens.base import LiveScreen
from annotate.tui.console.screens.studies import StudiesScreen

POLL_SECONDS = 1.0
"""How often the console checks the store for changes (updates show within 2 s)."""

Clock = Callable[[], datetime]


def utc_clock() -> datetime:
    return datetime.now(UTC)


class ConsoleApp(App[None]):
    CSS_PATH = "console.tcss"
    ENABLE_COMMAND_PALETTE = False  # every action has its key in the footer and in help
    TITLE = "annotate console"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(
        self,
        engine: Engine,
        study: StudyContext | None = None,
        *,
        clock: Clock = utc_clock,
        poll_seconds: float = POLL_SECONDS,
        researcher: str = "researcher",
    ) -> None:
        super().__init__()
        self.engine = engine
        self.researcher = researcher
        """Who acts: stored with every gate decision and flag action made here."""
        self.first_study = study
        self.clock = clock
        """Where every screen reads "now" (tests freeze it for stable pictures)."""
        self.poll_seconds = poll_seconds
        self.stamp: ChangeStamp | None = None
        self.sub_title = "researcher"

    def on_mount(self) -> None:
        self.stamp = change_stamp(self.engine)
        self.push_screen(StudiesScreen())
        if self.first_study is not None:
            self.open_study(self.first_study)
        self.set_interval(self.poll_seconds, self.check_for_changes, name="change-check")

    def open_study(self, ctx: StudyContext) -> None:
        from annotate.tui.console.screens.study import StudyScreen

        self.push_screen(StudyScreen(ctx))

    def load(self, name: str) -> StudyContext:
        """The study's context, read fresh (its state may have changed since)."""
        return load_study(self.engine, name)

    def check_for_changes(self) -> None:
        """The cheap check; the screen on top reloads only when something changed."""
        stamp = change_stamp(self.engine)
        if stamp == self.stamp:
            return
        self.stamp = stamp
        for screen in self.screen_stack:
            if isinstance(screen, LiveScreen):
                screen.stale = True  # a screen below reloads when it comes back on top
        if isinstance(self.screen, LiveScreen):
            self.screen.reload()

    def action_help(self) -> None:
        from annotate.tui.console.screens.help import ConsoleHelpScreen

        if not isinstance(self.screen, ConsoleHelpScreen):
            self.push_screen(ConsoleHelpScreen())

    def notify_error(self, message: str) -> None:
        self.notify(terminal_safe(message), severity="error", markup=False, timeout=8)


def create_console_app(
    engine: Engine,
    study: str | None = None,
    *,
    clock: Clock = utc_clock,
    poll_seconds: float = POLL_SECONDS,
    researcher: str | None = None,
) -> ConsoleApp:
    """The console on `engine`, opened at `study` when given (used by `annotate console`,
    `annotate serve --console` and the tests). Raises UserError before any screen appears when
    the study does not exist."""
    ctx = load_study(engine, study) if study is not None else None
    who = researcher.strip() if researcher else default_researcher()
    return ConsoleApp(engine, ctx, clock=clock, poll_seconds=poll_seconds, researcher=who)


default_researcher = login_name
"""The login name of whoever runs the console (what decisions record as `by`)."""
