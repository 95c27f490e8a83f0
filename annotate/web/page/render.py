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


SCREEN_TITLES = {
    "signin": "Sign in",
    "consent": "Before you start",
    "guidelines": "Guidelines",
    "preview": "Preview",
    "item": "Item",
    "feedback": "Feedback",
    "waiting": "Waiting for admission",
    "held": "No item right now",
    "finished": "All done",
    "rejected": "Thank you",
    "survey": "A few questions",
    "exit": "Your completion code",
    "left": "You have left the study",
    "link": "Open your link",
    "refused": "This link cannot enter",
    "continued": "Continued in another window",
    "expired": "Page expired",
    "unreachable": "Store unreachable",
    "disk-full": "Disk full",
    "error": "Something went wrong",
    "bad-form": "Form not read",
    "too-large": "Too much to send",
    "too-slow": "Connection too slow",
}
"""Each screen's words in the browser's title (an item's: its status line), which a screen
reader says on entering the tab and the tab list shows. It said the task alone, on every
screen: htmx swaps only the page's body."""


def page_title(screen: str, context: dict[str, Any]) -> str:
    """The title of the tab on `screen`: where the annotator is, then the task and study."""
    where = context.get("status") if screen == "item" else None
    return f"{where or SCREEN_TITLES[screen]} · {context['title']} · {context['study']}"


def csrf_token(request: Request) -> str:
    """This browser session's CSRF token, made on its first page."""
    token = request.session.get("csrf")
    if not token:
        token = request.session["csrf"] = secrets.token_urlsafe(24)
    return token


def titled(screen: str, context: dict[str, Any], *, fragment: bool) -> dict[str, Any]:
    """A screen's template context with its title; `fragment`: the screen is swapped into the
    page (htmx, or "continue"'s ready item), so it carries its own <title> for the tab."""
    return {
        "screen": screen,
        **context,
        "page_title": page_title(screen, context),
        "fragment": fragment,
    }


def render(request: Request, screen: Screen) -> Response:
    page = page_of(request)
    shared = {
        "title": page.title,
        "study": terminal_safe(page.config.study),
        "who": terminal_safe(request.session.get("who", "")),
        "csrf": csrf_token(request),
        "poll_ms": int(page.config.poll_seconds * 1000),
    }
    htmx = bool(request.headers.get("hx-request"))
    context = titled(screen.name, {**shared, **screen.context}, fragment=htmx)
    if isinstance(upcoming := screen.context.get("upcoming"), Screen):
        # The screen that comes next, ready in the page (feedback_screen): rendered by the
        # same autoescaping template as any screen, so it is markup already.
        within = titled(upcoming.name, {**shared, **upcoming.context}, fragment=True)
        context["upcoming"] = Markup(page.templates.get_template("screen.html").render(within))
    template = "screen.html" if htmx else "page.html"
    return HTMLResponse(
        page.templates.get_template(template).render(context),
        status_code=screen.status,
        headers=screen.headers,
    )


def bare_response(page: PageState, screen: Screen, *, htmx: bool) -> Response:
    """A screen rendered before the request reaches the app (no session, no CSRF token): a
    refusal that needs neither."""
    shared = {
        "title": page.title,
        "study": terminal_safe(page.config.study),
        "who": "",
        "csrf": "",
        "poll_ms": int(page.config.poll_seconds * 1000),
    }
    context = titled(screen.name, {**shared, **screen.context}, fragment=htmx)
    template = "screen.html" if htmx else "page.html"
    return HTMLResponse(
        page.templates.get_template(template).render(context),
        status_code=screen.status,
        headers=screen.headers,
    )
