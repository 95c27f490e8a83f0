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


async def test_a_browser_tab_gets_the_console_at_the_study(serve):  # noqa: F811
    import aiohttp

    base = serve("--console", "--as", "rhea")
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(base.replace("http", "ws") + "/ws?width=120&height=30", origin=base) as ws,
    ):
        await read_screen_until(ws, "items complete")
        await ws.send_str(json.dumps(["stdin", "g"]))
        await read_screen_until(ws, "Gate")


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


def test_each_tab_runs_the_console_module():
    from annotate.web.server import console_command

    assert console_command("rte", "rhea").endswith("-m annotate.web.console rte --as rhea")
    assert console_command(None).endswith("-m annotate.web.console")


def test_serve_without_a_study_or_console_says_what_to_give(cli, served_study):  # noqa: F811
    result = cli("serve")
    assert result.code == 1 and "name the study" in result.stderr
