"""The page's parts, each served alone by a minimal Starlette app: the preamble every posted
form goes through, the guard in front of every request, the signed cookie and ticket, and
the endpoints of one module with only their own routes."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from annotate.protocol.studies import add_annotator
from tests.web.support import labels, layout_study

pytest.importorskip("starlette")
ORIGIN = "http://127.0.0.1:8000"


def minimal_app(routes, workspace=None, study: str | None = None, *, guard: bool = False):
    """A Starlette app with only `routes`, the signed sessions and (for endpoints) the
    page's state for `study`; `guard`: the security guard in front."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.testclient import TestClient

    from annotate.web.page.config import PageConfig
    from annotate.web.page.guard import Guard
    from annotate.web.page.signers import Sessions, session_options
    from annotate.web.page.state import page_state

    middleware = [Middleware(Sessions, **session_options("secret", secure=False))]
    if guard:
        middleware.insert(0, Middleware(Guard, origins={ORIGIN}))
    app = Starlette(routes=routes, middleware=middleware)
    if study is not None:
        config = PageConfig(
            engine=workspace.engine,
            study=study,
            secret="secret",
            origins={ORIGIN},
            require_tokens=False,
        )
        app.state.page = page_state(config)
    return TestClient(app, base_url=ORIGIN)


def csrf(response) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', response.text).group(1)


def screen(response) -> str:
    return re.search(r'data-screen="([\w-]+)"', response.text).group(1)


@pytest.fixture
def pair(workspace, tmp_path: Path) -> str:
    return layout_study(workspace.engine, tmp_path, "pair", test=3)


def test_the_preamble_refuses_an_expired_form_and_asks_who_is_there(workspace, pair):
    """A form whose CSRF token is not this browser's is refused with "expired" and runs
    nothing; a good form from nobody signed in gets the sign-in screen."""
    from starlette.routing import Route

    from annotate.web.page import entry

    c = minimal_app(
        [Route("/", entry.index), Route("/start", entry.start, methods=["POST"])], workspace, pair
    )
    token = csrf(c.get("/"))
    stale = c.post("/start", data={"csrf": "guess"})
    assert stale.status_code == 400 and screen(stale) == "expired"
    nobody = c.post("/start", data={"csrf": token})
    assert nobody.status_code == 200 and screen(nobody) == "signin"
    assert labels(workspace.engine, pair) == []


def test_a_posted_form_runs_its_work_with_the_session_once_the_preamble_passes(workspace, pair):
    from starlette.routing import Route

    from annotate.web.page import entry
    from annotate.web.page.preamble import posted
    from annotate.web.page.render import Screen

    calls = []

    @posted
    def note(page, request, session, form) -> Screen:
        calls.append((session.annotator.name, form["word"], request.state.received))
        return Screen("left")

    add_annotator(workspace.engine, "ana")
    routes = [
        Route("/", entry.index),
        Route("/signin", entry.sign_in, methods=["POST"]),
        Route("/note", note, methods=["POST"]),
    ]
    c = minimal_app(routes, workspace, pair)
    token = csrf(c.get("/"))
    assert screen(c.post("/note", data={"csrf": token, "word": "x"})) == "signin"
    assert calls == []
    assert screen(c.post("/signin", data={"csrf": token, "name": "ana"})) == "guidelines"
    done = c.post("/note", data={"csrf": token, "word": "hello"})
    assert screen(done) == "left"
    assert [(name, word) for name, word, _ in calls] == [("ana", "hello")]
    assert note.__name__ == "note"


def test_the_guard_refuses_a_foreign_origin_and_sets_the_security_headers():
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    async def ok(request):
        return PlainTextResponse("ok")

    c = minimal_app([Route("/", ok, methods=["GET", "POST", "PUT"])], guard=True)
    foreign = c.post("/", headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403 and "its own server" in foreign.text
    by_referer = c.post("/", headers={"Referer": "http://evil.example/page"})
    assert by_referer.status_code == 403
    assert c.post("/", headers={"Referer": f"{ORIGIN}/"}).text == "ok"
    own = c.post("/", headers={"Origin": ORIGIN})
    assert own.text == "ok"
    assert own.headers["x-frame-options"] == "DENY"
    assert own.headers["content-security-policy"].startswith("default-src 'self'")
    assert own.headers["cache-control"] == "no-store"
    assert c.put("/", headers={"Origin": ORIGIN}).status_code == 405
    big = c.post("/", headers={"Origin": ORIGIN}, content=b"x" * (64 * 1024 + 1))
    assert big.status_code == 413


def test_a_ticket_signed_with_another_secret_or_tampered_with_is_refused():
    from itsdangerous import BadSignature

    from annotate.web.page.signers import ticket_serializer

    tickets = ticket_serializer("secret")
    value = tickets.dumps({"a": 1, "i": 7})
    assert ticket_serializer("secret").loads(value) == {"a": 1, "i": 7}  # another process
    for forged in (ticket_serializer("other").dumps({"a": 1, "i": 7}), value[:-2] + "AA"):
        with pytest.raises(BadSignature):
            tickets.loads(forged)


def test_a_tampered_session_cookie_signs_nobody_in():
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from annotate.web.page.signers import COOKIE

    async def claim(request):
        request.session["who"] = "ana"
        return PlainTextResponse("")

    async def who(request):
        return PlainTextResponse(request.session.get("who", "nobody"))

    c = minimal_app([Route("/claim", claim), Route("/who", who)])
    c.get("/claim")
    assert c.get("/who").text == "ana"
    cookie = c.cookies[COOKIE]
    c.cookies.clear()
    # Another name under ana's signature: the payload is signed, so it is not taken.
    c.cookies[COOKIE] = base64.b64encode(b'{"who": "bob"}').decode() + cookie[cookie.index(".") :]
    assert c.get("/who").text == "nobody"


def test_an_answer_for_another_annotators_item_is_not_stored(workspace, pair):
    """The items module alone: a ticket served to ana does not answer for bob."""
    from starlette.routing import Route

    from annotate.web.page import entry, items

    for name in ("ana", "bob"):
        add_annotator(workspace.engine, name)
    routes = [
        Route("/", entry.index),
        Route("/signin", entry.sign_in, methods=["POST"]),
        Route("/start", entry.start, methods=["POST"]),
        Route("/answer", items.answer, methods=["POST"]),
    ]
    pages = {}
    for name in ("ana", "bob"):
        c = minimal_app(routes, workspace, pair)
        token = csrf(c.get("/"))
        c.post("/signin", data={"csrf": token, "name": name})
        pages[name] = (c, token, c.post("/start", data={"csrf": token}))
    ana_ticket = re.search(r'name="ticket" value="([^"]+)"', pages["ana"][2].text).group(1)
    bob, token, _ = pages["bob"]
    r = bob.post("/answer", data={"csrf": token, "ticket": ana_ticket, "answer": "entailment"})
    assert screen(r) == "item" and "That answer was for another page" in r.text
    assert labels(workspace.engine, pair) == []


def test_every_screen_names_the_tab():
    """Each screen the page can show has its words for the browser's title (a screen without
    them would fail to render)."""
    from annotate.web.page.render import SCREEN_TITLES
    from annotate.web.page.templating import TEMPLATES

    screens = {p.stem for p in (TEMPLATES / "screens").glob("*.html") if p.stem[0] != "_"}
    assert screens == set(SCREEN_TITLES)
