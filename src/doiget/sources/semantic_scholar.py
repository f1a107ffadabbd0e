"""Semantic Scholar Graph API: papers by id, relevance search and citations.

Paper ids are what the API takes: a 40-hex S2 id or a prefixed external id such as
``DOI:10.x/y``, ``ARXIV:2301.12345``, ``PMID:123`` or ``CorpusId:456``. A key, when
configured, goes in the ``x-api-key`` header and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from doiget.config import Settings
from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.jsontext import parse_json
from doiget.models import Work
from doiget.net.client import Fetched, SourceClient
from doiget.refs import arxiv_ref_for, has_dot_segment, parse_ref, url_path
from doiget.secret import revealed
from doiget.sources.names import author_from_name
from doiget.sources.shape import (
    ShapeError,
    bare_doi,
    expect_dict,
    expect_list,
    integer,
    items,
    mapping,
    parse_or_drift,
    strings,
    text,
)

API_ROOT: Final = "https://api.semanticscholar.org/graph/v1/"
PAPER_PAGE: Final = "https://www.semanticscholar.org/paper/"
FIELDS: Final = (
    "paperId,externalIds,url,title,venue,year,abstract,authors,journal,"
    "publicationDate,publicationTypes,openAccessPdf,citationCount,referenceCount,"
    "influentialCitationCount"
)
# The API's own ceiling for one page of citations is 1,000; doiget asks for pages of
# at most this many so a small request costs a small answer.
CITATION_PAGE: Final = 100
CSL_TYPES: Final = {
    "JournalArticle": "article-journal",
    "Conference": "paper-conference",
    "Book": "book",
    "BookSection": "chapter",
    "Dataset": "dataset",
    "Review": "article-journal",
}


# External id prefixes the Graph API takes, in the spelling it documents.
ID_PREFIXES: Final = {
    prefix.lower(): prefix
    for prefix in ("DOI", "ARXIV", "CorpusId", "PMID", "PMCID", "MAG", "ACL", "URL")
}
_S2_ID: Final = re.compile(r"[0-9a-f]{40}", re.IGNORECASE)
ID_FORMS: Final = (
    "a 40-character Semantic Scholar id, a DOI ('10.1234/abc'), an arXiv id "
    "('2301.12345'), or a prefixed id such as 'CorpusId:12345', 'PMID:12345678', "
    "'ARXIV:2301.12345' or 'DOI:10.1234/abc'"
)


def api_paper_id(identifier: str) -> str:
    """The Graph API form of an identifier (bare DOIs and arXiv ids get their prefix).

    Raises INVALID_REF naming the accepted forms for anything else.
    """
    value = identifier.strip()
    if has_dot_segment(value):
        # The id becomes part of the URL path, where "." and ".." segments would move it.
        raise DoigetError(ErrorCode.INVALID_REF, f"{quoted(value)} has a '.' or '..' path part.")
    if _S2_ID.fullmatch(value):
        return value.lower()
    prefix, colon, rest = value.partition(":")
    known = ID_PREFIXES.get(prefix.lower()) if colon else None
    if known and known not in ("DOI", "ARXIV") and rest.strip():
        return f"{known}:{rest.strip()}"
    try:
        ref = parse_ref(rest if known in ("DOI", "ARXIV") else value)
    except DoigetError:
        ref = None
    if ref is not None:
        arxiv = arxiv_ref_for(ref)
        return f"ARXIV:{arxiv.value}" if arxiv else f"DOI:{ref.value}"
    raise DoigetError(
        ErrorCode.INVALID_REF, f"{quoted(value)} is not a paper identifier; use {ID_FORMS}."
    )


@dataclass(frozen=True, slots=True)
class S2Author:
    """An author as Semantic Scholar lists them: its id (when known) and display name."""

    author_id: str | None
    name: str


@dataclass(frozen=True, slots=True)
class S2Paper:
    """One Graph API paper object, every field doiget reads from it."""

    paper_id: str
    title: str | None = None
    abstract: str | None = None
    year: int | None = None
    authors: tuple[S2Author, ...] = ()
    citation_count: int | None = None
    reference_count: int | None = None
    influential_citation_count: int | None = None
    url: str | None = None
    venue: str | None = None
    journal: str | None = None
    volume: str | None = None
    pages: str | None = None
    publication_date: str | None = None
    publication_types: tuple[str, ...] = ()
    doi: str | None = None
    arxiv_id: str | None = None
    pmid: str | None = None
    pdf_url: str | None = None
    license: str | None = None

    @property
    def page_url(self) -> str:
        """The paper's Semantic Scholar page (built from the id when the API gave none)."""
        return self.url or PAPER_PAGE + self.paper_id

    def to_work(self) -> Work:
        """The paper as a :class:`Work` (for resolution and citation export)."""
        return Work(
            source="s2",
            title=self.title,
            authors=tuple(author_from_name(author.name) for author in self.authors),
            year=self.year,
            issued=self.publication_date,
            doi=self.doi,
            arxiv_id=self.arxiv_id,
            pmid=self.pmid,
            s2_id=self.paper_id,
            abstract=self.abstract,
            venue=self.journal or self.venue,
            volume=self.volume,
            pages=self.pages.replace(" ", "") if self.pages else None,
            type=next(
                (CSL_TYPES[kind] for kind in self.publication_types if kind in CSL_TYPES), None
            ),
            url=self.page_url,
            license=self.license,
            pdf_url=self.pdf_url,
            cited_by_count=self.citation_count,
        )


