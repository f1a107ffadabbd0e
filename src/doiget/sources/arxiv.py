"""arXiv: the Atom feed of the export API (``/api/query``), by id or by search.

A feed with no entry means the id is unknown (NOT_FOUND) or the search matched
nothing; arXiv reports a malformed id or query as an entry titled "Error" whose id
points at ``/api/errors`` (INVALID_REF).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from lxml import etree

from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.models import Work
from doiget.net.client import SourceClient
from doiget.sources.names import author_from_name
from doiget.sources.shape import ShapeError, bare_doi, parse_or_drift, text
from doiget.sources.xmldoc import parse_xml

API_URL: Final = "https://export.arxiv.org/api/query"
PDF_BASE: Final = "https://arxiv.org/pdf/"
_NS: Final = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
_ABS_ID: Final = re.compile(r"arxiv\.org/abs/(.+)$")

SortBy = Literal["relevance", "lastUpdatedDate", "submittedDate"]
SORT_BY: Final[tuple[SortBy, ...]] = ("relevance", "lastUpdatedDate", "submittedDate")
# A query that already speaks the API's syntax (field prefixes, boolean operators) is
# sent as written; free text is turned into it.
_FIELD_PREFIX: Final = re.compile(
    r"\b(?:ti|au|abs|co|jr|cat|rn|id|all|submittedDate|lastUpdatedDate):", re.IGNORECASE
)
_OPERATOR: Final = re.compile(r"(?:^|\s)(?:AND|OR|ANDNOT)(?:\s|$)")
_TERM: Final = re.compile(r'"([^"]+)"|(\S+)')
_PLAIN_WORD: Final = re.compile(r"[\w.+-]+")


def pdf_url_for(arxiv_id: str) -> str:
    """The canonical PDF URL of an arXiv id (with or without version)."""
    return PDF_BASE + arxiv_id


def _child_text(entry: etree._Element, path: str) -> str | None:
    found = entry.find(path, _NS)
    return text(found.text) if found is not None else None


def _entry_work(entry: etree._Element) -> Work:
    raw_id = _child_text(entry, "atom:id") or ""
    match = _ABS_ID.search(raw_id)
    if not match:
        raise ShapeError(f"returned an entry whose id {raw_id[:80]!r} is not an abs URL")
    arxiv_id = match.group(1)
    authors = tuple(
        author_from_name(name)
        for name in (_child_text(node, "atom:name") for node in entry.findall("atom:author", _NS))
        if name
    )
    pdf_url = None
    for link in entry.findall("atom:link", _NS):
        if link.get("title") == "pdf" or link.get("type") == "application/pdf":
            pdf_url = link.get("href")
            break
    primary = entry.find("arxiv:primary_category", _NS)
    published = _child_text(entry, "atom:published")
    doi = bare_doi(_child_text(entry, "arxiv:doi"))
    return Work(
        source="arxiv",
        title=_child_text(entry, "atom:title"),
        authors=authors,
        year=int(published[:4]) if published and published[:4].isdigit() else None,
        issued=published[:10] if published else None,
        doi=doi,
        arxiv_id=arxiv_id,
        abstract=_child_text(entry, "atom:summary"),
        venue=None,
        type="article",
        url=f"https://arxiv.org/abs/{arxiv_id}",
        pdf_url=pdf_url.replace("http://", "https://", 1) if pdf_url else pdf_url_for(arxiv_id),
        categories=tuple(
            term for node in entry.findall("atom:category", _NS) if (term := node.get("term"))
        ),
        primary_category=primary.get("term") if primary is not None else None,
        journal_ref=_child_text(entry, "arxiv:journal_ref"),
        published=published,
        updated=_child_text(entry, "atom:updated"),
        publisher="arXiv",
    )


def parse_feed(body: bytes) -> list[Work]:
    """Every work in an arXiv Atom feed. Raises INVALID_REF for arXiv's error entries."""
    root = parse_xml(body, "a feed")
    if root.tag != f"{{{_NS['atom']}}}feed":
        raise ShapeError("returned XML that is not an Atom feed")
    works = []
    for entry in root.findall("atom:entry", _NS):
        entry_id = _child_text(entry, "atom:id") or ""
        if "/api/errors" in entry_id:
            message = _child_text(entry, "atom:summary") or "the id was refused"
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"arXiv refused the request: {message}.",
            )
        works.append(_entry_work(entry))
    return works


