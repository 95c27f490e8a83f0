"""The annotator page: a Starlette app whose every request goes through the engine.

Nothing about an annotator lives in the server between requests. The signed session cookie
holds who signed in (and a CSRF token); the item on the screen travels with its answer as a
signed ticket (item, phase, number, when it was served). Each request opens an
`AnnotatorSession`, as the terminal app does once, and asks it what comes next, so a reload
resumes exactly where the engine says, and several processes (or hosts, on one PostgreSQL
store) can serve one study. The page decides no protocol rule: it shows what the session says
and sends it what the annotator pressed.

htmx swaps the screen (`#screen`) after each answer; without it, every form still works as a
plain POST that returns the whole page.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hmac
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from itsdangerous import BadSignature, Signer, TimestampSigner, URLSafeSerializer
from markupsafe import Markup
from sqlalchemy import Engine, select
from sqlalchemy.exc import DBAPIError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from annotate.errors import UserError
from annotate.protocol import crowd
from annotate.protocol.answers import describe
from annotate.protocol.session import AnnotatorSession, ItemTaken, ItemView, Phase
from annotate.protocol.studies import (
    TEST,
    TRAINING,
    StudyContext,
    get_annotator,
    load_study,
)
from annotate.protocol.tokens import sign_in_check, signed_in
from annotate.protocol.windows import ContinuedElsewhere
from annotate.store.engine import is_disconnect, is_sqlite
from annotate.store.models import Annotator, Item, utcnow
from annotate.text import terminal_safe
from annotate.web.limits import SignInLimiter, address_key, name_key, wait_message
from annotate.web.page import views

log = logging.getLogger("annotate.serve")

HERE = Path(__file__).parent
CSP = (
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; "
    "object-src 'none'"
)
SIGN_IN_REFUSED = "Unknown name or wrong token (the refusal is recorded). Try again."
"""One message for both: the page must not tell which names exist. Every refusal is counted
by the rate limiter and logged, known name or not, so the sentence is always true."""
COME_BACK = "open this page again later"
MAX_BODY = 64 * 1024
"""Largest request body taken (an answer with a comment is well under 4 KiB)."""
MAX_FIELD = 10_000
"""Longest name, token or comment taken from a form (longer is cut, not stored whole)."""
ITEM_CACHE = 4096
"""Items whose fields a server process keeps (a few MB of text at most)."""
SQLITE_THREADS = 1
"""Threads for engine calls per process on SQLite. Its writes take turns across processes, and
a second thread of the same process hands Python's lock back and forth with the one whose
turn it is, which then holds the turn longer: 2.4-2.7 ms per answer with 2 threads against
1.3 with one (flat out, 2 processes, back-to-back runs), so 325-345 labels/s against 425-515.
The other process and the event loop are what overlap with a call. The price: a call waiting
for the turn holds up the process's other calls, reads included, for as long (milliseconds
between page processes; up to SQLite's busy timeout behind another program's write). Earlier
runs: 4 threads and more gave a longer tail at 1,000 workers (p99 70-270 ms against 35-40
with 2)."""
POSTGRES_THREADS = 8
"""On PostgreSQL each call also waits for the network, so more of them overlap (its pool
holds 5 + 10 connections per process)."""


@dataclass
class PageConfig:
    engine: Engine
    study: str
    secret: str
    origins: set[str]
    require_tokens: bool = True
    secure: bool = False
    annotator: str | None = None
    """A one-person server (`serve --as NAME`): the name is fixed."""
    poll_seconds: float = 5.0
    limiter: SignInLimiter = field(default_factory=SignInLimiter)


@dataclass
class Screen:
    """One screen to render: its template and what it shows."""

    name: str
    context: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    headers: dict[str, str] | None = None


class _KeyDerivedOnce:
    """itsdangerous derives the same HMAC key from the secret on every signature it makes
    or checks (three per answer: the session cookie and the item's ticket): derived once."""

    def derive_key(self, secret_key: str | bytes | None = None) -> bytes:
        derived: dict[Any, bytes] = self.__dict__.setdefault("_derived", {})
        key = derived.get(secret_key)
        if key is None:
            key = derived[secret_key] = super().derive_key(secret_key)  # type: ignore[misc]
        return key


class _TicketSigner(_KeyDerivedOnce, Signer):
    pass


class _CookieSigner(_KeyDerivedOnce, TimestampSigner):
    pass


class _Sessions(SessionMiddleware):
    """Starlette's signed-cookie sessions, with a signer that derives its key once."""

    def __init__(self, app: ASGIApp, secret_key: str, **options: Any) -> None:
        super().__init__(app, secret_key, **options)
        self.signer = _CookieSigner(secret_key)


@cache
def environment() -> jinja2.Environment:
    """The page's templates, autoescaped whatever their names: all text is HTML-escaped."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True, auto_reload=False
    )


# --- security around every request -----------------------------------------------------------
class Guard:
    """Security headers on every response; POSTs only from this server's own page (Origin, or
    Referer when a browser sends no Origin); an error never shows a traceback."""

    def __init__(self, app: ASGIApp, origins: set[str]) -> None:
        self.app = app
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD", "POST"):
            await PlainTextResponse("method not allowed\n", 405)(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY:
            await PlainTextResponse("request too large\n", 413)(scope, receive, send)
            return
        if scope["method"] == "POST" and not self._same_origin(scope):
            log.warning("refused a POST from origin %r", self._origin(scope))
            await PlainTextResponse("this page may only be used from its own server\n", 403)(
                scope, receive, send
            )
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = message.setdefault("headers", [])
                if not any(k == b"content-security-policy" for k, _ in headers):
                    headers.append((b"content-security-policy", CSP.encode()))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"),
                ]
                if not scope["path"].startswith("/static/"):
                    headers.append((b"cache-control", b"no-store"))
            await send(message)

        await self.app(scope, receive, send_with_headers)

    @staticmethod
    def _origin(scope: Scope) -> str | None:
        headers = dict(scope["headers"])
        origin = headers.get(b"origin")
        if origin is None and (referer := headers.get(b"referer")) is not None:
            parts = referer.decode("latin-1").split("/")
            return "/".join(parts[:3]) if len(parts) >= 3 else None
        return origin.decode("latin-1") if origin is not None else None

    def _same_origin(self, scope: Scope) -> bool:
        return self._origin(scope) in self.origins


# --- the app ------------------------------------------------------------------------------------
def create_app(config: PageConfig) -> Starlette:
    ctx = load_study(config.engine, config.study)  # a missing study fails before serving
    templates = environment()  # rendered straight to HTMLResponse: no template uses `request`
    for name in templates.list_templates(extensions=["html"]):
        templates.get_template(name)  # compiled now, not by the first arrivals of a burst
    tickets = URLSafeSerializer(config.secret, salt="annotate.item", signer=_TicketSigner)
    title = terminal_safe(ctx.spec.title)
    help_text = _help_text(ctx)  # fixed for the study: worked out once
    # Every item page carries the help dialog, which is the same for the whole study:
    # rendered (and escaped) once here rather than on every answer.
    help_dialog = Markup(
        templates.get_template("screens/_help.html").render(
            title=title, keys=help_text["keys"], guidelines=help_text["guidelines"]
        )
    )

    def render(request: Request, screen: Screen) -> Response:
        context = {
            "screen": screen.name,
            "title": title,
            "study": terminal_safe(config.study),
            "who": terminal_safe(request.session.get("who", "")),
            "csrf": csrf_token(request),
            "poll_ms": int(config.poll_seconds * 1000),
            **screen.context,
        }
        page = "screen.html" if request.headers.get("hx-request") else "page.html"
        return HTMLResponse(
            templates.get_template(page).render(context),
            status_code=screen.status,
            headers=screen.headers,
        )

    def csrf_token(request: Request) -> str:
        token = request.session.get("csrf")
        if not token:
            token = request.session["csrf"] = secrets.token_urlsafe(24)
        return token

    async def form_of(request: Request) -> dict[str, str] | None:
        """The POSTed form, or None when its CSRF token is not this session's."""
        form = await request.form()
        values = {k: str(v)[:MAX_FIELD] for k, v in form.items() if isinstance(v, str)}
        expected = request.session.get("csrf", "")
        if not expected or not hmac.compare_digest(values.get("csrf", ""), expected):
            return None
        return values

    annotators: dict[str, Annotator] = {}
    """Annotator rows by name, read once per process: a session needs only the row's id,
    which never changes (a removed annotator is found out by the engine's own checks)."""

    def open_session(request: Request, visit: int | None = None) -> AnnotatorSession | None:
        """The signed-in annotator's session, attached to this page's window (`visit`: the
        one the answered page was served in; else the cookie's, the newest of this browser)."""
        name = request.session.get("who")
        if not name:
            return None
        annotator = annotators.get(name)
        if annotator is None:
            try:
                annotator = annotators[name] = get_annotator(config.engine, name)
            except UserError:
                request.session.clear()  # the annotator is gone from the store: sign in again
                return None
        session = AnnotatorSession(config.engine, ctx, annotator)
        window = visit or request.session.get("visit")
        if window:
            session.attach_window(int(window))
        return session

    item_texts: dict[int, dict[str, Any]] = {}
    """Items' fields by id, kept by this process (at most ITEM_CACHE, oldest out first): an
    item's text never changes once it is in the store. An item is kept when it is served, so
    the answer that names it in its ticket reads nothing back."""

    def keep_item(item_id: int, fields: dict[str, Any]) -> None:
        if item_id not in item_texts and len(item_texts) >= ITEM_CACHE:
            del item_texts[next(iter(item_texts))]
        item_texts[item_id] = fields

    def item_fields(item_id: int) -> dict[str, Any] | None:
        fields = item_texts.get(item_id)
        if fields is None:
            with config.engine.connect() as conn:
                fields = conn.execute(select(Item.fields).where(Item.id == item_id)).scalar()
            if fields is not None:
                keep_item(item_id, fields)
        return fields

    # --- screens from the engine ----------------------------------------------------------
    def ticket(session: AnnotatorSession, item: ItemView, kind: str) -> str:
        return tickets.dumps(
            {
                "a": session.annotator_id,
                "i": item.item_id,
                "p": item.phase,
                "n": item.number,
                "s": item.shown_at.isoformat(),
                "k": kind,
                "r": item.refresher,
                "src": item.source_id,
                "w": session.visit_id,
            }
        )

    def from_ticket(session: AnnotatorSession, value: str) -> tuple[ItemView, str] | None:
        """The item a ticket names, as the session served it (the catch or refresher item
        the session remembered then is remembered again), or None for a bad ticket."""
        try:
            data = tickets.loads(value)
        except BadSignature:
            return None
        if data.get("a") != session.annotator_id:
            return None
        if data.get("w"):
            session.attach_window(int(data["w"]))  # the window the item was shown in
        fields = item_fields(int(data["i"]))
        if fields is None:
            return None
        item = ItemView(
            int(data["i"]),
            str(data["src"]),
            str(data["p"]),
            dict(fields),
            int(data["n"]),
            datetime.fromisoformat(data["s"]),
            bool(data.get("r")),
        )
        kind = str(data.get("k", ""))
        if kind == "catch":
            session.catch_items.add(item.item_id)
        elif kind == "refresher":
            session.refresher_items.add(item.item_id)
        return item, kind

    def item_screen(
        session: AnnotatorSession,
        item: ItemView,
        *,
        notice: str | None = None,
        revising: Any = None,
        flag: bool = False,
        comment: str = "",
    ) -> Screen:
        kind = "revise" if revising is not None else ""
        if item.item_id in session.catch_items:
            kind = kind or "catch"
        if item.refresher or item.item_id in session.refresher_items:
            kind = kind or "refresher"
        keep_item(item.item_id, item.fields)
        progress = session.progress()
        status, done, total = views.status_line(item, progress)
        return Screen(
            "item",
            {
                "item": views.item_page(session.spec, item.fields, revising),
                "ticket": ticket(session, item, kind),
                "status": status,
                "done": done,
                "total": max(total, 1),
                "training": item.phase == TRAINING,
                "revising": (
                    terminal_safe(describe(session.spec, revising))
                    if revising is not None
                    else None
                ),
                "previous": revising,
                "notice": notice,
                "flag": flag,
                "comment": terminal_safe(comment),
                "keys": keys_text(session),
                "help_dialog": help_dialog,
                "announce_test": item.phase == TEST and progress.stream_done == 0,
            },
        )

    def keys_text(session: AnnotatorSession) -> str:
        return help_text["keys"]

    def guidelines_text(session: AnnotatorSession) -> dict[str, Any]:
        return help_text["guidelines"]

    def current(
        session: AnnotatorSession, notice: str | None = None, item: ItemView | None = None
    ) -> Screen:
        """What the engine says comes next (`item` when the caller already has it)."""
        if item is None:
            item = session.next_item()
        if item is not None:
            return item_screen(session, item, notice=notice)
        if crowd_config is not None and (leaving := crowd_end(session)) is not None:
            return leaving
        progress = session.progress()
        lines = {"progress": progress, "notice": notice}
        if progress.phase in (Phase.WAITING, Phase.TRAINING):
            return Screen("waiting", lines)
        if progress.phase is Phase.REJECTED:
            return Screen("rejected", lines)
        return Screen("finished", lines)

    # --- crowd studies: link, consent, exit survey, exit code (protocol/crowd.py) ------------
    crowd_config = crowd.config_of(ctx)

    def crowd_end(session: AnnotatorSession, error: str | None = None) -> Screen | None:
        """Once the engine says the worker is done: the exit survey's open questions, then
        the exit (its code, and how the platform takes the worker back)."""
        name = session.annotator.name
        questions = crowd.survey_due(config.engine, config.study, name)
        if questions:
            return Screen("survey", {"questions": questions, "error": error})
        leaving = crowd.exit_for(config.engine, config.study, name, visit_id=session.visit_id)
        return exit_screen(leaving) if leaving is not None else None

    def exit_screen(leaving: crowd.Exit) -> Screen:
        headers = None
        if leaving.form_action:  # MTurk's externalSubmit: the one outside form this page posts
            target = "/".join(leaving.form_action.split("/")[:3])
            headers = {
                "content-security-policy": CSP.replace(
                    "form-action 'self'", f"form-action 'self' {target}"
                )
            }
        return Screen(
            "exit",
            {
                "exit": leaving,
                "message": terminal_safe(leaving.message),
                "fields": {k: terminal_safe(v) for k, v in leaving.form_fields.items()},
            },
            headers=headers,
        )

    def arrive_by_link(request: Request) -> Screen | None:
        """A platform link (its query): the worker enters as their pseudonymous annotator in
        a new window, or the page says why the link cannot enter. None: no link here."""
        query = dict(request.query_params)
        if crowd_config is None or not query:
            return None
        try:
            entry = crowd.parse_link(ctx, query)
            if entry.preview:  # MTurk's preview: what the task is, nothing to answer yet
                return Screen(
                    "preview", {"guidelines": help_text["guidelines"], "crowd_text": crowd_words()}
                )
            arrival = crowd.enter_by_link(config.engine, config.study, entry, client="page")
        except crowd.CrowdRefusal as exc:
            return Screen("refused", {"message": terminal_safe(str(exc)), "code": exc.code}, 403)
        csrf = request.session.get("csrf")
        request.session.clear()
        request.session.update(
            {
                "who": arrival.annotator,
                "visit": arrival.visit_id,
                "csrf": csrf or secrets.token_urlsafe(24),
            }
        )
        return None

    def crowd_words() -> str | None:
        words = crowd.guidelines_text(ctx)
        return terminal_safe(words) if words else None

    def consent_screen(request: Request, session: AnnotatorSession) -> Screen | None:
        if crowd_config is None:
            return None
        if not crowd.needs_consent(config.engine, config.study, session.annotator.name):
            return None
        text = terminal_safe(crowd.consent_text(ctx) or "")
        return Screen("consent", {"paragraphs": text.split("\n\n")})

    def guidelines(session: AnnotatorSession) -> Screen:
        from annotate.tui.screens.guidelines import where_you_are

        progress = session.progress()
        if progress.phase is Phase.REJECTED:
            return Screen("rejected", {"progress": progress})
        return Screen(
            "guidelines",
            {
                "guidelines": guidelines_text(session),
                "keys": keys_text(session),
                "where": terminal_safe(where_you_are(progress, session.ctx.protocol)),
                "crowd_text": crowd_words(),
            },
        )

    def signin(request: Request, error: str | None = None, status: int = 200) -> Screen:
        return Screen(
            "signin",
            {"error": error, "fixed": terminal_safe(config.annotator or "")},
            status,
        )

    # --- endpoints ----------------------------------------------------------------------------
    def guarded(
        endpoint: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """An unreachable store becomes a screen that says so and retries by itself; any other
        error is logged here (type and message, no locals) and the page says only that
        something went wrong."""

        async def wrapper(request: Request) -> Response:
            try:
                return await endpoint(request)
            except ContinuedElsewhere:
                return render(request, Screen("continued", {}, 409))
            except DBAPIError as exc:
                if not is_disconnect(exc):
                    log.error("store error on %s: %s", request.url.path, type(exc).__name__)
                    return render(request, Screen("error", {}, 500))
                log.warning("store unreachable on %s", request.url.path)
                return render(request, Screen("unreachable", {}, 503))
            except Exception as exc:  # the page must never show a traceback
                log.error(
                    "error on %s: %s: %s",
                    request.url.path,
                    type(exc).__name__,
                    terminal_safe(str(exc))[:500],
                )
                return render(request, Screen("error", {}, 500))

        return wrapper

    threads: list[ThreadPoolExecutor] = []  # made by the first request, inside the server

    async def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Engine calls block (SQLite, psycopg): off the event loop, on the page's own threads.
        A plain executor rather than Starlette's run_in_threadpool, whose capacity limiter
        and cancel scope took a tenth of the page's CPU per answer (profiled under load).
        As there, a request cut off mid-call lets the call finish: its label is committed."""
        if not threads:
            count = SQLITE_THREADS if is_sqlite(config.engine) else POSTGRES_THREADS
            threads.append(ThreadPoolExecutor(count, thread_name_prefix="page"))
        call = functools.partial(fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(threads[0], call)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # What is loaded by now (the libraries, the study, the templates) lives as long as
        # the server: out of the collector's sight, so that its full collections, which
        # stalled every request for some 50 ms under load, have only the requests' objects
        # to look at.
        gc.freeze()
        yield
        for pool in threads:
            pool.shutdown(wait=True)  # the calls under way commit before the process ends

    def posted(
        work: Callable[[Request, AnnotatorSession, dict[str, str]], Screen],
    ) -> Callable[[Request], Awaitable[Response]]:
        """A signed-in annotator's form: the arrival stamped (`request.state.received`, the
        answer's time, before any store work), an expired form refused, the session opened
        off the event loop, and sign-in again for someone with no session."""

        @guarded
        async def handler(request: Request) -> Response:
            request.state.received = utcnow()
            form = await form_of(request)
            if form is None:
                return render(request, Screen("expired", {}, 400))

            def call() -> Screen:
                session = open_session(request)
                if session is None:
                    return signin(request)
                return work(request, session, form)

            return render(request, await run(call))

        return handler

    @guarded
    async def index(request: Request) -> Response:
        def work() -> Screen | None:
            if (refused := arrive_by_link(request)) is not None:
                return refused
            if crowd_config is not None and request.query_params:
                return None  # entered: reload without the ids in the address
            session = open_session(request)
            if session is None:
                if crowd_config is not None:
                    return Screen("link", {})
                one_person = config.annotator and not config.require_tokens
                if one_person and sign_in_check(
                    config.engine, config.annotator, "", require_token=False
                ):
                    request.session["who"] = config.annotator
                    return index_screen(request)
                return signin(request)
            return index_screen(request, session)

        screen = await run(work)
        if screen is None:
            return RedirectResponse("/", status_code=303)
        return render(request, screen)

    def index_screen(request: Request, session: AnnotatorSession | None = None) -> Screen:
        session = session or open_session(request)
        assert session is not None
        if (asking := consent_screen(request, session)) is not None:
            return asking
        if not request.session.get("started"):
            return guidelines(session)
        if (pending := request.session.get("fb")) and (again := feedback_again(session, pending)):
            return again  # a reload on the feedback shows it again, until "continue"
        request.session.pop("fb", None)
        return current(session)

    def feedback_again(session: AnnotatorSession, pending: dict[str, Any]) -> Screen | None:
        """The feedback of the training answer just given. Submitting a training answer
        again is the engine's idempotent retry: it stores nothing new and gives its feedback."""
        served = from_ticket(session, str(pending.get("t", "")))
        if served is None or served[1] or served[0].phase != TRAINING:
            return None
        item, _ = served
        try:
            feedback = session.submit(item, pending.get("v"))
        except UserError:
            return None
        return feedback_screen(session, item, pending.get("v"), feedback)

    def feedback_screen(session: AnnotatorSession, item: ItemView, value: Any, feedback) -> Screen:
        status, done, total = views.status_line(item, session.progress())
        return Screen(
            "feedback",
            {
                "item": views.item_page(session.spec, item.fields),
                "feedback": views.feedback_page(session.spec, item, value, feedback),
                "status": status,
                "done": done,
                "total": max(total, 1),
            },
        )

    @guarded
    async def screen(request: Request) -> Response:
        """The current screen (htmx: the waiting screen's poll, "continue" after feedback)."""

        def work() -> Screen | None:
            session = open_session(request)
            if session is None:
                return signin(request)
            if request.query_params.get("next"):
                request.session.pop("fb", None)  # the feedback has been read: move on
            if request.query_params.get("waiting") and session.phase() is Phase.WAITING:
                return None  # nothing new: the poll leaves the screen as it is
            return index_screen(request, session)

        result = await run(work)
        if result is None:
            return Response(status_code=204)
        return render(request, result)

    @guarded
    async def sign_in(request: Request) -> Response:
        if crowd_config is not None:  # workers enter by their platform link only
            return render(request, Screen("link", {}, 403))
        form = await form_of(request)
        if form is None:
            return render(request, signin(request, "The page had expired; sign in again.", 400))
        name = (config.annotator or form.get("name", "")).strip()
        token = form.get("token", "")
        address = request.client.host if request.client else None
        if not name:
            return render(request, signin(request, "Type your annotator name.", 400))
        keys = [name_key(name), address_key(address)]
        wait = config.limiter.wait(keys)
        if wait > 0:
            config.limiter.refused([address_key(address)])  # hammering counts on the address
            return render(request, signin(request, wait_message(wait), 429))

        def admit() -> Screen | None:  # one trip off the event loop for the whole sign-in
            annotator = signed_in(config.engine, name, token, require_token=config.require_tokens)
            if annotator is None:
                return None
            annotators[name] = annotator
            csrf = request.session.get("csrf")
            request.session.clear()  # a new session for the new person (no fixation)
            request.session.update({"who": name, "csrf": csrf or secrets.token_urlsafe(24)})
            # This page is now the annotator's live window: an older page or terminal of
            # theirs stops taking answers (protocol/windows.py).
            session = open_session(request)
            assert session is not None
            request.session["visit"] = session.claim_window(client="page")
            return index_screen(request, session)

        screen = await run(admit)
        if screen is None:
            config.limiter.refused(keys)
            return render(request, signin(request, SIGN_IN_REFUSED, 403))
        config.limiter.admitted(name)
        log.info("signed in: %s from %s", terminal_safe(name), address)
        return render(request, screen)

    @posted
    def start(request: Request, session: AnnotatorSession, form: dict[str, str]) -> Screen:
        request.session["started"] = True
        return current(session)

    @posted
    def answer(request: Request, session: AnnotatorSession, form: dict[str, str]) -> Screen:
        received: datetime = request.state.received
        request.session.pop("fb", None)
        served = from_ticket(session, form.get("ticket", ""))
        if served is None:
            return current(session, "That answer was for another page; here is your item.")
        item, kind = served
        flag = form.get("flag") == "1"
        comment = form.get("comment") or None
        try:
            value = parse_answer(session, item, form)
        except UserError as exc:
            return item_screen(
                session,
                item,
                notice=terminal_safe(str(exc)),
                revising=previous_of(session, item) if kind == "revise" else None,
                flag=flag,
                comment=comment or "",
            )
        try:
            if kind == "revise":
                session.revise(item, value)
                notice = f"Previous answer changed to: {describe(session.spec, value)}"
                return current(session, terminal_safe(notice))
            if item.phase == TEST and kind != "refresher":
                upcoming = session.submit_and_next(
                    item, value, answered_at=received, flag=flag, comment=comment
                )
                return current(session, item=upcoming) if upcoming else current(session)
            feedback = session.submit(item, value, answered_at=received, flag=flag, comment=comment)
        except ItemTaken as exc:
            return current(session, terminal_safe(str(exc)))
        except ContinuedElsewhere:
            raise  # a newer window of this annotator took over: this page says so
        except DBAPIError as exc:
            if not is_disconnect(exc):
                raise
            return item_screen(
                session,
                item,
                notice="The store is unreachable: your answer is not saved yet. "
                "Answer again in a moment.",
                flag=flag,
                comment=comment or "",
            )
        except UserError as exc:
            return current(session, terminal_safe(str(exc)))
        if feedback is not None and session.ctx.protocol.training_feedback:
            if not kind:  # a reload shows this feedback again (a refresher's: not kept)
                request.session["fb"] = {"t": form.get("ticket", ""), "v": value}
            return feedback_screen(session, item, value, feedback)
        return current(session)

    def previous_of(session: AnnotatorSession, item: ItemView) -> Any:
        last = session.last_answer()
        return last[1] if last is not None and last[0].item_id == item.item_id else None

    @guarded
    async def revise(request: Request) -> Response:
        def work() -> Screen:
            session = open_session(request)
            if session is None:
                return signin(request)
            last = session.last_answer()
            if last is None:
                return current(session, "There is no earlier test answer to revise.")
            item, value = last
            return item_screen(session, item, revising=value)

        return render(request, await run(work))

    @guarded
    async def quit_(request: Request) -> Response:
        if await form_of(request) is None:
            return render(request, Screen("expired", {}, 400))

        def work() -> None:
            session = open_session(request)
            if session is not None:
                session.release()  # give the item back at once; nobody waits for the lease

        await run(work)
        csrf = request.session.get("csrf")
        request.session.clear()
        request.session["csrf"] = csrf
        return render(request, Screen("left"))

    @posted
    def consent(request: Request, session: AnnotatorSession, form: dict[str, str]) -> Screen:
        if crowd_config is None:
            return signin(request)
        agree = form.get("agree") == "yes"
        leaving = crowd.record_consent(
            config.engine, config.study, session.annotator.name, agree, visit_id=session.visit_id
        )
        if leaving is not None:
            return exit_screen(leaving)
        return index_screen(request, session)

    @posted
    def survey(request: Request, session: AnnotatorSession, form: dict[str, str]) -> Screen:
        if crowd_config is None:
            return signin(request)
        answers = {k[2:]: v for k, v in form.items() if k.startswith("q:")}
        try:
            crowd.record_survey(config.engine, config.study, session.annotator.name, answers)
        except UserError as exc:
            return crowd_end(session, terminal_safe(str(exc))) or current(session)
        return current(session)

    @posted
    def reclaim(request: Request, session: AnnotatorSession, form: dict[str, str]) -> Screen:
        """ "Continue here": this page becomes the annotator's live window again."""
        request.session["visit"] = session.claim_window(client="page")
        return index_screen(request, session)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    routes = [
        Route("/", index),
        Route("/screen", screen),
        Route("/signin", sign_in, methods=["POST"]),
        Route("/start", start, methods=["POST"]),
        Route("/answer", answer, methods=["POST"]),
        Route("/revise", revise),
        Route("/quit", quit_, methods=["POST"]),
        Route("/consent", consent, methods=["POST"]),
        Route("/reclaim", reclaim, methods=["POST"]),
        Route("/survey", survey, methods=["POST"]),
        Route("/favicon.ico", favicon),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(Guard, origins=config.origins),
            Middleware(
                _Sessions,
                secret_key=config.secret,
                session_cookie="annotate_session",
                same_site="strict",
                https_only=config.secure,
                max_age=14 * 24 * 3600,
            ),
        ],
    )
    app.state.started = time.monotonic()
    return app


