"""Large tool results handed out as resources instead of inline text.

A body of :data:`LINK_THRESHOLD_BYTES` or more is stored in the web cache for
:data:`ARTIFACT_TTL_SECONDS` and the tool answers with a :class:`Linked` reference
(``research://artifact/<sha256 of the body>``) that the agent reads when it needs
the whole text. Ids are content hashes, so the same body links to the same
resource, and a read checks the hash so it never returns a different body.

An artifact belongs to the owner of the call that made it (:mod:`doiget.owner`): the
owner is part of its cache key, so another owner reading the uri finds nothing,
exactly as for an id that never existed. Each owner keeps at most
:data:`MAX_PER_OWNER` live links in this process; one more drops that owner's
oldest (its body is overwritten), never another owner's.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from typing import Any, Final

from doiget.owner import LOCAL, current_owner
from doiget.web.cache import Cache
from doiget.web.outcome import rfc3339
from doiget.web.storage import Clock

LINK_THRESHOLD_BYTES: Final = 24 * 1024
ARTIFACT_TTL_SECONDS: Final = 1800
URI_PREFIX: Final = "research://artifact/"
URI_TEMPLATE: Final = URI_PREFIX + "{id}"
MAX_PER_OWNER: Final = 64
# What a dropped link's body becomes (it reads as missing), and for how long.
_DROPPED: Final = b""
_DROPPED_TTL: Final = 1.0

_ID = re.compile(r"[0-9a-f]{64}")
# Stored value: the mime type, this separator, then the body's UTF-8 bytes.
_SEPARATOR: Final = b"\n"


@dataclass(frozen=True)
class Linked:
    """What a tool returns in place of a large body."""

    uri: str
    bytes: int
    mime_type: str
    expires_at: str  # ISO 8601 UTC, whole seconds, "Z"
    summary: str

    def to_dict(self) -> dict[str, Any]:
        """The wire form: ``{resource, bytes, mimeType, summary, expiresAt, linked}``."""
        return {
            "resource": self.uri,
            "bytes": self.bytes,
            "mimeType": self.mime_type,
            "summary": self.summary,
            "expiresAt": self.expires_at,
            "linked": True,
        }


def _utf8(body: str) -> bytes:
    # A page decoded with surrogateescape may hold lone surrogates; they become
    # U+FFFD rather than failing the tool call.
    return body.encode("utf-8", "replace")


def _cache_key(owner: str, artifact_id: str) -> str:
    return f"artifact:{artifact_id}" if owner == LOCAL else f"artifact:{owner}:{artifact_id}"


class Artifacts:
    """Stores large bodies in ``cache`` and reads them back by uri."""

    def __init__(self, cache: Cache, clock: Clock = time.time) -> None:
        self._cache = cache
        self._clock = clock
        # Each owner's live links, oldest first, with when they expire.
        self._links: defaultdict[str, OrderedDict[str, float]] = defaultdict(OrderedDict)

    async def link_if_large(self, body: str, mime_type: str, summary: str) -> Linked | None:
        """A :class:`Linked` to the stored ``body``, or None when it is small enough inline."""
        if _SEPARATOR.decode() in mime_type:
            raise ValueError("a mime type cannot contain a line break")
        data = _utf8(body)
        if len(data) < LINK_THRESHOLD_BYTES:
            return None
        artifact_id = hashlib.sha256(data).hexdigest()
        owner = current_owner()
        await self._cache.set(
            _cache_key(owner, artifact_id),
            mime_type.encode() + _SEPARATOR + data,
            ARTIFACT_TTL_SECONDS,
        )
        await self._keep_within_cap(owner, artifact_id)
        return Linked(
            uri=URI_TEMPLATE.format(id=artifact_id),
            bytes=len(data),
            mime_type=mime_type,
            expires_at=rfc3339(self._clock() + ARTIFACT_TTL_SECONDS),
            summary=summary,
        )

    async def _keep_within_cap(self, owner: str, artifact_id: str) -> None:
        """Count a new link of ``owner``'s; drop that owner's oldest beyond the cap."""
        now = self._clock()
        links = self._links[owner]
        links.pop(artifact_id, None)
        links[artifact_id] = now + ARTIFACT_TTL_SECONDS
        for old, expires in list(links.items()):
            if expires <= now:
                del links[old]
        while len(links) > MAX_PER_OWNER:
            old, _ = links.popitem(last=False)
            await self._cache.set(_cache_key(owner, old), _DROPPED, _DROPPED_TTL)

    async def read(self, uri: str) -> tuple[str, str] | None:
        """``(body, mime type)`` of ``uri``; None if malformed, unknown or expired."""
        if not uri.startswith(URI_PREFIX):
            return None
        artifact_id = uri.removeprefix(URI_PREFIX)
        if not _ID.fullmatch(artifact_id):
            return None
        entry = await self._cache.get(_cache_key(current_owner(), artifact_id))
        if entry is None:
            return None
        mime, separator, data = entry.value.partition(_SEPARATOR)
        if not separator or hashlib.sha256(data).hexdigest() != artifact_id:
            return None
        try:
            return data.decode("utf-8"), mime.decode("utf-8")
        except UnicodeDecodeError:
            return None
