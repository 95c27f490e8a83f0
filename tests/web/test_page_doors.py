"""The page's doors, request by request (issue 39, items 11-15e): bodies bounded as they
stream, forms the parser refuses, a limiter that never fails, proxies believed only when
named, refused names kept out of the log, Quit ending the session, a full disk said, two
tabs on one item, the exit survey only at the exit. Starlette's test client where the app
decides; a served uvicorn (raw sockets) where the server does."""

from __future__ import annotations

import logging
import re
import socket
import time
from pathlib import Path

import pytest
from sqlalchemy import event

from annotate.protocol.studies import add_annotator
from annotate.protocol.tokens import add_annotator_with_token
from annotate.web import limits
from tests.web.support import labels, layout_study, served_page
from tests.web.test_page import ORIGIN, client, csrf, screen, signed_in, ticket

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
MiB = 1024 * 1024


@pytest.fixture
def pair(workspace, tmp_path: Path) -> str:
    return layout_study(workspace.engine, tmp_path, "pair", test=3)


def at_test_item(c, token: str):
    """Past the one training item (its feedback read): the first test item's page."""
    first = c.get("/")
    c.post("/answer", data={"csrf": token, "ticket": ticket(first), "answer": "entailment"})
    item = c.get("/screen?next=1")
    assert screen(item) == "item" and "Test" in item.text
    return item


