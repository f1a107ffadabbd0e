"""Bearer tokens for the HTTP server: read once, kept only as SHA-256 digests.

Tokens come from a file (``DOIGET_HTTP_TOKENS_FILE``, one per line, ``#`` comments)
and/or ``DOIGET_HTTP_TOKENS`` (comma list). A presented token is hashed and compared
with every digest in constant time; what identifies its holder in logs and metrics
is the token id, the first 12 hex digits of its digest, never the token.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from mcp.server.auth.provider import AccessToken

from doiget.errors import DoigetError, ErrorCode

# Shorter tokens are refused at start: a guessable token is no authentication.
MIN_TOKEN_CHARS: Final = 16
# Who a request is when the server runs without authentication (loopback only).
NO_AUTH_HOLDER: Final = "anonymous"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _token_id(digest: bytes) -> str:
    """The name a token goes by in logs: 12 hex digits of its SHA-256 ``digest``."""
    return digest.hex()[:12]


def read_token_file(path: Path) -> list[str]:
    """The tokens in ``path`` (one per line; blank lines and ``#`` comments skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DoigetError(
            ErrorCode.INVALID_CONFIG,
            f"DOIGET_HTTP_TOKENS_FILE {path} cannot be read ({exc.strerror or exc}); fix the "
            "path or its permissions.",
        ) from exc
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


class StaticTokens:
    """A token verifier for the MCP SDK's bearer authentication; a static token grants
    ``scopes`` (every OAuth scope when OAuth is on too)."""

    def __init__(self, tokens: Iterable[str], scopes: Sequence[str] = ()) -> None:
        self._scopes = list(scopes)
        self._digests: list[tuple[bytes, str]] = []
        for token in tokens:
            digest = _digest(token)
            if len(token) < MIN_TOKEN_CHARS:
                raise DoigetError(
                    ErrorCode.INVALID_CONFIG,
                    f"an HTTP token (id {_token_id(digest)}) has {len(token)} characters; use "
                    f"at least {MIN_TOKEN_CHARS} random ones (e.g. openssl rand -hex 32).",
                )
            self._digests.append((digest, _token_id(digest)))
        if not self._digests:
            raise DoigetError(
                ErrorCode.INVALID_CONFIG,
                "no HTTP token is configured: put tokens in DOIGET_HTTP_TOKENS_FILE (one per "
                "line) or DOIGET_HTTP_TOKENS, or serve on loopback with --insecure-no-auth.",
            )

    async def verify_token(self, token: str) -> AccessToken | None:
        """The holder of ``token`` when it is one of ours (every digest compared)."""
        presented = _digest(token)
        found: str | None = None
        for digest, name in self._digests:
            if hmac.compare_digest(presented, digest):
                found = name
        if found is None:
            return None
        return AccessToken(token=found, client_id=found, scopes=list(self._scopes))


def holder(scope: Mapping[str, Any], default: str = NO_AUTH_HOLDER) -> str:
    """The token id of an authenticated request (set by the bearer authentication);
    ``default`` when the server runs without authentication."""
    token = getattr(scope.get("user"), "access_token", None)
    return str(getattr(token, "client_id", "")) or default
