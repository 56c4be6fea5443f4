"""The daemon's HTTP protocol: uvicorn's h11 protocol with a deadline on every request's headers.

uvicorn closes an idle keep-alive connection, but a client that opens a
connection and sends its request line and headers a byte at a time (or
nothing at all) would hold it forever. Here each connection must deliver a
complete set of request headers within ``timeout_s`` of connecting or of its
previous answer, else it is closed. The body has its own deadline, enforced
where the routes read it (``routes.read_body``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


def header_deadline_protocol(timeout_s: float) -> type[asyncio.Protocol]:
    """An h11 protocol class whose connections get ``timeout_s`` to send each request's headers."""

    class HeaderDeadlineProtocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _armed_for: Any = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._arm()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # a request's headers are complete
                self._disarm()

        def on_response_complete(self) -> None:
            self._arm()  # before the next (pipelined) request may start in super()
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._armed_for = self.cycle
            self._deadline = self.loop.call_later(timeout_s, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            idle = self.cycle is None or self.cycle.response_complete
            if self.cycle is self._armed_for and idle and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadlineProtocol
