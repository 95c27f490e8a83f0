"""`annotate serve`: the annotator app in a browser, offline and on loopback.

- the page, its script, styles and font come from this server (the package), and the page
  names no other host;
- a websocket client (what the page's script does) gets the app: sign-in, then guidelines;
- the sign-in screen checks names and tokens (Pilot);
- where Chromium is installed, a headless browser opens the page, receives the guidelines
  screen, and requests nothing from any other host.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlmodel import Session, select

from annotate.protocol.studies import add_annotator
from annotate.protocol.tokens import add_annotator_with_token
from annotate.store.models import Annotator
from tests import fixtures as fx
from tests.tui.support import QUICK_TEST, build_study, without_labels

pytestmark = pytest.mark.slow
textual_serve = pytest.importorskip("textual_serve", reason="needs the web extra")

START_TIMEOUT_S = 30
"""Bound on polling for the server (and the app behind a websocket) to come up."""
GUIDELINES = "Press Enter to start."
SIGN_IN = "Sign in to study"
NAME_HINT = "Type your annotator name"
TOKEN_HINT = "Type the token you were given"
ANNOTATE = (sys.executable, "-m", "annotate")
SVG_NAMESPACE = "http://www.w3.org/2000/svg"
"""An XML namespace name in the page's inline SVG: an identifier, never fetched."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read()


@pytest.fixture
def served_study(workspace, tmp_path: Path) -> str:
    build_study(
        workspace.engine,
        tmp_path,
        "superglue/rte",
        test=without_labels(fx.SG_RTE),
        overrides=QUICK_TEST,
        name="rte",
    )
    add_annotator(workspace.engine, "ana")
    return "rte"


@pytest.fixture
def serve(db_url: str, served_study: str) -> Iterator:
    """Start `annotate serve` (in its own process group, ended at teardown); returns a
    function taking extra arguments and giving the base URL once the page answers."""
    started: list[subprocess.Popen] = []

    def start(*args: str) -> str:
        port = free_port()
        proc = subprocess.Popen(
            # --no-tokens: `ana` has none (the token checks have tests of their own)
            [
                *ANNOTATE,
                "--db",
                db_url,
                "serve",
                served_study,
                "--port",
                str(port),
                "--no-tokens",
                "--terminal",  # textual-serve's path (the HTML page has tests/web/)
                *args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its app processes go with it at teardown
        )
        started.append(proc)
        base = f"http://127.0.0.1:{port}"
        # The console's page answers only with its key (a test sets ANNOTATE_CONSOLE_KEY).
        key = os.environ.get("ANNOTATE_CONSOLE_KEY") if "--console" in args else None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"annotate serve exited: {proc.stderr.read().decode()}")
            try:
                if get(base + "/" + (f"?key={key}" if key else ""))[0] == 200:
                    return base
            except OSError:
                time.sleep(0.1)  # bounded polling for the server to come up
        pytest.fail("annotate serve did not answer in time")

    yield start
    for proc in started:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def absolute_urls(html: str) -> list[str]:
    return re.findall(r"(?:https?|wss?)://[^\s\"'<>)]+", html)


def test_page_and_its_files_come_from_this_server_only(serve):
    base = serve()
    status, body = get(base + "/")
    html = body.decode()
    assert status == 200
    host = urlsplit(base).netloc
    urls = [u for u in absolute_urls(html) if u != SVG_NAMESPACE]
    assert urls, "the page should reference its script and styles"
    assert {urlsplit(u).netloc for u in urls} == {host}, urls
    assert not re.search(r"""(?:src|href)=["']//""", html)  # no protocol-relative URLs
    assert "googleapis" not in html and "gstatic" not in html
    assert '<meta name="viewport" content="width=device-width, initial-scale=1" />' in html

    static = Path(textual_serve.__file__).parent / "static"
    fetched = [u for u in urls if "/static/" in u]
    assert any(u.endswith("js/textual.js") for u in fetched)
    assert any(u.endswith(".ttf") for u in fetched)  # the web font, served locally
    for url in fetched:
        status, content = get(url)
        assert status == 200
        assert content == (static / url.split("/static/", 1)[1]).read_bytes()


