"""uvicorn's HTTP protocol for the page: httptools' C parser, with a bound on a request's head.

httptools parses a request in about half the time h11 does (a fifth less CPU per answer in
bench_web), but it takes a request line and headers of any length, where h11 stops at
`h11_max_incomplete_event_size`. A client that sends an endless header must not grow the
server's memory, so the head is counted here as it arrives and a request whose head passes
MAX_HEAD is answered 400 and its connection closed, as h11 does. uvicorn loads this class only
where httptools is installed (supervisor.http_protocol); elsewhere h11 has that same bound.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from annotate.web.page.supervisor import MAX_HEAD


class BoundedHead(HttpToolsProtocol):
    """HttpToolsProtocol counting the bytes of each request until its headers are complete."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._head_bytes: int | None = 0  # None once the head is complete

    def data_received(self, data: bytes) -> None:
        if self._head_bytes is not None:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD:
                self.logger.warning("Request head too large: refused.")
                self.send_400_response("Request head too large.")
                return
        super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head_bytes is None:  # the next request on a kept-alive connection
            self._head_bytes = 0

    def on_headers_complete(self) -> None:
        self._head_bytes = None
        super().on_headers_complete()
