"""uvicorn's HTTP protocol for the page: httptools' C parser, with a bound on a request's head,
and each response written in one piece.

httptools parses a request in about half the time h11 does (a fifth less CPU per answer in
bench_web), but it takes a request line and headers of any length, where h11 stops at
`h11_max_incomplete_event_size`. A client that sends an endless header must not grow the
server's memory, so the head is counted here as it arrives and a request whose head passes
MAX_HEAD is answered 400 and its connection closed, as h11 does. Only the head's own bytes
count: the parser is fed at most what is left of the bound at a time, so a body sent in the
same packets as its head reaches the page, whose own bound answers 413 (bounded_body.py).
uvicorn loads this class only where httptools is installed (supervisor.http_protocol);
elsewhere h11 has that same bound.

A head must also arrive within HEAD_TIMEOUT_S of its first byte (or of the connection's
opening): head_deadline.py, shared with h11's protocol (bounded_h11.py).

uvicorn writes a response's head when it starts and its body after: two sends on the socket,
each a system call that, on the loopback or a busy host, also does the receiving side's work,
with Python's lock held (13% of the page's time flat out, profiled). `_HeadWithBody` holds
the head and sends it with the body.
"""

from __future__ import annotations

import weakref
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from annotate.web.page.head_deadline import HeadDeadline
from annotate.web.page.supervisor import MAX_HEAD


class BoundedHead(HeadDeadline, HttpToolsProtocol):
    """HttpToolsProtocol counting the bytes of each request until its headers are complete, and
    writing each response in one piece (`_HeadWithBody`)."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self._head_bytes: int | None = 0  # None once the head is complete

    def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
        super().connection_made(transport)
        self._start_head_timer()  # a connection that sends nothing is closed too

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_done()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        while data and self._head_bytes is not None:
            self._start_head_timer()
            room = MAX_HEAD - self._head_bytes
            if room <= 0:
                self.logger.warning("Request head too large: refused.")
                self._head_done()
                self.send_400_response("Request head too large.")
                return
            part, data = data[:room], data[room:]
            self._head_bytes += len(part)
            super().data_received(part)  # may complete the head: the rest is the body's
            if self.transport.is_closing():
                return
        if data:
            super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._head_bytes is None:  # the next request on a kept-alive connection
            self._head_bytes = 0

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_bytes = 0  # what comes next on this connection is the next request's head

    def _head_under_way(self) -> bool:
        return self._head_bytes is not None

    def _head_started(self) -> bool:
        return bool(self._head_bytes)

    def on_headers_complete(self) -> None:
        self._head_bytes = None
        self._head_done()
        super().on_headers_complete()

        cycle = self.cycle  # the one just made for this request (run on the next loop turn)
        if cycle is not None and not isinstance(cycle.transport, _HeadWithBody):
            held = _HeadWithBody(cycle.transport, cycle)
            cycle.transport = held  # type: ignore[assignment]
            answered = cycle.on_response

            def on_response() -> None:
                held.flush()  # a response that wrote no body (HEAD) has its head sent now
                answered()

            cycle.on_response = on_response


class _HeadWithBody:
    """The connection as one request's cycle writes to it: the response's head (the first
    write once the response has started) is held and sent with the next write, the body's.
    A write before the head (100 Continue), closing, or the end of a response that wrote no
    body sends what is held first.

    It knows its cycle by a weak reference: the cycle holds it (its transport), and a strong
    one both ways would make every request a reference cycle, which only the garbage
    collector frees. They piled up (some 2,600 requests' scopes, sessions and events in a
    page process between two collections), and each full collection then paused the
    process for 40-90 ms, with every request on it waiting (bench_web's slowest answers)."""

    def __init__(self, transport: Any, cycle: RequestResponseCycle) -> None:
        self._transport = transport
        self._cycle = weakref.ref(cycle)
        self._head: bytes | None = None
        self._head_written = False

    def write(self, data: bytes) -> None:
        cycle = self._cycle()
        if not self._head_written and cycle is not None and cycle.response_started:
            self._head_written = True
            self._head = data
            return
        if self._head is not None:
            data, self._head = self._head + data, None
        self._transport.write(data)

    def flush(self) -> None:
        if self._head is not None:
            head, self._head = self._head, None
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
