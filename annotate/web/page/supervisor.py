"""`annotate serve STUDY --workers N`'s supervisor: uvicorn's process manager, and on Linux a
listening socket of its own for each page process (`OwnListener`).

`annotate serve` checks the study and the options, then replaces itself with this module
(`os.execv`), so the process that only watches the page processes does not keep the whole
command's imports: about 25 MB instead of 85 (bench_web). Imports stay light here: uvicorn,
and the standard library.

    python -m annotate.web.page.supervisor WORKERS HOST PORT [FORWARDED_ALLOW_IPS]

The page's options travel in ANNOTATE_PAGE_WORKER, set by `serve`.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import socket
import sys
import tempfile
from pathlib import Path

LIMITS_ENV = "ANNOTATE_SIGNIN_LIMITS"
KEEP_ALIVE_S = 65
"""Idle seconds before the server closes a browser's connection (above the 60 s idle timeout
of common load balancers, so they close first)."""


MAX_HEAD = 64 * 1024
"""Bytes of request line and headers a request may have."""
HEAD_TIMEOUT_S = 20.0
"""Seconds a request's line and headers may take to arrive, from the first byte (or, on a
new connection, from its opening): a browser sends them in one packet."""


def http_protocol() -> str:
    """uvicorn's `http` option for the page: httptools' parser with the page's bound on a
    request's head (bounded_http.py) where it is installed, else h11 (whose size bound uvicorn
    sets) with the page's deadline for a head (bounded_h11.py)."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "annotate.web.page.bounded_h11:BoundedH11"
    return "annotate.web.page.bounded_http:BoundedHead"


def uvicorn_options(host: str, port: int, forwarded_allow_ips: str | None = None) -> dict:
    """uvicorn's options for the page. X-Forwarded-For (and -Proto) are believed only from
    the proxies `forwarded_allow_ips` names (`serve --forwarded-allow-ips`); by default from
    nobody, not even 127.0.0.1 (uvicorn's default), where anyone on this host, or a proxy
    that passes the header on unchecked, could send it: the sign-in limits count tries per
    address, and a forged address would start every try afresh."""
    proxies = forwarded_allow_ips.strip() if forwarded_allow_ips else ""
    return {
        "host": host,
        "port": port,
        "proxy_headers": bool(proxies),
        "forwarded_allow_ips": proxies or "",
        "log_level": "info",
        "access_log": False,  # URLs carry platform ids (PROLIFIC_PID): not in the log
        "server_header": False,
        "h11_max_incomplete_event_size": MAX_HEAD,
        "http": http_protocol(),
        # A worker answers every few seconds: keep their connection open between answers
        # (uvicorn's default of 5 s closes it just as the next answer is sent).
        "timeout_keep_alive": KEEP_ALIVE_S,
    }


def log_setup() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


class OwnListener(socket.socket):
    """The supervisor's bound (not listening) socket, which holds the port and reports a clash
    at start. Handed to a page process, it becomes that process's own listening socket on the
    same address, with SO_REUSEPORT: the kernel then spreads new connections over the
    processes by their addresses. On one shared socket (uvicorn's way) the process that waited
    last takes every connection pending: 8 opened at once all went to one of 2 processes
    (bench_web flat out, one core used of two). uvicorn has no option for it (its pull
    request 2472 is open), hence this class."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (_reuse_port_listener, (self.family, self.getsockname()))


def _reuse_port_listener(family: int, address: tuple) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(address)
    return sock


def spreads_connections() -> bool:
    """Only Linux spreads a SO_REUSEPORT group's connections (macOS gives them all to one)."""
    return sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")


def listener(config) -> socket.socket:  # type: ignore[no-untyped-def]
    """uvicorn's bound socket for `config`, as an OwnListener where connections can be spread.
    It keeps SO_REUSEPORT off itself, so another server that does not set SO_REUSEPORT
    (uvicorn, another `annotate serve`) cannot take the port: its bind fails, as with one
    shared socket. A program of the same user that sets it can join the group, as with any
    SO_REUSEPORT server."""
    sock = config.bind_socket()
    if not spreads_connections():
        return sock
    own = OwnListener(sock.family, sock.type, sock.proto, fileno=sock.detach())
    own.set_inheritable(True)
    return own


def main(argv: list[str]) -> None:
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    workers, host, port = int(argv[0]), argv[1], int(argv[2])
    proxies = argv[3] if len(argv) > 3 else None
    log_setup()
    # One sign-in limits file for all the processes, unless the researcher named one; in a
    # private folder (mode 0700) removed when the server stops.
    with tempfile.TemporaryDirectory(prefix="annotate-serve-") as private:
        os.environ.setdefault(LIMITS_ENV, str(Path(private) / "signin-limits.db"))
        # uvicorn.run's own steps for `workers` processes, with the page's listener.
        config = uvicorn.Config(
            "annotate.web.page.serve:worker_page",
            factory=True,
            workers=workers,
            **uvicorn_options(host, port, proxies),
        )
        sockets = [listener(config)]
        # uvicorn before 0.51 takes the processes' target; later ones make their own server.
        if "target" in inspect.signature(Multiprocess).parameters:
            supervisor = Multiprocess(config, target=uvicorn.Server(config).run, sockets=sockets)
        else:
            supervisor = Multiprocess(config, sockets=sockets)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the processes have stopped
            supervisor.run()


if __name__ == "__main__":
    main(sys.argv[1:])
