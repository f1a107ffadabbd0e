"""academic_search: papers from the scholarly indexes, with open-access and retraction facts.

One index answers each call. Without ``provider`` they are asked in the order
OpenAlex, Crossref, Semantic Scholar (PubMed and arXiv join when ``source`` names
them), and the next is asked only when one fails; an index that answers with nothing
has answered. Papers carrying a DOI but no PDF link are looked up at Unpaywall (when
a contact email is configured) before the ``open_access``/``pdf_only`` filters run,
and the returned ones get Crossref's retraction and correction notices.

``source`` picks whose papers are wanted: ``all``, or those indexed in one index.
OpenAlex honours every value through its ``indexed_in`` filter; each other index
honours ``all`` and itself. An explicit provider asked for a source it cannot
restrict to answers unrestricted, and says so in ``notes``, as it does for a date
order it cannot produce upstream.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio

from doiget.config import Settings
from doiget.errors import DoigetError
from doiget.refs import fetchable_ref
from doiget.web.failure import Kind, failure_of, kind_of, web_error
from doiget.web.outcome import TRUST
from doiget.web.requests import ACADEMIC_PROVIDERS as PROVIDERS
from doiget.web.requests import AcademicSearchRequest
from doiget.web.results import AcademicSearchResult

if TYPE_CHECKING:
    from doiget.models import UpdateNotice, Work
    from doiget.net.network import Network

logger = logging.getLogger("doiget.web")


# Asked in this order when no provider is named and source is "all".
DEFAULT_CHAIN: Final = ("openalex", "crossref", "semantic_scholar")
# The source values (besides "all") each provider can restrict its answer to.
RESTRICTS_TO: Final[dict[str, frozenset[str]]] = {
    "openalex": frozenset({"openalex", "arxiv", "pubmed", "crossref"}),
    "crossref": frozenset({"crossref"}),
    "semantic_scholar": frozenset({"semantic_scholar"}),
    "pubmed": frozenset({"pubmed"}),
    "arxiv": frozenset({"arxiv"}),
}
# Providers that cannot be asked for a date order upstream (Semantic Scholar has
# none): their best matches are sorted here.
NO_DATE_SORT: Final = frozenset({"semantic_scholar"})
# Arguments that can eliminate papers, as named in a zero-result hint.
FILTERS: Final = ("year_from", "year_to", "open_access", "pdf_only", "source")
ABSTRACT_MAX: Final = 500
AUTHORS_MAX: Final = 20
# Papers asked for when post-filters may drop some, at most.
OVERFETCH_MAX: Final = 20
# Unpaywall and Crossref lookups in flight at once (the rate gate still spaces them).
LOOKUPS_AT_ONCE: Final = 4
_HTTP_STATUS: Final = re.compile(r"\bHTTP (\d{3})\b")


@dataclass(frozen=True, slots=True)
class _Query:
    """A checked academic_search call."""

    text: str
    num_results: int
    year_from: int | None
    year_to: int | None
    source: str
    open_access: bool
    pdf_only: bool
    newest_first: bool

    @property
    def years(self) -> tuple[int | None, int | None]:
        """(from, to), either end None when open."""
        return self.year_from, self.year_to

    @property
    def fetch_count(self) -> int:
        """How many papers to ask for: more when the post-filters may drop some."""
        if self.open_access or self.pdf_only:
            return min(self.num_results * 2, OVERFETCH_MAX)
        return self.num_results


@dataclass(slots=True)
class _Paper:
    """One result while it is enriched; :meth:`to_dict` is its wire form."""

    title: str
    url: str
    source: str
    date: str  # the fullest date known ("2012", "2012-05-23"), "" when none: the sort key
    doi: str | None = None
    authors: list[str] = field(default_factory=list)
    journal: str | None = None
    year: int | None = None
    abstract: str | None = None
    citation_count: int | None = None
    open_access: bool | None = None
    pdf_url: str | None = None
    ref: str | None = None
    # Crossref's notices when the answering record carries them; None: not looked up yet.
    updates: tuple[UpdateNotice, ...] | None = None
    retraction: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The paper as the tool returns it, absent fields left out."""
        out: dict[str, Any] = {"title": self.title, "url": self.url, "source": self.source}
        optional: dict[str, Any] = {
            "doi": self.doi,
            "authors": self.authors or None,
            "journal": self.journal,
            "year": self.year,
            "abstract": self.abstract,
            "citationCount": self.citation_count,
            "openAccess": self.open_access,
            "pdfUrl": self.pdf_url,
            "retractionStatus": self.retraction,
            "ref": self.ref,
        }
        out.update((name, value) for name, value in optional.items() if value is not None)
        return out


