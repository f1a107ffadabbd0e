"""The web core: what the web tools and ``doiget web`` call.

It owns the network, the provider router, the scraper, the shared cache and the
artifact store, and turns each call into an :class:`~doiget.web.outcome.Outcome`:
the result body (from cache when fresh enough), its ``_meta``, and a resource link
instead of the body when the result is large.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from doiget.config import Settings
from doiget.errors import DoigetError
from doiget.net.network import Network
from doiget.web.artifacts import Artifacts
from doiget.web.cache import Cache, open_cache
from doiget.web.cachekey import TTL_SECONDS, cache_key
from doiget.web.lens import load_lenses
from doiget.web.outcome import TRUST, Outcome, ResourceLink, freshness_meta
from doiget.web.params import ACADEMIC_SEARCH, PATENT_SEARCH, SCRAPE_PAGE, WEB_SEARCH
from doiget.web.recording import record_found
from doiget.web.research import Research, paper_sources
from doiget.web.router import Router
from doiget.web.scrape.service import Scraper
from doiget.web.search import web_search

if TYPE_CHECKING:
    from doiget.web.academic import Academic
    from doiget.web.patents import Patents

logger = logging.getLogger("doiget.web")

Meta = dict[str, Any] | None
Computed = tuple[dict[str, Any], Meta]
# Tools whose fresh (not cached) results also carry cache provenance.
_FRESH_META = frozenset({"web_search"})


class WebCore:
    """One per process (or per CLI command)."""

    def __init__(
        self,
        settings: Settings,
        network: Network | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self._owns_network = network is None
        self.network = network or Network(settings)
        self.router = Router(settings, self.network)
        self.scraper = Scraper(self.network)
        self._clock = clock
        self._cache = _cache_or_none(settings, clock)
        self.artifacts = Artifacts(self._cache, clock=clock) if self._cache is not None else None
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

    async def search(self, args: Mapping[str, Any]) -> Outcome:
        """web_search."""
        await self._session_open(args)
        return await self._recorded("web_search", args, *await self._searched(args))

    async def scrape(self, args: Mapping[str, Any]) -> Outcome:
        """scrape_page."""
        await self._session_open(args)
        return await self._recorded("scrape_page", args, *await self._scraped(args))

    # -- research sessions ----------------------------------------------------------

    async def research_step(self, args: Mapping[str, Any]) -> Outcome:
        """sequential_search."""
        return Outcome(await self.research.step(args))

    async def research_session(self, args: Mapping[str, Any]) -> Outcome:
        """get_research_session."""
        return Outcome(await self.research.session(args))

    async def research_export(self, args: Mapping[str, Any]) -> Outcome:
        """research_export (a large document comes back as a resource link)."""
        return await self._finish(await self.research.export(args), None)

    async def _session_open(self, args: Mapping[str, Any]) -> None:
        """A call linked to a session fails before any work when the session is gone."""
        if args.get("sessionId"):
            await self.research.require(str(args["sessionId"]))

    async def _recorded(
        self, tool: str, args: Mapping[str, Any], body: dict[str, Any], meta: Meta
    ) -> Outcome:
        """Record what ``tool`` found in the call's session, then finish the result.

        The result is the caller's either way: a session that expired meanwhile (or a
        store that failed) is reported in ``_meta``, not by losing the answer.
        """
        if args.get("sessionId"):
            session_id, found = str(args["sessionId"]), sources_of(body)
            warning = await record_found(self.research, session_id, tool, found)
            if warning is not None:
                meta = {**(meta or {}), "sessionWarning": warning}
        return await self._finish(body, meta)

    async def search_and_scrape(self, args: Mapping[str, Any]) -> Outcome:
        """search_and_scrape: not cached as a whole; its search and its scrapes are."""
        from doiget.web.combined import search_and_scrape

        async def search(search_args: Mapping[str, Any]) -> dict[str, Any]:
            return (await self._searched(search_args))[0]

        async def scrape(url: str, max_length: int) -> dict[str, Any]:
            return (await self._scraped({"url": url, "max_length": max_length}))[0]

        await self._session_open(args)
        body = await search_and_scrape(args, search, scrape, self.router)
        return await self._recorded("search_and_scrape", args, _valid_unicode(body), None)

    async def academic_search(self, args: Mapping[str, Any]) -> Outcome:
        """academic_search."""
        from doiget.web.academic import Academic

        if self._academic is None:
            self._academic = Academic(self.settings, self.network)
        academic = self._academic

        async def compute() -> Computed:
            return await academic.search(args), None

        await self._session_open(args)
        # Whether Unpaywall can be asked decides pdfUrl and what open_access keeps.
        context = {"unpaywall": self.settings.email is not None}
        return await self._recorded(
            "academic_search",
            args,
            *await self._cached(
                "academic_search", args, ACADEMIC_SEARCH, compute, context, keep=_settled
            ),
        )

    async def patent_search(self, args: Mapping[str, Any]) -> Outcome:
        """patent_search (an empty answer is not cached: a later call may find more)."""
        from doiget.web.patents import Patents

        if self._patents is None:
            self._patents = Patents(self.settings, self.network)
        patents = self._patents

        async def compute() -> Computed:
            return await patents.search(args), None

        context = None if args.get("provider") else {"providers": list(patents.configured())}
        await self._session_open(args)
        return await self._recorded(
            "patent_search",
            args,
            *await self._cached(
                "patent_search",
                args,
                PATENT_SEARCH,
                compute,
                context,
                keep=lambda body: bool(body.get("resultCount")) and _settled(body),
            ),
        )

    async def _searched(self, args: Mapping[str, Any]) -> tuple[dict[str, Any], Meta]:
        """One search's body (from cache when fresh) and its ``_meta``."""
        lenses = load_lenses(self.settings.lens_dir)
        # What else decides the answer: the providers that would be asked, and the
        # lens's current definition (a user may edit it).
        context: dict[str, Any] = {}
        if not args.get("provider"):
            context["providers"] = list(self.router.order())
        lens = lenses.get(str(args.get("lens", "")).lower())
        if lens is not None:
            context["lens"] = [list(lens.domains), lens.cx]
        return await self._cached(
            "web_search",
            args,
            WEB_SEARCH,
            lambda: web_search(args, self.router, lenses),
            context,
        )

    async def _scraped(self, args: Mapping[str, Any]) -> tuple[dict[str, Any], Meta]:
        """One scrape's body (from cache when fresh) and its ``_meta``."""

        async def compute() -> Computed:
            return await self.scraper.scrape(args), None

        return await self._cached("scrape_page", args, SCRAPE_PAGE, compute)

    async def read_artifact(self, uri: str) -> tuple[str, str] | None:
        """The body and mime type of a linked result, or None when unknown or expired."""
        if self.artifacts is None:
            return None
        return await self.artifacts.read(uri)

    # -- cache and links ----------------------------------------------------------

    async def _cached(
        self,
        tool: str,
        args: Mapping[str, Any],
        properties: Mapping[str, Any],
        compute: Callable[[], Awaitable[Computed]],
        context: Mapping[str, Any] | None = None,
        keep: Callable[[dict[str, Any]], bool] = lambda body: True,
    ) -> tuple[dict[str, Any], Meta]:
        """``compute()``'s body, or a fresh cached one; ``keep`` says what may be cached."""
        key = cache_key(tool, args, {"properties": properties})
        if context:
            digest = hashlib.sha256(json.dumps(context, sort_keys=True).encode()).hexdigest()
            key = f"{key}:{digest[:16]}"
        ttl = float(TTL_SECONDS[tool])
        if self._cache is not None:
            entry = await self._cache.get(key)
            if entry is not None:
                hit = freshness_meta(cached=True, age=entry.age(self._clock()), ttl=ttl)
                cached: dict[str, Any] = json.loads(entry.value)
                return cached, hit
        computed, routing = await compute()
        body = _valid_unicode(computed)
        if self._cache is not None and keep(body):
            await self._cache.set(key, json.dumps(body, ensure_ascii=False).encode("utf-8"), ttl)
        meta: dict[str, Any] | None = (
            freshness_meta(cached=False, age=0, ttl=ttl) if tool in _FRESH_META else None
        )
        if routing is not None:
            meta = {**(meta or {}), "routing": routing}
        return body, meta

    async def _finish(self, body: dict[str, Any], meta: Meta) -> Outcome:
        if self.artifacts is None:
            return Outcome(body, meta)
        text = json.dumps(body, ensure_ascii=False)
        linked = await self.artifacts.link_if_large(text, "application/json", _summary(body))
        if linked is None:
            return Outcome(body, meta)
        inline = {**linked.to_dict(), "trust": TRUST}
        if body.get("raw"):
            inline["contentSizeBytes"] = body.get("contentLength", 0)
        link = ResourceLink(
            uri=linked.uri,
            name=linked.uri.rsplit("/", 1)[-1][:16],
            mime_type=linked.mime_type,
            size=linked.bytes,
            description=linked.summary,
        )
        return Outcome(inline, meta, link)