async def read_screen_until(ws, text: str, timeout: float = START_TIMEOUT_S) -> str:
    """Collect what the server sends from now until `text` appears (terminal output)."""
    seen = ""
    deadline = time.monotonic() + timeout
    while text not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"{text!r} did not appear; got {seen[-500:]!r}"
        msg = await ws.receive(timeout=remaining)
        if msg.type.name == "BINARY":
            seen += msg.data.decode("utf-8", errors="replace")
        elif msg.type.name in ("CLOSE", "CLOSED", "ERROR"):
            raise AssertionError(f"websocket closed before {text!r}; got {seen[-500:]!r}")
    return seen


async def test_websocket_client_signs_in_and_reaches_the_guidelines(serve, workspace):
    import aiohttp

    _, token = add_annotator_with_token(workspace.engine, "tok")
    base = serve()
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(base.replace("http", "ws") + "/ws?width=100&height=30", origin=base) as ws,
    ):
        # Type only once a field has the focus: the hint under the fields changes with it.
        assert SIGN_IN in await read_screen_until(ws, NAME_HINT)
        await ws.send_str(json.dumps(["stdin", "tok\r"]))
        await read_screen_until(ws, TOKEN_HINT)
        await ws.send_str(json.dumps(["stdin", "not-the-token\r"]))
        await read_screen_until(ws, "Unknown name or wrong token")
        await ws.send_str(json.dumps(["stdin", token + "\r"]))
        await read_screen_until(ws, GUIDELINES)
    with Session(workspace.engine) as s:
        refused = s.exec(select(Annotator.failed_logins).where(Annotator.name == "tok")).one()
    assert refused == 1


async def test_one_annotator_server_opens_at_the_guidelines(serve):
    import aiohttp

    base = serve("--as", "ana")
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(base.replace("http", "ws") + "/ws?width=100&height=30", origin=base) as ws,
    ):
        await read_screen_until(ws, GUIDELINES)


async def read_goodbye(ws, timeout: float = START_TIMEOUT_S) -> str:
    """The tab's last words: the text message ["goodbye", text] the page gets before the
    close (what the page shows in place of "Session ended.")."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        assert remaining > 0, "no goodbye before the timeout"
        msg = await ws.receive(timeout=remaining)
        if msg.type.name == "TEXT" and (envelope := json.loads(msg.data))[0] == "goodbye":
            return envelope[1]
        assert msg.type.name not in ("CLOSE", "CLOSED", "ERROR"), "closed without a goodbye"


async def test_a_tab_that_quits_is_told_its_answers_are_saved_and_how_to_continue(serve):
    """`annotate label` prints what is saved and how to go on once its screen closes; a
    tab's page said only "Session ended.": it is sent the same words as it closes."""
    import aiohttp

    base = serve("--as", "ana")
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(base.replace("http", "ws") + "/ws?width=100&height=30", origin=base) as ws,
    ):
        await read_screen_until(ws, GUIDELINES)
        await ws.send_str(json.dumps(["stdin", "q"]))
        said = await read_goodbye(ws)
    assert said.splitlines() == [
        "ana: 0 training answers and 0 test answers saved in study 'rte'.",
        "Open this page again later to continue where you stopped.",
    ]


# --- the sign-in screen (Pilot) --------------------------------------------------------------


async def test_sign_in_refuses_a_wrong_token_and_counts_it(workspace, served_study):
    from annotate.tui.screens.guidelines import GuidelinesScreen
    from annotate.web.app import SignInScreen, WebLabelApp

    _, token = add_annotator_with_token(workspace.engine, "tok")
    app = WebLabelApp(workspace.engine, served_study)
    async with app.run_test(size=(100, 30)) as pilot:
        assert isinstance(app.screen, SignInScreen)
        await pilot.press(*"tok", "enter", *"wrong", "enter")
        assert isinstance(app.screen, SignInScreen)
        assert "Unknown name or wrong token" in str(app.screen.query_one("#signin-error").visual)
        await pilot.press(*token, "enter")
        assert isinstance(app.screen, GuidelinesScreen)
        assert app.session.annotator.name == "tok"
    with Session(workspace.engine) as s:
        assert s.exec(select(Annotator.failed_logins).where(Annotator.name == "tok")).one() == 1


