"""A POSTed form, taken only with this browser session's CSRF token."""

from __future__ import annotations

import hmac

from starlette.requests import Request

MAX_FIELD = 10_000
"""Longest name, token or comment taken from a form (longer is cut, not stored whole)."""


async def form_of(request: Request) -> dict[str, str] | None:
    """The POSTed form, or None when its CSRF token is not this session's."""
    form = await request.form()
    values = {k: str(v)[:MAX_FIELD] for k, v in form.items() if isinstance(v, str)}
    expected = request.session.get("csrf", "")
    if not expected or not hmac.compare_digest(values.get("csrf", ""), expected):
        return None
    return values
