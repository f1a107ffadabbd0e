"""The Zotero protocol, spoken through doiget's network layer.

One class, :class:`ZoteroApi`, for both ways in: the desktop app's local API
(``http://127.0.0.1:23119/api/users/0/…``, read-only, plus the connector endpoints
``/connector/…`` that save new items into the open library) and the Web API
(``https://api.zotero.org/{users|groups}/<id>/…`` with ``Zotero-API-Key``). Rules
kept here: ``Zotero-API-Version: 3`` on every request; paging by ``start``/``limit``
with ``Total-Results``; ``Last-Modified-Version`` read on every answer; ``Backoff`` and
``Retry-After`` passed to the rate gate; writes of at most 50 objects with a
``Zotero-Write-Token``; an update sent with ``If-Unmodified-Since-Version`` and a 412
answered by re-reading, never by overwriting.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from doiget.zotero.models import (
    AttachmentFile,
    Collection,
    Annotation,
    Deleted,
    ItemPage,
    KeyAccess,
    LibraryRef,
    WriteResult,
    ZoteroItem,
)

MAX_WRITE_OBJECTS: Final = 50
PAGE_LIMIT: Final = 100

# (done, total) while a listing pages through the library.
PageProgress = Callable[[int, int], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class ItemQuery:
    """A search of the library: Zotero's quick search and its filters."""

    q: str | None = None
    # "titleCreatorYear" (Zotero's default) or "everything" (all fields and full text).
    qmode: str = "titleCreatorYear"
    tags: tuple[str, ...] = ()
    collection: str | None = None  # a collection key
    item_type: str | None = None  # e.g. "journalArticle", "-attachment"
    year: int | None = None
    top: bool = True  # top-level items only (no attachments, notes, annotations)


class ZoteroApi:
    """Reads and writes one Zotero library; build it with :func:`open_api`."""

    library: LibraryRef

    # -- reading -------------------------------------------------------------
    async def key_access(self) -> KeyAccess:
        """What the key may do (Web API ``/keys/current``); the local app reads only."""
        raise NotImplementedError

    async def library_version(self) -> int:
        """The library's current version (one cheap request)."""
        raise NotImplementedError

    async def search(self, query: ItemQuery, *, start: int = 0, limit: int = 25) -> ItemPage:
        """One page of items matching ``query`` (with their CSL-JSON)."""
        raise NotImplementedError

    async def item_versions(self, *, since: int | None = None) -> tuple[dict[str, int], int]:
        """Every item key with its version (``format=versions``), changed since ``since``
        when given, and the library version that listing is of."""
        raise NotImplementedError

    async def items_by_key(self, keys: Sequence[str]) -> list[ZoteroItem]:
        """The items of ``keys`` (``itemKey=`` 50 at a time), with their CSL-JSON."""
        raise NotImplementedError

    async def item(self, key: str) -> ZoteroItem:
        """One item by key (DoigetError NOT_FOUND-like when the library has none)."""
        raise NotImplementedError

    async def children(self, key: str) -> list[ZoteroItem]:
        """An item's attachments and notes."""
        raise NotImplementedError

    async def annotations(self, attachment_key: str) -> list[Annotation]:
        """The annotations on one PDF attachment."""
        raise NotImplementedError

    async def collections(self) -> list[Collection]:
        """Every collection (the tree is in ``parent``)."""
        raise NotImplementedError

    async def deleted(self, since: int) -> Deleted | None:
        """What was deleted since ``since``; None for the local app, which keeps no list
        (the caller compares keys instead)."""
        raise NotImplementedError

    async def attachment_file(self, attachment: ZoteroItem, into: Path) -> AttachmentFile:
        """The attachment's file: its path in the local app's storage, or downloaded
        through the Web API into a temp file under ``into``."""
        raise NotImplementedError

    # -- writing (Web API with a write key; the local app through its connector) ---
    async def create_items(self, items: Sequence[Mapping[str, Any]]) -> WriteResult:
        """Create items (batches of at most 50, each with a write token)."""
        raise NotImplementedError

    async def update_item(
        self, key: str, change: Callable[[ZoteroItem], Mapping[str, Any] | None]
    ) -> ZoteroItem:
        """Patch an item with what ``change`` computes from its current state, sent with
        its version; on a 412 the item is read again and ``change`` asked again (a few
        times), never overwritten. ``change`` returning None means nothing to send."""
        raise NotImplementedError

    async def create_collection(self, name: str, parent: str | None = None) -> Collection:
        """A new collection."""
        raise NotImplementedError

    async def upload_attachment(
        self, parent: str, pdf: Path, *, filename: str, title: str
    ) -> str:
        """A stored PDF as an imported-file attachment of ``parent`` (the Web API's
        upload authorisation, upload and registration); returns the attachment key."""
        raise NotImplementedError

    async def connector_save(
        self, item: Mapping[str, Any], *, collection: str | None, pdf_url: str | None
    ) -> None:
        """Save a new item into the open desktop library (``/connector/saveItems``,
        then ``/connector/updateSession`` to file it into ``collection``)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Nothing of its own: the network owns the connections."""


def open_api(settings: Any, network: Any) -> ZoteroApi | None:
    """The configured library's API (None when Zotero is not configured)."""
    raise NotImplementedError
