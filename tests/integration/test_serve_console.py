"""`annotate serve --console`: the researcher console in a browser tab, on loopback only."""

from __future__ import annotations

import json

import pytest

from tests.integration.test_serve import (  # noqa: F401  (fixtures)
    read_screen_until,
    serve,
    served_study,
)

pytestmark = pytest.mark.slow
pytest.importorskip("textual_serve", reason="needs the web extra")


KEY = "k3y-for-this-test_only"


async def test_a_browser_tab_gets_the_console_at_the_study(serve, monkeypatch):  # noqa: F811
    import aiohttp

    monkeypatch.setenv("ANNOTATE_CONSOLE_KEY", KEY)
    base = serve("--console", "--as", "rhea")
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(base + f"/?key={KEY}") as page:  # the address serve printed
            assert page.status == 200
        ws_url = base.replace("http", "ws") + "/ws?width=120&height=30"
        async with http.ws_connect(ws_url, origin=base) as ws:  # the key in its cookie
            await read_screen_until(ws, "items complete")
            await ws.send_str(json.dumps(["stdin", "g"]))
            await read_screen_until(ws, "Gate")


async def test_the_console_answers_nobody_without_its_key(serve, monkeypatch):  # noqa: F811
    """The loopback keeps other machines out, not another program on this one, which sets
    the Origin a browser would: without the key neither the page nor its websocket answers."""
    import aiohttp

    monkeypatch.setenv("ANNOTATE_CONSOLE_KEY", KEY)
    base = serve("--console", "--as", "rhea")
    ws_url = base.replace("http", "ws") + "/ws?width=120&height=30"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        for address in ("/", "/?key=guessed"):
            async with http.get(base + address) as page:
                assert page.status == 403
                assert "it holds the console's key" in await page.text()
        assert not http.cookie_jar.filter_cookies(base)
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            async with http.ws_connect(ws_url, origin=base):
                pass
        assert refused.value.status == 403
        http.cookie_jar.update_cookies({"annotate_console": "guessed"})
        with pytest.raises(aiohttp.WSServerHandshakeError):
            async with http.ws_connect(ws_url, origin=base):
                pass


def test_the_console_is_served_on_loopback_only(cli, served_study, monkeypatch):  # noqa: F811
    import annotate.web.server as server

    made: list[dict] = []

    class FakeServer:
        def serve(self) -> None:
            made[-1]["served"] = True

    def fake_make_server(*args, **kwargs):
        made.append({"args": args, **kwargs})
        return FakeServer()

    monkeypatch.setattr(server, "make_server", fake_make_server)
    refused = cli("serve", "--console", "--host", "0.0.0.0")
    assert refused.code == 1 and "served on this machine only" in refused.stderr
    assert made == []
    missing = cli("serve", "nope", "--console")
    assert missing.code == 1 and "no study named 'nope'" in missing.stderr
    ok = cli("serve", "--console")
    assert ok.code == 0 and made[-1]["console"] is True and made[-1]["served"]
    # A new key for each run, hard to guess; ANNOTATE_CONSOLE_KEY sets one to keep.
    again = cli("serve", "--console")
    assert again.code == 0
    first, second = made[-2]["access_key"], made[-1]["access_key"]
    assert first != second and len(first) >= 32
    monkeypatch.setenv("ANNOTATE_CONSOLE_KEY", KEY)
    assert cli("serve", "--console").code == 0 and made[-1]["access_key"] == KEY


def test_each_tab_runs_the_console_module():
    from annotate.web.server import console_command

    assert console_command("rte", "rhea").endswith("-m annotate.web.console rte --as rhea")
    assert console_command(None).endswith("-m annotate.web.console")


def test_serve_without_a_study_or_console_says_what_to_give(cli, served_study):  # noqa: F811
    result = cli("serve")
    assert result.code == 1 and "name the study" in result.stderr
