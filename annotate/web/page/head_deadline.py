"""A deadline for a request's head, for either of uvicorn's HTTP protocols (bounded_http.py for
httptools, bounded_h11.py for h11).

A request's line and headers must arrive within HEAD_TIMEOUT_S of their first byte (or of the
connection's opening). uvicorn's keep-alive timer stops at the first byte, and neither of its
protocols has a timer of its own for the head, so a client sending one byte every few seconds
would hold its connection, and a slot of the server's, for ever.
"""

from __future__ import annotations

import asyncio
import logging

from annotate.web.page.supervisor import HEAD_TIMEOUT_S


class HeadDeadline:
    """Mixed in before uvicorn's protocol class: closes a connection whose request head is not
    complete HEAD_TIMEOUT_S after it began. The protocol says where a head stands
    (`_head_under_way`, `_head_started`) and calls `_head_done` once one is complete."""

    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    logger: logging.Logger
    _head_timer: asyncio.TimerHandle | None = None

    def _head_under_way(self) -> bool:
        """Whether the connection is waiting for (the rest of) a request's head."""
        raise NotImplementedError

    def _head_started(self) -> bool:
        """Whether some of that head has arrived (then its being cut off is logged)."""
        raise NotImplementedError

    def _start_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._head_timed_out)

    def _head_done(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._head_under_way() and not self.transport.is_closing():
            if self._head_started():  # a head was under way: say why it is cut off
                self.logger.warning("Request head too slow: connection closed.")
            self.transport.close()