async def _query(client: SourceClient, params: Mapping[str, str | int], refused: str) -> list[Work]:
    """The works of one API answer; a 400 without an error entry is ``refused``."""
    fetched = await client.get(API_URL, params=params, accept_status=(400,))
    works = parse_or_drift(client, parse_feed, fetched.content)
    if fetched.status == 400 and not works:
        raise DoigetError(ErrorCode.INVALID_REF, refused)
    return works


async def get_work(client: SourceClient, arxiv_id: str) -> Work:
    """The arXiv record of one id; NOT_FOUND when arXiv has none."""
    works = await _query(
        client, {"id_list": arxiv_id, "max_results": 1}, f"arXiv refused the id {quoted(arxiv_id)}."
    )
    if not works:
        raise DoigetError(
            ErrorCode.NOT_FOUND, f"arXiv has no paper {arxiv_id}; check the id and version."
        )
    return works[0]


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """What narrows an arXiv search besides its words."""

    author: str | None = None
    start_year: int | None = None
    end_year: int | None = None


def _term(field: str, value: str) -> str:
    value = value.replace('"', " ").strip()
    return f"{field}:{value}" if _PLAIN_WORD.fullmatch(value) else f'{field}:"{value}"'


def _free_text(query: str) -> str:
    """Free text as the API's syntax: every word (or quoted phrase) in any field, ANDed."""
    terms = [_term("all", phrase or word) for phrase, word in _TERM.findall(query)]
    return " AND ".join(term for term in terms if term.split(":", 1)[1].strip('"'))


def build_query(query: str, filters: SearchFilters, this_year: int) -> str:
    """The ``search_query`` for ``query`` with the author and year filters applied.

    The author filter ANDs ``au:`` for each name part of two or more letters (arXiv
    stores names as written, "Geoffrey E. Hinton", so a quoted full name would miss
    them). Years become a ``submittedDate`` range, both ends inclusive.
    """
    query = " ".join(query.split())
    advanced = bool(_FIELD_PREFIX.search(query) or _OPERATOR.search(query))
    parts: list[str] = []
    body = query if advanced else _free_text(query)
    if body:
        parts.append(f"({body})" if advanced else body)
    if filters.author:
        names = [part for part in re.split(r"[\s.,]+", filters.author) if len(part) >= 2]
        parts += [_term("au", name) for name in names]
    if filters.start_year is not None or filters.end_year is not None:
        start = filters.start_year if filters.start_year is not None else 1991
        end = filters.end_year if filters.end_year is not None else this_year
        parts.append(f"submittedDate:[{start:04d}01010000 TO {end:04d}12312359]")
    if not parts:
        raise DoigetError(ErrorCode.INVALID_REF, "the query has no words to search for.")
    return " AND ".join(parts)


async def search(
    client: SourceClient, search_query: str, max_results: int, sort_by: SortBy
) -> Sequence[Work]:
    """The first ``max_results`` works matching ``search_query``, in arXiv's order.

    ``relevance`` is sent as arXiv's relevance ranking (descending); the two date
    orders list the newest first.
    """
    params: dict[str, str | int] = {
        "search_query": search_query,
        "start": 0,
        "max_results": max_results,
        "sortBy": sort_by,
        "sortOrder": "descending",
    }
    return await _query(client, params, "arXiv refused the query.")


async def search_filtered(
    client: SourceClient, query: str, filters: SearchFilters, max_results: int, sort_by: SortBy
) -> Sequence[Work]:
    """:func:`search` for free text and filters (an open end year is this year)."""
    this_year = datetime.datetime.now(datetime.UTC).year
    return await search(client, build_query(query, filters, this_year), max_results, sort_by)