async def test_sign_in_does_not_tell_an_unknown_name_from_a_wrong_token(workspace, served_study):
    from annotate.web.app import SignInScreen, WebLabelApp

    add_annotator_with_token(workspace.engine, "tok")
    said = []
    for name in ("nobody-here", "tok"):
        app = WebLabelApp(workspace.engine, served_study)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press(*name, "enter", *"guess", "enter")
            assert isinstance(app.screen, SignInScreen)
            said.append(str(app.screen.query_one("#signin-error").visual))
    assert said[0] == said[1] and "Unknown name or wrong token" in said[0]


async def test_with_tokens_required_no_one_signs_in_without_a_token(workspace, served_study):
    """A page of a server with tokens on: `ana` (added later, with no token) cannot sign in,
    so no label can be stored in her name; neither can simulate's synthetic annotators."""
    from annotate.protocol.studies import add_annotator
    from annotate.web.app import SignInScreen, WebLabelApp

    add_annotator(workspace.engine, "sim1", synthetic=True)
    for name in ("ana", "sim1"):
        app = WebLabelApp(workspace.engine, served_study, require_token=True)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press(*name, "enter", "enter")
            assert isinstance(app.screen, SignInScreen) and app.session is None


async def test_with_tokens_required_the_hint_does_not_say_to_leave_the_token_empty(
    workspace, served_study
):
    """The token field's hint said "nothing if you have none" on a server where an empty
    token signs nobody in."""
    from functools import partial

    from textual.widgets import Input

    from annotate.web.app import WebLabelApp
    from tests.tui.support import wait_until

    def shown_hint(app: WebLabelApp) -> str:
        return str(app.screen.query_one("#signin-hint").visual)

    def token_hint_shown(app: WebLabelApp) -> bool:
        return TOKEN_HINT in shown_hint(app)

    for required, hint in ((True, "Type the token you were given, then"), (False, "have none")):
        app = WebLabelApp(workspace.engine, served_study, require_token=required)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press(*"ana", "enter")
            await wait_until(pilot, partial(token_hint_shown, app), "the token hint")
            assert hint in shown_hint(app)
            placeholder = app.screen.query_one("#token", Input).placeholder
            assert (placeholder == "Token") is required  # no "if you were given one" then


async def test_annotator_without_token_signs_in_with_the_name_alone(workspace, served_study):
    from annotate.tui.screens.guidelines import GuidelinesScreen
    from annotate.web.app import WebLabelApp
    from tests.tui.support import screen_text, wait_until

    app = WebLabelApp(workspace.engine, served_study)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"ana", "enter", "enter")
        assert isinstance(app.screen, GuidelinesScreen)
        await wait_until(pilot, lambda: "Quit" in screen_text(app), "the footer")
        footer = screen_text(app).splitlines()[-1]  # 26.15: the key that works, once
        assert "q Quit" in footer and "^q" not in footer and footer.count("Quit") == 1


async def test_a_closed_tab_gives_back_the_item_on_its_screen(workspace, served_study):
    """Closing the tab mid-item: textual-serve asks the tab's app to quit (Textual's ExitApp),
    and the item goes back to the pool as at q, not held for the next annotator until its
    lease runs out."""
    from textual.messages import ExitApp

    from annotate.tui.screens.item import ItemScreen
    from annotate.web.app import WebLabelApp
    from tests.tui.support import leases, wait_until

    app = WebLabelApp(workspace.engine, served_study)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"ana", "enter", "enter")
        await pilot.press("enter")  # past the guidelines, to a test item
        await wait_until(pilot, lambda: isinstance(app.screen, ItemScreen), "a test item")
        assert leases(workspace.engine) == 1
        app.post_message(ExitApp())  # what the web driver does when the page is closed
        await wait_until(pilot, lambda: not app.is_running, "the app's end")
    assert leases(workspace.engine) == 0