def _settled(body: Mapping[str, Any]) -> bool:
    """Whether an answer may be cached: not one that carries notes (a provider that
    failed and was skipped, a filter not applied), which may not hold next time."""
    return not body.get("notes")


def sources_of(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sources a web tool result names, in the shape sessions record."""
    if "results" in body:  # web_search
        return [{"url": r["url"], "title": r["title"], "kind": "web"} for r in body["results"]]
    if "sources" in body:  # search_and_scrape
        return [{"url": s["url"], "title": s["title"], "kind": "web"} for s in body["sources"]]
    if "patents" in body:
        return [{"url": p["url"], "title": p["title"], "kind": "patent"} for p in body["patents"]]
    if "papers" in body:  # academic_search
        return paper_sources(body["papers"])
    metadata = body["citation"]["metadata"]  # scrape_page
    page: dict[str, Any] = {"url": body["url"], "title": metadata.get("title") or body["url"]}
    if body.get("detectedDoi"):
        return [{**page, "doi": body["detectedDoi"], "kind": "paper"}]
    return [{**page, "kind": "web"}]


def _cache_or_none(settings: Settings, clock: Callable[[], float]) -> Cache | None:
    """The web cache, or None (with a warning) when it cannot be opened: a cache
    problem slows calls down, it never fails them."""
    try:
        return open_cache(settings, clock)
    except (DoigetError, OSError, ValueError) as exc:
        logger.warning("web cache off: %s", getattr(exc, "message", exc))
        return None


def _valid_unicode(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with lone surrogates (from JSON escapes such as a half emoji in a page's
    JSON-LD) replaced, so it can always be encoded as UTF-8."""
    text = json.dumps(body, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        cleaned: dict[str, Any] = json.loads(text.encode("utf-8", "replace").decode("utf-8"))
        return cleaned
    return body


def _summary(body: Mapping[str, Any]) -> str:
    """One line saying what a linked result holds."""
    query = body.get("query", "")
    if "combinedContent" in body:
        return f"{len(body['sources'])} pages read and combined for {query!r} ({body['status']})"
    if "document" in body:
        return (
            f"{body['format']} export of research session {body['sessionId']} "
            f"({body['stepCount']} steps, {body['sourceCount']} sources)"
        )
    for items, noun in (("results", "web results"), ("papers", "papers"), ("patents", "patents")):
        if items in body:
            return f"{body.get('resultCount', 0)} {noun} for {query!r}"
    title = (body.get("metadata") or {}).get("title") or body.get("url", "")
    return (
        f"{body.get('contentType') or 'content'} of {body.get('url', '')} "
        f"({body.get('contentLength', 0)} bytes{', truncated' if body.get('truncated') else ''})"
        + (f": {title}" if title and title != body.get("url") else "")
    )
