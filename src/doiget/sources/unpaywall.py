"""Unpaywall: ``/v2/{doi}?email=`` — Open Access status and the places a free copy lives."""

from __future__ import annotations

from typing import Any, Final

from doiget.models import Location, OpenAccess, Work
from doiget.net.client import SourceClient
from doiget.sources.crossref import CSL_TYPES, author, doi_path
from doiget.sources.shape import (
    bare_doi,
    expect_dict,
    integer,
    items,
    parse_or_drift,
    text,
)

API_BASE: Final = "https://api.unpaywall.org/v2/"


def _location(item: dict[str, Any]) -> Location:
    return Location(
        url=text(item.get("url")),
        url_for_pdf=text(item.get("url_for_pdf")),
        license=text(item.get("license")),
        host_type=text(item.get("host_type")),
        version=text(item.get("version")),
        is_best=item.get("is_best") is True,
    )


def parse_open_access(data: Any) -> OpenAccess:
    """The OA facts of an Unpaywall record."""
    record = expect_dict(data, "a record")
    best_item = record.get("best_oa_location")
    best = _location(best_item) if isinstance(best_item, dict) else None
    locations = tuple(_location(item) for item in items(record.get("oa_locations")))
    if best is not None:
        # Use the listed location object itself so pdf_candidates() can skip it by identity.
        best = next((loc for loc in locations if loc == best), best)
    return OpenAccess(
        is_oa=record.get("is_oa") is True,
        oa_status=text(record.get("oa_status")),
        best=best,
        locations=locations,
    )


def parse_work(data: Any) -> Work:
    """The bibliographic part of an Unpaywall record."""
    record = expect_dict(data, "a record")
    published = text(record.get("published_date"))
    genre = text(record.get("genre"))
    best = record.get("best_oa_location")
    issns = text(record.get("journal_issns")) or ""
    return Work(
        source="unpaywall",
        title=text(record.get("title")),
        authors=tuple(a for item in items(record.get("z_authors")) if (a := author(item))),
        year=integer(record.get("year")),
        issued=published,
        doi=bare_doi(record.get("doi")),
        venue=text(record.get("journal_name")),
        type=CSL_TYPES.get(genre, "article") if genre else None,
        publisher=text(record.get("publisher")),
        issn=tuple(part.strip() for part in issns.split(",") if part.strip()),
        url=text(record.get("doi_url")),
        license=text(best.get("license")) if isinstance(best, dict) else None,
    )


def parse_record(data: Any) -> tuple[OpenAccess, Work]:
    """Both readings of one Unpaywall record."""
    return parse_open_access(data), parse_work(data)


async def get_record(client: SourceClient, doi: str, email: str) -> tuple[OpenAccess, Work]:
    """Unpaywall's record of ``doi``. Unpaywall requires a contact email on every call."""
    data = await client.get_json(API_BASE + doi_path(doi), params={"email": email})
    return parse_or_drift(client, parse_record, data)