@dataclass(frozen=True, slots=True)
class _Answer:
    """What one index said: its papers and how many it matched in all."""

    papers: list[_Paper]
    total: int


def cut_abstract(text: str, limit: int = ABSTRACT_MAX) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, "…" marking a cut."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space > 0:
        head = head[:space]
    return head.rstrip(" ,;:") + "…"


def _paper(work: Work, provider: str, *, open_access: bool | None = None) -> _Paper | None:
    """The result form of ``work`` as ``provider`` gave it (None when it has no link)."""
    url = f"https://doi.org/{work.doi}" if work.doi and provider != "arxiv" else work.url
    if not url and work.openalex_id:
        url = f"https://openalex.org/{work.openalex_id}"
    if not url:
        return None
    names = [name for author in work.authors if (name := author.display)]
    if len(names) > AUTHORS_MAX:
        names = [*names[:AUTHORS_MAX], "et al."]
    return _Paper(
        title=work.title or "(untitled)",
        url=url,
        source=provider,
        date=work.issued or (str(work.year) if work.year else ""),
        doi=work.doi,
        authors=names,
        journal=work.venue,
        year=work.year,
        abstract=cut_abstract(work.abstract) if work.abstract else None,
        citation_count=work.cited_by_count,
        open_access=open_access,
        pdf_url=work.pdf_url,
        ref=fetchable_ref(
            work.doi, work.arxiv_id, prefer="arxiv" if provider == "arxiv" else "doi"
        ),
        updates=work.updates if provider == "crossref" else None,
    )


def _papers(works: Iterable[tuple[Work, bool | None]], provider: str) -> list[_Paper]:
    return [
        paper for work, oa in works if (paper := _paper(work, provider, open_access=oa)) is not None
    ]


def _query(request: AcademicSearchRequest) -> _Query:
    """The checked request (the contract checks bounds; this checks what it cannot)."""
    text = " ".join(request.query.split())
    if not text:
        raise web_error(Kind.VALIDATION, "query is empty; give the words to search for.")
    year_from, year_to = request.year_from, request.year_to
    if year_from is not None and year_to is not None and year_from > year_to:
        raise web_error(
            Kind.VALIDATION,
            f"year_from ({year_from}) is after year_to ({year_to}); swap them or drop one.",
        )
    return _Query(
        text=text,
        num_results=request.num_results,
        year_from=year_from,
        year_to=year_to,
        source=request.source,
        open_access=request.open_access,
        pdf_only=request.pdf_only,
        newest_first=request.sort_by == "date",
    )


def _chain(source: str) -> tuple[str, ...]:
    """The providers asked, in order, when none is named."""
    if source == "all":
        return DEFAULT_CHAIN
    return tuple(name for name in PROVIDERS if source in RESTRICTS_TO[name])


def _limits(name: str, query: _Query) -> list[str]:
    """What ``name`` cannot do of what ``query`` asks, said plainly for ``notes``."""
    notes = []
    if query.source != "all" and query.source not in RESTRICTS_TO[name]:
        notes.append(
            f"{name} cannot restrict results to {query.source}; these are from all of {name}."
        )
    if query.newest_first and name in NO_DATE_SORT:
        notes.append(
            f"{name} does not sort by date here; its most relevant matches are shown newest first."
        )
    return notes