def parse_s2_paper(data: Any) -> S2Paper:
    """An :class:`S2Paper` from one Graph API paper object (it must carry a paperId)."""
    paper = expect_dict(data, "a paper")
    paper_id = text(paper.get("paperId"))
    if paper_id is None:
        raise ShapeError("returned a paper without a paperId")
    external = mapping(paper.get("externalIds"))
    journal = mapping(paper.get("journal"))
    pdf = mapping(paper.get("openAccessPdf"))
    return S2Paper(
        paper_id=paper_id,
        title=text(paper.get("title")),
        abstract=text(paper.get("abstract")),
        year=integer(paper.get("year")),
        authors=tuple(
            S2Author(text(item.get("authorId")), name)
            for item in items(paper.get("authors"))
            if (name := text(item.get("name")))
        ),
        citation_count=integer(paper.get("citationCount")),
        reference_count=integer(paper.get("referenceCount")),
        influential_citation_count=integer(paper.get("influentialCitationCount")),
        url=text(paper.get("url")),
        venue=text(paper.get("venue")),
        journal=text(journal.get("name")),
        volume=text(journal.get("volume")),
        pages=text(journal.get("pages")),
        publication_date=text(paper.get("publicationDate")),
        publication_types=strings(paper.get("publicationTypes")),
        doi=bare_doi(external.get("DOI")),
        arxiv_id=text(external.get("ArXiv")),
        pmid=text(external.get("PubMed")),
        pdf_url=text(pdf.get("url")),
        license=text(pdf.get("license")),
    )


def parse_paper(data: Any) -> Work:
    """A Work from one Graph API paper object."""
    return parse_s2_paper(data).to_work()


def parse_search_page(data: Any) -> list[S2Paper]:
    """The papers of one ``/paper/search`` page; a page with no hits may omit ``data``."""
    page = expect_dict(data, "a search page")
    if "data" not in page and integer(page.get("total")) == 0:
        return []
    return [parse_s2_paper(item) for item in expect_list(page.get("data"), "search hits")]


@dataclass(frozen=True, slots=True)
class CitationPage:
    """The citing papers of one page, and the offset of the next page (None at the end)."""

    papers: list[S2Paper]
    next_offset: int | None


