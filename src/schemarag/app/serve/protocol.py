"""uvicorn's HTTP protocol with a deadline on the request head (issue 39, "slow headers").

uvicorn bounds an idle keep-alive connection (5 s) but not a request head in progress: a peer that
sends ``GET / HTTP/1.1\\r\\nX-A: `` and then one byte a minute holds a connection (and a file
descriptor) for as long as it likes, before any API key is checked, so a few thousand such peers
exhaust the process. This protocol starts a timer when a connection opens and when a request
begins, and closes the connection if the head (request line and headers) is not complete within
``SCHEMARAG_SERVE_HEADER_TIMEOUT`` seconds (default 10: a real client sends its head in one
packet, a few milliseconds; 10 s leaves room for a slow mobile link and is still far below what
an attacker needs to pin connections for long). The body is not covered: it is bounded by the
size limit and the request timeout once the route reads it.
"""

from __future__ import annotations

import asyncio
import os

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

DEFAULT_HEADER_TIMEOUT = 10.0
ENV = "SCHEMARAG_SERVE_HEADER_TIMEOUT"


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` that closes a connection whose request head is not complete in time."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        # read per connection from the environment the workers share (settings.to_env)
        seconds = float(os.environ.get(ENV) or DEFAULT_HEADER_TIMEOUT)
        self._head_timer = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
            self._head_timer = None

    def _expire(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()
