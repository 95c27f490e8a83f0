"""textual-serve's Server with two guards in front of its websocket: the page must come from
this server (the Origin header), and at most `max_sessions` pages run at once.

textual-serve accepts a websocket from any page and starts an app process for each one; a page
on another site, open in the researcher's browser, could otherwise drive the annotator app on
127.0.0.1. Imported only by `annotate serve` (it needs the web extra).
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from textual_serve.server import Server

log = logging.getLogger("annotate.serve")


class GuardedServer(Server):
    def __init__(
        self, command: str, *, origins: set[str], max_sessions: int, **kwargs: Any
    ) -> None:
        super().__init__(command, **kwargs)
        self.origins = origins
        self.max_sessions = max_sessions
        self.sessions = 0

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        origin = request.headers.get("Origin")
        if origin not in self.origins:
            # Browsers always send Origin on a websocket; a missing or foreign one is not our page.
            log.warning("refused a websocket from origin %r", origin)
            raise web.HTTPForbidden(text="this page may only be used from its own server\n")
        if self.sessions >= self.max_sessions:
            raise web.HTTPServiceUnavailable(
                text=f"{self.max_sessions} pages are open already; try again later\n"
            )
        self.sessions += 1  # one event loop: no lock needed between the check and the count
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions -= 1