def parse_citation_page(data: Any) -> CitationPage:
    """One ``/paper/{id}/citations`` page. Citing papers S2 cannot identify are skipped."""
    page = expect_dict(data, "a citations page")
    rows = expect_list(page.get("data", []), "citations")
    papers = [
        parse_s2_paper(citing)
        for row in items(rows)
        if text((citing := mapping(row.get("citingPaper"))).get("paperId"))
    ]
    return CitationPage(papers, integer(page.get("next")))


async def _get(
    client: SourceClient,
    path: str,
    params: Mapping[str, str | int],
    api_key: str | None,
) -> Any:
    """GET a Graph API JSON document; a 400 is reported with the API's own explanation."""
    fetched = await client.get(
        API_ROOT + path,
        params=params,
        headers={"Accept": "application/json", **({"x-api-key": api_key} if api_key else {})},
        accept_status=(400,),
    )
    if fetched.status == 400:
        raise DoigetError(
            ErrorCode.NETWORK_ERROR,
            f"Semantic Scholar rejected the request (HTTP 400): {_api_message(fetched)}",
        )
    return client.json_of(fetched)


def _api_message(fetched: Fetched) -> str:
    try:
        body = parse_json(fetched.content)
    except ValueError:
        body = None
    message = text(body.get("error") or body.get("message")) if isinstance(body, dict) else None
    return (message or "no reason given")[:300]


def paper_path(paper_id: str) -> str:
    """The URL path of one paper (see :func:`doiget.refs.url_path`)."""
    return "paper/" + url_path(paper_id)


async def get_paper(client: SourceClient, paper_id: str, api_key: str | None) -> S2Paper:
    """The paper ``paper_id``; NOT_FOUND when Semantic Scholar has none."""
    data = await _get(client, paper_path(paper_id), {"fields": FIELDS}, api_key)
    return parse_or_drift(client, parse_s2_paper, data)


async def get_work(client: SourceClient, paper_id: str, api_key: str | None) -> Work:
    """The paper ``paper_id`` (``DOI:...``, ``ARXIV:...`` or an S2 id) as a Work."""
    return (await get_paper(client, paper_id, api_key)).to_work()


def year_range(start: int | None, end: int | None) -> str | None:
    """The search's ``year`` parameter: ``2020`` for one year, ``2019-2021``, ``2019-``
    or ``-2021`` for a range, None when both ends are open."""
    if start is None and end is None:
        return None
    if start == end:
        return str(start)
    return f"{start if start is not None else ''}-{end if end is not None else ''}"


def api_key_of(settings: Settings) -> str | None:
    """The configured Graph API key, revealed for the ``x-api-key`` header."""
    return revealed(settings.semantic_scholar_api_key)


async def search(
    client: SourceClient,
    query: str,
    limit: int,
    years: tuple[int | None, int | None],
    api_key: str | None,
) -> list[S2Paper]:
    """The first ``limit`` papers of a relevance search, published within ``years``
    (both ends inclusive, either open when None)."""
    params: dict[str, str | int] = {"query": query, "offset": 0, "limit": limit, "fields": FIELDS}
    year = year_range(*years)
    if year:
        params["year"] = year
    data = await _get(client, "paper/search", params, api_key)
    return parse_or_drift(client, parse_search_page, data)[:limit]


async def citations(
    client: SourceClient, paper_id: str, limit: int, api_key: str | None
) -> list[S2Paper]:
    """Up to ``limit`` papers citing ``paper_id``, following pages until enough are read."""
    found: list[S2Paper] = []
    offset: int | None = 0
    while offset is not None and len(found) < limit:
        params: dict[str, str | int] = {
            "fields": FIELDS,
            "offset": offset,
            "limit": min(CITATION_PAGE, limit - len(found)),
        }
        data = await _get(client, paper_path(paper_id) + "/citations", params, api_key)
        page = parse_or_drift(client, parse_citation_page, data)
        found += page.papers
        if page.next_offset is not None and page.next_offset <= offset:
            break  # a next offset that does not advance would loop forever
        offset = page.next_offset
    return found[:limit]
