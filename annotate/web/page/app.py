"""The annotator page: a Starlette app whose every request goes through the engine.

Nothing about an annotator lives in the server between requests. The signed session cookie
holds who signed in (and a CSRF token); the item on the screen travels with its answer as a
signed ticket (item, phase, number, when it was served). Each request opens an
`AnnotatorSession`, as the terminal app does once, and asks it what comes next, so a reload
resumes exactly where the engine says, and several processes (or hosts, on one PostgreSQL
store) can serve one study. The page decides no protocol rule: it shows what the session says
and sends it what the annotator pressed.

htmx swaps the screen (`#screen`) after each answer; without it, every form still works as a
plain POST that returns the whole page.

The parts: `routes.py` lists every URL; the endpoints are in `entry.py`, `items.py`,
`consent.py` and `static.py`; `preamble.py` is what every posted form goes through first;
`state.py` is what the app keeps on `app.state.page`; `signers.py` and `guard.py` secure it.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.middleware import Middleware

from annotate.protocol.embedding import embedding
from annotate.web.page.answers import parse_answer
from annotate.web.page.bounded_body import BoundedBody
from annotate.web.page.config import PageConfig
from annotate.web.page.guard import Guard
from annotate.web.page.routes import routes
from annotate.web.page.signers import Sessions, session_options
from annotate.web.page.state import PageState, page_state
from annotate.web.page.templating import environment

__all__ = ["PageConfig", "create_app", "environment", "parse_answer"]


def create_app(config: PageConfig) -> Starlette:
    """The page of one study (a missing study fails here, before serving)."""
    page = page_state(config)
    framing = embedding(page.crowd_config)
    sessions = session_options(page.key, secure=config.secure, framed=framing.framed)
    app = Starlette(
        routes=routes(),
        lifespan=lifespan,
        middleware=[
            # First: a body past its bound is refused before anything else reads it.
            Middleware(
                BoundedBody,
                frame_ancestors=framing.frame_ancestors,
                form_targets=framing.form_targets,
            ),
            Middleware(
                Guard,
                origins=config.origins,
                frame_ancestors=framing.frame_ancestors,
                form_targets=framing.form_targets,
            ),
            Middleware(Sessions, **sessions),
        ],
    )
    app.state.page = page
    app.state.started = time.monotonic()
    return app


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    # What is loaded by now (the libraries, the study, the templates) lives as long as the
    # server: out of the collector's sight, so that its full collections, which stalled every
    # request for some 50 ms under load, have only the requests' objects to look at.
    gc.freeze()
    yield
    page: PageState = app.state.page
    page.shutdown()
