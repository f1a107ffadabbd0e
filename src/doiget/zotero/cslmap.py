"""A work's CSL-JSON as a new Zotero item, field by field as Zotero itself maps them.

Zotero refuses a field its item type does not have (``'publicationTitle' is not a valid
field for type 'book'``), so each CSL field goes to the name that type gives it (the
container is a journal's ``publicationTitle``, a proceedings' ``proceedingsTitle``, a
chapter's ``bookTitle``), and a DOI a type has no field for goes into ``extra`` as
``DOI: …``, the line Zotero reads it back from. The arXiv id goes into ``extra`` as
``arXiv: …`` (and a preprint's ``archiveID``), as Zotero's arXiv translator writes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# CSL types and the Zotero item type each becomes (Zotero's own CSL mappings).
ITEM_TYPES: Final = {
    "article-journal": "journalArticle",
    "paper-conference": "conferencePaper",
    "chapter": "bookSection",
    "book": "book",
    "article": "preprint",
    "report": "report",
    "thesis": "thesis",
    "dataset": "dataset",
    "webpage": "webpage",
    "article-magazine": "magazineArticle",
    "article-newspaper": "newspaperArticle",
    "manuscript": "manuscript",
}
FALLBACK_TYPE: Final = "document"

# The fields every item type above has.
_COMMON: Final = ("title", "abstractNote", "date", "url", "extra")
# Each type's fields beyond those, as far as a CSL record can fill them.
_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "journalArticle": ("publicationTitle", "volume", "issue", "pages", "DOI", "ISSN"),
    "conferencePaper": (
        "proceedingsTitle", "conferenceName", "publisher", "volume", "pages", "DOI", "ISBN",
    ),
    "bookSection": ("bookTitle", "publisher", "volume", "pages", "ISBN"),
    "book": ("publisher", "volume", "ISBN"),
    "preprint": ("repository", "archiveID", "DOI"),
    "report": ("institution", "pages"),
    "thesis": ("university",),
    "dataset": ("repository", "DOI"),
    "webpage": ("websiteTitle",),
    "magazineArticle": ("publicationTitle", "volume", "issue", "pages", "ISSN"),
    "newspaperArticle": ("publicationTitle", "pages", "ISSN"),
    "manuscript": (),
    "document": ("publisher",),
}  # fmt: skip
# Where each type keeps the CSL container title and the CSL publisher.
_CONTAINER: Final = {
    "journalArticle": "publicationTitle",
    "magazineArticle": "publicationTitle",
    "newspaperArticle": "publicationTitle",
    "conferencePaper": "proceedingsTitle",
    "bookSection": "bookTitle",
    "webpage": "websiteTitle",
}
_PUBLISHER: Final = {
    "report": "institution",
    "thesis": "university",
    "preprint": "repository",
    "dataset": "repository",
}
# CSL variables copied under the same Zotero field wherever the type has it.
_PLAIN: Final = {
    "title": "title",
    "abstract": "abstractNote",
    "volume": "volume",
    "issue": "issue",
    "page": "pages",
    "DOI": "DOI",
    "URL": "url",
    "ISSN": "ISSN",
    "ISBN": "ISBN",
    "event-title": "conferenceName",
}
# CSL name variables and the creator type each becomes.
_CREATORS: Final = {"author": "author", "editor": "editor", "translator": "translator"}
# Types whose creators Zotero knows only as authors, contributors and translators.
_NO_EDITORS: Final = frozenset({"webpage", "dataset", "thesis", "manuscript", "report"})


def item_type(csl: Mapping[str, Any]) -> str:
    """The Zotero item type of a CSL record."""
    return ITEM_TYPES.get(str(csl.get("type", "")), FALLBACK_TYPE)


def _text(value: Any) -> str | None:
    if isinstance(value, list):  # some records give ISSN or ISBN as a list
        value = value[0] if value else None
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _date(issued: Any) -> str | None:
    """A CSL date as Zotero writes one: ``2021``, ``2021-05`` or ``2021-05-03``."""
    if not isinstance(issued, Mapping):
        return None
    parts = issued.get("date-parts")
    if isinstance(parts, list) and parts and isinstance(parts[0], list) and parts[0]:
        numbers = [int(part) for part in parts[0][:3] if str(part).lstrip("-").isdigit()]
        if numbers:
            head, *rest = numbers
            return "-".join([str(head), *(f"{part:02d}" for part in rest)])
    return _text(issued.get("raw") or issued.get("literal"))


def _creator(name: Mapping[str, Any], kind: str) -> dict[str, str] | None:
    family, given = _text(name.get("family")), _text(name.get("given"))
    if family:
        return {"creatorType": kind, "lastName": family, "firstName": given or ""}
    literal = _text(name.get("literal"))
    return {"creatorType": kind, "name": literal} if literal else None


def creators(csl: Mapping[str, Any], zotero_type: str) -> list[dict[str, str]]:
    """The record's authors, editors and translators as Zotero creators, in order."""
    found = []
    for variable, kind in _CREATORS.items():
        if kind == "editor" and zotero_type in _NO_EDITORS:
            kind = "contributor"
        for name in csl.get(variable) or ():
            creator = _creator(name, kind) if isinstance(name, Mapping) else None
            if creator is not None:
                found.append(creator)
    return found


def to_zotero_item(csl: Mapping[str, Any], *, arxiv_id: str | None = None) -> dict[str, Any]:
    """A new Zotero item (``data`` of a create request) holding what ``csl`` records."""
    kind = item_type(csl)
    allowed = set(_COMMON) | set(_FIELDS[kind])
    values: dict[str, str] = {}
    for variable, name in _PLAIN.items():
        value = _text(csl.get(variable))
        if value is not None:
            values[name] = value
    container = _text(csl.get("container-title"))
    if container and kind in _CONTAINER:
        values[_CONTAINER[kind]] = container
    publisher = _text(csl.get("publisher"))
    if publisher:
        values[_PUBLISHER.get(kind, "publisher")] = publisher
    date = _date(csl.get("issued"))
    if date:
        values["date"] = date
    extra = []
    if arxiv_id:
        extra.append(f"arXiv: {arxiv_id}")
        if kind == "preprint":
            values["archiveID"] = f"arXiv:{arxiv_id}"
            values.setdefault("repository", "arXiv")
    if "DOI" in values and "DOI" not in allowed:
        extra.append(f"DOI: {values['DOI']}")
    if extra:
        values["extra"] = "\n".join(extra)
    item: dict[str, Any] = {"itemType": kind, "creators": creators(csl, kind)}
    item.update({name: value for name, value in values.items() if name in allowed})
    item.update(tags=[], collections=[], relations={})
    return item
