"""Typed views of the objects Zotero's API returns (items, collections, annotations).

Zotero answers every object as ``{"key", "version", "library", "links", "meta", "data"}``
(``format=json``); ``data`` holds the fields the user edits. These views keep ``data``
whole (writes must send back what they read) and lift out what doiget reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

LibraryKind = Literal["users", "groups"]
AnnotationType = Literal["highlight", "underline", "note", "image", "ink", "text"]


@dataclass(frozen=True, slots=True)
class LibraryRef:
    """Which library: ``users/<id>`` or ``groups/<id>``; the local app is ``users/0``."""

    kind: LibraryKind
    id: str
    local: bool = False

    @property
    def prefix(self) -> str:
        """The path under the API root: ``users/123`` or ``groups/456``."""
        return f"{self.kind}/{self.id}"

    @property
    def label(self) -> str:
        """How doiget names the library to a person (never carries a key)."""
        return "the Zotero desktop app's library" if self.local else self.prefix


@dataclass(frozen=True, slots=True)
class ZoteroItem:
    """One item (a work, an attachment, a note or an annotation) as Zotero stores it."""

    key: str
    version: int
    data: dict[str, Any]
    # CSL-JSON of a regular item when it was asked for (``include=data,csljson``).
    csl: dict[str, Any] | None = None
    # ``meta.numChildren`` when Zotero sent it.
    children: int | None = None

    @property
    def item_type(self) -> str:
        return str(self.data.get("itemType", ""))

    @property
    def parent(self) -> str | None:
        value = self.data.get("parentItem")
        return str(value) if value else None

    @property
    def title(self) -> str:
        return str(self.data.get("title", ""))

    @property
    def is_regular(self) -> bool:
        """A work (not an attachment, a note or an annotation)."""
        return self.item_type not in ("attachment", "note", "annotation")


@dataclass(frozen=True, slots=True)
class Collection:
    key: str
    version: int
    name: str
    parent: str | None
    items: int | None = None


@dataclass(frozen=True, slots=True)
class Annotation:
    """A highlight, underline, note, image or ink annotation on a PDF attachment."""

    key: str
    version: int
    attachment: str
    type: AnnotationType
    text: str
    comment: str
    color: str
    page_label: str
    tags: tuple[str, ...] = ()
    date_modified: str | None = None


@dataclass(frozen=True, slots=True)
class ItemPage:
    """One page of a listing and the library's version when it was read."""

    items: tuple[ZoteroItem, ...]
    total: int
    library_version: int


@dataclass(frozen=True, slots=True)
class Deleted:
    """What was deleted since a version (``/deleted?since=``)."""

    items: tuple[str, ...] = ()
    collections: tuple[str, ...] = ()
    library_version: int = 0


@dataclass(frozen=True, slots=True)
class KeyAccess:
    """What the configured key may do in the configured library (``/keys/current``)."""

    read: bool
    write: bool
    notes: bool
    files: bool
    user_id: str | None = None
    username: str | None = None


@dataclass(frozen=True, slots=True)
class AttachmentFile:
    """An attachment's file as doiget can read it: a local path (desktop app) or a temp
    file downloaded through the Web API; ``missing`` says why neither exists."""

    key: str
    content_type: str
    filename: str
    path: str | None = None
    missing: str | None = None


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The answer to a multi-object write (``successful`` / ``unchanged`` / ``failed``)."""

    created: dict[int, str] = field(default_factory=dict)  # position -> new key
    unchanged: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)  # position -> Zotero's message
    library_version: int = 0
