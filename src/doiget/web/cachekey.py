"""Cache keys for web tool calls, derived from the tool's typed request.

A key covers every field of the request model, defaults filled in, so a field
added to a tool's contract becomes part of its key without anyone remembering to
add it here, and a call that spells a default out and one that leaves it off
share an entry. Fields that do not shape the answer (:data:`NOT_RESULT_AFFECTING`)
are left out.
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


def request_key(tool: str, request: BaseModel) -> str:
    """``"<tool>:<CACHE_VERSION>:<sha256 hex>"`` of every field of ``request`` (by its
    wire name, defaults filled, an absent optional field as null) but those in
    :data:`NOT_RESULT_AFFECTING`. Strings are kept exactly as given: case and spacing
    can change what a search or a page returns."""
    arguments = request.model_dump(mode="json", by_alias=True)
    chosen = {name: value for name, value in arguments.items() if name not in NOT_RESULT_AFFECTING}
    canonical = json.dumps(
        chosen, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    # surrogatepass: JSON may carry a lone surrogate ("\ud800"), which strict UTF-8 refuses.
    digest = hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{tool}:{CACHE_VERSION}:{digest}"


def context_key(context: Mapping[str, Any] | None) -> str:
    """The key suffix for what else decides an answer (providers asked, a lens's domains)."""
    if not context:
        return ""
    digest = hashlib.sha256(json.dumps(context, sort_keys=True).encode()).hexdigest()
    return f":{digest[:16]}"
