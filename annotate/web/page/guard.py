"""Security around every request: headers on every response, POSTs only from this server's
own page, no method but GET, HEAD and POST, no body past MAX_BODY.

The page is framed by nobody and posts its forms only to itself, except where the study's
embedding (protocol/embedding.py) names other origins: an MTurk study, which MTurk frames on
its worker sites and whose exit form posts to MTurk."""

from __future__ import annotations

import logging
from typing import Any

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger("annotate.serve")


def content_security_policy(
    frame_ancestors: tuple[str, ...] = (), form_targets: tuple[str, ...] = ()
) -> str:
    """The page's policy: its own resources only; frames and form targets as given."""
    framers = " ".join(frame_ancestors) or "'none'"
    targets = " ".join(("'self'", *form_targets))
    return (
        f"default-src 'self'; base-uri 'none'; form-action {targets}; "
        f"frame-ancestors {framers}; object-src 'none'"
    )


CSP = content_security_policy()
"""Every study's policy but an MTurk study's."""
MAX_BODY = 64 * 1024
"""Largest request body taken (an answer with a comment is well under 4 KiB)."""


class Guard:
    """Security headers on every response; POSTs only from this server's own page (Origin, or
    Referer when a browser sends no Origin); an error never shows a traceback."""

    def __init__(
        self,
        app: ASGIApp,
        origins: set[str],
        frame_ancestors: tuple[str, ...] = (),
        form_targets: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.origins = origins
        self.csp = content_security_policy(frame_ancestors, form_targets).encode()
        # X-Frame-Options has no list of origins: sent only where no frame is allowed
        # (frame-ancestors, which browsers prefer when both are there, says the rest).
        self.frame_options = [] if frame_ancestors else [(b"x-frame-options", b"DENY")]

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
                    headers.append((b"content-security-policy", self.csp))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    # Browsers' default, said outright: another site (the platform that
                    # takes the exit form) learns the page's origin only, never a path or
                    # query (the worker's ids); "same-origin" sent MTurk's externalSubmit
                    # "Origin: null" and no Referer, unlike any other task page's form.
                    (b"referrer-policy", b"strict-origin-when-cross-origin"),
                    *self.frame_options,
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
