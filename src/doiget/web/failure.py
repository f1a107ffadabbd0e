"""How the web tools fail: a kind an agent can act on, and what to do next.

The web envelope is ``{error: {kind, message, retryable, suggestedAction, provider?}}``.
Web code raises :class:`~doiget.errors.DoigetError` like the rest of doiget; the kind
is either stated when the error is made (:func:`web_error`) or derived from the code,
denial and HTTP status of an error raised by ``net/`` (:func:`failure_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from doiget.errors import DenialReason, DoigetError, ErrorCode


class Kind(StrEnum):
    """What kind of failure an agent is looking at."""

    VALIDATION = "validation"
    NOT_CONFIGURED = "not_configured"
    NETWORK = "network"
    TIMEOUT = "timeout"
    BLOCKED = "blocked"
    AUTH = "auth"
    NOT_FOUND = "not_found"
    RATE_LIMIT = "rate_limit"
    CONTENT = "content"
    # A body or document over one of doiget's reading caps (bytes, expansion, elements,
    # CPU time, memory): refused rather than read.
    TOO_LARGE = "too_large"
    # A format or packaging doiget does not read (an encrypted or unusually
    # compressed document, markup nested deeper than the parser goes).
    UNSUPPORTED = "unsupported"
    UPSTREAM = "upstream"
    INTERNAL = "internal"


_CODES: dict[Kind, ErrorCode] = {
    Kind.VALIDATION: ErrorCode.INVALID_REF,
    Kind.NOT_CONFIGURED: ErrorCode.CAPABILITY_DENIED,
    Kind.NETWORK: ErrorCode.NETWORK_ERROR,
    Kind.TIMEOUT: ErrorCode.FETCH_TIMEOUT,
    Kind.BLOCKED: ErrorCode.CAPABILITY_DENIED,
    Kind.AUTH: ErrorCode.CAPABILITY_DENIED,
    Kind.NOT_FOUND: ErrorCode.NOT_FOUND,
    Kind.RATE_LIMIT: ErrorCode.RATE_LIMITED,
    Kind.CONTENT: ErrorCode.NOT_FOUND,
    Kind.TOO_LARGE: ErrorCode.CAPABILITY_DENIED,
    Kind.UNSUPPORTED: ErrorCode.CAPABILITY_DENIED,
    Kind.UPSTREAM: ErrorCode.NETWORK_ERROR,
    Kind.INTERNAL: ErrorCode.INTERNAL_ERROR,
}

_RETRYABLE = frozenset({Kind.NETWORK, Kind.TIMEOUT, Kind.RATE_LIMIT, Kind.CONTENT, Kind.UPSTREAM})

_SUGGESTED: dict[Kind, str] = {
    Kind.VALIDATION: "Fix the input as the message says and call again.",
    Kind.NOT_CONFIGURED: "Set the named environment variable and restart doiget, or use "
    "another provider.",
    Kind.NETWORK: "Retry in a few seconds; if it persists the site or provider is down.",
    Kind.TIMEOUT: "Retry once; if it times out again try another source.",
    Kind.BLOCKED: "Try another source for the same content; this one refuses automated reads.",
    Kind.AUTH: "The page needs a login; find an openly readable source instead.",
    Kind.NOT_FOUND: "Check the URL, or search for the page's current address.",
    Kind.RATE_LIMIT: "Wait before retrying, or use another configured provider.",
    Kind.CONTENT: "Try mode 'raw' to see what the page sends, or another source.",
    Kind.TOO_LARGE: "Do not retry this URL: find a smaller form of the same content (the "
    "HTML page instead of the document, one chapter, another source), or read its first "
    "bytes with mode 'raw' and a max_length.",
    Kind.UNSUPPORTED: "Do not retry this URL: find the same content in another format "
    "(an HTML page or a PDF) or from another source.",
    Kind.UPSTREAM: "Retry later or use another configured provider.",
    Kind.INTERNAL: "Retry once; report it if it persists (details are in doiget's stderr log).",
}

_PERMANENT_ADVICE = "Do not retry: it fails the same way every time. Use another source."

_SSRF_LIKE = frozenset(
    {
        DenialReason.SSRF_PRIVATE_ADDRESS,
        DenialReason.INSECURE_SCHEME,
        DenialReason.HOST_IN_BLOCK_LIST,
        DenialReason.REDIRECT_NOT_IN_ALLOWLIST,
    }
)


def web_error(
    kind: Kind,
    message: str,
    *,
    provider: str | None = None,
    suggested_action: str | None = None,
    retry_after: float | None = None,
    field: str | None = None,
) -> DoigetError:
    """A web failure of ``kind``; ``suggested_action`` replaces the kind's default advice."""
    details: dict[str, Any] = {"kind": kind.value}
    if provider is not None:
        details["provider"] = provider
    if suggested_action is not None:
        details["suggestedAction"] = suggested_action
    return DoigetError(_CODES[kind], message, retry_after=retry_after, details=details, field=field)


