"""How each toolset's results and errors look, over MCP and from the command line.

An envelope turns a handler's return value, or the :class:`DoigetError` it raised,
into the structured content, the text and the isError flag of one MCP tool result;
the command line's ``--json`` prints the same text, so both faces say the same.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from doiget.contract import plain
from doiget.errors import DenialReason, DoigetError, ErrorCode, shorten

if TYPE_CHECKING:
    from doiget.web.outcome import ResourceLink


@dataclass(frozen=True, slots=True)
class Rendered:
    """One tool result: structuredContent, the text content and isError.

    ``meta`` becomes the result's ``_meta``; ``link`` adds a resource_link content item.
    """

    structured: dict[str, Any]
    text: str
    is_error: bool
    meta: dict[str, Any] | None = None
    link: ResourceLink | None = None


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class Envelope(Protocol):
    """Renders a toolset's results and failures."""

    def success(self, value: Any) -> Rendered:
        """A handler's return value as a tool result."""

    def failure(self, error: DoigetError, ref: str | None = None) -> Rendered:
        """A failure of the call as a tool result."""

    def line(self, error: DoigetError) -> str:
        """A failure as one line for a person: the toolset's own code (or kind), then
        the message."""


class PapersEnvelope:
    """``{ok: true, ...}`` or ``{ok: false, ref?, error: {code, message, denial_context?}}``."""

    def success(self, value: Any) -> Rendered:
        value = plain(value)
        return Rendered(value, _json(value), value.get("ok") is False)

    def failure(self, error: DoigetError, ref: str | None = None) -> Rendered:
        result: dict[str, Any] = {"ok": False}
        if ref is not None:
            result["ref"] = shorten(ref)  # the ref as given, at most a line of it
        result["error"] = error.to_dict()
        return Rendered(result, _json(result), True)

    def line(self, error: DoigetError) -> str:
        return f"{error.code.value}: {error.message}"


class ScholarEnvelope:
    """The JSON (or BibTeX text) itself; errors ``{"error": "..."}``.

    Arrays and strings are wrapped as ``{"result": ...}`` in structuredContent, while
    the text keeps the spec's form: the JSON array, or the BibTeX as plain text.
    """

    def success(self, value: Any) -> Rendered:
        value = plain(value)
        if isinstance(value, str):
            return Rendered({"result": value}, value, False)
        if isinstance(value, list):
            return Rendered({"result": value}, _json(value), False)
        return Rendered(value, _json(value), False)

    def failure(self, error: DoigetError, ref: str | None = None) -> Rendered:
        body = {"error": scholar_error_text(error)}
        return Rendered(body, _json(body), True)

    def line(self, error: DoigetError) -> str:
        text = scholar_error_text(error)
        return text if text.endswith(error.message) else f"{text}: {error.message}"


def scholar_error_text(error: DoigetError) -> str:
    """The spec's error string for ``error``: its class first, then what to do."""
    if (error.details or {}).get("kind"):  # a research session's error: say what it is
        return f"Invalid parameter: {error.message}"
    if error.code is ErrorCode.NOT_FOUND:
        return "Paper not found"
    if error.code is ErrorCode.INVALID_REF:
        return f"Invalid parameter: {error.message}"
    if error.denial is not None and error.denial.reason is DenialReason.SCHEMA_DRIFT:
        return f"Failed to parse response: {error.message}"
    return f"API error: {error.message}"


class LibraryEnvelope:
    """The result object; errors ``{error: {code, message, details}}``.

    Bad input is ``INVALID_ARGUMENT`` here (this toolset takes no refs); every other
    code is the spec's taxonomy or doiget's own.
    """

    def success(self, value: Any) -> Rendered:
        value = plain(value)
        return Rendered(value, _json(value), False)

    def failure(self, error: DoigetError, ref: str | None = None) -> Rendered:
        body = {
            "error": {
                "code": self.code(error),
                "message": error.message,
                "details": error.details or {},
            }
        }
        return Rendered(body, _json(body), True)

    @staticmethod
    def code(error: DoigetError) -> str:
        """The library code of ``error``: bad input is INVALID_ARGUMENT here."""
        return "INVALID_ARGUMENT" if error.code is ErrorCode.INVALID_REF else error.code.value

    def line(self, error: DoigetError) -> str:
        return f"{self.code(error)}: {error.message}"


class WebEnvelope:
    """The result object (or a linked summary); errors
    ``{error: {kind, message, retryable, suggestedAction, provider?}}``."""

    def success(self, value: Any) -> Rendered:
        from doiget.web.outcome import Outcome

        if isinstance(value, Outcome):
            return Rendered(value.body, _json(value.body), False, value.meta, value.link)
        return Rendered(value, _json(value), False)

    def failure(self, error: DoigetError, ref: str | None = None) -> Rendered:
        from doiget.web.failure import failure_of

        body = {"error": failure_of(error).to_dict()}
        return Rendered(body, _json(body), True)

    def line(self, error: DoigetError) -> str:
        from doiget.web.failure import failure_of

        failure = failure_of(error)
        return f"{failure.kind.value}: {failure.message} {failure.suggested_action}"


PAPERS_ENVELOPE = PapersEnvelope()
SCHOLAR_ENVELOPE = ScholarEnvelope()
LIBRARY_ENVELOPE = LibraryEnvelope()
WEB_ENVELOPE = WebEnvelope()
