"""textual-serve's Server with guards in front of its websocket: the page must come from this
server (the Origin header), at most `max_sessions` pages run at once, and each tab is bounded.

textual-serve accepts a websocket from any page and starts an app process for each one; a page
on another site, open in the researcher's browser, could otherwise drive the annotator app on
127.0.0.1. Its defaults also let one tab hurt the others: a 1 MiB frame before sign-in kept an
app process busy at a full CPU, a 3000x3000 resize left orphan processes, and a closed tab's
slot came back only when its process had finished. Here a frame is at most MAX_FRAME_BYTES,
the terminal at most MAX_COLUMNS x MAX_ROWS, a closed tab's slot is free at once, and its
process is killed when it does not quit within STOP_SECONDS. Imported only by `annotate serve`
(it needs the web extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import signal
from typing import Any

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from annotate.web.farewell import page_message

log = logging.getLogger("annotate.serve")

MAX_FRAME_BYTES = 64 * 1024
"""The largest websocket message a tab may send (keys, pastes, resizes are far smaller)."""
MAX_COLUMNS, MAX_ROWS = 400, 200
STOP_SECONDS = 0.5
"""How long a closed tab's app may take to quit before it is killed."""
REFUSED_CODE = 4503
"""The websocket close code of a refused tab; its reason is shown on the page."""
KEY_COOKIE = "annotate_console"
"""Where a browser admitted by the console's key keeps it (HttpOnly, SameSite=Strict)."""
NOT_ADMITTED = "open the address `annotate serve --console` printed: it holds the console's key\n"