def _help_text(ctx: StudyContext) -> dict[str, Any]:
    """The keys and the guidelines, in the terminal app's words (its own functions)."""
    from annotate.tui.screens.guidelines import keys_text, prior_hint, reflow

    return {
        "keys": keys_text(ctx.spec, COME_BACK).plain,
        "guidelines": {
            "paragraphs": terminal_safe(reflow(ctx.spec.guidelines)).split("\n\n"),
            "hint": prior_hint(ctx.spec, ctx.protocol),
        },
    }


def parse_answer(session: AnnotatorSession, item: ItemView, form: dict[str, str]) -> Any:
    """The form's answer in the engine's terms. Choices travel as positions (an entity or a
    candidate shown after sanitising may differ from the stored text); the session validates."""
    spec = session.spec
    if spec.kind == "multi_answer":
        answers = [a for a in item.fields.get("answers", []) if isinstance(a, dict)]
        judged = {}
        for n, candidate in enumerate(answers, start=1):
            value = form.get(f"j{n}")
            if value:
                judged[candidate["idx"]] = value
        left = len(answers) - len(judged)
        if left:
            raise UserError(f"Judge every answer first ({left} left).")
        return judged
    if spec.kind == "entity_choice":
        entities = list(item.fields.get("entities", []))
        try:
            return entities[int(form.get("entity", "")) - 1]
        except (ValueError, IndexError):
            raise UserError("Choose one of the entities.") from None
    value = form.get("answer", "")
    if not value:
        raise UserError("Choose an answer.")
    return value
