"""What one page app keeps between requests, on `app.state.page`: the study, the templates,
the ticket signer, what is fixed for the whole study (its title, help, crowd settings), two
small caches and the threads engine calls run on. Nothing about an annotator lives here: a
request's annotator is in its signed cookie and ticket."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import jinja2
from itsdangerous import URLSafeSerializer
from markupsafe import Markup
from sqlalchemy import select
from starlette.requests import Request

from annotate.presentation.answer_keys import (
    ScreenKeys,
    feedback_keys,
    finished_keys,
    item_keys,
    keys_text,
    waiting_keys,
)
from annotate.presentation.guidelines import prior_hint, reflow
from annotate.protocol import crowd
from annotate.protocol.crowd_config import CrowdConfig
from annotate.protocol.studies import StudyContext, load_study
from annotate.settings import settings
from annotate.store.engine import is_sqlite, read_connection
from annotate.store.models import Annotator, Item
from annotate.store.sync_speed import store_threads
from annotate.text import terminal_safe
from annotate.web.page.config import PageConfig
from annotate.web.page.signers import study_key, ticket_serializer
from annotate.web.page.templating import compiled

T = TypeVar("T")

COME_BACK = "open this page again later"
"""How to resume, in the page's words (the key list's last line)."""
ITEM_CACHE = 4096
"""Items whose fields a server process keeps (a few MB of text at most)."""
POSTGRES_THREADS = 3
"""Threads for engine calls per process on a database server. Each call also waits for the
network, so several overlap; but every thread more hands Python's lock around more often.
Measured on the crowd's whole path (1,000 paced workers, 2 processes, PostgreSQL on the same 2
cores, issue 38), alternated in one session: server CPU per answer, PostgreSQL's own included,
5.2 ms on average with 8 threads (four runs), 5.1 with 4 (four), 5.0 with 3 (four) and 2
(two); a training answer's p99 44-106 ms with 8, 30-39 with 3. Three threads still overlap
the round trips of a server a network away (a test answer makes about eight). The pool keeps
a connection open for each of them (store/engine.py)."""


@dataclass(frozen=True)
class HelpText:
    """The keys and the guidelines, in the terminal app's words: fixed for the study."""

    keys: str
    guidelines: dict[str, Any]


@dataclass
class PageState:
    config: PageConfig
    ctx: StudyContext
    templates: jinja2.Environment
    tickets: URLSafeSerializer
    title: str
    help: HelpText
    help_dialogs: dict[str, Markup]
    """The help dialog of each kind of screen (HELP_SCREENS), which every page of that kind
    carries: the same for the whole study, so rendered (and escaped) once, not on every
    answer."""
    crowd_config: CrowdConfig | None
    key: str
    """What signs this page's cookies and tickets: the server's secret bound to this study
    (signers.study_key)."""
    annotators: dict[str, Annotator] = field(default_factory=dict)
    """Annotator rows by name, read once per process: a session needs only the row's id,
    which never changes (a removed annotator is found out by the engine's own checks)."""
    item_texts: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Items' fields by id, kept by this process (at most ITEM_CACHE, oldest out first): an
    item's text never changes once it is in the store. An item is kept when it is served, so
    the answer that names it in its ticket reads nothing back."""
    thread_count: int = POSTGRES_THREADS
    """Threads for engine calls (store_thread_count), decided as the app is made; 0: none,
    the event loop makes them itself."""
    threads: ThreadPoolExecutor | None = None
    """Made by the first request, inside the server."""

    @property
    def crowd(self) -> bool:
        return self.crowd_config is not None

    def keep_item(self, item_id: int, fields: dict[str, Any]) -> None:
        if item_id not in self.item_texts and len(self.item_texts) >= ITEM_CACHE:
            del self.item_texts[next(iter(self.item_texts))]
        self.item_texts[item_id] = fields

    def item_fields(self, item_id: int) -> dict[str, Any] | None:
        fields = self.item_texts.get(item_id)
        if fields is None:
            with read_connection(self.config.engine) as conn:
                fields = conn.execute(select(Item.fields).where(Item.id == item_id)).scalar()
            if fields is not None:
                self.keep_item(item_id, fields)
        return fields

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Engine calls block (SQLite, psycopg): off the event loop, on the page's own threads
        (but see below for a SQLite store on a disk that syncs quickly). A plain executor
        rather than Starlette's run_in_threadpool, whose capacity limiter and cancel scope
        took a tenth of the page's CPU per answer (profiled under load). As there, a request
        cut off mid-call lets the call finish: its label is committed.
        With no thread (thread_count 0: a SQLite store on a disk that syncs quickly, see
        store/sync_speed.py) the loop makes the call itself, start to finish: one thread would
        run the calls one at a time all the same, and handing each to it and back cost more
        processor time than the loop gains by going on meanwhile."""
        if self.thread_count == 0:
            return fn(*args, **kwargs)
        if self.threads is None:
            self.threads = ThreadPoolExecutor(self.thread_count, thread_name_prefix="page")
        call = functools.partial(fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self.threads, call)

    def shutdown(self) -> None:
        if self.threads is not None:
            self.threads.shutdown(wait=True)  # the calls under way commit before the end


