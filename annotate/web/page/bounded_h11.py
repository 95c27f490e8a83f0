"""uvicorn's h11 protocol for the page where httptools is not installed, with the page's
deadline for a request's head (head_deadline.py). h11 bounds the head's size itself
(`h11_max_incomplete_event_size`, set by supervisor.uvicorn_options)."""

from __future__ import annotations

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from annotate.web.page.head_deadline import HeadDeadline


class BoundedH11(HeadDeadline, H11Protocol):
    """H11Protocol closing a connection whose request head takes longer than HEAD_TIMEOUT_S.
    h11 holds the client's side IDLE until a request's head is complete, and again once the
    response is done and the next cycle starts (keep-alive)."""

    def connection_made(self, transport) -> None:  # type: ignore[no-untyped-def]
        super().connection_made(transport)
        self._head_bytes = 0
        self._start_head_timer()  # a connection that sends nothing is closed too

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_done()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._head_under_way():
            self._head_bytes += len(data)
            self._start_head_timer()
        super().data_received(data)
        if not self._head_under_way():
            self._head_bytes = 0  # the next head on this connection counts from zero
            self._head_done()

    def _head_under_way(self) -> bool:
        return self.conn.their_state is h11.IDLE

    def _head_started(self) -> bool:
        return self._head_bytes > 0
