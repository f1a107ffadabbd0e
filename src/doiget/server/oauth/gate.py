"""Tool calls refused at the HTTP layer when the caller's token lacks the scope the
tool needs: 403 with ``WWW-Authenticate: Bearer error="insufficient_scope"`` (the MCP
authorization spec's step-up), before the MCP session sees the call. The MCP server
checks the same again for every call (a body this gate cannot read included)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from doiget.jsontext import parse_json
from doiget.server.oauth.scopes import ToolScopes

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ScopeGate:
    """Reads the body of a POST by a caller lacking one of the scopes (up to
    ``max_body`` bytes, the server's cap) and refuses a tools/call it does not allow."""

    def __init__(self, app: ASGIApp, scopes: ToolScopes, max_body: int) -> None:
        self.app = app
        self.scopes = scopes
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        granted = getattr(scope.get("user"), "scopes", None)
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or granted is None
            or all(name in granted for name in self.scopes.all)
        ):
            await self.app(scope, receive, send)
            return
        held, body = await _read(receive, self.max_body)
        call = _tool_call(body)
        if call is not None:
            request_id, tool = call
            needed = self.scopes.missing(scope, tool)
            if needed is not None:
                await self.scopes.refusal(request_id, tool, needed)(scope, receive, send)
                return

        async def replay() -> Message:
            return held.pop(0) if held else await receive()

        await self.app(scope, replay, send)


async def _read(receive: Receive, cap: int) -> tuple[list[Message], bytes]:
    """The messages of a request body up to ``cap`` + 1 bytes, and that body."""
    held: list[Message] = []
    body = b""
    while len(body) <= cap:
        message = await receive()
        held.append(message)
        body += message.get("body", b"")
        if message["type"] != "http.request" or not message.get("more_body"):
            break
    return held, body


def _tool_call(body: bytes) -> tuple[Any, str] | None:
    """(request id, tool name) of a JSON-RPC tools/call body."""
    try:
        message = parse_json(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return (message.get("id"), name) if isinstance(name, str) else None
