"""A console screen that shows data read from the store and reads it again when it changes.

`fetch` runs in a worker thread (a big study's progress takes a moment to read; the keys stay
live meanwhile) and touches only the engine; `show` then draws the result on the event loop.
A screen that shows relative times ("12 s ago") calls `keep_time` once mounted: its
`show_clocks` then redraws them every CLOCK_SECONDS from what was read, without a store read.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Generic, TypeVar

from sqlalchemy.exc import DBAPIError
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.worker import Worker, get_current_worker

from annotate.errors import UserError
from annotate.store.engine import is_held

T = TypeVar("T")

CLOCK_SECONDS = 1.0
"""How often the relative times are redrawn (no store read)."""

STORE_AWAY = "the store is unreachable: nothing was changed; try again once it is back"
"""Said when a key's store call (a preview, a decision, opening a study) meets the store away:
the console stays, as it does while its reads wait for the store."""


class LiveScreen(Screen[None], Generic[T]):
    stale = False
    """The store changed while another screen was on top: read again when shown."""
    loaded = False
    """The first data is on the screen (tests wait for it)."""
    loads = 0
    """Times the data was read and drawn (tests wait for a new one)."""

    def fetch(self, app: Any) -> T:
        """Read the data (in a worker thread): from `app`'s engine and clock only."""
        raise NotImplementedError

    def show(self, data: T) -> None:
        raise NotImplementedError

    def keep_time(self) -> None:
        """Redraw the relative times every CLOCK_SECONDS (`show_clocks`)."""
        self.set_interval(CLOCK_SECONDS, self.show_clocks, name="clocks")

    def show_clocks(self) -> None:
        """Redraw what depends on the app's "now" from the data already read."""

    def on_screen_resume(self) -> None:
        if self.stale or not self.loaded:
            self.reload()

    def reload(self) -> None:
        self.stale = False
        app = self.app  # the worker thread has no active app to look up (and may outlive us)
        self.run_worker(
            partial(self._fetch_and_show, app), thread=True, exclusive=True, group="reload"
        )

    def _fetch_and_show(self, app: Any) -> None:
        worker = get_current_worker()
        try:
            data = self.fetch(app)
        except UserError as exc:
            app.call_from_thread(app.notify_error, str(exc))
            return
        except DBAPIError as exc:
            if not is_held(exc):
                raise
            app.call_from_thread(
                app.notify_error,
                "the store is unreachable; the console tries again at the next change check",
            )
            self.stale = True
            return
        app.call_from_thread(self._show, data, worker)

    def _show(self, data: Any, worker: Worker[Any] | None = None) -> None:
        # A read that a newer one replaced (`exclusive` cancels it, but a thread runs on) may
        # end after it: its older data must not be drawn over the newer. Checked here, on the
        # event loop, where the newer read's start cancels this one.
        if not self.is_attached or (worker is not None and worker.is_cancelled):
            return
        try:
            self.show(data)
        except NoMatches:  # read while the screen was being taken down: nothing to draw into
            return
        self.loaded = True
        self.loads += 1
