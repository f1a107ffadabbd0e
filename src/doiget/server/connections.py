"""Connections that hold the HTTP server without asking it anything (slowloris).

uvicorn closes an idle keep-alive connection after a few seconds, but a connection
that never completes its request head (nothing sent, or one header line a second)
stays open for ever, and enough of them use up the process's file descriptors: then
nobody is served, ``/healthz`` included. No token is needed for that, so the guard is
below authentication, on the connection:

- **Head deadline.** From the moment a connection waits for a request (it opened, or
  its last answer went out), the whole request head must arrive within
  ``header_timeout`` seconds, else the connection is closed.
- **Connection cap.** At most ``max_connections`` are open, lowered to fit the
  open-file limit (which is first raised to its hard limit). A connection beyond the
  cap closes the one that has waited longest for its request head, so a client that
  sends its request at once is served however many slow ones are open; only when
  every open connection is busy with a request is the new one closed.

The protocol is uvicorn's h11 one with these two additions.
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any, Final

# File descriptors kept for everything but client connections: the store, the log,
# the index, outgoing HTTP, Redis, worker threads.
RESERVED_FDS: Final = 128
# A whole request head fits in this many bytes (h11's default, stated here).
MAX_HEAD_BYTES: Final = 16 * 1024
# Seconds an idle keep-alive connection stays open (uvicorn's default, stated here).
KEEP_ALIVE_SECONDS: Final = 5


def connection_budget(wanted: int) -> int:
    """How many connections may be open: ``wanted``, lowered to what the open-file
    limit leaves once raised to its hard limit (at least half of it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass  # stay with the soft limit
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, max(soft // 2, soft - RESERVED_FDS)))


def guarded_protocol(header_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a head deadline and a connection cap."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    # Connections waiting for a request head, longest waiting first.
    waiting: dict[Guarded, None] = {}

    class Guarded(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections and not _close_longest_waiting():
                transport.close()
                return
            self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._head_arrived()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not None and not self.cycle.response_complete:
                self._head_arrived()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            idle = self.cycle is None or self.cycle.response_complete
            if idle and not self.transport.is_closing():
                self._await_head()

        def _await_head(self) -> None:
            self._head_arrived()
            waiting[self] = None
            self._deadline = self.loop.call_later(header_timeout, self._too_slow)

        def _head_arrived(self) -> None:
            waiting.pop(self, None)
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            waiting.pop(self, None)
            self.transport.close()

    def _close_longest_waiting() -> bool:
        if not waiting:
            return False
        oldest = next(iter(waiting))
        oldest._too_slow()
        return True

    return Guarded


def uvicorn_limits(header_timeout: float, max_connections: int) -> dict[str, Any]:
    """The uvicorn.Config arguments that bound what a connection may hold."""
    return {
        "http": guarded_protocol(header_timeout, connection_budget(max_connections)),
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
    }
