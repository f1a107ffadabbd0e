"""The web core: what the web tools and ``doiget web`` call.

It owns the network, the provider router, the scraper, the shared cache and the
artifact store, and turns each call into an :class:`~doiget.web.outcome.Outcome`:
the result body (from cache when fresh enough), its ``_meta``, and a resource link
instead of the body when the result is large.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from doiget import metrics
from doiget.config import Settings
from doiget.errors import DoigetError
from doiget.net.deadline import call_deadline
from doiget.net.network import Network
from doiget.web.artifacts import Artifacts
from doiget.web.browser.tier import BrowserTier
from doiget.web.cache import Cache, open_cache
from doiget.web.cachekey import TTL_SECONDS, context_key, request_key
from doiget.web.lens import load_lenses
from doiget.web.outcome import TRUST, Outcome, ResourceLink, freshness_meta
from doiget.web.recording import record_found
from doiget.web.requests import (
    AcademicSearchRequest,
    CachedRequest,
    PatentSearchRequest,
    ResearchExportRequest,
    ResearchSessionRequest,
    ResearchStepRequest,
    ScrapePageRequest,
    SearchAndScrapeRequest,
    WebSearchRequest,
)
from doiget.web.research import Research
from doiget.web.results import (
    AcademicSearchResult,
    LinkedResult,
    PatentSearchResult,
    ScrapePageResult,
    SearchAndScrapeResult,
    WebResult,
    WebSearchResult,
)
from doiget.web.router import Router
from doiget.web.scrape.service import Scraper
from doiget.web.search import web_search

if TYPE_CHECKING:
    from doiget.web.academic import Academic
    from doiget.web.patents import Patents

logger = logging.getLogger("doiget.web")

Meta = dict[str, Any] | None
ResultT = TypeVar("ResultT", bound=WebResult)
# Tools whose fresh (not cached) results also carry cache provenance.
_FRESH_META = frozenset({"web_search"})
# Tools whose requests read web pages (the page limit applies to them).
_PAGE_TOOLS = frozenset({"scrape_page", "search_and_scrape"})
# The heaviest results, the only ones answered with a resource link when large:
# scrape_page in raw mode, search_and_scrape and research_export. A full or preview
# scrape inlines its content, which max_length already bounds.
_LINKED_TOOLS = frozenset({"search_and_scrape", "research_export"})


class WebCore:
    """One per process (or per CLI command)."""

    def __init__(
        self,
        settings: Settings,
        network: Network | None = None,
        *,
        clock: Callable[[], float] = time.time,
        links: bool = True,
    ) -> None:
        """``links``: whether a large result is stored and linked (off: always inline,
        as a shell wants it)."""
        self.settings = settings
        self._owns_network = network is None
        self.network = network or Network(settings)
        self.router = Router(settings, self.network)
        self.scraper = Scraper(self.network, browser=BrowserTier(settings.browser))
        self._clock = clock
        self._cache = _cache_or_none(settings, clock)
        self.artifacts = (
            Artifacts(self._cache, clock=clock) if self._cache is not None and links else None
        )
        self.research = Research(settings, self.network, clock)
        self._academic: Academic | None = None
        self._patents: Patents | None = None

    async def aclose(self) -> None:
        """Close the cache, and the network pools when this core built them."""
        if self._owns_network:
            await self.network.aclose()
        if self._cache is not None:
            await self._cache.aclose()
        await self.research.aclose()
        await self.scraper.aclose()

    async def search(self, request: WebSearchRequest) -> Outcome:
        """web_search."""
        return await self._answered(
            "web_search", request.session_id, lambda: self._searched(request)
        )

    async def scrape(self, request: ScrapePageRequest) -> Outcome:
        """scrape_page."""
        return await self._answered(
            "scrape_page",
            request.session_id,
            lambda: self._scraped(request),
            linkable=request.mode == "raw",
        )

    async def search_and_scrape(self, request: SearchAndScrapeRequest) -> Outcome:
        """search_and_scrape: not cached as a whole; its search and its scrapes are."""
        from doiget.web.combined import search_and_scrape

        async def search(inner: WebSearchRequest) -> WebSearchResult:
            return (await self._searched(inner))[0]

        async def scrape(inner: ScrapePageRequest) -> ScrapePageResult:
            return (await self._scraped(inner))[0]

        async def combined() -> tuple[SearchAndScrapeResult, Meta]:
            result = await search_and_scrape(request, search, scrape, self.router)
            return _valid_unicode(result), None

        return await self._answered("search_and_scrape", request.session_id, combined)

    async def academic_search(self, request: AcademicSearchRequest) -> Outcome:
        """academic_search."""
        from doiget.web.academic import Academic

        if self._academic is None:
            self._academic = Academic(self.settings, self.network)
        academic = self._academic
        # Whether Unpaywall can be asked decides pdfUrl and what open_access keeps.
        context = {"unpaywall": self.settings.email is not None}

        def answer() -> Awaitable[tuple[AcademicSearchResult, Meta]]:
            return self._cached(
                "academic_search",
                request,
                AcademicSearchResult,
                lambda: academic.search(request),
                context,
                keep=lambda result: not result.notes,
            )

        return await self._answered("academic_search", request.session_id, answer)

    async def patent_search(self, request: PatentSearchRequest) -> Outcome:
        """patent_search (an empty answer is not cached: a later call may find more)."""
        from doiget.web.patents import Patents

        if self._patents is None:
            self._patents = Patents(self.settings, self.network)
        patents = self._patents

        async def compute() -> PatentSearchResult:
            return PatentSearchResult.model_validate(await patents.search(request))

        context = None if request.provider else {"providers": list(patents.configured())}

        def answer() -> Awaitable[tuple[PatentSearchResult, Meta]]:
            return self._cached(
                "patent_search",
                request,
                PatentSearchResult,
                compute,
                context,
                keep=lambda result: bool(result.result_count) and not result.notes,
            )

        return await self._answered("patent_search", request.session_id, answer)

    async def _answered(
        self,
        tool: str,
        session_id: str | None,
        answer: Callable[[], Awaitable[tuple[WebResult, Meta]]],
        *,
        linkable: bool | None = None,
    ) -> Outcome:
        """``answer()``, recorded in the call's session when there is one, then finished.

        A call linked to a session fails before any work when the session is gone.
        ``linkable`` says whether a large result may be linked (default: by tool).
        """
        if session_id:
            await self.research.require(session_id)
        budget = self.network.timeouts.call_seconds(
            api=tool != "scrape_page", page=tool in _PAGE_TOOLS
        )
        with call_deadline(budget):
            result, meta = await answer()
        meta = await self._recorded(session_id, tool, result, meta)
        if linkable is None:
            linkable = tool in _LINKED_TOOLS
        return await self._finish(result, meta) if linkable else Outcome(result, meta)

    # -- research sessions ----------------------------------------------------------

    async def research_step(self, request: ResearchStepRequest) -> Outcome:
        """sequential_search."""
        return Outcome(await self.research.step(request))

    async def research_session(self, request: ResearchSessionRequest) -> Outcome:
        """get_research_session."""
        return Outcome(await self.research.session(request))

    async def research_export(self, request: ResearchExportRequest) -> Outcome:
        """research_export (a large document comes back as a resource link)."""
        return await self._finish(await self.research.export(request), None)

    async def _recorded(
        self, session_id: str | None, tool: str, result: WebResult, meta: Meta
    ) -> Meta:
        """Record what ``tool`` found in the call's session; the ``_meta`` to answer with.

        The result is the caller's either way: a session that expired meanwhile (or a
        store that failed) is reported in ``_meta``, not by losing the answer.
        """
        if not session_id:
            return meta
        warning = await record_found(self.research, session_id, tool, result.found_sources())
        if warning is not None:
            meta = {**(meta or {}), "sessionWarning": warning}
        return meta

    async def _searched(self, request: WebSearchRequest) -> tuple[WebSearchResult, Meta]:
        """One search's result (from cache when fresh) and its ``_meta``."""
        lenses = load_lenses(self.settings.lens_dir)
        # What else decides the answer: the providers that would be asked, and the
        # lens's current definition (a user may edit it).
        context: dict[str, Any] = {}
        if not request.provider:
            context["providers"] = list(self.router.order())
        lens = lenses.get((request.lens or "").lower())
        if lens is not None:
            context["lens"] = [list(lens.domains), lens.cx]
        return await self._cached(
            "web_search",
            request,
            WebSearchResult,
            lambda: web_search(request, self.router, lenses),
            context,
        )

    async def _scraped(self, request: ScrapePageRequest) -> tuple[ScrapePageResult, Meta]:
        """One scrape's result (from cache when fresh) and its ``_meta``."""

        # Whether pages can be rendered decides what a script-built page gives.
        context = {"browser": self.scraper.browser_usable}
        return await self._cached(
            "scrape_page",
            request,
            ScrapePageResult,
            lambda: self.scraper.scrape(request),
            context,
        )

    async def read_artifact(self, uri: str) -> tuple[str, str] | None:
        """The body and mime type of a linked result, or None when unknown or expired."""
        if self.artifacts is None:
            return None
        return await self.artifacts.read(uri)

    # -- cache and links ----------------------------------------------------------

    async def _cached(
        self,
        tool: str,
        request: CachedRequest,
        kind: type[ResultT],
        compute: Callable[[], Awaitable[ResultT | tuple[ResultT, Meta]]],
        context: Mapping[str, Any] | None = None,
        keep: Callable[[ResultT], bool] = lambda result: True,
    ) -> tuple[ResultT, Meta]:
        """``compute()``'s result, or a fresh cached one; ``keep`` says what may be cached.

        ``compute`` may also return routing provenance beside its result.
        """
        key = request_key(tool, request) + context_key(context)
        ttl = float(TTL_SECONDS[tool])
        if self._cache is not None:
            entry = await self._cache.get(key)
            metrics.count("cache_lookups", cache="web", result="miss" if entry is None else "hit")
            if entry is not None:
                hit = freshness_meta(cached=True, age=entry.age(self._clock()), ttl=ttl)
                return kind.model_validate(json.loads(entry.value)), hit
        computed = await compute()
        computed, routing = computed if isinstance(computed, tuple) else (computed, None)
        result = _valid_unicode(computed)
        if self._cache is not None and keep(result):
            await self._cache.set(
                key, json.dumps(result.wire(), ensure_ascii=False).encode("utf-8"), ttl
            )
        meta: Meta = freshness_meta(cached=False, age=0, ttl=ttl) if tool in _FRESH_META else None
        if routing is not None:
            meta = {**(meta or {}), "routing": routing}
        return result, meta

    async def _finish(self, result: WebResult, meta: Meta) -> Outcome:
        """The outcome of ``result``: inline, or a link when it is large."""
        if self.artifacts is None:
            return Outcome(result, meta)
        text = json.dumps(result.wire(), ensure_ascii=False)
        linked = await self.artifacts.link_if_large(text, "application/json", result.headline())
        if linked is None:
            return Outcome(result, meta)
        inline = LinkedResult.model_validate({**linked.to_dict(), "trust": TRUST})
        if isinstance(result, ScrapePageResult) and result.raw:
            inline.content_size_bytes = result.content_length
        link = ResourceLink(
            uri=linked.uri,
            name=linked.uri.rsplit("/", 1)[-1][:16],
            mime_type=linked.mime_type,
            size=linked.bytes,
            description=linked.summary,
        )
        return Outcome(inline, meta, link)


def _cache_or_none(settings: Settings, clock: Callable[[], float]) -> Cache | None:
    """The web cache, or None (with a warning) when it cannot be opened: a cache
    problem slows calls down, it never fails them."""
    try:
        return open_cache(settings, clock)
    except (DoigetError, OSError, ValueError) as exc:
        logger.warning("web cache off: %s", getattr(exc, "message", exc))
        return None


def _valid_unicode(result: ResultT) -> ResultT:
    """``result`` with lone surrogates (from JSON escapes such as a half emoji in a
    page's JSON-LD) replaced, so it can always be encoded as UTF-8."""
    text = json.dumps(result.wire(), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return type(result).model_validate_json(text.encode("utf-8", "replace"))
    return result