def host_port(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").split(":")
    return host, int(port)


def response_of(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or 10 s pass)."""
    sock.settimeout(10)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return data


# --- 11: the body, bounded as it streams ---------------------------------------------------------
def test_a_chunked_body_is_refused_413_once_past_the_bound_not_read_whole(workspace, pair):
    """150 MiB announced by nothing (Transfer-Encoding: chunked): the server answers 413 with
    its page after the first 64 KiB, long before the client could send it all."""
    add_annotator(workspace.engine, "ana")
    with (
        served_page(workspace.engine, pair, require_tokens=False) as base,
        socket.create_connection(host_port(base)) as sock,
    ):
        sock.sendall(
            b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + base.encode() + b"\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"a" * (64 * 1024)
        sent = 0
        sock.settimeout(10)
        try:
            while sent < 150 * MiB:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass  # the server stopped reading, as it should
        answer = response_of(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'data-screen="too-large"' in answer and b"nothing from it was saved" in answer
    assert sent < 150 * MiB  # it never took the whole body


def test_a_chunked_body_past_the_bound_gets_the_413_page(workspace, pair):
    c = client(workspace.engine, pair, require_tokens=False)
    token = csrf(c.get("/"))

    def stream():
        yield f"csrf={token}&name=ana&comment=".encode()
        for _ in range(40):  # 1.25 MiB, with no Content-Length
            yield b"x" * 32768

    r = c.post(
        "/signin", content=stream(), headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert r.status_code == 413 and screen(r) == "too-large"
    assert "at most 64 KiB" in r.text


def test_a_declared_large_body_gets_the_413_page_and_the_security_headers(workspace, pair):
    c = client(workspace.engine, pair, require_tokens=False)
    token = csrf(c.get("/"))
    r = c.post("/signin", data={"csrf": token, "name": "ana", "comment": "x" * 100_000})
    assert r.status_code == 413 and screen(r) == "too-large"
    assert r.headers["content-security-policy"].startswith("default-src 'self'")
    assert r.headers["x-content-type-options"] == "nosniff"


def test_a_form_of_1001_fields_gets_a_400_page_not_an_error(workspace, pair, caplog):
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)
    token = signed_in(c)
    form = {"csrf": token, **{f"f{n}": "1" for n in range(1001)}}  # 10 KiB: under the bound
    with caplog.at_level(logging.WARNING, logger="annotate.serve"):
        r = c.post("/answer", data=form)
    assert r.status_code == 400 and screen(r) == "bad-form"
    assert "more fields" in r.text and "Nothing from it was saved" in r.text
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


def test_a_multipart_field_over_the_part_bound_gets_a_400_page(workspace, pair):
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)
    token = signed_in(c)
    r = c.post("/answer", data={"csrf": token}, files={"comment": ("c.txt", b"x" * 50_000)})
    assert r.status_code == 400 and screen(r) == "bad-form"


# --- 11b: the limiter never overflows -------------------------------------------------------------
def test_the_delay_is_capped_for_any_number_of_refusals():
    assert limits.delay(limits.FREE_TRIES + 1) == 2 * limits.FIRST_DELAY_S
    for refusals in (1_027, 1_100, 10**6):
        assert limits.delay(refusals) == limits.MAX_DELAY_S


def test_an_address_with_1100_refusals_waits_and_never_gets_500(workspace, pair):
    _, token = add_annotator_with_token(workspace.engine, "ana")
    c = client(workspace.engine, pair)
    limiter = c.app.state.page.config.limiter
    for _ in range(1_100):
        limiter.refused([limits.address_key("testclient")])
    r = c.post("/signin", data={"csrf": csrf(c.get("/")), "name": "ana", "token": token})
    assert r.status_code == 429 and "Too many refused sign-ins: wait 300 s" in r.text


# --- 12: forwarded addresses, and a name's right token ----------------------------------------------
def wrong_tries(base: str, count: int, forwarded: list[str] | None = None) -> list[int]:
    """`count` refused sign-ins, each under a new name (so only the address can limit them),
    each with the next of `forwarded` as its X-Forwarded-For."""
    with httpx.Client(base_url=base, headers={"Origin": base}, timeout=30) as c:
        token = csrf(c.get("/"))
        statuses = []
        for n in range(count):
            headers = {"X-Forwarded-For": forwarded[n]} if forwarded else {}
            form = {"csrf": token, "name": f"nobody{n}", "token": "wrong"}
            statuses.append(c.post("/signin", data=form, headers=headers).status_code)
        return statuses


def test_x_forwarded_for_is_believed_from_nobody_by_default(workspace, pair):
    """40 wrong tries from this host with a new X-Forwarded-For each: all count on the one
    real address, so the limiter stops them after the free tries."""
    add_annotator_with_token(workspace.engine, "ana")
    rotating = [f"10.0.0.{n}" for n in range(40)]
    with served_page(workspace.engine, pair) as base:
        statuses = wrong_tries(base, 40, rotating)
    assert statuses[: limits.FREE_TRIES] == [403] * limits.FREE_TRIES
    assert set(statuses[limits.FREE_TRIES :]) == {429}


@pytest.mark.slow
@pytest.mark.parametrize("processes", [[], ["--workers", "2"]], ids=["one", "workers"])
def test_serve_forwarded_allow_ips_believes_the_named_proxy_only(workspace, pair, processes):
    """`annotate serve --forwarded-allow-ips 127.0.0.1`: behind that proxy each browser's
    address is its X-Forwarded-For, counted on its own (one process, or `--workers`)."""
    import signal

    from tests.web.test_two_servers import start_server

    proc, base = start_server(
        workspace.url, pair, None, "--forwarded-allow-ips", "127.0.0.1", *processes
    )
    try:
        rotating = wrong_tries(base, 3 * limits.FREE_TRIES, [f"10.0.0.{n}" for n in range(9)])
        one = wrong_tries(base, limits.FREE_TRIES + 1, ["192.0.2.1"] * 9)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
    assert set(rotating) == {403}  # nine browsers, one try each: none limited
    assert one[-1] == 429  # one browser behind the proxy: limited as usual


def test_others_wrong_tries_never_lock_a_name_against_its_right_token(workspace, pair):
    _, token = add_annotator_with_token(workspace.engine, "ana")
    from starlette.testclient import TestClient

    from annotate.web.page.serve import page_app

    app = page_app(workspace.engine, pair, host="127.0.0.1", port=8000)
    app.state.page.config.limiter.clock = lambda: 1_000_000.0  # every try at one moment
    for n in range(3 * limits.FREE_TRIES):  # strangers, each from an address of their own
        stranger = TestClient(
            app, base_url=ORIGIN, headers={"Origin": ORIGIN}, client=(f"10.0.0.{n}", 1)
        )
        form = {"csrf": csrf(stranger.get("/")), "name": "ana", "token": "wrong"}
        for _ in range(limits.FREE_TRIES + 1):
            stranger.post("/signin", data=form)
    ana = TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}, client=("192.0.2.7", 1))
    r = ana.post("/signin", data={"csrf": csrf(ana.get("/")), "name": "ana", "token": token})
    assert r.status_code == 200 and screen(r) == "guidelines"
    # The stranger's own address stays limited, right token or not.
    stranger = TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}, client=("10.0.0.0", 1))
    r = stranger.post(
        "/signin", data={"csrf": csrf(stranger.get("/")), "name": "ana", "token": token}
    )
    assert r.status_code == 429


# --- 13: a refused name in the log --------------------------------------------------------------------
def test_a_token_typed_as_the_name_is_not_logged(workspace, pair, caplog):
    _, token = add_annotator_with_token(workspace.engine, "ana")
    c = client(workspace.engine, pair)
    with caplog.at_level(logging.WARNING, logger="annotate.serve"):
        c.post("/signin", data={"csrf": csrf(c.get("/")), "name": token, "token": ""})
    said = "\n".join(caplog.messages)
    assert "refused a sign-in" in said
    assert token not in said and token[:8] not in said
    assert f"name:{token[:3].casefold()}…#" in said  # its first characters and a hash


# --- 14: Quit ends the session ----------------------------------------------------------------------------
def test_after_quit_a_replayed_cookie_signs_nobody_in(workspace, pair):
    from starlette.testclient import TestClient

    from annotate.web.page.signers import COOKIE

    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)
    token = signed_in(c)
    item = c.get("/")
    stolen = c.cookies[COOKIE]  # a copy of the cookie, taken before Quit

    def replayed():  # another browser, on the same server, with the copy
        other = TestClient(c.app, base_url=ORIGIN, headers={"Origin": ORIGIN})
        other.cookies.set(COOKIE, stolen, domain="127.0.0.1")
        return other

    before = TestClient(c.app, base_url=ORIGIN, headers={"Origin": ORIGIN})
    before.cookies.set(COOKIE, c.cookies[COOKIE], domain="127.0.0.1")
    assert screen(before.get("/")) == "item"  # the copy works while the session lasts
    assert screen(c.post("/quit", data={"csrf": token})) == "left"
    assert screen(replayed().get("/")) == "signin"
    # "Continue" after a feedback, and "start" after the guidelines, replayed: their own
    # read of the window refuses them.
    assert screen(replayed().get("/screen", params={"next": "1"})) == "signin"
    assert screen(replayed().post("/start", data={"csrf": token})) == "signin"
    answered = replayed().post(
        "/answer", data={"csrf": token, "ticket": ticket(item), "answer": "entailment"}
    )
    assert screen(answered) == "signin"
    assert labels(workspace.engine, pair) == []


def test_after_quit_signing_in_again_works(workspace, pair):
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)
    token = signed_in(c)
    c.post("/quit", data={"csrf": token})
    signed_in(c)  # a new window: the page works again for the person
    assert screen(c.get("/")) == "item"


# --- 15: the request's head and body, against the served process -----------------------------------
def test_a_100_kb_body_sent_with_its_head_gets_413_not_head_too_large(workspace, pair):
    with served_page(workspace.engine, pair, require_tokens=False) as base:
        body = b"csrf=x&name=ana&comment=" + b"x" * 100_000
        with socket.create_connection(host_port(base)) as sock:
            sock.sendall(
                b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + base.encode() + b"\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            answer = response_of(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"Request head too large" not in answer


def test_a_head_sent_past_the_bound_is_still_refused_400(workspace, pair):
    with (
        served_page(workspace.engine, pair, require_tokens=False) as base,
        socket.create_connection(host_port(base)) as sock,
    ):
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + b"a" * 70_000)
        answer = response_of(sock)
    assert answer.startswith(b"HTTP/1.1 400") and b"Request head too large" in answer


def closed_within(
    sock: socket.socket, seconds: float, trickle: bytes = b""
) -> tuple[float | None, bytes]:
    """Send `trickle` a byte at a time (0.1 s apart) until the server closes the connection:
    how long that took (None if it stayed open `seconds`), and what the server sent."""
    start = time.monotonic()
    sock.settimeout(0.1)
    at = 0
    answer = b""
    while time.monotonic() - start < seconds:
        try:
            chunk = sock.recv(65536)
            if chunk == b"":
                return time.monotonic() - start, answer
            answer += chunk
        except TimeoutError:
            pass  # nothing yet: the next byte
        except ConnectionResetError:
            return time.monotonic() - start, answer
        if at < len(trickle):
            try:
                sock.sendall(trickle[at : at + 1])
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - start, answer
            at += 1
    return None, answer


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_a_head_sent_a_byte_at_a_time_is_closed_at_the_head_timeout(
    workspace, pair, monkeypatch, parser
):
    from annotate.web.page import head_deadline, supervisor

    if parser == "httptools":
        pytest.importorskip("httptools")
    else:  # the page as served where httptools is not installed
        monkeypatch.setattr(
            supervisor, "http_protocol", lambda: "annotate.web.page.bounded_h11:BoundedH11"
        )
    monkeypatch.setattr(head_deadline, "HEAD_TIMEOUT_S", 1.0)
    slow = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
    with (
        served_page(workspace.engine, pair, require_tokens=False) as base,
        socket.create_connection(host_port(base)) as sock,
    ):
        took, _ = closed_within(sock, 8.0, slow)
        with socket.create_connection(host_port(base)) as idle:  # opened, nothing sent
            idle_took, _ = closed_within(idle, 8.0)
        assert httpx.get(base + "/").status_code == 200  # a whole request is not cut off
    # The server counts from the connection, opened a moment before this side's count began.
    assert took is not None and 0.9 <= took < 4.0
    assert idle_took is not None and idle_took < 4.0


def test_a_body_that_trickles_in_is_cut_off_with_408(workspace, pair, monkeypatch):
    from annotate.web.page import bounded_body

    monkeypatch.setattr(bounded_body, "BODY_TIMEOUT_S", 1.0)
    with (
        served_page(workspace.engine, pair, require_tokens=False) as base,
        socket.create_connection(host_port(base)) as sock,
    ):
        sock.sendall(
            b"POST /signin HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + base.encode() + b"\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n"
        )
        took, answer = closed_within(sock, 5.0, b"name=ana&")
    assert (
        took is not None
        and answer.startswith(b"HTTP/1.1 408")
        and b'data-screen="too-slow"' in answer
    )


# --- 15b: a full disk ----------------------------------------------------------------------------------
def test_a_full_disk_says_so_and_retries_by_itself(workspace, pair, caplog):
    engine = workspace.engine
    add_annotator(engine, "ana")
    c = client(engine, pair, require_tokens=False)
    token = signed_in(c)
    item = c.get("/")

    def full(dbapi_connection, _record) -> None:
        # The file may not grow by a page: what SQLite does on a full disk (SQLITE_FULL).
        pages = dbapi_connection.execute("PRAGMA page_count").fetchone()[0]
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

    event.listen(engine, "connect", full)
    engine.dispose()  # every connection from now on has no room
    try:
        form = {"csrf": token, "ticket": ticket(item), "answer": "entailment"}
        with caplog.at_level(logging.ERROR, logger="annotate.serve"):
            r = c.post("/answer", data={**form, "comment": "a long remark " * 700})
    finally:
        event.remove(engine, "connect", full)
        engine.dispose()
    assert r.status_code == 503 and screen(r) == "disk-full"
    assert "disk is full" in r.text and 'hx-trigger="every' in r.text  # it retries itself
    assert "Something went wrong" not in r.text
    assert str(engine.url.database) not in r.text  # the store's path is the researcher's
    assert any("disk is full" in m for m in caplog.messages)
    assert labels(engine, pair) == []
    again = c.get("/screen")  # the retry, with room again: the same item
    assert screen(again) == "item"
    assert screen(c.post("/answer", data={**form, "ticket": ticket(again)})) == "feedback"


def test_an_answer_sent_while_the_store_is_away_is_said_not_saved(workspace, pair):
    """A click while the database server was down swapped the item for "Store unreachable …
    your saved answers are safe", and the item came back unanswered: the worker was never
    told that the answer just given was not among them."""
    import psycopg
    from sqlalchemy.exc import OperationalError

    engine = workspace.engine
    add_annotator(engine, "ana")
    c = client(engine, pair, require_tokens=False)
    token = signed_in(c)
    item = c.get("/")

    def gone(*_args) -> None:
        raise OperationalError(
            "SELECT", {}, psycopg.OperationalError("server closed the connection")
        )

    event.listen(engine, "before_cursor_execute", gone)
    try:
        r = c.post("/answer", data={"csrf": token, "ticket": ticket(item), "answer": "entailment"})
    finally:
        event.remove(engine, "before_cursor_execute", gone)
    assert r.status_code == 503 and screen(r) == "unreachable"
    assert "an answer you gave just now, if any, was not saved" in " ".join(r.text.split())
    assert labels(engine, pair) == [] and screen(c.get("/screen")) == "item"


# --- 15c: two tabs of one browser on one item -----------------------------------------------------
def test_two_tabs_on_one_test_item_the_second_different_answer_is_refused(workspace, pair):
    add_annotator(workspace.engine, "ana")
    c = client(workspace.engine, pair, require_tokens=False)  # one browser: one cookie
    token = signed_in(c)
    tab1 = at_test_item(c, token)
    tab2 = c.get("/")  # the second tab: the same item (its lease)
    assert ticket(tab1) != "" and re.search(r"Test \d", tab2.text)
    moved = c.post("/answer", data={"csrf": token, "ticket": ticket(tab1), "answer": "entailment"})
    assert moved.status_code == 200 and screen(moved) == "item"
    refused = c.post(
        "/answer", data={"csrf": token, "ticket": ticket(tab2), "answer": "not_entailment"}
    )
    assert refused.status_code == 409
    assert "already answered" in refused.text and "was not stored" in refused.text
    same = c.post("/answer", data={"csrf": token, "ticket": ticket(tab2), "answer": "entailment"})
    assert same.status_code == 200 and screen(same) == "item"  # a retry: it resumes
    test = [
        (lab.item_id, lab.value) for lab in labels(workspace.engine, pair) if lab.phase == "test"
    ]
    assert len(test) == 1 and test[0][1] == "entailment"


# --- 15e: the exit survey, only at the exit ---------------------------------------------------------
def test_an_exit_survey_posted_before_the_exit_is_refused_and_not_stored(workspace, tmp_path):
    from sqlmodel import Session, select

    from annotate.store.models import SurveyAnswer
    from tests.crowd_helpers import prolific_query, short_study

    short_study(workspace.engine, tmp_path, survey=[{"name": "hard", "prompt": "How hard?"}])
    c = client(workspace.engine, "pilot")
    page = c.post("/start", data={"csrf": csrf(c.get("/", params=prolific_query(1)))})
    assert screen(page) == "item"
    early = c.post("/survey", data={"csrf": csrf(page), "q:hard": "posted early"})
    assert early.status_code == 409 and screen(early) == "item"
    assert "end of the task only" in early.text
    with Session(workspace.engine) as s:
        assert s.exec(select(SurveyAnswer)).all() == []


def test_the_engine_refuses_a_survey_before_the_exit(workspace, tmp_path):
    from annotate.protocol import crowd
    from tests.crowd_helpers import arrive, crowd_study

    crowd_study(
        workspace.engine,
        tmp_path,
        crowd_settings={"survey": [{"name": "hard", "prompt": "How hard?"}]},
    )
    arrive(workspace.engine, "pilot", 1)
    with pytest.raises(crowd.SurveyNotDue, match="end of the task only"):
        crowd.record_survey(workspace.engine, "pilot", "w01", {"hard": "early"})


def test_forwarded_allow_ips_is_for_the_html_page_only(cli, workspace, pair):
    result = cli("serve", pair, "--terminal", "--forwarded-allow-ips", "127.0.0.1")
    assert result.code == 1
    assert "--forwarded-allow-ips is for the HTML page" in result.stderr


def test_max_sessions_is_for_the_terminal_and_console_only(cli, workspace, pair, monkeypatch):
    """`serve STUDY --max-sessions 3` served the HTML page with no bound at all, silently."""
    import annotate.web.page.serve as page_serve

    monkeypatch.setattr(page_serve, "run_page", lambda *a, **k: None)  # never serve here
    result = cli("serve", pair, "--max-sessions", "3", "--no-tokens")
    assert result.code == 1
    assert "--max-sessions is for --terminal and --console" in result.stderr


def test_uvicorn_believes_forwarded_headers_only_from_the_named_proxies():
    from annotate.web.page.supervisor import uvicorn_options

    default = uvicorn_options("127.0.0.1", 8000)
    assert default["proxy_headers"] is False
    named = uvicorn_options("127.0.0.1", 8000, "10.0.0.1, 10.0.0.2")
    assert named["proxy_headers"] is True and named["forwarded_allow_ips"] == "10.0.0.1, 10.0.0.2"
