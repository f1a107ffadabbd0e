"""The one error type doiget raises, its closed code set and the denial payload.

Every failure inside doiget is a :class:`DoigetError` carrying an :class:`ErrorCode`
and, when a guard refused something, a :class:`DenialContext` that tells an agent
exactly what was refused and what would have been accepted. Faces (CLI, MCP) render
it; nothing else in the code base invents error shapes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from doiget.redaction import redact_known, redact_value

# The most of one input a message quotes back: a 100 KB value is not echoed whole.
QUOTE_CHARS: Final = 80


def shorten(text: str) -> str:
    """``text`` cut to :data:`QUOTE_CHARS` characters (an ellipsis marks the cut)."""
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 3] + "..."


def quoted(value: Any) -> str:
    """A caller's input as a message shows it: a string's repr, anything else as JSON,
    either cut to about :data:`QUOTE_CHARS` characters. Every message that echoes input
    goes through here."""
    if isinstance(value, str):
        return repr(shorten(value))
    return shorten(json.dumps(value, ensure_ascii=False, default=str))


class ErrorCode(StrEnum):
    """Closed set of error codes; the wire form is the member value."""

    INVALID_REF = "INVALID_REF"
    NOT_FOUND = "NOT_FOUND"
    NO_OA_AVAILABLE = "NO_OA_AVAILABLE"
    RATE_LIMITED = "RATE_LIMITED"
    NETWORK_ERROR = "NETWORK_ERROR"
    FETCH_TIMEOUT = "FETCH_TIMEOUT"
    CAPABILITY_DENIED = "CAPABILITY_DENIED"
    STORE_ERROR = "STORE_ERROR"
    LOG_ERROR = "LOG_ERROR"
    LOCK_TIMEOUT = "LOCK_TIMEOUT"
    SCHEMA_TOO_NEW = "SCHEMA_TOO_NEW"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    # A setting (environment, config.toml or a command-line flag) that cannot be used.
    INVALID_CONFIG = "INVALID_CONFIG"
    # The library toolset's own codes.
    INVALID_PROJECT = "INVALID_PROJECT"
    EMBEDDING_MISMATCH = "EMBEDDING_MISMATCH"
    HYBRID_NOT_SUPPORTED = "HYBRID_NOT_SUPPORTED"
    INDEX_UNAVAILABLE = "INDEX_UNAVAILABLE"
    TIMEOUT = "TIMEOUT"


class DenialReason(StrEnum):
    """Why a guard refused a request."""

    REDIRECT_NOT_IN_ALLOWLIST = "redirect_not_in_allowlist"
    INSECURE_SCHEME = "insecure_scheme"
    HOST_IN_BLOCK_LIST = "host_in_block_list"
    SIZE_CAP_EXCEEDED = "size_cap_exceeded"
    SCHEMA_DRIFT = "schema_drift"
    CAPABILITY_NOT_GRANTED = "capability_not_granted"
    RATE_LIMIT_WINDOW = "rate_limit_window"
    SSRF_PRIVATE_ADDRESS = "ssrf_private_address"
    CONTENT_TYPE_MISMATCH = "content_type_mismatch"


@dataclass(frozen=True, slots=True)
class DenialContext:
    """Structured recovery payload attached to a refusal.

    ``expected`` distinguishes ``None`` (not populated) from ``()`` (an explicitly
    empty allowlist); :meth:`to_dict` keeps that distinction on the wire.
    """

    reason: DenialReason
    source: str | None = None
    attempted: str | None = None
    expected: tuple[str, ...] | None = None
    hop_index: int | None = None
    cap: int | None = None
    actual: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Wire form: omit unset fields, keep an empty ``expected`` list."""
        out: dict[str, Any] = {"reason": self.reason.value}
        for name in ("source", "attempted", "hop_index", "cap", "actual"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.expected is not None:
            out["expected"] = list(self.expected)
        return out


# A CLI exit status per code: 1 a fetch failed, 2 misuse or invalid ref,
# 3 capability denied, 4 store or log I/O.
_EXIT_STATUS: dict[ErrorCode, int] = {
    ErrorCode.INVALID_REF: 2,
    ErrorCode.INVALID_CONFIG: 2,
    ErrorCode.CAPABILITY_DENIED: 3,
    ErrorCode.STORE_ERROR: 4,
    ErrorCode.LOG_ERROR: 4,
    ErrorCode.LOCK_TIMEOUT: 4,
    ErrorCode.SCHEMA_TOO_NEW: 4,
    ErrorCode.INVALID_PROJECT: 2,
    ErrorCode.HYBRID_NOT_SUPPORTED: 2,
}

# What each code means and what the caller does next: the documentation's error table.
MEANING: Final[dict[ErrorCode, tuple[str, str]]] = {
    ErrorCode.INVALID_REF: (
        "an input that cannot be used: a ref in no accepted form, a wrong type, an unknown field",
        "correct the input the message names; refs are DOIs or arXiv ids",
    ),
    ErrorCode.NOT_FOUND: (
        "the upstream or the library has no such work, entry or collection",
        "check the identifier; for a stored entry, fetch or add it first",
    ),
    ErrorCode.NO_OA_AVAILABLE: (
        "the metadata was stored, but no Open Access PDF was found or every candidate was refused",
        "set DOIGET_EMAIL if unset (Unpaywall), or add a PDF you hold with doiget add",
    ),
    ErrorCode.RATE_LIMITED: (
        "an upstream or doiget's own rate budget said wait",
        "retry after the seconds the message gives",
    ),
    ErrorCode.NETWORK_ERROR: (
        "an upstream failed, answered in a shape doiget does not expect, or was unreachable",
        "retry later; the denial context names the upstream and what went wrong",
    ),
    ErrorCode.FETCH_TIMEOUT: (
        "a request or a whole operation ran out of its time budget",
        "retry later, or raise DOIGET_API_TIMEOUT / DOIGET_PDF_TIMEOUT",
    ),
    ErrorCode.CAPABILITY_DENIED: (
        "a guard refused: a host off the allowlist, a private address, a source not enabled, "
        "a file outside the allowed folders, a size cap",
        "read the denial context: it says what was refused and what would be accepted",
    ),
    ErrorCode.STORE_ERROR: (
        "the library on disk cannot be read or written (full disk, permissions, a damaged file)",
        "fix the file or directory the message names; doiget health shows where they are",
    ),
    ErrorCode.LOG_ERROR: (
        "the provenance log cannot be written or its chain does not verify",
        "fix the log file the message names; doiget audit-log checks the chain",
    ),
    ErrorCode.LOCK_TIMEOUT: (
        "another process held the entry's lock for more than 5 s",
        "retry once the other operation has finished",
    ),
    ErrorCode.SCHEMA_TOO_NEW: (
        "a stored file was written by a newer doiget",
        "upgrade doiget; the file is never rewritten by an older version",
    ),
    ErrorCode.INTERNAL_ERROR: (
        "a fault inside doiget, e.g. a worker process that died",
        "retry; if it repeats, report it with the message",
    ),
    ErrorCode.INVALID_CONFIG: (
        "a setting (environment, config.toml or a command-line flag) cannot be used",
        "correct the setting the message names; the settings reference lists each one",
    ),
    ErrorCode.INVALID_PROJECT: (
        "no library project of that name",
        "use one of the projects listed in details (list_projects)",
    ),
    ErrorCode.EMBEDDING_MISMATCH: (
        "the embedding model, its variant or the vector size differs from the collection's",
        "use the collection's model, or pass force_rebuild to start the collection over",
    ),
    ErrorCode.HYBRID_NOT_SUPPORTED: (
        "the project's index has no BM25 side",
        "use find_chunks, or add the project with doiget projects add --hybrid",
    ),
    ErrorCode.INDEX_UNAVAILABLE: (
        "the passage index cannot be opened or reached (Qdrant down, files missing)",
        "check QDRANT_URL or the data directory; retry",
    ),
    ErrorCode.TIMEOUT: (
        "a passage search ran out of its time; only that call's query was interrupted",
        "retry, or narrow the query with filters or a smaller top_k",
    ),
}


class DoigetError(Exception):
    """The single exception type of doiget: a code, a message for the agent, a denial."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        denial: DenialContext | None = None,
        *,
        retry_after: float | None = None,
        details: dict[str, Any] | None = None,
        field: str | None = None,
    ) -> None:
        # Upstream text may echo a credential: no error ever carries one.
        message = redact_known(message)
        super().__init__(message)
        self.code = code
        self.message = message
        self.denial = denial
        # Seconds the caller should wait before trying again, when known.
        self.retry_after = retry_after
        # Structured facts for the library envelope's ``details`` (e.g. the projects
        # that do exist), so an agent can recover without parsing the message.
        self.details = redact_value(details) if details else details
        # The input at fault, by its wire name (``filters.year``), when one is: the
        # command line says it as its own option instead.
        self.field = field

    def __reduce__(self) -> tuple[Any, ...]:
        # An error raised in a worker process reaches the caller's process pickled.
        return (
            _rebuilt,
            (self.code, self.message, self.denial, self.retry_after, self.details, self.field),
        )

    @property
    def exit_status(self) -> int:
        """The CLI exit status for this error."""
        return _EXIT_STATUS.get(self.code, 1)

    def to_dict(self, *, denial_always: bool = False) -> dict[str, Any]:
        """The ``error`` object of a papers envelope.

        Single-paper tools omit ``denial_context`` when there is none; batch rows
        always carry the key (``null`` when none): pass ``denial_always=True``.
        """
        out: dict[str, Any] = {"code": self.code.value, "message": self.message}
        if self.denial is not None:
            out["denial_context"] = self.denial.to_dict()
        elif denial_always:
            out["denial_context"] = None
        return out

    def __repr__(self) -> str:
        return f"DoigetError({self.code.value}, {self.message!r}, denial={self.denial!r})"


def denied(
    code: ErrorCode,
    message: str,
    reason: DenialReason,
    **fields: Any,
) -> DoigetError:
    """Build a :class:`DoigetError` carrying a :class:`DenialContext` in one call."""
    expected = fields.pop("expected", None)
    context = DenialContext(
        reason=reason,
        expected=tuple(expected) if expected is not None else None,
        **fields,
    )
    return DoigetError(code, message, context)


def _rebuilt(
    code: ErrorCode,
    message: str,
    denial: DenialContext | None,
    retry_after: float | None,
    details: dict[str, Any] | None,
    field: str | None,
) -> DoigetError:
    """A :class:`DoigetError` again, from what :meth:`DoigetError.__reduce__` kept."""
    return DoigetError(code, message, denial, retry_after=retry_after, details=details, field=field)
