"""DBLP: the publication search API (``/search/publ/api?q=...&format=json&h=N``).

DBLP matches every query word as a prefix of a word of the record (title, authors,
venue, year), all words required, and ranks the hits. An answer with no hits has no
``hit`` list; a single author is an object, not a list. Author names may carry
DBLP's disambiguation number ("Wei Wang 0001"), which is not part of the name.
"""

from __future__ import annotations

import html
import re
from typing import Any, Final

from doiget.models import Work
from doiget.net.client import SourceClient
from doiget.sources.names import author_from_name
from doiget.sources.shape import (
    bare_doi,
    expect_dict,
    integer,
    items,
    mapping,
    parse_or_drift,
    text,
)

API_URL: Final = "https://dblp.org/search/publ/api"
MAX_HITS: Final = 1000
_DISAMBIGUATION: Final = re.compile(r"\s+\d{4}$")
_DOI_EE: Final = re.compile(r"https?://(?:dx\.)?doi\.org/10\.", re.IGNORECASE)
_ARXIV_EE: Final = re.compile(r"arxiv\.org/abs/([^\s?#]+)", re.IGNORECASE)
_CORR_VOLUME: Final = re.compile(r"abs/(\d{4}\.\d{4,5}|[a-z-]+/\d{7})$")

# DBLP's publication types as CSL item types.
CSL_TYPES: Final = {
    "Conference and Workshop Papers": "paper-conference",
    "Journal Articles": "article-journal",
    "Informal and Other Publications": "article",
    "Informal Publications": "article",
    "Books and Theses": "book",
    "Parts in Books or Collections": "chapter",
    "Editorship": "book",
    "Reference Works": "entry",
    "Data and Artifacts": "dataset",
}


def person_name(value: str) -> str:
    """A DBLP person name without its disambiguation number."""
    return _DISAMBIGUATION.sub("", " ".join(value.split()))


def _authors(info: dict[str, Any]) -> list[str]:
    listed = mapping(info.get("authors")).get("author")
    entries = listed if isinstance(listed, list) else [listed]
    names = []
    for entry in entries:
        name = text(entry.get("text")) if isinstance(entry, dict) else text(entry)
        if name:
            names.append(person_name(html.unescape(name)))
    return names


def _links(info: dict[str, Any]) -> list[str]:
    """The record's electronic editions (``ee``: one link, or a list of them)."""
    links = info.get("ee")
    return [
        link for item in (links if isinstance(links, list) else [links]) if (link := text(item))
    ]


def _doi(info: dict[str, Any]) -> str | None:
    """The record's DOI: its ``doi`` field, else a doi.org link among its editions (DBLP
    leaves the field out of many records whose edition is the publisher's DOI)."""
    return bare_doi(info.get("doi")) or next(
        (doi for link in _links(info) if _DOI_EE.match(link) and (doi := bare_doi(link))), None
    )


def _arxiv_id(info: dict[str, Any]) -> str | None:
    """The arXiv id of a CoRR record (its ``ee`` link or its ``abs/...`` volume)."""
    for link in _links(info):
        found = _ARXIV_EE.search(link)
        if found:
            return found.group(1)
    if text(info.get("venue")) == "CoRR":
        volume = _CORR_VOLUME.search(text(info.get("volume")) or "")
        if volume:
            return volume.group(1)
    return None


def hit_work(hit: dict[str, Any]) -> Work | None:
    """A Work from one hit (``{"info": {...}}``); None when it has no title."""
    info = mapping(hit.get("info"))
    title = text(info.get("title"))
    if not title:
        return None
    title = html.unescape(title)
    if title.endswith(".") and not title.endswith(".."):
        title = title[:-1]
    venue = info.get("venue")
    kind = text(info.get("type")) or ""
    year = integer(info.get("year"))
    return Work(
        source="dblp",
        title=title,
        authors=tuple(author_from_name(name) for name in _authors(info)),
        year=year,
        issued=f"{year:04d}" if year else None,
        doi=_doi(info),
        arxiv_id=_arxiv_id(info),
        venue=text(venue[0] if isinstance(venue, list) and venue else venue),
        volume=text(info.get("volume")),
        issue=text(info.get("number")),
        pages=text(info.get("pages")),
        type=CSL_TYPES.get(kind, "article") if kind else None,
        url=text(info.get("url")),
        extra={"dblp_key": key} if (key := text(info.get("key"))) else {},
    )


def parse_hits(data: Any) -> list[Work]:
    """The works of a search answer: the full envelope, or a bare ``hit`` list."""
    if isinstance(data, list):
        rows = data
    else:
        result = expect_dict(expect_dict(data, "a response").get("result"), "a result")
        rows = mapping(result.get("hits")).get("hit") or []
        rows = rows if isinstance(rows, list) else [rows]
    return [work for hit in items(rows) if (work := hit_work(hit))]


async def search(client: SourceClient, query: str, hits: int) -> list[Work]:
    """The first ``hits`` publications matching every word of ``query``, best first."""
    params: dict[str, str | int] = {"q": query, "format": "json", "h": min(hits, MAX_HITS)}
    data = await client.get_json(API_URL, params=params)
    return parse_or_drift(client, parse_hits, data)
