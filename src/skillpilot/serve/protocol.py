"""uvicorn's HTTP/1.1 protocol (h11) with a deadline for reading each request, for both HTTP
servers (``serve.http``, ``mcp --http``), and :func:`replaying`, how their middlewares hand on a
body they read (and checked) first.

uvicorn times out an idle keep-alive connection, but cancels that timer on the first byte of a
request and has no other: a client sending its headers (or its body) a byte at a time holds a
connection for as long as it likes, and a few hundred such clients hold the server. Here each
request, headers and body, must arrive within ``limits.REQUEST_READ_SECONDS`` of the connection
opening (or of the previous answer); past that the connection is closed. A request the app is
still working on is never cut off: only reading the client is bounded.
"""

from __future__ import annotations

import asyncio

import h11
from starlette.types import Message, Receive
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..limits import REQUEST_READ_SECONDS


class BoundedH11Protocol(H11Protocol):
    """``H11Protocol`` plus the read deadline (see the module docstring); pass it to uvicorn as
    ``Config(http=BoundedH11Protocol)``."""

    read_seconds = REQUEST_READ_SECONDS
    _read_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._read_deadline = self.loop.call_later(self.read_seconds, self._read_too_slow)

    def _disarm(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_too_slow(self) -> None:
        # DONE: the whole request arrived (the app may still be answering it); IDLE with nothing
        # buffered is an idle keep-alive connection, closed by uvicorn's own timer anyway.
        if self.conn.their_state is not h11.DONE and not self.transport.is_closing():
            self.transport.close()


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the app ``body`` (already read from the client) whole, then
    whatever ``receive`` gives (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