def _int(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return default


def bounded_size(width: Any, height: Any) -> tuple[int, int]:
    """The terminal a tab asks for, within MAX_COLUMNS x MAX_ROWS (a garbled size: 80x24)."""
    return (
        max(1, min(_int(width, 80), MAX_COLUMNS)),
        max(1, min(_int(height, 24), MAX_ROWS)),
    )


class BoundedAppService(AppService):
    """One tab's app process: resizes capped, killed if it does not quit when asked, and its
    last words passed to the page (farewell.py)."""

    async def set_terminal_size(self, width: int, height: int) -> None:
        await super().set_terminal_size(*bounded_size(width, height))

    async def on_meta(self, data: bytes) -> None:
        try:
            meta = json.loads(data)
        except ValueError:
            meta = None
        said = page_message(meta) if isinstance(meta, dict) else None
        if said is not None:
            await self.remote_write_str(said)
            return
        await super().on_meta(data)

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(super().stop(), STOP_SECONDS)
        except Exception:  # timed out, or the process is gone already
            log.warning("a tab's app did not quit in %.1f s: killed", STOP_SECONDS)
        finally:
            process = getattr(self, "_process", None)
            if process is not None:
                # os.kill, not process.kill(): asyncio's child watcher may already have
                # reported a made-up return code for a process that still runs.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(process.pid, signal.SIGKILL)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(process.wait(), STOP_SECONDS)


class GuardedServer(Server):
    def __init__(
        self,
        command: str,
        *,
        origins: set[str],
        max_sessions: int,
        access_key: str | None = None,
        **kwargs: Any,
    ) -> None:
        # `exec`: the shell textual-serve starts becomes the app, so the process it kills is
        # the app itself (a killed shell would leave the app running, orphaned).
        super().__init__(command if command.startswith("exec ") else f"exec {command}", **kwargs)
        self.origins = origins
        self.max_sessions = max_sessions
        self.sessions = 0
        self.stopping: set[asyncio.Task[None]] = set()
        """Closed tabs' apps being stopped (or killed): their slots are free already."""
        self.access_key = access_key
        """The console's key (`serve --console`): the Origin check stops other sites' pages in
        a browser, not a program on this machine, which sets any Origin it likes; the key,
        printed to the researcher only, does. None: no key (the annotator app signs people
        in itself)."""

    def _admitted(self, request: web.Request) -> bool:
        """The key given in the address, or kept in the cookie it set (a websocket carries
        the cookie)."""
        if self.access_key is None:
            return True
        given = request.query.get("key") or request.cookies.get(KEY_COOKIE, "")
        return hmac.compare_digest(given.encode(), self.access_key.encode())

    async def handle_index(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        if not self._admitted(request):
            raise web.HTTPForbidden(text=NOT_ADMITTED)
        response: web.StreamResponse = await super().handle_index(request)  # type: ignore[misc]
        if self.access_key is not None:
            response.set_cookie(
                KEY_COOKIE,
                self.access_key,
                path="/",
                httponly=True,
                samesite="Strict",
                secure=self.public_url.startswith("https:"),
            )
        return response

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        if not self._admitted(request):
            raise web.HTTPForbidden(text=NOT_ADMITTED)
        return await super().handle_download(request)

    async def on_startup(self, app: web.Application) -> None:
        await super().on_startup(app)
        if self.access_key is not None:
            self.console.print(
                f"Open the console at {self.public_url}/?key={self.access_key}",
                markup=False,
                highlight=False,
            )

    def initialize_logging(self) -> None:
        """textual-serve's logging, without aiohttp's access log: a page's address can carry
        a crowd worker's platform id (a study link's PROLIFIC_PID), which no log may hold (the
        HTML page's server keeps no access log either)."""
        super().initialize_logging()
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        origin = request.headers.get("Origin")
        if origin not in self.origins:
            # Browsers always send Origin on a websocket; a missing or foreign one is not our page.
            log.warning("refused a websocket from origin %r", origin)
            raise web.HTTPForbidden(text="this page may only be used from its own server\n")
        if not self._admitted(request):
            log.warning("refused a websocket without the console's key")
            raise web.HTTPForbidden(text=NOT_ADMITTED)
        if self.sessions >= self.max_sessions:
            return await self._refuse(
                request, f"{self.max_sessions} pages are open already; try again later."
            )
        self.sessions += 1  # one event loop: no lock needed between the check and the count
        try:
            return await self._serve_tab(request)
        finally:
            self.sessions -= 1

    async def _refuse(self, request: web.Request, reason: str) -> web.WebSocketResponse:
        """Accept, then close with `reason`: the page shows it (a refused upgrade would only
        read "Session ended.")."""
        websocket = web.WebSocketResponse()
        await websocket.prepare(request)
        await websocket.close(code=REFUSED_CODE, message=reason.encode("utf-8"))
        return websocket

    async def _serve_tab(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's handle_websocket, with the frame size and the terminal bounded and
        the app process stopped (or killed) before the slot is given back."""
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=MAX_FRAME_BYTES)
        width, height = bounded_size(request.query.get("width"), request.query.get("height"))
        app_service: BoundedAppService | None = None
        try:
            await websocket.prepare(request)
            app_service = BoundedAppService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await app_service.start(width, height)
            await self._process_messages(websocket, app_service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # a malformed message: this tab ends, the server goes on
            log.warning("a tab ended on a bad message: %s", type(error).__name__)
        finally:
            if app_service is not None:
                # The tab is gone: its slot comes back now, its app quits (or is killed
                # within STOP_SECONDS) in the background.
                task = asyncio.create_task(app_service.stop())
                self.stopping.add(task)
                task.add_done_callback(self.stopping.discard)
        return websocket

    async def _process_messages(
        self, websocket: web.WebSocketResponse, app_service: AppService
    ) -> None:
        async for message in websocket:
            if message.type is WSMsgType.ERROR:  # e.g. a frame over MAX_FRAME_BYTES
                break
            if message.type is not WSMsgType.TEXT:
                continue
            envelope = message.json()
            if not isinstance(envelope, list) or len(envelope) < 2:
                continue
            kind, data = envelope[0], envelope[1]
            if kind == "stdin" and isinstance(data, str):
                await app_service.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                await app_service.set_terminal_size(data.get("width", 80), data.get("height", 24))
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await app_service.blur()
            elif kind == "focus":
                await app_service.focus()
