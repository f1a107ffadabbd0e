"""What a web tool call produces: the body, the ``_meta`` block and an optional link."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from doiget.web.results import LinkedResult, WebResult

TRUST: Final = "untrusted-external-content"


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """An MCP resource_link to a stored artifact."""

    uri: str
    name: str
    mime_type: str
    size: int
    description: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """One web tool result.

    ``result`` is the typed result (the full one, or the inline summary of a linked
    one); ``meta`` rides on the MCP result's ``_meta`` (cache freshness, routing),
    never inside the body.
    """

    result: WebResult | LinkedResult
    meta: dict[str, Any] | None = None
    link: ResourceLink | None = None

    @property
    def body(self) -> dict[str, Any]:
        """The result as structured content."""
        return self.result.wire()


def freshness_meta(*, cached: bool, age: float, ttl: float) -> dict[str, Any]:
    """Cache provenance: ``{cached, ageSeconds, maxAgeSeconds, freshness}``."""
    label = "fresh" if age < ttl / 2 else "aging"
    return {
        "cached": cached,
        "ageSeconds": int(age),
        "maxAgeSeconds": int(ttl),
        "freshness": label,
    }


def rfc3339(timestamp: float) -> str:
    """``timestamp`` as an RFC 3339 UTC time to the second."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
