"""Tool arguments checked against the tool's inputSchema before any work.

A violation is an ``INVALID_REF`` error (the spec's class for bad tool input), with
a message naming the field and what it must be, never a JSON-RPC protocol error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from doiget.errors import DoigetError, ErrorCode

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

_validators: dict[str, Validator] = {}
MESSAGE_MAX = 200


def _validator(tool: str, schema: Mapping[str, Any]) -> Validator:
    if tool not in _validators:
        from jsonschema import Draft202012Validator  # loaded on the first call, not at start

        _validators[tool] = Draft202012Validator(dict(schema))
    return _validators[tool]


def validate_arguments(tool: str, schema: Mapping[str, Any], arguments: Any) -> dict[str, Any]:
    """``arguments`` as a dict when valid for ``schema``; INVALID_REF naming the problem."""
    if arguments is None:
        arguments = {}
    errors = sorted(_validator(tool, schema).iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return dict(arguments)
    first = errors[0]
    where = ".".join(str(part) for part in first.path) or "arguments"
    message = first.message
    if len(message) > MESSAGE_MAX:
        message = message[:MESSAGE_MAX] + "…"
    allowed = ", ".join(sorted(schema.get("properties", {}))) or "none"
    raise DoigetError(
        ErrorCode.INVALID_REF,
        f"{tool}: invalid input at {where}: {message}. Accepted fields: {allowed}.",
    )
