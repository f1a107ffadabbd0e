"""Cache keys for web tool calls, derived from the tool's input contract.

A key covers every property the tool's JSON ``inputSchema`` declares, so a
parameter added to a tool becomes part of its key without anyone remembering to
add it here. Properties that do not shape the answer (:data:`NOT_RESULT_AFFECTING`)
are left out, and absent properties take their schema default, so a call that
spells a default out and one that leaves it off share an entry.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pydantic import BaseModel

# Part of every key: bump it when the shape of cached answers changes, so entries
# written by an older doiget are never read as current ones.
CACHE_VERSION: Final = "v1"

# Properties a tool may take that never change its answer.
NOT_RESULT_AFFECTING: Final = frozenset({"sessionId"})

# How long each tool's answers are reused, in seconds.
TTL_SECONDS: dict[str, int] = {
    "web_search": 1800,
    "scrape_page": 3600,
    "academic_search": 3600,
    "patent_search": 86400,
}


def _normalise(value: Any) -> Any:
    """``value`` with equal JSON values made identical.

    A whole float becomes an int (a client may send ``5.0`` for ``5``); mappings and
    sequences are normalised item by item. Strings are kept exactly as given: case
    and spacing can change what a search or a page returns.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {str(key): _normalise(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(item) for item in value]
    raise ValueError(f"argument value of type {type(value).__name__} is not JSON")


def cache_key(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """``"<tool>:<CACHE_VERSION>:<sha256 hex>"`` of the result-affecting arguments.

    Every property of ``schema["properties"]`` except :data:`NOT_RESULT_AFFECTING`
    is hashed: the given value, else the property's ``default``, else null (so an
    explicit null and an absent optional argument are one key). An argument the
    schema does not declare raises ValueError rather than being silently left out
    of the key; :data:`NOT_RESULT_AFFECTING` names are accepted even when
    undeclared, since they are ignored anyway.
    """
    properties: Mapping[str, Any] = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(properties) - NOT_RESULT_AFFECTING)
    if unknown:
        raise ValueError(f"{tool} does not take argument(s): {', '.join(unknown)}")
    chosen: dict[str, Any] = {}
    for name, spec in properties.items():
        if name in NOT_RESULT_AFFECTING:
            continue
        if name in arguments:
            value = arguments[name]
        elif isinstance(spec, Mapping):
            value = spec.get("default")
        else:
            value = None
        chosen[name] = _normalise(value)
    canonical = json.dumps(
        chosen, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    # surrogatepass: JSON may carry a lone surrogate ("\ud800"), which strict UTF-8 refuses.
    digest = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{tool}:{CACHE_VERSION}:{digest}"


def request_key(tool: str, request: BaseModel) -> str:
    """The cache key of a typed request: every field (defaults filled) but ``sessionId``.

    The same key :func:`cache_key` gives for the equivalent JSON arguments.
    """
    arguments = request.model_dump(mode="json", by_alias=True)
    return cache_key(tool, arguments, {"properties": dict.fromkeys(arguments)})


def context_key(context: Mapping[str, Any] | None) -> str:
    """The key suffix for what else decides an answer (providers asked, a lens's domains)."""
    if not context:
        return ""
    digest = hashlib.sha256(json.dumps(context, sort_keys=True).encode()).hexdigest()
    return f":{digest[:16]}"