def kind_of(error: DoigetError) -> Kind:
    """The kind of ``error``: as stated, else derived from its code, denial and status."""
    stated = (error.details or {}).get("kind")
    if isinstance(stated, str) and stated in Kind.__members__.values():
        return Kind(stated)
    status = (error.details or {}).get("status")
    if error.denial is not None:
        if error.denial.reason in _SSRF_LIKE:
            return Kind.VALIDATION
        if error.denial.reason is DenialReason.RATE_LIMIT_WINDOW:
            return Kind.RATE_LIMIT
        if error.denial.reason is DenialReason.SCHEMA_DRIFT:
            return Kind.UPSTREAM
        if error.denial.reason is DenialReason.SIZE_CAP_EXCEEDED:
            return Kind.TOO_LARGE
        return Kind.CONTENT
    by_code = {
        ErrorCode.INVALID_REF: Kind.VALIDATION,
        ErrorCode.NOT_FOUND: Kind.NOT_FOUND,
        ErrorCode.RATE_LIMITED: Kind.RATE_LIMIT,
        ErrorCode.FETCH_TIMEOUT: Kind.TIMEOUT,
        ErrorCode.TIMEOUT: Kind.TIMEOUT,
    }
    if error.code in by_code:
        return by_code[error.code]
    if status == 401:
        return Kind.AUTH
    if status == 403:
        return Kind.BLOCKED
    if isinstance(status, int) and 400 <= status < 500:
        return Kind.UPSTREAM
    if error.code is ErrorCode.NETWORK_ERROR:
        return Kind.NETWORK
    return Kind.INTERNAL


@dataclass(frozen=True, slots=True)
class Failure:
    """The wire form of one web failure."""

    kind: Kind
    message: str
    retryable: bool
    suggested_action: str
    provider: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{kind, message, retryable, suggestedAction, provider?}``."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "message": self.message,
            "retryable": self.retryable,
            "suggestedAction": self.suggested_action,
        }
        if self.provider is not None:
            out["provider"] = self.provider
        return out


def failure_of(error: DoigetError) -> Failure:
    """What an agent is told about ``error``. A failure ``net/`` marks as one that a
    second try would repeat (``retryable: false`` in its details) is never retryable."""
    kind = kind_of(error)
    details = error.details or {}
    retryable = kind in _RETRYABLE and details.get("retryable") is not False
    advice = details.get("suggestedAction")
    if advice is None and kind is Kind.RATE_LIMIT and error.retry_after:
        advice = f"Wait {error.retry_after:.0f} s before retrying, or use another provider."
    if advice is None and not retryable and kind in _RETRYABLE:
        advice = _PERMANENT_ADVICE
    advice = advice or _SUGGESTED[kind]
    provider = details.get("provider")
    return Failure(kind, error.message, retryable, str(advice), str(provider) if provider else None)
