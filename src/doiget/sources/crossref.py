"""Crossref: ``/works/{doi}`` — the authoritative bibliographic record of a DOI — and
``/works?query=`` — a search of every record Crossref holds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Literal

from doiget.models import Author, UpdateNotice, Work
from doiget.net.client import SourceClient
from doiget.refs import url_path
from doiget.sources.markup import plain_text
from doiget.sources.shape import (
    bare_doi,
    bare_orcid,
    expect_dict,
    expect_list,
    first_text,
    integer,
    items,
    mapping,
    parse_or_drift,
    strings,
    text,
)

API_BASE: Final = "https://api.crossref.org/works/"

# Crossref work types as CSL item types (anything else is "article").
CSL_TYPES: Final = {
    "journal-article": "article-journal",
    "proceedings-article": "paper-conference",
    "book-chapter": "chapter",
    "book-part": "chapter",
    "book-section": "chapter",
    "book": "book",
    "monograph": "book",
    "edited-book": "book",
    "reference-book": "book",
    "posted-content": "article",
    "dissertation": "thesis",
    "report": "report",
    "report-component": "report",
    "dataset": "dataset",
    "reference-entry": "entry",
    "standard": "standard",
    "peer-review": "review",
}


_WORD: Final = re.compile(r"\w+")
_VERSION_RANK: Final = {"vor": 0, "am": 1, "unspecified": 2}


def doi_path(doi: str) -> str:
    """A DOI escaped for a URL path (see :func:`doiget.refs.url_path`)."""
    return url_path(doi)


def _title(message: dict[str, Any]) -> str | None:
    """The record's title with its subtitle, which Crossref keeps apart (ACM's and
    Springer's records: "Main" and "Subtitle" for "Main: Subtitle"); a subtitle whose
    words the title already has (a notice restating it) is left out."""
    title, subtitle = first_text(message.get("title")), first_text(message.get("subtitle"))
    if (
        title
        and subtitle
        and not set(_WORD.findall(subtitle.lower())) <= set(_WORD.findall(title.lower()))
    ):
        return f"{title}: {subtitle}"
    return title


def date_parts(value: Any) -> tuple[int | None, str | None]:
    """(year, ISO date) from a Crossref date object ``{"date-parts": [[2012, 3, 21]]}``."""
    parts = mapping(value).get("date-parts")
    if not isinstance(parts, list) or not parts or not isinstance(parts[0], list):
        return None, None
    numbers = [integer(part) for part in parts[0][:3]]
    if not numbers or numbers[0] is None:
        return None, None
    iso = f"{numbers[0]:04d}"
    for number in numbers[1:]:
        if number is None:
            break
        iso += f"-{number:02d}"
    return numbers[0], iso


def author(item: dict[str, Any]) -> Author | None:
    """A Crossref-shaped author object (Unpaywall's z_authors share the shape)."""
    family, given = text(item.get("family")), text(item.get("given"))
    orcid = bare_orcid(item.get("ORCID"))
    if family:
        return Author(family=family, given=given, orcid=orcid)
    literal = text(item.get("raw_author_name")) or text(item.get("name")) or given
    return Author(literal=literal, orcid=orcid) if literal else None


def update_notices(message: dict[str, Any]) -> tuple[UpdateNotice, ...]:
    """Crossref's ``update-to`` and ``updated-by`` relations of one record, as returned.

    The one reader of these relations: every surface reads a work's retractions,
    corrections and concerns from what this gives (see ``Work.integrity``). Since 2019
    Crossref also carries Retraction Watch's notices here (``source``,
    ``record-id``); a retraction may be visible only in ``updated-by``.
    """
    notices: list[UpdateNotice] = []
    directions: tuple[Literal["update-to", "updated-by"], ...] = ("update-to", "updated-by")
    for direction in directions:
        for item in items(message.get(direction)):
            kind = text(item.get("type"))
            if kind:
                notices.append(
                    UpdateNotice(
                        kind=kind,
                        direction=direction,
                        doi=bare_doi(item.get("DOI")),
                        date=date_parts(item.get("updated"))[1],
                        label=text(item.get("label")),
                        source=text(item.get("source")),
                        record_id=text(item.get("record-id")),
                    )
                )
    return tuple(notices)


def _license(message: dict[str, Any]) -> str | None:
    """The licence of the version of record if stated; text-mining licences are not it."""
    ranked = sorted(
        (item for item in items(message.get("license")) if item.get("content-version") != "tdm"),
        key=lambda item: _VERSION_RANK.get(str(item.get("content-version")), 3),
    )
    return next((url for item in ranked if (url := text(item.get("URL")))), None)


def _links(message: dict[str, Any]) -> list[dict[str, str]]:
    links = []
    for item in items(message.get("link")):
        url = text(item.get("URL"))
        if url:
            links.append(
                {
                    "url": url,
                    "content_type": text(item.get("content-type")) or "unspecified",
                    "intended_application": text(item.get("intended-application")) or "unspecified",
                }
            )
    return links


def parse_work(data: Any) -> Work:
    """A Work from a ``/works/{doi}`` response (``{"message": {...}}``)."""
    message = expect_dict(expect_dict(data, "a response").get("message"), "a message")
    year, issued = date_parts(message.get("issued"))
    if year is None:
        for key in ("published", "published-print", "published-online", "created"):
            year, issued = date_parts(message.get(key))
            if year is not None:
                break
    authors = tuple(a for item in items(message.get("author")) if (a := author(item)))
    updates = update_notices(message)
    kind = text(message.get("type"))
    links = _links(message)
    abstract = message.get("abstract")
    return Work(
        source="crossref",
        title=_title(message),
        authors=authors,
        year=year,
        issued=issued,
        doi=bare_doi(message.get("DOI")),
        abstract=plain_text(abstract) if isinstance(abstract, str) else None,
        venue=first_text(message.get("container-title")),
        volume=text(message.get("volume")),
        issue=text(message.get("issue")),
        pages=text(message.get("page")),
        type=CSL_TYPES.get(kind or "", "article") if kind else None,
        publisher=text(message.get("publisher")),
        issn=strings(message.get("ISSN")),
        url=text(message.get("URL")),
        license=_license(message),
        updates=updates,
        cited_by_count=integer(message.get("is-referenced-by-count")),
        extra={"links": links} if links else {},
    )


async def get_work(client: SourceClient, doi: str, mailto: str | None) -> Work:
    """Crossref's record of ``doi`` (NOT_FOUND when Crossref does not know it)."""
    params = {"mailto": mailto} if mailto else None
    data = await client.get_json(API_BASE + doi_path(doi), params=params)
    return parse_or_drift(client, parse_work, data)


@dataclass(frozen=True, slots=True)
class WorksPage:
    """One page of a ``/works`` query: how many records match in all, and this page's."""

    total: int
    works: list[Work]


def parse_works_page(data: Any) -> WorksPage:
    """A :class:`WorksPage` from a ``/works?query=`` response (``message.items``)."""
    message = expect_dict(expect_dict(data, "a response").get("message"), "a message")
    rows = expect_list(message.get("items"), "items")
    works = [parse_work({"message": item}) for item in rows if isinstance(item, dict)]
    total = integer(message.get("total-results"))
    return WorksPage(total if total is not None else len(works), works)


async def search_works(
    client: SourceClient,
    query: str,
    rows: int,
    *,
    years: tuple[int | None, int | None] = (None, None),
    full_text_only: bool = False,
    newest_first: bool = False,
    mailto: str | None = None,
) -> WorksPage:
    """The first ``rows`` records matching ``query``, by relevance or newest first.

    ``years`` bounds the publication date, both ends inclusive; ``full_text_only``
    keeps records that link to a full text (``has-full-text``).
    """
    params: dict[str, str | int] = {"query": query, "rows": rows}
    start, end = years
    filters = []
    if start is not None:
        filters.append(f"from-pub-date:{start:04d}-01-01")
    if end is not None:
        filters.append(f"until-pub-date:{end:04d}-12-31")
    if full_text_only:
        filters.append("has-full-text:true")
    if filters:
        params["filter"] = ",".join(filters)
    if newest_first:
        params |= {"sort": "published", "order": "desc"}
    if mailto:
        params["mailto"] = mailto
    data = await client.get_json(API_BASE.rstrip("/"), params=params)
    return parse_or_drift(client, parse_works_page, data)
