"""The contracts of the Zotero tools (and ``doiget zotero …``): searching the library,
and writing a verified work, a note or tags back into it.

Replies list only the fields that have a value (as verification rows do).
"""

# Annotations are evaluated as the classes are made (see doiget.papers.contracts).
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field

from doiget.contract import Request
from doiget.integrity import Notice
from doiget.verify.contracts import MAX_REFERENCE_CHARS, Problem, VerifyModel

MAX_NOTE_CHARS = 50_000
MAX_TAGS = 50
MAX_TAG_CHARS = 255
SEARCH_LIMIT_MAX = 100

Action = Literal["work", "note", "tags"]

# Zotero's object keys: eight characters of its own alphabet.
KEY_ALPHABET = frozenset("23456789ABCDEFGHIJKLMNPQRSTUVWXYZ")


def zotero_key(value: str) -> str:
    """``value`` when it is a Zotero object key (it goes into request paths)."""
    if len(value) != 8 or not set(value) <= KEY_ALPHABET:
        raise ValueError(f"{value[:20]!r} is not a Zotero item key (8 characters like 'ABCD2345')")
    return value


# Checked by a validator, not a pattern: what tools/list sends stays short.
ItemKey = Annotated[str, Field(max_length=8), AfterValidator(zotero_key)]
Tag = Annotated[str, Field(max_length=MAX_TAG_CHARS)]


class ZoteroSearch(Request):
    """A search of the library, one item by key, or (neither) the collection tree."""

    q: Annotated[str | None, Field(max_length=500)] = None
    key: ItemKey | None = None
    tags: Annotated[list[Tag], Field(default_factory=list, max_length=MAX_TAGS)]
    collection: Annotated[str | None, Field(max_length=MAX_TAG_CHARS)] = None
    item_type: Annotated[str | None, Field(alias="itemType", max_length=40)] = None
    year: int | None = None
    limit: Annotated[int, Field(ge=1, le=SEARCH_LIMIT_MAX)] = 25
    start: Annotated[int, Field(ge=0)] = 0


class ZoteroAdd(Request):
    """One write: ``target`` is the work (a ref doiget accepts, or a reference as the
    verifier reads one) for ``work``, the item's key for ``note`` and ``tags``. A note is
    plain text; its lines that begin with ``>`` are a quoted passage (with its page)."""

    action: Action
    target: Annotated[str, Field(max_length=MAX_REFERENCE_CHARS)]
    collection: Annotated[str | None, Field(max_length=MAX_TAG_CHARS)] = None
    note: Annotated[str | None, Field(max_length=MAX_NOTE_CHARS)] = None
    tags: Annotated[list[Tag], Field(default_factory=list, max_length=MAX_TAGS)]
    take_correction: Annotated[bool, Field(alias="takeCorrection")] = False


class ZoteroModel(VerifyModel):
    """A part of a Zotero reply: rendered with only the fields that have a value, also
    when one is filled in after it is made (a None assigned stays absent)."""

    model_config = ConfigDict(validate_assignment=True)


class CollectionView(ZoteroModel):
    key: str
    name: str
    parent: str | None = None
    items: int | None = None


class AnnotationView(ZoteroModel):
    key: str
    type: str
    text: str | None = None
    comment: str | None = None
    color: str | None = None
    page_label: str | None = None
    tags: list[str] | None = None


class AttachmentView(ZoteroModel):
    key: str
    title: str | None = None
    content_type: str | None = None
    path: str | None = None
    missing: str | None = None
    annotations: list[AnnotationView] | None = None


class NoteView(ZoteroModel):
    key: str
    text: str


class ItemView(ZoteroModel):
    """One item: its fields, its CSL-JSON and, when shown alone, its children."""

    key: str
    version: int
    item_type: str
    title: str | None = None
    creators: list[str] | None = None
    date: str | None = None
    doi: str | None = None
    citation_key: str | None = None
    tags: list[str] | None = None
    collections: list[str] | None = None
    csl: dict[str, Any] | None = None
    # The doiget ref a sync stored the item as (absent before it is synced).
    entry: str | None = None
    notes: list[NoteView] | None = None
    attachments: list[AttachmentView] | None = None


class ZoteroReply(ZoteroModel):
    """A Zotero tool's reply: ``ok`` always shown, then the fields that have a value."""

    ok: bool = True

    def model_post_init(self, context: Any) -> None:
        self.__pydantic_fields_set__.add("ok")


class ZoteroFound(ZoteroReply):
    """Items found (or one item), or the collection tree."""

    library: str
    total: int | None = None
    items: list[ItemView] | None = None
    collections: list[CollectionView] | None = None


class Written(ZoteroReply):
    """What a write did: the item written to (``created`` false when the library held the
    work already), the collection, attachment and note made, the tags added; and what
    was not done, and why."""

    action: Action
    library: str
    key: str | None = None
    created: bool | None = None
    ref: str | None = None
    title: str | None = None
    collection: str | None = None
    collection_created: bool | None = None
    attachment: str | None = None
    note: str | None = None
    tags_added: list[str] | None = None
    problems: list[Problem] | None = None
    integrity: list[Notice] | None = None
    skipped: list[str] | None = None
