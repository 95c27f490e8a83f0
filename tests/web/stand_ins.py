"""The world around a crowd study's page, stood in for on the loopback for Chromium tests:
a self-signed certificate for made-up https names, the Chromium switches that send those
names to local ports, and a platform's side: a study page with the link a worker clicks, and
MTurk's side of an ExternalQuestion (its worker site's page, which shows the task in a frame,
and externalSubmit, which takes the worker's exit form)."""

from __future__ import annotations

import html
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit


def certificate(folder: Path, names: list[str]) -> tuple[Path, Path]:
    """A self-signed certificate for `names` and its key (Chromium is told to take it)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={names[0]}",
            "-addext", "subjectAltName=" + ",".join(f"DNS:{n}" for n in names),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def resolver_switches(ports: dict[str, int]) -> tuple[str, ...]:
    """Chromium's switches that make https://NAME reach 127.0.0.1:PORT (the name and port 443
    in the address bar, so the page's origin is the public one) and take the test certificate."""
    rules = ", ".join(f"MAP {name}:443 127.0.0.1:{port}" for name, port in ports.items())
    return (f"--host-resolver-rules={rules}", "--ignore-certificate-errors")


@dataclass
class MTurkStandIn:
    """What MTurk's stand-in received: each externalSubmit form, as posted."""

    port: int = 0
    submitted: list[dict[str, str]] = field(default_factory=list)
    sent_from: list[tuple[str | None, str | None]] = field(default_factory=list)
    """Each submission's Origin and Referer headers, as the browser sent them."""
    arrived: threading.Event = field(default_factory=threading.Event)


def _handler(state: MTurkStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, body: str, status: int = 200) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query)
            if urlsplit(self.path).path == "/link":
                # A platform's study page (Prolific's): the study link, for the worker to click.
                href = html.escape(query.get("href", [""])[0], quote=True)
                self._send(f'<!doctype html><a id="go" href="{href}">Open study in new tab</a>')
                return
            # The worker site's task page: the ExternalQuestion in a frame, as MTurk shows it.
            src = html.escape(query.get("src", [""])[0], quote=True)
            # The frame's load (a refused frame loads an error page) names the page "framed".
            self._send(f'<!doctype html><title>HIT</title><iframe id="task" src="{src}" '
                       'onload="document.title=\'framed\'" width="1000" height="700"></iframe>')  # fmt: skip

        def do_POST(self) -> None:
            if urlsplit(self.path).path != "/mturk/externalSubmit":
                self._send("not here", 404)
                return
            body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
            form = {k: v[0] for k, v in parse_qs(body).items()}
            state.submitted.append(form)
            state.sent_from.append((self.headers.get("origin"), self.headers.get("referer")))
            state.arrived.set()
            self._send('<!doctype html><p id="received">HIT submitted</p>')

    return Handler


@contextmanager
def mturk_stand_in(tls: tuple[Path, Path]) -> Iterator[MTurkStandIn]:
    """MTurk's stand-in over https on a free loopback port (map its names to it)."""
    state = MTurkStandIn()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(tls[0]), str(tls[1]))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
