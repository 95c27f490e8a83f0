"""A request's body, bounded as it streams: no request may make the server hold more than
MAX_BODY bytes of it, or wait more than BODY_TIMEOUT_S for it.

A declared Content-Length past the bound is refused before anything is read; a chunked body
(no length) is counted as it arrives and refused (413) as soon as it passes the bound, so a
client streaming 150 MiB costs the server 64 KiB. A body that trickles in is cut off (408).
Within the bound the body is read here, at once, and handed on whole: the page's forms are a
few hundred bytes, read in one piece anyway (Starlette's form parser). This runs before the
Guard (guard.py), whose MAX_BODY it applies, so that no other layer reads an unbounded body.
"""

from __future__ import annotations

import asyncio
import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from annotate.text import terminal_safe
from annotate.web.page.guard import MAX_BODY, content_security_policy
from annotate.web.page.render import Screen, bare_response

log = logging.getLogger("annotate.serve")

BODY_TIMEOUT_S = 30.0
"""Seconds a request's body may take to arrive, once its head has (a phone on a poor line
sends a form in well under one)."""
DRAIN_MAX = 1024 * 1024
"""Bytes of a refused body read and dropped before the answer, so that a browser still
sending gets the 413 page rather than a reset connection; a larger one is not waited for."""
DRAIN_S = 5.0


class BoundedBody:
    """ASGI middleware: the body read whole, at most MAX_BODY bytes within BODY_TIMEOUT_S,
    else a page that says why (413, 408) and nothing reaches the app."""

    def __init__(
        self,
        app: ASGIApp,
        max_body: int = MAX_BODY,
        frame_ancestors: tuple[str, ...] = (),
        form_targets: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.max_body = max_body
        # The Guard's headers for the page's own refusals (the same embedding: guard.py).
        self.headers = {
            "content-security-policy": content_security_policy(frame_ancestors, form_targets),
            "x-content-type-options": "nosniff",
            "cache-control": "no-store",
            **({} if frame_ancestors else {"x-frame-options": "DENY"}),
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        length = headers.get(b"content-length")
        if length is None and b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)  # no body (a GET)
            return
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            if length.isdigit() and int(length) <= DRAIN_MAX:
                await _drain(receive, 0)
            await self._refuse(scope, send, "too-large", 413)
            return
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(BODY_TIMEOUT_S):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return  # the client is gone: nobody to answer
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body:
                        if message.get("more_body", False):
                            await _drain(receive, size)
                        await self._refuse(scope, send, "too-large", 413)
                        return
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            await self._refuse(scope, send, "too-slow", 408)
            return
        body = b"".join(chunks)
        given = False

        async def whole() -> Message:
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: only the client's disconnect

        await self.app(scope, whole, send)

    async def _refuse(self, scope: Scope, send: Send, screen: str, status: int) -> None:
        log.warning(
            "refused a request on %s: %s (%d)", terminal_safe(scope["path"]), screen, status
        )
        htmx = any(k == b"hx-request" for k, _ in scope["headers"])
        response = bare_response(
            scope["app"].state.page,
            Screen(screen, {"limit_kib": self.max_body // 1024}, status),
            htmx=htmx,
        )
        response.headers.update(self.headers)  # outside the Guard: its headers, set here
        # The rest of the body is not read: the connection closes after this answer.
        response.headers["connection"] = "close"

        async def nothing() -> Message:
            return {"type": "http.disconnect"}

        await response(scope, nothing, send)


async def _drain(receive: Receive, read: int) -> None:
    """Read and drop the rest of a refused body, up to DRAIN_MAX bytes in all (`read` so far)
    and DRAIN_S seconds: what a client sends before it reads the answer."""
    try:
        async with asyncio.timeout(DRAIN_S):
            while read <= DRAIN_MAX:
                message = await receive()
                read += len(message.get("body", b""))
                if message["type"] == "http.disconnect" or not message.get("more_body", False):
                    return
    except TimeoutError:
        return
