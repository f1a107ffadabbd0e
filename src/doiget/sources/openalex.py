"""OpenAlex: works by DOI or id, the reference/citation lists the graph walks, and search."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from doiget.models import Author, Work
from doiget.net.client import SourceClient
from doiget.sources.crossref import doi_path
from doiget.sources.names import author_from_name
from doiget.sources.shape import (
    bare_doi,
    bare_orcid,
    expect_dict,
    expect_list,
    integer,
    items,
    mapping,
    parse_or_drift,
    strings,
    text,
)

API_BASE: Final = "https://api.openalex.org/works"
ID_PREFIX: Final = "https://openalex.org/"
FILTER_IDS_MAX: Final = 50  # OpenAlex accepts up to 50 values OR-ed in one filter
# The fields a search asks for: everything parse_work reads except the reference list.
SEARCH_FIELDS: Final = (
    "id,doi,title,display_name,publication_year,publication_date,authorships,"
    "primary_location,best_oa_location,open_access,cited_by_count,"
    "abstract_inverted_index,type,ids,biblio"
)
# The other indexes a search can be restricted to (``indexed_in``).
INDEXES: Final = frozenset({"arxiv", "pubmed", "crossref"})

CSL_TYPES: Final = {
    "article": "article-journal",
    "preprint": "article",
    "book-chapter": "chapter",
    "book": "book",
    "dissertation": "thesis",
    "dataset": "dataset",
    "report": "report",
    "review": "article-journal",
    "letter": "article-journal",
    "editorial": "article-journal",
    "standard": "standard",
}


def short_id(value: Any) -> str | None:
    """``W2109415576`` from the full ``https://openalex.org/W2109415576`` form."""
    found = text(value)
    if not found:
        return None
    found = found.removeprefix(ID_PREFIX)
    return found if found[:1] in ("W", "w") and found[1:].isdigit() else None


def abstract_from_index(index: Any) -> str | None:
    """The abstract text rebuilt from OpenAlex's inverted index ``{word: [positions]}``."""
    if not isinstance(index, dict) or not index:
        return None
    placed: dict[int, str] = {}
    for word, positions in index.items():
        if isinstance(positions, list):
            for position in positions:
                if isinstance(position, int) and position >= 0:
                    placed[position] = word
    return " ".join(placed[key] for key in sorted(placed)) or None


def _author(item: dict[str, Any]) -> Author | None:
    author = mapping(item.get("author"))
    name = text(item.get("raw_author_name")) or text(author.get("display_name"))
    return author_from_name(name, bare_orcid(author.get("orcid"))) if name else None


def _pages(biblio: dict[str, Any]) -> str | None:
    first, last = text(biblio.get("first_page")), text(biblio.get("last_page"))
    if first and last and first != last:
        return f"{first}-{last}"
    return first


def parse_work(data: Any) -> Work:
    """A Work from one OpenAlex work object."""
    work = expect_dict(data, "a work")
    ids = mapping(work.get("ids"))
    primary = mapping(work.get("primary_location"))
    venue = mapping(primary.get("source"))
    best = mapping(work.get("best_oa_location"))
    biblio = mapping(work.get("biblio"))
    kind = text(work.get("type"))
    pmid = text(ids.get("pmid"))
    referenced = tuple(
        ref for value in work.get("referenced_works") or [] if (ref := short_id(value))
    )
    retracted = work.get("is_retracted")
    return Work(
        source="openalex",
        title=text(work.get("title")) or text(work.get("display_name")),
        authors=tuple(a for item in items(work.get("authorships")) if (a := _author(item))),
        year=integer(work.get("publication_year")),
        issued=text(work.get("publication_date")),
        doi=bare_doi(work.get("doi")) or bare_doi(ids.get("doi")),
        pmid=pmid.rstrip("/").rsplit("/", 1)[-1] if pmid else None,
        openalex_id=short_id(work.get("id")),
        abstract=abstract_from_index(work.get("abstract_inverted_index")),
        venue=text(venue.get("display_name")),
        volume=text(biblio.get("volume")),
        issue=text(biblio.get("issue")),
        pages=_pages(biblio),
        type=CSL_TYPES.get(kind or "", "article") if kind else None,
        publisher=text(venue.get("host_organization_name")),
        issn=strings(venue.get("issn")),
        url=text(primary.get("landing_page_url")),
        license=text(best.get("license")),
        pdf_url=text(best.get("pdf_url")),
        is_retracted=retracted if isinstance(retracted, bool) else None,
        referenced_ids=referenced,
        cited_by_count=integer(work.get("cited_by_count")),
    )


