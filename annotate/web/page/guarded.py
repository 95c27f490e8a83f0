"""What a failed request shows: never a traceback."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable

from sqlalchemy.exc import DBAPIError
from starlette.requests import Request
from starlette.responses import Response

from annotate.protocol.windows import ContinuedElsewhere
from annotate.store.engine import is_disconnect
from annotate.text import terminal_safe
from annotate.web.page.render import Screen, render

log = logging.getLogger("annotate.serve")

Endpoint = Callable[[Request], Awaitable[Response]]


def guarded(endpoint: Endpoint) -> Endpoint:
    """An unreachable store becomes a screen that says so and retries by itself; any other
    error is logged here (type and message, no locals) and the page says only that
    something went wrong. A newer window of the annotator's says it took over."""

    @functools.wraps(endpoint)
    async def wrapper(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ContinuedElsewhere:
            return render(request, Screen("continued", {}, 409))
        except DBAPIError as exc:
            if not is_disconnect(exc):
                log.error("store error on %s: %s", request.url.path, type(exc).__name__)
                return render(request, Screen("error", {}, 500))
            log.warning("store unreachable on %s", request.url.path)
            return render(request, Screen("unreachable", {}, 503))
        except Exception as exc:  # the page must never show a traceback
            log.error(
                "error on %s: %s: %s",
                request.url.path,
                type(exc).__name__,
                terminal_safe(str(exc))[:500],
            )
            return render(request, Screen("error", {}, 500))

    return wrapper