class Academic:
    """The academic_search core: one per WebCore, sharing its network."""

    def __init__(self, settings: Settings, network: Network) -> None:
        self._settings = settings
        self._network = network
        self._providers: dict[str, Callable[[_Query], Awaitable[_Answer]]] = {
            "openalex": self._openalex,
            "crossref": self._crossref,
            "semantic_scholar": self._semantic_scholar,
            "pubmed": self._pubmed,
            "arxiv": self._arxiv,
        }

    async def search(self, request: AcademicSearchRequest) -> AcademicSearchResult:
        """The academic_search result for ``request``."""
        provider = request.provider
        query = _query(request)
        chain = (provider,) if provider is not None else _chain(query.source)
        used, answer, notes = await self._first_answer(chain, query, explicit=provider is not None)
        papers = answer.papers[: query.fetch_count]
        await self._add_open_access(papers)
        kept = self._filtered(papers, query, notes)
        if query.newest_first:
            # Stable: papers of one date keep the index's order; undated ones go last.
            kept.sort(key=lambda paper: paper.date, reverse=True)
        kept = kept[: query.num_results]
        await self._add_retraction_status(kept)
        body: dict[str, Any] = {
            "papers": [paper.to_dict() for paper in kept],
            "query": query.text,
            "totalResults": answer.total,
            "resultCount": len(kept),
            "source": used,
        }
        if notes:
            body["notes"] = notes
        if not kept:
            body["hints"] = _hints(request, used)
        body["trust"] = TRUST
        return AcademicSearchResult.model_validate(body)

    # -- which index answers ------------------------------------------------------

    async def _first_answer(
        self, chain: tuple[str, ...], query: _Query, *, explicit: bool
    ) -> tuple[str, _Answer, list[str]]:
        """The first answer along ``chain``; a failure passes to the next unless ``explicit``."""
        failed: list[tuple[str, DoigetError]] = []
        for name in chain:
            try:
                answer = await self._providers[name](query)
            except DoigetError as error:
                if explicit or kind_of(error) is Kind.VALIDATION:
                    raise _provider_failed(name, error) from error
                logger.info("academic provider %s failed, trying the next: %s", name, error.message)
                failed.append((name, error))
                continue
            notes = [f"{who} did not answer ({_reason(why)})" for who, why in failed]
            if failed:
                notes[-1] += f"; {name} answered instead."
            return name, answer, notes + _limits(name, query)
        raise _all_failed(failed)

    async def _openalex(self, query: _Query) -> _Answer:
        from doiget.sources import openalex

        search = openalex.WorksSearch(
            query.text,
            query.fetch_count,
            years=query.years,
            indexed_in=query.source if query.source in openalex.INDEXES else None,
            open_access_only=query.open_access or query.pdf_only,
            newest_first=query.newest_first,
        )
        page = await openalex.search_works(
            self._network.client("openalex"), search, self._settings.email
        )
        works = [(hit.work, hit.open_access) for hit in page.found]
        return _Answer(_papers(works, "openalex"), page.total)

    async def _crossref(self, query: _Query) -> _Answer:
        from doiget.sources import crossref

        page = await crossref.search_works(
            self._network.client("crossref"),
            query.text,
            query.fetch_count,
            years=query.years,
            full_text_only=query.pdf_only,
            newest_first=query.newest_first,
            mailto=self._settings.email,
        )
        return _Answer(_papers([(work, None) for work in page.works], "crossref"), page.total)

    async def _semantic_scholar(self, query: _Query) -> _Answer:
        from doiget.sources import semantic_scholar

        found = await semantic_scholar.search(
            self._network.client("s2"),
            query.text,
            query.fetch_count,
            query.years,
            semantic_scholar.api_key_of(self._settings),
        )
        works = [(paper.to_work(), True if paper.pdf_url else None) for paper in found]
        return _Answer(_papers(works, "semantic_scholar"), len(works))

    async def _pubmed(self, query: _Query) -> _Answer:
        from doiget.sources import pubmed

        client = self._network.client("pubmed")
        identity = pubmed.EutilsIdentity.from_settings(self._settings)
        hits = await pubmed.search_ids(
            client,
            query.text,
            query.fetch_count,
            query.years,
            identity,
            newest_first=query.newest_first,
        )
        articles = await pubmed.fetch_articles(client, hits.ids[: query.fetch_count], identity)
        works = [(article.to_work(), None) for article in articles]
        return _Answer(_papers(works, "pubmed"), hits.count)

    async def _arxiv(self, query: _Query) -> _Answer:
        from doiget.sources import arxiv

        order: arxiv.SortBy = "submittedDate" if query.newest_first else "relevance"
        found = await arxiv.search_filtered(
            self._network.client("arxiv"),
            query.text,
            arxiv.SearchFilters(start_year=query.year_from, end_year=query.year_to),
            query.fetch_count,
            order,
        )
        # Every arXiv paper is free to read, and its PDF link is in the record.
        return _Answer(_papers([(work, True) for work in found], "arxiv"), len(found))

    # -- enrichment and filters ---------------------------------------------------

    async def _add_open_access(self, papers: list[_Paper]) -> None:
        """Unpaywall's best PDF and OA status for DOI papers without a PDF link.

        Best effort: a failed lookup leaves the paper as it was. Needs a contact email
        (Unpaywall requires one), so nothing happens without it.
        """
        email = self._settings.email
        wanted = [(paper, doi) for paper in papers if (doi := paper.doi) and not paper.pdf_url]
        if not email or not wanted:
            return
        from doiget.sources import unpaywall

        client = self._network.client("unpaywall")
        limiter = anyio.CapacityLimiter(LOOKUPS_AT_ONCE)

        async def look_up(paper: _Paper, doi: str) -> None:
            async with limiter:
                try:
                    access, _ = await unpaywall.get_record(client, doi, email)
                except DoigetError as error:
                    logger.info("no open-access facts for %s: %s", doi, error.message)
                    return
            candidates = access.pdf_candidates()
            if candidates:
                paper.pdf_url = candidates[0].url_for_pdf
            paper.open_access = bool(paper.open_access) or access.is_oa

        async with anyio.create_task_group() as group:
            for paper, doi in wanted:
                group.start_soon(look_up, paper, doi)

    def _filtered(self, papers: list[_Paper], query: _Query, notes: list[str]) -> list[_Paper]:
        """``papers`` after the open_access and pdf_only filters."""
        kept = [
            paper
            for paper in papers
            if (not query.open_access or paper.open_access)
            and (not query.pdf_only or paper.pdf_url)
        ]
        unknown = any(paper.open_access is None and not paper.pdf_url for paper in papers)
        if len(kept) < len(papers) and unknown and not self._settings.email:
            notes.append(
                "open-access status and PDF links of DOI-only papers come from Unpaywall, "
                "which needs DOIGET_EMAIL; papers without them were left out."
            )
        return kept

    async def _add_retraction_status(self, papers: list[_Paper]) -> None:
        """Crossref's retraction or correction notices, as ``retractionStatus``.

        A Crossref answer carries them already; other papers with a DOI are looked up
        at Crossref. A failed lookup, or no notice, leaves the field out.
        """
        from doiget.sources import crossref
        from doiget.web.scrape.doi import retraction_status

        client = self._network.client("crossref")
        limiter = anyio.CapacityLimiter(LOOKUPS_AT_ONCE)

        async def look_up(paper: _Paper, doi: str) -> None:
            async with limiter:
                try:
                    work = await crossref.get_work(client, doi, self._settings.email)
                except DoigetError as error:
                    logger.info("no retraction status for %s: %s", doi, error.message)
                    return
            paper.updates = work.updates

        async with anyio.create_task_group() as group:
            for paper in papers:
                if paper.updates is None and (doi := paper.doi):
                    group.start_soon(look_up, paper, doi)
        for paper in papers:
            if paper.updates:
                paper.retraction = retraction_status(paper.updates)


