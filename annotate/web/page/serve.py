"""`annotate serve STUDY`: the annotator page on uvicorn, one process for every worker, or
`--workers N` processes on one port (uvicorn's supervisor; the kernel spreads connections,
on Linux over a listening socket per process).

The session cookie is signed with ANNOTATE_WEB_SECRET when it is set: give every process (or
host) that serves one study the same value, so a worker's cookie is good on all of them.
Without it each server makes its own, and its cookies last as long as it runs. Sign-in refusals
are counted in the file named by ANNOTATE_SIGNIN_LIMITS (shared by processes on one host), or in
memory. `--workers N` sets both for its processes when they are unset (a key made for the run,
a limits file in a private temporary folder), so its processes act as one server.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from urllib.parse import urlsplit

from sqlalchemy import Engine

from annotate import install_hint
from annotate.errors import UserError
from annotate.settings import settings
from annotate.web.limits import SignInLimiter
from annotate.web.page.supervisor import log_setup, uvicorn_options
from annotate.web.server import allowed_origins

SECRET_ENV = "ANNOTATE_WEB_SECRET"
WORKER_ENV = "ANNOTATE_PAGE_WORKER"


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
    public_url = public_url or stored_public_url(engine, study)
    config = PageConfig(
        engine=engine,
        study=study,
        secret=settings().web_secret or secrets.token_urlsafe(32),
        origins=allowed_origins(host, port, public_url),
        require_tokens=require_tokens,
        secure=bool(public_url and public_url.startswith("https://")),
        annotator=annotator,
        poll_seconds=poll_seconds,
        limiter=SignInLimiter(settings().signin_limits or ":memory:"),
    )
    return create_app(config)


def stored_public_url(engine: Engine, study: str) -> str | None:
    """The address `study crowd --url` stored for a crowd study (None: none stored)."""
    from annotate.protocol import crowd
    from annotate.protocol.studies import load_study

    config = crowd.config_of(load_study(engine, study))
    return config.public_url if config is not None else None


def run_page(app, *, host: str, port: int, forwarded_allow_ips: str | None = None) -> None:
    """One server process (the default): `app` is the page built by `page_app`; proxy
    headers believed only from `forwarded_allow_ips` (supervisor.uvicorn_options)."""
    import uvicorn

    log_setup()
    uvicorn.run(app, **uvicorn_options(host, port, forwarded_allow_ips))


def run_page_workers(
    workers: int,
    url: str,
    study: str,
    *,
    forwarded_allow_ips: str | None = None,
    **page_options,
) -> None:
    """`workers` processes on one port, each with its own engine (none is shared across a
    fork), under a light supervisor this process becomes (supervisor.py). They get the
    page's options through ANNOTATE_PAGE_WORKER, and one cookie key and one sign-in limits
    file, so a worker's cookie and a refused name count on all of them."""
    os.environ.setdefault(SECRET_ENV, secrets.token_urlsafe(32))
    os.environ[WORKER_ENV] = json.dumps({"url": url, "study": study, **page_options})
    host, port = page_options["host"], str(page_options["port"])
    command = [sys.executable, "-m", "annotate.web.page.supervisor", str(workers), host, port]
    if forwarded_allow_ips:
        command.append(forwarded_allow_ips)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, command)


def worker_page():
    """The page of one `--workers` process (uvicorn calls this in each of them)."""
    from annotate.workspace import open_workspace

    log_setup()
    options = json.loads(settings().page_worker or "{}")
    engine = open_workspace(options.pop("url")).engine
    return page_app(engine, options.pop("study"), **options)
