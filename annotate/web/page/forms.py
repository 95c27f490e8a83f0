"""A POSTed form, taken only with this browser session's CSRF token."""

from __future__ import annotations

import hmac

from starlette.exceptions import HTTPException
from starlette.requests import Request

MAX_FIELD = 10_000
"""Longest name, token or comment taken from a form (longer is cut, not stored whole)."""
MAX_FIELDS = 200
"""Most fields a form may have (MultiRC's judgements are the most: one per candidate)."""


class BadForm(Exception):
    """A form the parser refused (too many fields, a malformed multipart body): a 400 page
    that says so (guarded.py), never an error."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def form_of(request: Request) -> dict[str, str] | None:
    """The POSTed form, or None when its CSRF token is not this session's."""
    try:
        form = await request.form(max_files=0, max_fields=MAX_FIELDS, max_part_size=MAX_FIELD * 4)
    except HTTPException as exc:
        raise BadForm(str(exc.detail)) from None
    # NUL is no character of any answer, name or comment, and PostgreSQL refuses it in text.
    values = {
        k: str(v)[:MAX_FIELD].replace("\0", "") for k, v in form.items() if isinstance(v, str)
    }
    expected = request.session.get("csrf", "")
    if not expected or not hmac.compare_digest(values.get("csrf", ""), expected):
        return None
    return values