def parse_results(data: Any) -> list[Work]:
    """The works of a list response (``{"meta": ..., "results": [...]}``)."""
    results = expect_list(expect_dict(data, "a list response").get("results"), "results")
    return [parse_work(item) for item in results if isinstance(item, dict)]


def _params(mailto: str | None, **more: str | int) -> dict[str, str | int]:
    return {**({"mailto": mailto} if mailto else {}), **more}


async def get_work(client: SourceClient, doi: str, mailto: str | None) -> Work:
    """OpenAlex's work for ``doi`` (NOT_FOUND when it has none)."""
    data = await client.get_json(f"{API_BASE}/doi:{doi_path(doi)}", params=_params(mailto))
    return parse_or_drift(client, parse_work, data)


async def list_works(
    client: SourceClient, filter_expr: str, mailto: str | None, *, per_page: int
) -> list[Work]:
    """One page of works matching an OpenAlex ``filter`` expression."""
    params = _params(mailto, filter=filter_expr, per_page=per_page)
    data = await client.get_json(API_BASE, params=params)
    return parse_or_drift(client, parse_results, data)


@dataclass(frozen=True, slots=True)
class WorksSearch:
    """One page of a works search: the words, the filters, the order.

    ``years`` bounds the publication year, both ends inclusive (either open when
    None); ``indexed_in`` keeps works another index also holds (one of
    :data:`INDEXES`); ``newest_first`` sorts by publication date instead of relevance.
    """

    query: str
    per_page: int
    page: int = 1
    years: tuple[int | None, int | None] = (None, None)
    indexed_in: str | None = None
    open_access_only: bool = False
    newest_first: bool = False

    def params(self, mailto: str | None) -> dict[str, str | int]:
        """The query parameters of this search."""
        filters = []
        start, end = self.years
        if start is not None and end is not None:
            filters.append(f"publication_year:{start}-{end}")
        elif start is not None:
            filters.append(f"from_publication_date:{start:04d}-01-01")
        elif end is not None:
            filters.append(f"to_publication_date:{end:04d}-12-31")
        if self.indexed_in is not None:
            if self.indexed_in not in INDEXES:
                raise ValueError(f"OpenAlex cannot restrict a search to {self.indexed_in!r}")
            filters.append(f"indexed_in:{self.indexed_in}")
        if self.open_access_only:
            filters.append("is_oa:true")
        more: dict[str, str | int] = {
            "search": self.query,
            "per_page": self.per_page,
            "select": SEARCH_FIELDS,
        }
        if self.page > 1:
            more["page"] = self.page
        if filters:
            more["filter"] = ",".join(filters)
        if self.newest_first:
            more["sort"] = "publication_date:desc"
        return _params(mailto, **more)


@dataclass(frozen=True, slots=True)
class Found:
    """One search hit: the work, and whether OpenAlex knows it to be open access."""

    work: Work
    open_access: bool | None


@dataclass(frozen=True, slots=True)
class FoundPage:
    """One page of search hits and how many works match in all."""

    total: int
    found: list[Found]


def parse_found_page(data: Any) -> FoundPage:
    """A :class:`FoundPage` from a list response."""
    page = expect_dict(data, "a list response")
    found = []
    for item in expect_list(page.get("results"), "results"):
        if isinstance(item, dict):
            is_oa = mapping(item.get("open_access")).get("is_oa")
            found.append(Found(parse_work(item), is_oa if isinstance(is_oa, bool) else None))
    total = integer(mapping(page.get("meta")).get("count"))
    return FoundPage(total if total is not None else len(found), found)


async def search_works(client: SourceClient, search: WorksSearch, mailto: str | None) -> FoundPage:
    """One page of the works matching ``search``."""
    data = await client.get_json(API_BASE, params=search.params(mailto))
    return parse_or_drift(client, parse_found_page, data)
