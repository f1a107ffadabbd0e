"""Writing to a Zotero library through the Web API: items and collections created in
batches of at most 50, each with a write token (a 412 then means the write already
reached Zotero), and an item patched with ``If-Unmodified-Since-Version`` (a 412 is
answered by reading it again, never by overwriting)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from doiget.errors import DoigetError, ErrorCode
from doiget.zotero.models import Collection, WriteResult, ZoteroItem
from doiget.zotero.reading import ZoteroReads
from doiget.zotero.transport import MAX_WRITE_OBJECTS, json_bytes, path_key, version_of

logger = logging.getLogger("doiget.zotero")

# Reads and re-asks of an item whose update keeps meeting a change made meanwhile.
UPDATE_TRIES: Final = 4


class ZoteroWrites(ZoteroReads):
    """The writing requests of one library (Web API with a write key)."""

    async def create_items(self, items: Sequence[Mapping[str, Any]]) -> WriteResult:
        """Create items (batches of at most 50, each with a write token)."""
        return await self._create("/items", items, "add items to")

    async def update_item(
        self, key: str, change: Callable[[ZoteroItem], Mapping[str, Any] | None]
    ) -> ZoteroItem:
        """Patch an item with what ``change`` computes from its current state, sent with
        its version; on a 412 the item is read again and ``change`` asked again (a few
        times), never overwritten. ``change`` returning None means nothing to send."""
        self._writable("change an item in")
        for _ in range(UPDATE_TRIES):
            current = await self.item(key)
            patch = change(current)
            if patch is None:
                return current
            fetched = await self._send(
                "PATCH",
                self._library_url(f"/items/{path_key(key)}"),
                headers={
                    "Content-Type": "application/json",
                    "If-Unmodified-Since-Version": str(current.version),
                },
                body=json_bytes(patch),
                what="change an item in",
                conflict_ok=True,
            )
            if fetched.status == 412:
                logger.info("zotero item %s changed meanwhile; reading it again", key)
                continue
            data = {**current.data, **patch, "version": version_of(fetched)}
            return ZoteroItem(key, version_of(fetched), data, current.csl, current.children)
        raise DoigetError(
            ErrorCode.NETWORK_ERROR,
            f"item {key} in {self.library.label} kept changing in Zotero while doiget wrote "
            f"to it ({UPDATE_TRIES} tries); nothing was overwritten. Try again once it is not "
            "being edited.",
            details={"status": 412, "retryable": True},
        )

    async def create_collection(self, name: str, parent: str | None = None) -> Collection:
        """A new collection."""
        data = {"name": name, "parentCollection": path_key(parent) if parent else False}
        result = await self._create("/collections", [data], "add a collection to")
        if 0 not in result.created:
            why = result.failed.get(0, "Zotero did not say why")
            raise self._write_refused(f"the collection {name!r} was not created: {why}")
        return Collection(result.created[0], result.library_version, name, parent, 0)

    async def _create(
        self, path: str, objects: Sequence[Mapping[str, Any]], what: str
    ) -> WriteResult:
        self._writable(what)
        created: dict[int, str] = {}
        unchanged: dict[int, str] = {}
        failed: dict[int, str] = {}
        version = 0
        for first in range(0, len(objects), MAX_WRITE_OBJECTS):
            batch = [dict(item) for item in objects[first : first + MAX_WRITE_OBJECTS]]
            fetched = await self._send(
                "POST",
                self._library_url(path),
                headers={
                    "Content-Type": "application/json",
                    "Zotero-Write-Token": uuid.uuid4().hex,
                },
                body=json_bytes(batch),
                what=what,
                conflict_ok=True,
            )
            if fetched.status == 412:
                # The token was used: this very write already reached Zotero (an answer
                # lost on the way back); writing it again would duplicate it.
                for index in range(len(batch)):
                    failed[first + index] = (
                        "Zotero already took this write (its write token was used); search "
                        "the library for it before writing it again"
                    )
                continue
            answer = self._object(fetched)
            version = max(version, version_of(fetched))
            for bucket, kept in (("success", created), ("unchanged", unchanged)):
                for index, key in _indexed(answer.get(bucket)):
                    kept[first + index] = str(key)
            for index, failure in _indexed(answer.get("failed")):
                message = failure.get("message") if isinstance(failure, dict) else failure
                failed[first + index] = str(message)
        return WriteResult(created, unchanged, failed, version)


def _indexed(bucket: Any) -> list[tuple[int, Any]]:
    if not isinstance(bucket, dict):
        return []
    return [(int(index), value) for index, value in bucket.items() if str(index).isdigit()]