async def test_sign_in_waits_longer_after_each_refusal_past_the_free_tries(
    workspace, served_study, tmp_path, monkeypatch
):
    """Past the free tries, a tab's next try for that name is not even checked until the
    limiter's delay has passed, and the counts are shared by every tab of one server."""
    from annotate.web import limits
    from annotate.web.app import SignInScreen, WebLabelApp

    monkeypatch.setenv(limits.LIMITS_ENV, str(tmp_path / "limits.db"))
    monkeypatch.setattr(limits, "FIRST_DELAY_S", 600.0)  # outlasts typing the token
    _, token = add_annotator_with_token(workspace.engine, "tok")
    for _ in range(limits.FREE_TRIES):
        app = WebLabelApp(workspace.engine, served_study)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press(*"tok", "enter", *"wrong", "enter")
            await pilot.pause()
            assert "wrong token" in str(app.screen.query_one("#signin-error").visual)
    app = WebLabelApp(workspace.engine, served_study)  # a new tab: the right token must wait
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"tok", "enter", *token, "enter")
        await pilot.pause()
        assert isinstance(app.screen, SignInScreen)
        assert "Too many refused sign-ins: wait" in str(
            app.screen.query_one("#signin-error").visual
        )
    with Session(workspace.engine) as s:  # the waiting try was not checked, so not counted
        failed = s.exec(select(Annotator.failed_logins).where(Annotator.name == "tok")).one()
        assert failed == limits.FREE_TRIES


async def test_sign_in_while_the_store_is_away_says_so_and_retries(
    workspace, served_study, monkeypatch
):
    """29.1: an unreachable store at sign-in is no crash (whose traceback would carry the
    typed token): the page says "store unreachable, retrying" and signs in once it is back."""
    import psycopg
    from sqlalchemy.exc import OperationalError

    from annotate.tui.screens.guidelines import GuidelinesScreen
    from annotate.web.app import SignInScreen, WebLabelApp
    from tests.tui.support import wait_until

    app = WebLabelApp(workspace.engine, served_study)
    app.RECONNECT_FIRST_S = app.RECONNECT_MAX_S = 0.05
    real = app._may_sign_in
    away = {"on": True, "calls": 0}

    def checked(*args, **kwargs):
        away["calls"] += 1
        if away["on"]:
            raise OperationalError("SELECT", {}, psycopg.OperationalError("server closed"))
        return real(*args, **kwargs)

    monkeypatch.setattr(app, "_may_sign_in", checked)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"ana", "enter", "enter")
        await wait_until(pilot, lambda: away["calls"] >= 2, "a retry")
        assert isinstance(app.screen, SignInScreen) and app.is_running
        error = str(app.screen.query_one("#signin-error").visual)
        assert "store unreachable, retrying" in error
        away["on"] = False
        await wait_until(pilot, lambda: isinstance(app.screen, GuidelinesScreen), "signed in")


# --- the command -------------------------------------------------------------------------------


class FakeServer:
    served = False

    def serve(self) -> None:
        FakeServer.served = True


def test_serve_warns_when_bound_beyond_loopback(cli, served_study, monkeypatch):
    import annotate.web.server as server

    monkeypatch.setattr(server, "make_server", lambda *a, **k: FakeServer())
    cli("annotator", "token", "ana")
    quiet = cli("serve", served_study, "--terminal")
    assert quiet.code == 0 and "warning" not in quiet.stderr
    loud = cli("serve", served_study, "--host", "0.0.0.0", "--terminal")
    assert loud.code == 0 and FakeServer.served
    assert "warning: serving on 0.0.0.0" in " ".join(loud.stderr.split())


def test_serve_refuses_to_start_while_annotators_have_no_token(cli, served_study, monkeypatch):
    import annotate.web.server as server

    monkeypatch.setattr(server, "make_server", lambda *a, **k: FakeServer())
    FakeServer.served = False
    refused = cli("serve", served_study, "--terminal")
    assert (
        refused.code == 1
        and "1 annotator has no token (ana)" in refused.stderr
        and "--no-tokens" in refused.stderr
    )
    assert not FakeServer.served
    anyway = cli("serve", served_study, "--no-tokens", "--terminal")
    assert anyway.code == 0 and FakeServer.served and "warning: --no-tokens" in anyway.stderr


def test_only_this_servers_page_may_open_a_websocket():
    from annotate.web.server import allowed_origins

    assert allowed_origins("127.0.0.1", 8000, None) >= {
        "http://127.0.0.1:8000",
        "http://localhost:8000",
    }
    assert "http://evil.example" not in allowed_origins("127.0.0.1", 8000, None)
    assert "https://labels.example.org" in allowed_origins(
        "0.0.0.0", 8000, "https://labels.example.org/"
    )


