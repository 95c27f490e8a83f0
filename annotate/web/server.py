"""`annotate serve`: the annotator app in a browser, through textual-serve.

textual-serve starts one app process per browser tab and relays its screen over a websocket. Its
page would fetch a web font from a font CDN; ours (templates/app_index.html) takes the font from
textual-serve's own static folder, so the page, its script and its styles all come from this
server and it works with no outside network. There is no authentication beyond annotator tokens:
bind to loopback (the default) and reach it through an SSH tunnel from elsewhere.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from annotate.errors import UserError
from annotate.web.limits import LIMITS_ENV

if TYPE_CHECKING:
    from textual_serve.server import Server

TEMPLATES = Path(__file__).parent / "templates"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 20
"""Open pages at once; each runs an app process, so this bounds what a flood of sockets costs."""
TOKENS_ENV = "ANNOTATE_SERVE_TOKENS"
"""Set to "required" by `annotate serve` (without --no-tokens): a page signs in nobody who has
no token, even one added after the server started."""


def allowed_origins(host: str, port: int, public_url: str | None) -> set[str]:
    """The origins of this server's own page: a websocket from any other page is refused.
    Binding to loopback does not stop a page in the researcher's own browser from connecting;
    the browser's Origin header does tell that page apart."""
    names = {host}
    if is_loopback(host) or host in ("0.0.0.0", "::"):
        names |= {"127.0.0.1", "localhost", "[::1]"}
    origins = {f"http://{name}:{port}" for name in names}
    if port == 80:
        origins |= {f"http://{name}" for name in names}
    if public_url:
        parts = urlsplit(public_url)
        origins.add(f"{parts.scheme}://{parts.netloc}")
    return origins


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def app_command(study: str, annotator: str | None = None) -> str:
    """The shell command textual-serve runs for each tab (this Python, this package)."""
    args = [sys.executable, "-m", "annotate.web.session", study]
    if annotator:
        args += ["--as", annotator]
    return shlex.join(args)


def console_command(study: str | None, researcher: str | None = None) -> str:
    """The shell command of each tab of `annotate serve --console`."""
    args = [sys.executable, "-m", "annotate.web.console"]
    if study:
        args.append(study)
    if researcher:
        args += ["--as", researcher]
    return shlex.join(args)


def make_server(
    url: str,
    study: str | None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    annotator: str | None = None,
    public_url: str | None = None,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    require_tokens: bool = True,
    console: bool = False,
    access_key: str | None = None,
) -> Server:
    """The server of `annotate serve`: each tab runs the annotator app on `study` (or, with
    `console`, the researcher console, `annotator` then naming the researcher; `access_key`:
    the key a browser must bring, GuardedServer.access_key)."""
    try:
        from annotate.web.guarded import GuardedServer
    except ImportError:
        from annotate import install_hint

        raise UserError(f"annotate serve needs textual-serve: {install_hint('web')}") from None
    # Each tab's process opens the store named here. An environment variable, not an argument,
    # keeps a PostgreSQL password out of the process list.
    os.environ["ANNOTATE_DB"] = url
    os.environ[TOKENS_ENV] = "required" if require_tokens else "optional"
    if LIMITS_ENV not in os.environ:  # every tab's process counts refused sign-ins in one file
        folder = tempfile.mkdtemp(prefix="annotate-serve-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)  # gone when serve stops
        os.environ[LIMITS_ENV] = str(Path(folder) / "signin-limits.db")
    if console:
        command = console_command(study, annotator)
    else:
        assert study is not None
        command = app_command(study, annotator)
    return GuardedServer(
        command,
        origins=allowed_origins(host, port, public_url),
        max_sessions=max_sessions,
        access_key=access_key,
        host=host,
        port=port,
        title=f"annotate · {'console' if console else study}",
        public_url=public_url,
        templates_path=TEMPLATES,
    )
