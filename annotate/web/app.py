"""The annotator app as a browser tab runs it: a sign-in screen, then the same screens as
`annotate label`.

In a terminal, `annotate label --as NAME` knows who is there and asks for the token before the
app starts. A browser tab is a fresh process with no terminal to prompt on, so the app itself
asks for the name (unless the server was started for one annotator) and the token.
"""

from __future__ import annotations

import contextlib
import inspect
import time
from functools import partial
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.drivers.web_driver import WebDriver
from textual.message import Message
from textual.messages import ExitApp
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from annotate.errors import UserError
from annotate.presentation.closing import words_on_leaving
from annotate.protocol.session import AnnotatorSession
from annotate.protocol.studies import get_annotator, load_study
from annotate.protocol.tokens import SIGN_IN_REFUSED, needs_token, sign_in_check
from annotate.settings import settings
from annotate.store.engine import is_held
from annotate.text import terminal_safe
from annotate.tui.app import LabelApp
from annotate.web.farewell import GOODBYE
from annotate.web.limits import SignInLimiter, name_key, wait_message

MAX_REFUSALS = 5
"""Wrong tokens one page may try before it closes (each refusal is also counted in the store)."""


HINTS = {
    "name": "Type your annotator name, then press Enter.",
    "token": "Type the token you were given (nothing if you have none), then press Enter.",
}
TOKEN_REQUIRED_HINT = "Type the token you were given, then press Enter."
"""With tokens required (`serve` without --no-tokens) an empty token signs nobody in."""