async def test_a_websocket_from_a_foreign_page_is_refused(serve):
    import aiohttp

    base = serve()
    async with aiohttp.ClientSession() as http:
        for origin in ("http://evil.example", None):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(base.replace("http", "ws") + "/ws", origin=origin)
            assert refused.value.status == 403
        async with http.ws_connect(base.replace("http", "ws") + "/ws", origin=base) as ws:
            assert SIGN_IN in await read_screen_until(ws, NAME_HINT)


def test_serve_refuses_an_unknown_study_or_annotator(cli, served_study):
    assert "no study named 'nope'" in cli("serve", "nope").stderr
    assert "no annotator named 'zed'" in cli("serve", served_study, "--as", "zed").stderr


def test_loopback_hosts():
    from annotate.web.server import is_loopback

    assert all(map(is_loopback, ["127.0.0.1", "localhost", "::1", "127.1.2.3"]))
    assert not any(map(is_loopback, ["0.0.0.0", "192.0.2.1", "example.org", "::"]))


# --- a real browser, where one is installed ------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

RECORD_WEBSOCKET = """
window.__screen = "";
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener("message", async (event) => {
    const data = event.data;
    if (typeof data === "string") return;  // control messages (pong, meta)
    const bytes = data instanceof Blob ? await data.arrayBuffer() : data;
    window.__screen += new TextDecoder().decode(bytes);
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, Native);
"""
"""Keeps what the page's terminal receives, for the test to read (the terminal draws on a
canvas, so the text is not in the DOM)."""


class DevTools:
    """Just enough of the Chrome DevTools protocol: numbered calls, and the events seen."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: list[dict] = []

    async def call(self, method: str, **params) -> dict:
        self.next_id += 1
        await self.ws.send_json({"id": self.next_id, "method": method, "params": params})
        while True:
            message = await self.ws.receive_json(timeout=START_TIMEOUT_S)
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message.get("result", {})
            self.events.append(message)


@contextlib.asynccontextmanager
async def chromium_tab(profile: Path) -> AsyncIterator[DevTools]:
    """A headless Chromium's page, driven through DevTools, recording what its terminal gets
    (RECORD_WEBSOCKET); the browser is ended on leaving."""
    import aiohttp

    assert CHROMIUM is not None
    browser = subprocess.Popen(
        [
            *(CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"),
            *("--remote-debugging-port=0", f"--user-data-dir={profile}"),
            *("--window-size=1000,700", "about:blank"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        devtools_url = None
        assert browser.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while devtools_url is None and time.monotonic() < deadline:
            line = browser.stderr.readline()
            if m := re.search(r"DevTools listening on (ws://\S+)", line):
                devtools_url = m.group(1)
        assert devtools_url, "Chromium did not open its DevTools port"
        port = urlsplit(devtools_url).port
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
                pages = [t for t in await response.json() if t["type"] == "page"]
            async with http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                tab = DevTools(ws)
                await tab.call("Network.enable")
                await tab.call("Page.enable")
                await tab.call("Page.addScriptToEvaluateOnNewDocument", source=RECORD_WEBSOCKET)
                yield tab
    finally:
        browser.terminate()
        browser.wait(timeout=10)


async def evaluate(tab: DevTools, expression: str):
    result = await tab.call("Runtime.evaluate", expression=expression)
    return result["result"].get("value")


async def wait_for(tab: DevTools, expression: str, what: str):
    """The value of `expression` in the page once it is truthy (bounded polling)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (value := await evaluate(tab, expression)):
        assert time.monotonic() < deadline, f"{what} did not happen"
        await asyncio.sleep(0.2)  # bounded polling for the app to draw
    return value


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (apt-get install chromium)")
async def test_headless_browser_shows_the_guidelines_and_asks_no_other_host(serve, tmp_path: Path):
    base = serve("--as", "ana")
    async with chromium_tab(tmp_path / "profile") as tab:
        await tab.call("Page.navigate", url=base + "/")
        await wait_for(tab, f"window.__screen.includes({json.dumps(GUIDELINES)})", "guidelines")
        # 26.15: the terminal has the keys at once, without a first click
        focused = await evaluate(
            tab, "document.activeElement.classList.contains('xterm-helper-textarea')"
        )
        assert focused is True
        shot = await tab.call("Page.captureScreenshot", format="png")
        (tmp_path / "guidelines.png").write_bytes(base64.b64decode(shot["data"]))
    requested = [
        e["params"]["request"]["url"]
        for e in tab.events
        if e.get("method") == "Network.requestWillBeSent"
    ]
    host = urlsplit(base).netloc
    assert requested and all(urlsplit(u).netloc == host for u in requested), requested


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here (apt-get install chromium)")
async def test_a_browser_tab_that_quits_shows_the_goodbye_where_it_said_session_ended(
    serve, tmp_path: Path
):
    """q in the tab: the page's closing dialog says what `annotate label` says as it ends."""
    base = serve("--as", "ana")
    async with chromium_tab(tmp_path / "profile") as tab:
        await tab.call("Page.navigate", url=base + "/")
        await wait_for(tab, f"window.__screen.includes({json.dumps(GUIDELINES)})", "guidelines")
        await tab.call("Input.insertText", text="q")  # typed into the focused terminal
        await wait_for(tab, "document.body.classList.contains('-closed')", "the tab's closing")
        shown = await evaluate(tab, "document.getElementById('closed-message').innerText")
    assert shown.splitlines() == [
        "ana: 0 training answers and 0 test answers saved in study 'rte'.",
        "Open this page again later to continue where you stopped.",
    ]


