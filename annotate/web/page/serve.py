"""`annotate serve STUDY`: the annotator page on uvicorn, one process for every worker.

The session cookie is signed with ANNOTATE_WEB_SECRET when it is set: give every process (or
host) that serves one study the same value, so a worker's cookie is good on all of them.
Without it each server makes its own, and its cookies last as long as it runs. Sign-in refusals
are counted in the file named by ANNOTATE_SIGNIN_LIMITS (shared by processes on one host), or in
memory.
"""

from __future__ import annotations

import logging
import os
import secrets
from urllib.parse import urlsplit

from sqlalchemy import Engine

from annotate import install_hint
from annotate.errors import UserError
from annotate.web.limits import LIMITS_ENV, SignInLimiter
from annotate.web.server import allowed_origins

SECRET_ENV = "ANNOTATE_WEB_SECRET"


def page_app(
    engine: Engine,
    study: str,
    *,
    host: str,
    port: int,
    annotator: str | None = None,
    public_url: str | None = None,
    require_tokens: bool = True,
    poll_seconds: float = 5.0,
):
    """The Starlette app of the page (imported only here: it needs the web extra)."""
    try:
        from annotate.web.page.app import PageConfig, create_app
    except ImportError as exc:
        raise UserError(
            f"annotate serve needs the web extra ({exc.name} is missing): {install_hint('web')}"
        ) from None
    if public_url and urlsplit(public_url).scheme not in ("http", "https"):
        raise UserError(f"--public-url must start with https:// or http://, not {public_url!r}")
    config = PageConfig(
        engine=engine,
        study=study,
        secret=os.environ.get(SECRET_ENV) or secrets.token_urlsafe(32),
        origins=allowed_origins(host, port, public_url),
        require_tokens=require_tokens,
        secure=bool(public_url and public_url.startswith("https://")),
        annotator=annotator,
        poll_seconds=poll_seconds,
        limiter=SignInLimiter(os.environ.get(LIMITS_ENV) or ":memory:"),
    )
    return create_app(config)


def run_page(app, *, host: str, port: int) -> None:
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        access_log=False,  # URLs carry platform ids (PROLIFIC_PID): not in the log
        server_header=False,
        h11_max_incomplete_event_size=64 * 1024,
    )
