"""Reading the researcher's Zotero for an agent: a search (Zotero's quick search and
its filters), one item whole (its CSL-JSON, notes, attachments and their annotations),
or the collection tree. Read only: nothing here writes, to Zotero or to doiget.
"""

from __future__ import annotations

import asyncio
import html
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import anyio

from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.zotero.api import ItemQuery, ZoteroApi
from doiget.zotero.contracts import (
    AnnotationView,
    AttachmentView,
    CollectionView,
    ItemView,
    NoteView,
    ZoteroFound,
    ZoteroSearch,
)
from doiget.zotero.models import Annotation, Collection, ZoteroItem
from doiget.zotero.syncstate import synced_refs

# Better BibTeX keeps an item's citation key as a line of ``extra``.
_BBT_KEY: Final = re.compile(r"^\s*Citation Key:\s*(\S+)\s*$", re.IGNORECASE | re.MULTILINE)
_TAG: Final = re.compile(r"<[^>]*>")
_BLOCK_END: Final = re.compile(r"</(p|div|h\d|li|blockquote)>|<br\s*/?>", re.IGNORECASE)
NOTE_CHARS: Final = 4000
PDF: Final = "application/pdf"
# The desktop app answers an attachment's file with its path in the app's storage:
# nothing is downloaded into this folder.
_NO_DOWNLOAD: Final = Path(tempfile.gettempdir())


def citation_key(data: dict[str, Any]) -> str | None:
    """Zotero's own ``citationKey`` field, else Better BibTeX's line in ``extra``."""
    own = str(data.get("citationKey") or "").strip()
    if own:
        return own
    found = _BBT_KEY.search(str(data.get("extra") or ""))
    return found.group(1) if found else None


def item_tags(data: dict[str, Any]) -> list[str]:
    """The item's tags, as the researcher wrote them, in order, each once."""
    listed = data.get("tags") or []
    names = (str(tag.get("tag") or "") for tag in listed if isinstance(tag, dict))
    return list(dict.fromkeys(name for name in names if name))


def note_text(note_html: str) -> str:
    """A note's HTML as plain text (a block per line), cut to :data:`NOTE_CHARS`."""
    text = html.unescape(_TAG.sub("", _BLOCK_END.sub("\n", note_html)))
    lines = [line.strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line)[:NOTE_CHARS]


def _creator(creator: dict[str, Any]) -> str:
    if creator.get("name"):
        return str(creator["name"])
    return ", ".join(p for p in (creator.get("lastName"), creator.get("firstName")) if p)


def item_view(item: ZoteroItem, *, with_csl: bool = False) -> ItemView:
    """The fields of ``item`` an agent reads (its CSL-JSON too, with ``with_csl``)."""
    data = item.data
    return ItemView(
        key=item.key,
        version=item.version,
        item_type=item.item_type,
        title=item.title or None,
        creators=[_creator(c) for c in data.get("creators") or [] if isinstance(c, dict)] or None,
        date=str(data.get("date") or "") or None,
        doi=str(data.get("DOI") or "") or None,
        citation_key=citation_key(data),
        tags=item_tags(data) or None,
        collections=list(data.get("collections") or []) or None,
        csl=item.csl if with_csl else None,
    )


def _annotation(annotation: Annotation) -> AnnotationView:
    return AnnotationView(
        key=annotation.key,
        type=annotation.type,
        text=annotation.text or None,
        comment=annotation.comment or None,
        color=annotation.color or None,
        page_label=annotation.page_label or None,
        tags=list(annotation.tags) or None,
    )


def collection_view(collection: Collection) -> CollectionView:
    return CollectionView(
        key=collection.key,
        name=collection.name,
        parent=collection.parent,
        items=collection.items,
    )


def collection_key(collections: Sequence[Collection], name: str) -> str:
    """The key of the collection ``name`` names (its key, its name, or its name in any
    case); NOT_FOUND naming the collections there are."""
    exact = [c for c in collections if name in (c.key, c.name)]
    found = exact or [c for c in collections if c.name.casefold() == name.casefold()]
    if found:
        return found[0].key
    names = ", ".join(sorted(c.name for c in collections)[:20]) or "none"
    raise DoigetError(
        ErrorCode.NOT_FOUND,
        f"the library has no collection {quoted(name)}; its collections: {names}.",
        field="collection",
    )


class ZoteroBrowser:
    """Answers the searches of one library."""

    def __init__(self, api: ZoteroApi, data_dir: Path) -> None:
        self._api = api
        self._data_dir = data_dir

    async def _with_entries(self, views: list[ItemView]) -> list[ItemView]:
        """``views`` with the doiget entry each synced item became (``entry``)."""
        library = self._api.library
        refs = await anyio.to_thread.run_sync(
            synced_refs, self._data_dir, library.prefix, library.local
        )
        for view in views:
            view.entry = refs.get(view.key)
        return views

    async def search(self, request: ZoteroSearch) -> ZoteroFound:
        """One item by key, a search, or the collection tree (when nothing is asked)."""
        label = self._api.library.label
        if request.key is not None:
            items = await self._with_entries([await self.item(request.key)])
            return ZoteroFound(library=label, total=1, items=items)
        asked = (request.q, request.tags, request.collection, request.item_type, request.year)
        if not any(value for value in asked):
            tree = [collection_view(c) for c in await self._api.collections()]
            return ZoteroFound(library=label, total=len(tree), collections=tree)
        collection = None
        if request.collection:
            collection = collection_key(await self._api.collections(), request.collection)
        query = ItemQuery(
            q=request.q,
            tags=tuple(request.tags),
            collection=collection,
            item_type=request.item_type,
            year=request.year,
        )
        page = await self._api.search(query, start=request.start, limit=request.limit)
        items = await self._with_entries([item_view(i, with_csl=True) for i in page.items])
        return ZoteroFound(library=label, total=page.total, items=items)

    async def item(self, key: str) -> ItemView:
        """One item with its CSL-JSON, notes, attachments and their annotations."""
        item, children = await asyncio.gather(self._api.item(key), self._api.children(key))
        view = item_view(item, with_csl=True)
        notes = [
            NoteView(key=child.key, text=note_text(str(child.data.get("note") or "")))
            for child in children
            if child.item_type == "note"
        ]
        attachments = [
            await self._attachment(child) for child in children if child.item_type == "attachment"
        ]
        view.notes = notes or None
        view.attachments = attachments or None
        return view

    async def _attachment(self, child: ZoteroItem) -> AttachmentView:
        content_type = str(child.data.get("contentType") or "") or None
        view = AttachmentView(key=child.key, title=child.title or None, content_type=content_type)
        if content_type != PDF:
            return view
        annotations = await self._api.annotations(child.key)
        view.annotations = [_annotation(a) for a in annotations] or None
        if self._api.library.local:  # a path in the app's storage costs no download
            found = await self._api.attachment_file(child, into=_NO_DOWNLOAD)
            view.path, view.missing = found.path, found.missing
        return view