def page_state(config: PageConfig) -> PageState:
    """The state of a new app (a missing study fails here, before serving)."""
    ctx = load_study(config.engine, config.study)
    templates = compiled()  # rendered straight to HTMLResponse: no template uses `request`
    title = terminal_safe(ctx.spec.title)
    help_text = help_of(ctx)
    study = ctx.study
    assert study.id is not None
    key = study_key(config.secret, study.id, study.name, study.created_at)
    dialog = templates.get_template("screens/_help.html")
    dialogs = {
        kind: Markup(
            dialog.render(title=title, keys=screen_keys(ctx, keys), guidelines=help_text.guidelines)
        )
        for kind, keys in HELP_SCREENS.items()
    }
    return PageState(
        config=config,
        ctx=ctx,
        templates=templates,
        tickets=ticket_serializer(key),
        title=title,
        help=help_text,
        help_dialogs=dialogs,
        crowd_config=crowd.config_of(ctx),
        key=key,
        thread_count=store_thread_count(config),
    )


def store_thread_count(config: PageConfig) -> int:
    """Threads for the page's engine calls: on SQLite none (the event loop makes them), or
    several where its disk syncs slowly (measured here, before the first request, not on its
    way: store/sync_speed.py), or as ANNOTATE_SQLITE_THREADS says; on a database server
    POSTGRES_THREADS."""
    if not is_sqlite(config.engine):
        return POSTGRES_THREADS
    chosen = settings().sqlite_threads
    return store_threads(config.engine) if chosen is None else chosen


HELP_SCREENS: dict[str, ScreenKeys] = {
    "item": item_keys(),
    "feedback": feedback_keys(),
    "waiting": waiting_keys(),  # and "held": both check again with r
    "revise": finished_keys(True),  # all done, the last test answer open to u
    "none": finished_keys(False),  # all done with no answer to change, or turned away
}
"""The keys each kind of screen lists in its help, as the terminal app's help lists them."""


def screen_keys(ctx: StudyContext, keys: ScreenKeys) -> str:
    """A screen's keys one to a line (width 0): the page's list is as wide as the window,
    which the server does not know, and lines made for 80 columns broke on a phone between a
    key and its answer."""
    return keys_text(ctx.spec, COME_BACK, width=0, keys=keys).plain


def help_of(ctx: StudyContext) -> HelpText:
    """The keys (the item screen's, which the guidelines list) and the guidelines, as the
    terminal app words them."""
    return HelpText(
        keys=screen_keys(ctx, HELP_SCREENS["item"]),
        guidelines={
            "paragraphs": terminal_safe(reflow(ctx.spec.guidelines)).split("\n\n"),
            "hint": prior_hint(ctx.spec, ctx.protocol),
        },
    )


def page_of(request: Request) -> PageState:
    """The state of the app serving `request`."""
    return request.app.state.page
