"""MCP sessions of the HTTP server, counted and capped per token.

The SDK's session manager caps open sessions for the whole server (10,000 by
default), so one token opening sessions without end refuses every other token's
``initialize``, and each session it keeps holds memory. Here each token may hold
``per_token`` sessions: opening one more ends that token's longest idle session
(no request in flight, no open event stream), as the idle timeout would have done
later; when all of them are busy the new one is refused with 429 and a body naming
``DOIGET_HTTP_MAX_SESSIONS``. Other tokens' sessions are never touched, and the
whole server holds at most ``per_token`` sessions per configured token.

A session is counted from the request that opens it (before the SDK admits it), so
concurrent ``initialize`` calls cannot overshoot the cap.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import MutableMapping
from typing import Any, Final

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import JSONResponse

from doiget.server.tokens import holder

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]

SETTING: Final = "DOIGET_HTTP_MAX_SESSIONS"
# Seconds a refused client is told to wait: a busy session frees up when its call ends.
RETRY_AFTER: Final = 5
_SESSION_HEADER: Final = MCP_SESSION_ID_HEADER.lower().encode("latin-1")


class PerTokenSessions(StreamableHTTPSessionManager):
    """The SDK's session manager with a cap per token instead of one for everybody."""

    def __init__(self, app: Any, *, per_token: int, **kwargs: Any) -> None:
        # The per-token cap bounds the total (tokens are configured, so finite).
        kwargs["max_sessions"] = None
        super().__init__(app, **kwargs)
        self.per_token = per_token
        self._owned: defaultdict[str, dict[str, None]] = defaultdict(dict)  # oldest first
        self._opening: defaultdict[str, int] = defaultdict(int)

    async def handle_request(self, scope: Scope, receive: Any, send: Any) -> None:
        """Serve a request; one that opens a session first makes room for it."""
        if not _opens_session(scope):
            await super().handle_request(scope, receive, send)
            return
        owner = holder(scope)
        if not self._make_room(owner):
            await _refusal(self.per_token)(scope, receive, send)
            return
        self._opening[owner] += 1
        counted = True

        async def watching(message: Message) -> None:
            # The session id comes with the answer that opens it: from then on the
            # session itself is counted, not the opening.
            nonlocal counted
            if message["type"] == "http.response.start" and counted:
                session_id = _session_id(message)
                if session_id is not None and message["status"] < 400:
                    self._owned[owner][session_id] = None
                self._opening[owner] -= 1
                counted = False
            await send(message)

        try:
            await super().handle_request(scope, receive, watching)
        finally:
            if counted:
                self._opening[owner] -= 1

    def _live(self, owner: str) -> dict[str, StreamableHTTPServerTransport]:
        """``owner``'s sessions still open, oldest first (ended ones are forgotten)."""
        owned = self._owned[owner]
        live = {}
        for session_id in list(owned):
            transport = self._server_instances.get(session_id)
            if transport is None or transport.is_terminated or _ending(transport):
                del owned[session_id]
            else:
                live[session_id] = transport
        return live

    def _make_room(self, owner: str) -> bool:
        """End ``owner``'s longest idle sessions until one more fits; False when the
        sessions left are all busy."""
        live = self._live(owner)
        while len(live) + self._opening[owner] >= self.per_token:
            idle = {sid: t for sid, t in live.items() if _idle_until(t) < math.inf}
            if not idle:
                return False
            oldest = min(idle, key=lambda sid: _idle_until(idle[sid]))
            scope = idle[oldest].idle_scope
            assert scope is not None  # idle sessions have one
            # What the idle timeout does when it fires: the SDK then discards the session.
            scope.cancel()
            del live[oldest]
            del self._owned[owner][oldest]
        return True


def _opens_session(scope: Scope) -> bool:
    """A POST without a session id: the SDK would open a new session for it."""
    if scope.get("method") != "POST":
        return False
    return not any(name == _SESSION_HEADER for name, _ in scope.get("headers", ()))


def _session_id(message: Message) -> str | None:
    for name, value in message.get("headers", ()):
        if bytes(name).lower() == _SESSION_HEADER:
            return bytes(value).decode("latin-1")
    return None


def _ending(transport: StreamableHTTPServerTransport) -> bool:
    return transport.idle_scope is not None and transport.idle_scope.cancel_called


def _idle_until(transport: StreamableHTTPServerTransport) -> float:
    """When an idle session would end by itself; infinity while it is busy (a request
    in flight or an event stream open) or not yet started."""
    scope = transport.idle_scope
    return math.inf if scope is None else scope.deadline


def _refusal(per_token: int) -> JSONResponse:
    return JSONResponse(
        {
            "error": f"too many open MCP sessions for this token: all {per_token} are busy "
            f"({SETTING}); end one (HTTP DELETE with its Mcp-Session-Id) or retry in "
            f"{RETRY_AFTER} s.",
        },
        status_code=429,
        headers={"Retry-After": str(RETRY_AFTER)},
    )
