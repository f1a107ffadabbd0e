"""Reading a Zotero library: what the key may do, the library's version, searches,
items by key with their CSL-JSON, children, annotations, collections, the keys and
versions changed since a version, and what was deleted."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from doiget.zotero.models import (
    Annotation,
    AnnotationType,
    Collection,
    Deleted,
    ItemPage,
    KeyAccess,
    ZoteroItem,
)
from doiget.zotero.transport import (
    MAX_WRITE_OBJECTS,
    PAGE_LIMIT,
    ZoteroTransport,
    as_int,
    as_mapping,
    path_key,
    total_of,
    version_of,
)

_YEAR: Final = re.compile(r"(?<!\d)\d{4}(?!\d)")
ANNOTATION_TYPES: Final = frozenset({"highlight", "underline", "note", "image", "ink", "text"})

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


class ZoteroReads(ZoteroTransport):
    """The reading requests of one library."""

    async def key_access(self) -> KeyAccess:
        """What the key may do (Web API ``/keys/current``); the local app reads only."""
        if self.library.local:
            return KeyAccess(read=True, write=False, notes=True, files=True)
        fetched = await self._send("GET", f"{self._root}/keys/current", what="read its key")
        info = self._object(fetched)
        access = info.get("access")
        if not isinstance(access, dict):
            raise self._client.schema_drift("answered /keys/current without its access")
        if self.library.kind == "users":
            own = str(info.get("userID")) == self.library.id
            rights = as_mapping(access.get("user")) if own else {}
            notes, files = "notes", "files"
        else:
            groups = as_mapping(access.get("groups"))
            rights = as_mapping(groups.get(self.library.id) or groups.get("all"))
            # A group grants no notes or files rights of their own: reading the
            # library reads its notes, writing it writes its files.
            notes, files = "library", "write"
        return KeyAccess(
            read=bool(rights.get("library")),
            write=bool(rights.get("write")),
            notes=bool(rights.get(notes)),
            files=bool(rights.get(files)),
            user_id=_text_or_none(info.get("userID")),
            username=_text_or_none(info.get("username")),
        )

    async def library_version(self) -> int:
        """The library's current version (one cheap request)."""
        fetched = await self._get("/items/top", {"limit": "1", "format": "versions"})
        return version_of(fetched)

    async def search(self, query: ItemQuery, *, start: int = 0, limit: int = 25) -> ItemPage:
        """One page of items matching ``query`` (with their CSL-JSON). Zotero filters by
        no year of its own: the quick search is given the year when it has no other words
        (its default mode matches years), and the page keeps the items of that year."""
        path = f"/collections/{path_key(query.collection)}/items" if query.collection else "/items"
        if query.top:
            path += "/top"
        params: list[tuple[str, str]] = [("include", "data,csljson")]
        words = query.q or (str(query.year) if query.year is not None else None)
        if words:
            params += [("q", words), ("qmode", query.qmode)]
        params += [("tag", tag) for tag in query.tags]
        if query.item_type:
            params.append(("itemType", query.item_type))
        params += [("start", str(max(start, 0))), ("limit", str(max(1, min(limit, PAGE_LIMIT))))]
        fetched = await self._get(path, params)
        items = [self._item(raw) for raw in self._array(fetched)]
        if query.year is not None:
            items = [item for item in items if _year_of(item) == query.year]
        return ItemPage(tuple(items), total_of(fetched, len(items)), version_of(fetched))

    async def item_versions(self, *, since: int | None = None) -> tuple[dict[str, int], int]:
        """Every item key with its version (``format=versions``), changed since ``since``
        when given, and the library version that listing is of."""
        params = [("format", "versions")]
        if since:
            params.append(("since", str(since)))
        versions: dict[str, int] = {}
        library_version = 0
        async for fetched in self._pages("/items", params):
            library_version = max(library_version, version_of(fetched))
            page = self._object(fetched)
            for key, version in page.items():
                if not isinstance(version, int):
                    raise self._client.schema_drift("listed an item version that is not a number")
                versions[str(key)] = version
        return versions, library_version

    async def items_by_key(
        self, keys: Sequence[str], *, progress: PageProgress | None = None
    ) -> list[ZoteroItem]:
        """The items of ``keys`` (``itemKey=`` 50 at a time), with their CSL-JSON;
        ``progress`` hears (done, total) after each batch."""
        wanted = [path_key(key) for key in dict.fromkeys(keys)]
        found: list[ZoteroItem] = []
        for first in range(0, len(wanted), MAX_WRITE_OBJECTS):
            batch = wanted[first : first + MAX_WRITE_OBJECTS]
            params = [
                ("itemKey", ",".join(batch)),
                ("include", "data,csljson"),
                ("limit", str(MAX_WRITE_OBJECTS)),
            ]
            found += [self._item(raw) for raw in self._array(await self._get("/items", params))]
            if progress is not None:
                await _told(progress, min(first + len(batch), len(wanted)), len(wanted))
        return found

    async def item(self, key: str) -> ZoteroItem:
        """One item by key (NOT_FOUND when the library has none)."""
        fetched = await self._get(f"/items/{path_key(key)}", [("include", "data,csljson")])
        return self._item(self._object(fetched))

    async def children(self, key: str) -> list[ZoteroItem]:
        """An item's attachments and notes."""
        path = f"/items/{path_key(key)}/children"
        return [self._item(raw) async for raw in self._objects(path, [])]

    async def annotations(self, attachment_key: str) -> list[Annotation]:
        """The annotations on one PDF attachment."""
        path = f"/items/{path_key(attachment_key)}/children"
        found = []
        async for raw in self._objects(path, [("itemType", "annotation")]):
            annotation = _annotation(self._item(raw))
            if annotation is not None:
                found.append(annotation)
        return found

    async def collections(self) -> list[Collection]:
        """Every collection (the tree is in ``parent``)."""
        found = []
        async for raw in self._objects("/collections", []):
            data = raw.get("data")
            meta = as_mapping(raw.get("meta"))
            if not isinstance(data, dict) or not isinstance(raw.get("key"), str):
                raise self._client.schema_drift("listed a collection without its key and data")
            parent = data.get("parentCollection")
            items = meta.get("numItems")
            found.append(
                Collection(
                    key=raw["key"],
                    version=as_int(raw.get("version")),
                    name=str(data.get("name", "")),
                    parent=str(parent) if parent else None,
                    items=items if isinstance(items, int) else None,
                )
            )
        return found

    async def deleted(self, since: int) -> Deleted | None:
        """What was deleted since ``since``; None for the local app, which keeps no list
        (the caller compares keys instead)."""
        if self.library.local:
            return None
        fetched = await self._get("/deleted", [("since", str(since))])
        body = self._object(fetched)
        return Deleted(
            items=tuple(str(key) for key in body.get("items") or ()),
            collections=tuple(str(key) for key in body.get("collections") or ()),
            library_version=version_of(fetched),
        )


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _year_of(item: ZoteroItem) -> int | None:
    """The item's year: its CSL-JSON's issued date, else the four-digit number in the
    date as the researcher wrote it ("2017-06-12", "March 2017", "ca. 2017")."""
    issued = as_mapping((item.csl or {}).get("issued")).get("date-parts")
    first = issued[0] if isinstance(issued, list) and issued else None
    if isinstance(first, list) and first and isinstance(first[0], int):
        return first[0]
    found = _YEAR.search(str(item.data.get("date") or ""))
    return int(found.group()) if found else None


def _annotation(item: ZoteroItem) -> Annotation | None:
    data = item.data
    kind = str(data.get("annotationType", ""))
    if item.item_type != "annotation" or kind not in ANNOTATION_TYPES or not item.parent:
        return None
    tags = tuple(str(tag.get("tag")) for tag in data.get("tags") or () if isinstance(tag, dict))
    return Annotation(
        key=item.key,
        version=item.version,
        attachment=item.parent,
        type=cast(AnnotationType, kind),
        text=str(data.get("annotationText") or ""),
        comment=str(data.get("annotationComment") or ""),
        color=str(data.get("annotationColor") or ""),
        page_label=str(data.get("annotationPageLabel") or ""),
        tags=tags,
        date_modified=_text_or_none(data.get("dateModified")),
    )


async def _told(progress: PageProgress, done: int, total: int) -> None:
    said = progress(done, total)
    if said is not None:
        await said