class SignInScreen(Screen[None]):
    """Name and token. The app checks them; this screen only collects them and shows why a
    try was refused."""

    DEFAULT_CSS = """
    SignInScreen { align: center middle; }
    #signin { width: 60; height: auto; padding: 1 2; border: round $primary; }
    #signin Input { margin-top: 1; }
    #signin-hint { color: $text-muted; margin-top: 1; height: auto; }
    #signin-error { color: $error; margin-top: 1; height: auto; }
    """

    class Submitted(Message):
        def __init__(self, screen: SignInScreen, name: str, token: str) -> None:
            super().__init__()
            self.screen = screen
            self.name = name
            self.token = token

    def __init__(self, study: str, annotator: str | None, *, require_token: bool = False) -> None:
        super().__init__()
        self.study = study
        self.annotator = annotator
        self.hints = {**HINTS, "token": TOKEN_REQUIRED_HINT} if require_token else HINTS
        self.token_label = "Token" if require_token else "Token (if you were given one)"

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="signin"):
            yield Static(f"Sign in to study {self.study}", markup=False)
            yield Input(
                value=self.annotator or "",
                placeholder="Your annotator name",
                id="name",
                disabled=self.annotator is not None,
            )
            yield Input(placeholder=self.token_label, password=True, id="token")
            yield Static("", id="signin-hint", markup=False)
            yield Static("", id="signin-error", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#token" if self.annotator else "#name", Input).focus()

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # Says what to type where; drawn only once the field really has the focus, which is
        # also what a script driving the page waits for before typing.
        hint = self.hints.get(event.widget.id or "")
        if hint is not None:
            self.query_one("#signin-hint", Static).update(hint)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        name = self.query_one("#name", Input).value.strip()
        if event.input.id == "name" and name:
            self.query_one("#token", Input).focus()  # Enter moves on; Enter on the token signs in
            return
        token = self.query_one("#token", Input).value
        self.post_message(self.Submitted(self, name, token))

    def refuse(self, reason: str, field: str = "token") -> None:
        """Show why the try was refused; clear the token and put the cursor in `field`."""
        self.query_one("#signin-error", Static).update(terminal_safe(reason))
        self.query_one("#token", Input).value = ""
        self.query_one(f"#{field}", Input).focus()


class WebLabelApp(LabelApp):
    """LabelApp preceded by a sign-in. LabelApp needs its session when built; here it exists
    only after sign-in, so until then the app has no session and the keys that need one wait."""

    # CSS_PATH is resolved next to the class's own module: point at LabelApp's stylesheet.
    CSS_PATH = str(Path(inspect.getfile(LabelApp)).with_name("app.tcss"))
    # Ctrl+Q quits while a text box takes every letter (sign-in). Not shown: after sign-in q
    # quits, as LabelApp's footer says (one Quit, with the key that works there).
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True, show=False)]

    COME_BACK = "open this page again later"

    def __init__(
        self,
        engine: Engine,
        study: str,
        annotator: str | None = None,
        *,
        require_token: bool = False,
    ) -> None:
        ctx = load_study(engine, study)  # a missing study or annotator fails before the page
        if annotator is not None:
            get_annotator(engine, annotator)
        App.__init__(self)  # not LabelApp.__init__: it needs the session sign-in makes
        self.engine = engine
        self.study = study
        self.fixed_annotator = annotator
        self.session: AnnotatorSession | None = None  # type: ignore[assignment]
        self.refusals = 0
        self.require_token = require_token
        self.limiter = SignInLimiter(settings().signin_limits or ":memory:")
        self.title = terminal_safe(ctx.spec.title)
        self.sub_title = terminal_safe(study)
        self.started = time.monotonic()
        self.shown_test = False
        self.last_answer = time.monotonic()  # LabelApp's idle check reads it (IDLE_S)
        self.left = False
        """The annotator left by q (their item given back already)."""

    def on_mount(self, event: events.Mount) -> None:
        # Textual would run LabelApp.on_mount after this one (handlers run along the MRO); it
        # needs the session, so it runs only after sign-in, from _start.
        event.prevent_default()
        if (
            self.fixed_annotator
            and not self.require_token
            and not needs_token(self.engine, self.fixed_annotator)
        ):
            self._start(self.fixed_annotator)  # a one-person server, nothing to ask
            return
        self.push_screen(
            SignInScreen(self.study, self.fixed_annotator, require_token=self.require_token)
        )

    def on_sign_in_screen_submitted(
        self, message: SignInScreen.Submitted, attempt: int = 0
    ) -> None:
        """Check the sign-in; while the store is away the page says so and tries again (the
        hold path of every screen), instead of crashing with the typed token in a traceback."""
        try:
            self._signed_in(message)
        except DBAPIError as exc:
            if not is_held(exc):
                raise
            message.screen.refuse("store unreachable, retrying…", field="token")
            retry = partial(self.on_sign_in_screen_submitted, message, attempt + 1)
            self.hold(retry, attempt, "signing in")
            return
        self.back_after_hold(attempt)

    def _signed_in(self, message: SignInScreen.Submitted) -> None:
        name = self.fixed_annotator or message.name
        if not name:
            message.screen.refuse("Type your annotator name.", field="name")
            return
        allowed = self._may_sign_in(name, message.token)
        if allowed is True:
            self._start(name)
            return
        if allowed is not False:
            message.screen.refuse(wait_message(allowed))
            return
        self.refusals += 1
        if self.refusals >= MAX_REFUSALS:
            self.exit(message="too many refused sign-ins")
            return
        message.screen.refuse(SIGN_IN_REFUSED)  # the cursor goes to the token either way

    def _may_sign_in(self, name: str, token: str) -> bool | float:
        """True to let `name` in; False for a refusal (counted by the limiter, so the page may
        say it is recorded); or the seconds still to wait before a try is checked at all."""
        keys = [name_key(name)]  # a tab does not know the browser's address: per name
        wait = self.limiter.wait(keys)
        if wait > 0:
            return wait
        if sign_in_check(self.engine, name, token, require_token=self.require_token):
            self.limiter.admitted(name)
            return True
        self.limiter.refused(keys)
        return False

    def _start(self, name: str) -> None:
        """Open the annotator's session and hand over to LabelApp (at the guidelines)."""
        self.session = AnnotatorSession.open(self.engine, self.study, name)
        self.sub_title = terminal_safe(f"{self.study} · {name}")
        self.started = time.monotonic()
        if isinstance(self.screen, SignInScreen):
            self.pop_screen()
        super().on_mount()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Help describes the task and its keys: nothing to show (or offer) before sign-in.
        if action == "help" and self.session is None:
            return False
        return super().check_action(action, parameters)

    def action_help(self) -> None:
        if self.session is not None:
            super().action_help()

    async def action_quit(self) -> None:
        if self.session is None:
            self.exit()
            return
        await super().action_quit()

    async def _leave(self) -> None:
        self.left = True
        await super()._leave()

    def on_exit_app(self, message: ExitApp) -> None:
        """A closed tab gives back the item on its screen, as q does: textual-serve asks the
        tab's app to quit when its page goes away, so unlike a crashed terminal the app knows
        nobody is there, and the item need not wait out its lease for the next annotator."""
        if self.session is None or self.left:
            return
        self.left = True
        with contextlib.suppress(DBAPIError, UserError):  # a courtesy, as at q: the lease
            self.session.release()  # runs out by itself

    def farewell(self) -> None:
        """The last words `annotate label` prints, sent to the page as the tab closes
        (web/farewell.py): the tab has no terminal left to print them on."""
        driver = self._driver  # Textual's own: in a tab's process, its web driver
        if self.session is None or not isinstance(driver, WebDriver):
            return
        lines = words_on_leaving(
            self.session.annotator.name,
            self.session,
            self.study,
            self.COME_BACK,
            elsewhere=self.continued_elsewhere,
            dropped=self.dropped_answer,
        )
        driver.write_meta({"type": GOODBYE, "lines": [terminal_safe(line) for line in lines]})
