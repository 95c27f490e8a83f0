"""A screen, and how it becomes a response: the whole page, or (htmx) only `#screen`."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from annotate.text import terminal_safe
from annotate.web.page.state import PageState, page_of


@dataclass
class Screen:
    """One screen to render: its template and what it shows."""

    name: str
    context: dict[str, Any] = field(default_factory=dict)
    status: int = 200
    headers: dict[str, str] | None = None


def csrf_token(request: Request) -> str:
    """This browser session's CSRF token, made on its first page."""
    token = request.session.get("csrf")
    if not token:
        token = request.session["csrf"] = secrets.token_urlsafe(24)
    return token


def render(request: Request, screen: Screen) -> Response:
    page = page_of(request)
    shared = {
        "title": page.title,
        "study": terminal_safe(page.config.study),
        "who": terminal_safe(request.session.get("who", "")),
        "csrf": csrf_token(request),
        "poll_ms": int(page.config.poll_seconds * 1000),
    }
    context = {"screen": screen.name, **shared, **screen.context}
    if isinstance(upcoming := screen.context.get("upcoming"), Screen):
        # The screen that comes next, ready in the page (feedback_screen): rendered by the
        # same autoescaping template as any screen, so it is markup already.
        within = {"screen": upcoming.name, **shared, **upcoming.context}
        context["upcoming"] = Markup(page.templates.get_template("screen.html").render(within))
    template = "screen.html" if request.headers.get("hx-request") else "page.html"
    return HTMLResponse(
        page.templates.get_template(template).render(context),
        status_code=screen.status,
        headers=screen.headers,
    )


def bare_response(page: PageState, screen: Screen, *, htmx: bool) -> Response:
    """A screen rendered before the request reaches the app (no session, no CSRF token): a
    refusal that needs neither."""
    context = {
        "screen": screen.name,
        "title": page.title,
        "study": terminal_safe(page.config.study),
        "who": "",
        "csrf": "",
        "poll_ms": int(page.config.poll_seconds * 1000),
        **screen.context,
    }
    template = "screen.html" if htmx else "page.html"
    return HTMLResponse(
        page.templates.get_template(template).render(context),
        status_code=screen.status,
        headers=screen.headers,
    )
