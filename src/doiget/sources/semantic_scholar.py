"""Semantic Scholar Graph API: ``/graph/v1/paper/{id}`` (id such as ``DOI:10.x/y``)."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

from doiget.models import Work
from doiget.net.client import SourceClient
from doiget.sources.names import authors_from_named
from doiget.sources.shape import (
    bare_doi,
    expect_dict,
    integer,
    mapping,
    parse_or_drift,
    text,
)

API_BASE: Final = "https://api.semanticscholar.org/graph/v1/paper/"
FIELDS: Final = (
    "paperId,externalIds,url,title,venue,year,abstract,authors,journal,"
    "publicationDate,publicationTypes,openAccessPdf,citationCount"
)
CSL_TYPES: Final = {
    "JournalArticle": "article-journal",
    "Conference": "paper-conference",
    "Book": "book",
    "BookSection": "chapter",
    "Dataset": "dataset",
    "Review": "article-journal",
}


def parse_paper(data: Any) -> Work:
    """A Work from one Graph API paper object."""
    paper = expect_dict(data, "a paper")
    external = mapping(paper.get("externalIds"))
    journal = mapping(paper.get("journal"))
    pdf = mapping(paper.get("openAccessPdf"))
    kinds = [kind for kind in paper.get("publicationTypes") or [] if isinstance(kind, str)]
    arxiv_id = text(external.get("ArXiv"))
    pages = text(journal.get("pages"))
    return Work(
        source="s2",
        title=text(paper.get("title")),
        authors=authors_from_named(paper.get("authors")),
        year=integer(paper.get("year")),
        issued=text(paper.get("publicationDate")),
        doi=bare_doi(external.get("DOI")),
        arxiv_id=arxiv_id,
        pmid=text(external.get("PubMed")),
        s2_id=text(paper.get("paperId")),
        abstract=text(paper.get("abstract")),
        venue=text(journal.get("name")) or text(paper.get("venue")),
        volume=text(journal.get("volume")),
        pages=pages.replace(" ", "") if pages else None,
        type=next((CSL_TYPES[kind] for kind in kinds if kind in CSL_TYPES), None),
        url=text(paper.get("url")),
        license=text(pdf.get("license")),
        pdf_url=text(pdf.get("url")),
        cited_by_count=integer(paper.get("citationCount")),
    )


async def get_work(client: SourceClient, paper_id: str, api_key: str | None) -> Work:
    """The paper ``paper_id`` (``DOI:...``, ``ARXIV:...`` or an S2 id)."""
    headers = {"x-api-key": api_key} if api_key else None
    data = await client.get_json(
        API_BASE + quote(paper_id, safe="/:;()"), params={"fields": FIELDS}, headers=headers
    )
    return parse_or_drift(client, parse_paper, data)
