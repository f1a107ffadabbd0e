"""DOAJ: article records of fully Open Access journals (``/api/search/articles/doi:...``)."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import quote

from doiget.errors import DoigetError, ErrorCode
from doiget.models import Work
from doiget.net.client import SourceClient
from doiget.sources.names import authors_from_named
from doiget.sources.shape import (
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

API_BASE: Final = "https://doaj.org/api/search/articles/"


def _identifier(bibjson: dict[str, Any], kind: str) -> str | None:
    return next(
        (
            text(item.get("id"))
            for item in items(bibjson.get("identifier"))
            if item.get("type") == kind
        ),
        None,
    )


def _pages(bibjson: dict[str, Any]) -> str | None:
    start, end = text(bibjson.get("start_page")), text(bibjson.get("end_page"))
    return f"{start}-{end}" if start and end and start != end else start


def parse_article(data: Any) -> Work:
    """A Work from one DOAJ article record."""
    article = expect_dict(data, "an article")
    bibjson = expect_dict(article.get("bibjson"), "an article without bibjson")
    journal = mapping(bibjson.get("journal"))
    licences = items(journal.get("license")) or items(bibjson.get("license"))
    fulltext = [item for item in items(bibjson.get("link")) if item.get("type") == "fulltext"]
    pdf_url = next(
        (
            text(item.get("url"))
            for item in fulltext
            if "pdf" in str(item.get("content_type")).lower()
        ),
        None,
    )
    issns = journal.get("issns") or [_identifier(bibjson, "pissn"), _identifier(bibjson, "eissn")]
    year = integer(bibjson.get("year"))
    month = integer(bibjson.get("month"))
    return Work(
        source="doaj",
        title=text(bibjson.get("title")),
        authors=authors_from_named(bibjson.get("author")),
        year=year,
        issued=(f"{year:04d}-{month:02d}" if month else f"{year:04d}") if year else None,
        doi=bare_doi(_identifier(bibjson, "doi")),
        abstract=text(bibjson.get("abstract")),
        venue=text(journal.get("title")),
        volume=text(journal.get("volume")),
        issue=text(journal.get("number")),
        pages=_pages(bibjson),
        type="article-journal",
        publisher=text(journal.get("publisher")),
        issn=strings(issns),
        url=text(fulltext[0].get("url")) if fulltext else None,
        license=next((t for item in licences if (t := text(item.get("type")))), None),
        pdf_url=pdf_url,
    )


def parse_search(data: Any) -> list[Work]:
    """The articles of a search response (``{"total": n, "results": [...]}``)."""
    results = expect_list(expect_dict(data, "a search response").get("results"), "results")
    return [parse_article(item) for item in results]


async def get_work(client: SourceClient, doi: str) -> Work:
    """DOAJ's article for ``doi``; NOT_FOUND when the DOI is not in a DOAJ journal."""
    query = quote(f'doi:"{doi}"', safe=":")
    data = await client.get_json(API_BASE + query, params={"pageSize": 1})
    works = parse_or_drift(client, parse_search, data)
    if not works:
        raise DoigetError(ErrorCode.NOT_FOUND, f"DOAJ has no article with DOI {doi}.")
    return works[0]
