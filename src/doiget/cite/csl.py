"""CSL-JSON export: the item format citation processors (citeproc, Zotero, pandoc) read.

:data:`SCHEMA_PATH` is the JSON Schema the output is validated against in the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from doiget.cite import ACCESSED_KEY
from doiget.cite.caveats import joined_notes, unidentified_note
from doiget.cite.citekey import unique_citekeys
from doiget.integrity import describe
from doiget.models import Author, Work

SCHEMA_PATH: Final = Path(__file__).with_name("csl-data.schema.json")


def _name(author: Author) -> dict[str, str]:
    if author.family:
        words = author.family.split(" ")
        lead = 0
        while lead < len(words) - 1 and words[lead].islower():
            lead += 1
        # "van der Walt": the lowercase words before the surname are its particle,
        # which styles place and sort by their own rules.
        name = {"family": " ".join(words[lead:])}
        if lead:
            name["non-dropping-particle"] = " ".join(words[:lead])
        if author.given:
            name["given"] = author.given
        return name
    return {"literal": author.literal or ""}


def _date(iso: str | None, year: int | None = None) -> dict[str, Any] | None:
    """A CSL date from an ISO 8601 date (possibly partial), else from ``year``."""
    parts: list[int] = []
    for piece in (iso or "").split("T", 1)[0].split("-")[:3]:
        if not piece.isdigit():
            break
        parts.append(int(piece))
    if not parts and year:
        parts = [year]
    return {"date-parts": [parts]} if parts else None


def to_csl(work: Work, item_id: str) -> dict[str, Any]:
    """One CSL-JSON item (empty fields left out)."""
    item: dict[str, Any] = {
        "id": item_id,
        "type": work.type or "article",
        "title": work.title,
        "author": [_name(author) for author in work.authors if author.family or author.literal],
        "issued": _date(work.issued, work.year),
        "accessed": _date(work.extra.get(ACCESSED_KEY)),
        "container-title": work.venue,
        "volume": work.volume,
        "issue": work.issue,
        "page": work.pages,
        "publisher": work.publisher,
        "ISSN": work.issn[0] if work.issn else None,
        "DOI": work.doi,
        "URL": work.url,
        "abstract": work.abstract,
        "number": f"arXiv:{work.arxiv_id}" if work.arxiv_id and not work.doi else None,
        "note": joined_notes(describe(work), unidentified_note(work)),
    }
    return {key: value for key, value in item.items() if value not in (None, "", [])}


def to_csl_many(works: Sequence[Work]) -> list[dict[str, Any]]:
    """CSL-JSON items for several works, with their citekeys as ids."""
    return [to_csl(work, key) for work, key in zip(works, unique_citekeys(works), strict=True)]