@contextlib.contextmanager
def serving_tabs_to(log: Path, db_url: str, study: str, first: str = "/") -> Iterator[str]:
    """`annotate serve STUDY --terminal --no-tokens` with its output in `log`, once `first`
    answers: its base URL; stopped at the end by its own process group."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*ANNOTATE, "--db", db_url, "serve", study, "--port", str(port),
             "--no-tokens", "--terminal"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        try:
            base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + START_TIMEOUT_S
            while time.monotonic() < deadline:
                try:
                    if get(base + first)[0] == 200:
                        break
                except OSError:
                    time.sleep(0.1)  # bounded polling for the server to come up
            else:
                pytest.fail("annotate serve did not answer in time")
            yield base
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)


def test_the_log_holds_no_page_address(db_url, served_study, tmp_path: Path):
    """A crowd worker's link carries their platform id (PROLIFIC_PID): the server's output
    logs no request line with it."""
    log = tmp_path / "serve.log"
    with serving_tabs_to(
        log, db_url, served_study, "/?PROLIFIC_PID=5f3c0ffee0ddba11c0ffee01"
    ) as base:
        assert get(f"{base}/?PROLIFIC_PID=5f3c0ffee0ddba11c0ffee02")[0] == 200
    text = log.read_text()
    assert "Serving" in text  # the output was captured
    assert "c0ffee" not in text


async def test_a_tabs_refused_sign_in_reaches_the_servers_log(db_url, served_study, tmp_path):
    """A wrong try in a tab is logged (the name cut, with a hash): Textual takes the tab's
    stderr while the app runs, and the warning never reached the server's output."""
    import aiohttp

    log = tmp_path / "serve.log"
    with serving_tabs_to(log, db_url, served_study) as base:
        async with aiohttp.ClientSession() as http:
            url = base.replace("http", "ws") + "/ws?width=100&height=30"
            async with http.ws_connect(url, origin=base) as ws:
                await read_screen_until(ws, NAME_HINT)
                await ws.send_str(json.dumps(["stdin", "nobody-here\r"]))
                await read_screen_until(ws, TOKEN_HINT)
                await ws.send_str(json.dumps(["stdin", "guess\r"]))
                await read_screen_until(ws, "Unknown name or wrong token")
        deadline = time.monotonic() + START_TIMEOUT_S
        while "refused a sign-in" not in log.read_text():  # written as the tab ends
            assert time.monotonic() < deadline, log.read_text()
            await asyncio.sleep(0.1)  # bounded polling for the tab's end
    text = log.read_text()
    assert "refused a sign-in (name:nob…#" in text
    assert "nobody-here" not in text and "guess" not in text
