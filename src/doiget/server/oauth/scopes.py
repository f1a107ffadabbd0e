"""Which scope a tool call needs: the read scope for a tool whose annotations say it
only reads (and for reading a resource), the write scope for any other, and the
refusal of a call without it (403 ``insufficient_scope`` naming the scope, as the MCP
authorization spec's step-up asks)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from starlette.responses import JSONResponse, Response

from doiget.errors import quoted

# The JSON-RPC error code of a call refused for a missing scope (implementation-defined
# server error range).
INSUFFICIENT_SCOPE: Final = -32001


@dataclass(frozen=True)
class ToolScopes:
    """The scope names and the tools that only read."""

    read: str
    write: str
    read_only: frozenset[str]
    resource_metadata: str = ""

    @property
    def all(self) -> tuple[str, str]:
        """Both scopes (what a static token grants)."""
        return (self.read, self.write)

    def needed(self, tool: str) -> str:
        """The scope a call of ``tool`` needs (the write scope for a name not known)."""
        return self.read if tool in self.read_only else self.write

    def missing(self, scope: Mapping[str, Any], tool: str) -> str | None:
        """The scope a call of ``tool`` needs that the request's token lacks; None when
        it has it, or when the server runs without authentication."""
        return self.lacking(scope, self.needed(tool))

    @staticmethod
    def lacking(scope: Mapping[str, Any], needed: str) -> str | None:
        """``needed`` when the request's token does not grant it; None when it does, or
        when the server runs without authentication."""
        granted = getattr(scope.get("user"), "scopes", None)
        if granted is None:
            return None
        return None if needed in granted else needed

    @staticmethod
    def refusal_text(tool: str, needed: str) -> str:
        """What a caller refused for lacking ``needed`` is told."""
        return (
            f"{quoted(tool)} needs the OAuth scope {quoted(needed)}, which this access token "
            f"does not grant; sign in again asking for {needed}, or use an account allowed it."
        )

    def refusal(self, request_id: Any, tool: str, needed: str) -> Response:
        """403 with ``WWW-Authenticate: Bearer error="insufficient_scope"`` and a JSON-RPC
        error naming the scope."""
        text = self.refusal_text(tool, needed)
        challenge = (
            f'Bearer error="insufficient_scope", scope="{needed}", '
            f'resource_metadata="{self.resource_metadata}", '
            f'error_description="this call needs the scope {needed}"'
        )
        return JSONResponse(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": INSUFFICIENT_SCOPE, "message": text, "data": {"scope": needed}},
            },
            status_code=403,
            headers={"WWW-Authenticate": challenge},
        )