def _reason(error: DoigetError) -> str:
    """A failure in a few words: the HTTP status when known, else its kind (the full
    message names the URL, which a note has no use for)."""
    status = (error.details or {}).get("status")
    if not isinstance(status, int):
        found = _HTTP_STATUS.search(error.message)
        status = int(found.group(1)) if found else None
    return f"HTTP {status}" if status else kind_of(error).value.replace("_", " ")


def _hints(request: AcademicSearchRequest, used: str) -> dict[str, Any]:
    from doiget.web.search import zero_result_hints

    applied = [name for name in FILTERS if getattr(request, name) not in (None, False, "all")]
    return zero_result_hints(applied, [name for name in PROVIDERS if name != used])


def _provider_failed(name: str, error: DoigetError) -> DoigetError:
    """``error`` of the one provider asked, naming it and what else to try."""
    failure = failure_of(error)
    others = ", ".join(other for other in PROVIDERS if other != name)
    advice = (
        f"Retry later, pass another provider ({others}), or leave provider out to let "
        "doiget fall back from one index to the next."
        if failure.retryable
        else failure.suggested_action
    )
    return web_error(
        failure.kind,
        f"{name} could not answer the search: {error.message}",
        provider=name,
        retry_after=error.retry_after,
        suggested_action=advice,
    )


def _all_failed(failed: list[tuple[str, DoigetError]]) -> DoigetError:
    waits = [error.retry_after for _, error in failed if error.retry_after]
    wait = max(1, round(min(waits, default=60)))
    return web_error(
        Kind.UPSTREAM,
        "every academic index asked failed: "
        + "; ".join(f"{name}: {error.message}" for name, error in failed),
        retry_after=float(wait),
        suggested_action=f"Retry in about {wait} s, or name another provider "
        f"({', '.join(PROVIDERS)}).",
    )
