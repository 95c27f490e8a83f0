"""Security around every request: headers on every response, POSTs only from this server's
own page, no method but GET, HEAD and POST, no body past MAX_BODY."""

from __future__ import annotations

import logging
from typing import Any

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("annotate.serve")

CSP = (
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; "
    "object-src 'none'"
)
MAX_BODY = 64 * 1024
"""Largest request body taken (an answer with a comment is well under 4 KiB)."""


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
