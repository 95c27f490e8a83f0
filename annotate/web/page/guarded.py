"""What a failed request shows: never a traceback."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

from sqlalchemy.exc import DBAPIError
from starlette.requests import Request
from starlette.responses import Response

from annotate.protocol.windows import ContinuedElsewhere
from annotate.store.engine import is_disconnect, is_full_disk, is_store_gone
from annotate.text import terminal_safe
from annotate.web.page.forms import BadForm
from annotate.web.page.render import Screen, render

log = logging.getLogger("annotate.serve")

Endpoint = Callable[[Request], Awaitable[Response]]


def guarded(endpoint: Endpoint) -> Endpoint:
    """An unreachable store, or a full disk, becomes a screen that says so and retries by
    itself; a form the parser refuses, a 400 page that says so; any other error is logged
    here (type and message, no locals) and the page says only that something went wrong. A
    newer window of the annotator's says it took over."""

    @functools.wraps(endpoint)
    async def wrapper(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ContinuedElsewhere:
            return render(request, Screen("continued", {}, 409))
        except BadForm as exc:
            log.warning("refused a form on %s: %s", request.url.path, terminal_safe(exc.reason))
            return render(request, Screen("bad-form", {"reason": bad_form_reason(exc)}, 400))
        except Exception as exc:  # the page must never show a traceback
            screen = failed(request, exc)
            if retried_in_vain(request, screen):
                return Response(status_code=204)  # nothing new: the screen stays as it is
            return render(request, screen)

    return wrapper


def retried_in_vain(request: Request, screen: Screen) -> bool:
    """A retry the unreachable or disk-full screen made by itself (htmx names its element in
    HX-Trigger) that failed the same way. Swapped in again every few seconds, the screen took
    the focus back to its button and scrolled to its top: a screen reader started it over."""
    return request.headers.get("hx-trigger") == f"retry-{screen.name}"


def failed(request: Request, exc: Exception) -> Screen:
    """The screen of a request that failed with `exc`, logged."""
    path = request.url.path
    if is_full_disk(exc):
        log.error(
            "the disk is full: nothing can be saved (on %s): %s",
            path,
            terminal_safe(str(exc))[:500],
        )
        return Screen("disk-full", {}, 503)
    if is_store_gone(exc):
        log.error(
            "the store's file is gone: nothing can be saved (on %s): %s",
            path,
            terminal_safe(str(exc)),
        )
        return Screen("unreachable", {"again": arrival_again(request)}, 503)
    if isinstance(exc, DBAPIError):
        if not is_disconnect(exc):
            log.error("store error on %s: %s", path, type(exc).__name__)
            return Screen("error", {}, 500)
        log.warning("store unreachable on %s", path)
        return Screen("unreachable", {"again": arrival_again(request)}, 503)
    log.error("error on %s: %s: %s", path, type(exc).__name__, terminal_safe(str(exc))[:500])
    return Screen("error", {}, 500)


def arrival_again(request: Request) -> str | None:
    """Where the unreachable screen tries again: a crowd worker's arrival by link (`/` with the
    platform's ids), which failed before the page knew them, is tried again with them; None:
    the current screen (`/screen`), which the session's cookie names."""
    if request.method != "GET" or request.url.path != "/" or not request.url.query:
        return None
    return f"/?{request.url.query}"


def bad_form_reason(exc: BadForm) -> str:
    if "size" in exc.reason.lower():
        return "One of its fields was far longer than this page takes."
    return "It had more fields, or other parts, than this page's forms have."
