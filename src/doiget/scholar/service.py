"""The scholar core: one call per tool, shared by the MCP tools and ``doiget scholar``.

Every call checks its input (INVALID_REF naming the problem), answers from the
short-lived cache when the same call was answered recently, and otherwise asks its
upstream through the process's one :class:`~doiget.net.network.Network`, whose rate
gate holds arXiv to 1 request per 3 s, Semantic Scholar to 1/s and PubMed to 3/s
(more with a key). Results come back in the shapes of :mod:`doiget.scholar.shapes`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Hashable
from typing import Final, TypeVar

from doiget.cite.bibtex import to_bibtex
from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.models import Work
from doiget.net.deadline import call_deadline
from doiget.net.network import Network
from doiget.refs import parse_arxiv_id
from doiget.runtime import Runtime
from doiget.scholar import shapes
from doiget.scholar.cache import AnswerCache
from doiget.scholar.contracts import (
    ArxivLookup,
    ArxivPaper,
    ArxivSearch,
    CitingPapers,
    PubmedLookup,
    PubmedPaper,
    ScholarSearch,
    SemanticScholarLookup,
    SemanticScholarPaper,
)
from doiget.sources import arxiv, pubmed, semantic_scholar
from doiget.sources.pubmed import EutilsIdentity, PubmedArticle
from doiget.sources.semantic_scholar import S2Paper

_PMID: Final = re.compile(r"[0-9]{1,10}")


def _invalid(message: str) -> DoigetError:
    return DoigetError(ErrorCode.INVALID_REF, message)


def check_pmid(pmid: str) -> str:
    """A PMID as digits, or INVALID_REF."""
    value = pmid.strip() if isinstance(pmid, str) else ""
    if not _PMID.fullmatch(value):
        raise _invalid(
            f"pmid must be the digits of a PubMed id, e.g. '29106400' (got {quoted(pmid)})."
        )
    return value


T = TypeVar("T")


class Scholar:
    """Search and lookup across arXiv, Semantic Scholar and PubMed for one process."""

    def __init__(self, runtime: Runtime, network: Network | None = None) -> None:
        self.settings = runtime.settings
        self.network = network or runtime.network()
        self.cache = AnswerCache(self.settings.scholar_cache_ttl)
        self._eutils = EutilsIdentity.from_settings(self.settings)

    async def aclose(self) -> None:
        """Nothing to release: the network belongs to whoever built it."""

    async def _answer(self, key: tuple[Hashable, ...], fetch: Callable[[], Awaitable[T]]) -> T:
        """The cached answer for ``key``, else ``fetch()`` within the call's time limit."""
        with call_deadline(self.network.timeouts.call_seconds(api=True)):
            return await self.cache.get_or_fetch(key, fetch)

    def _s2_key(self) -> str | None:
        return semantic_scholar.api_key_of(self.settings)

    # -- arXiv --------------------------------------------------------------------

    async def search_arxiv(self, request: ArxivSearch) -> list[ArxivPaper]:
        """arXiv search results, in the order arXiv ranks them for ``sortBy``."""
        sort_by = request.sort_by
        order = next((known for known in arxiv.SORT_BY if known == sort_by), None)
        if order is None:
            raise _invalid(
                f"sortBy must be one of {', '.join(arxiv.SORT_BY)} (got {quoted(sort_by)})."
            )
        author = " ".join(request.author.split()) if request.author else None
        filters = arxiv.SearchFilters(author, request.start_year, request.end_year)
        client = self.network.client("arxiv")
        works = await self._answer(
            ("arxiv.search", request.query, filters, request.max_results, order),
            lambda: arxiv.search_filtered(
                client, request.query, filters, request.max_results, order
            ),
        )
        return [shapes.arxiv_paper(work) for work in works]

    async def _arxiv_work(self, arxiv_id: str) -> Work:
        ref = parse_arxiv_id(arxiv_id)
        client = self.network.client("arxiv")
        return await self._answer(
            ("arxiv.get", ref.canonical), lambda: arxiv.get_work(client, ref.canonical)
        )

    async def get_arxiv_paper(self, request: ArxivLookup) -> ArxivPaper:
        """One arXiv paper by id (any arXiv form; the latest version unless one is given)."""
        return shapes.arxiv_paper(await self._arxiv_work(request.arxiv_id))

    async def arxiv_to_bibtex(self, request: ArxivLookup) -> str:
        """A BibTeX entry with eprint, archivePrefix and primaryClass."""
        return to_bibtex(await self._arxiv_work(request.arxiv_id), with_abstract=True)

    # -- Semantic Scholar -----------------------------------------------------------

    async def search_semantic_scholar(self, request: ScholarSearch) -> list[SemanticScholarPaper]:
        """Semantic Scholar relevance search results."""
        client = self.network.client("s2")
        papers = await self._answer(
            ("s2.search", *request.key),
            lambda: semantic_scholar.search(
                client,
                request.query,
                request.max_results,
                (request.start_year, request.end_year),
                self._s2_key(),
            ),
        )
        return [shapes.s2_paper(paper) for paper in papers]

    async def _s2_paper(self, identifier: str) -> S2Paper:
        paper_id = semantic_scholar.api_paper_id(identifier)
        client = self.network.client("s2")
        return await self._answer(
            ("s2.paper", paper_id),
            lambda: semantic_scholar.get_paper(client, paper_id, self._s2_key()),
        )

    async def get_semantic_scholar_paper(
        self, request: SemanticScholarLookup
    ) -> SemanticScholarPaper:
        """One Semantic Scholar paper by S2 id, DOI, arXiv id or prefixed external id."""
        return shapes.s2_paper(await self._s2_paper(request.identifier))

    async def get_paper_citations(self, request: CitingPapers) -> list[SemanticScholarPaper]:
        """Papers citing ``paperId``, as many as asked (pages followed as needed)."""
        max_results = request.max_results
        api_id = semantic_scholar.api_paper_id(request.paper_id)
        client = self.network.client("s2")
        papers = await self._answer(
            ("s2.citations", api_id, max_results),
            lambda: semantic_scholar.citations(client, api_id, max_results, self._s2_key()),
        )
        return [shapes.s2_paper(paper) for paper in papers]

    async def semantic_scholar_to_bibtex(self, request: SemanticScholarLookup) -> str:
        """A BibTeX entry for one Semantic Scholar paper."""
        paper = await self._s2_paper(request.identifier)
        return to_bibtex(paper.to_work(), with_abstract=True)

    # -- PubMed ---------------------------------------------------------------------

    async def search_pubmed(self, request: ScholarSearch) -> list[PubmedPaper]:
        """PubMed results by relevance (esearch, then efetch for the records)."""
        client = self.network.client("pubmed")
        identity = self._eutils

        async def run() -> list[PubmedArticle]:
            hits = await pubmed.search_ids(
                client,
                request.query,
                request.max_results,
                (request.start_year, request.end_year),
                identity,
            )
            return await pubmed.fetch_articles(client, hits.ids[: request.max_results], identity)

        articles = await self._answer(("pubmed.search", *request.key), run)
        return [shapes.pubmed_paper(article) for article in articles]

    async def _pubmed_article(self, pmid: str) -> PubmedArticle:
        pmid = check_pmid(pmid)
        client = self.network.client("pubmed")
        identity = self._eutils

        async def run() -> PubmedArticle:
            found = await pubmed.fetch_articles(client, [pmid], identity)
            if not found:
                raise DoigetError(ErrorCode.NOT_FOUND, f"PubMed has no record {pmid}.")
            return found[0]

        return await self._answer(("pubmed.paper", pmid), run)

    async def get_pubmed_paper(self, request: PubmedLookup) -> PubmedPaper:
        """One PubMed record by PMID."""
        return shapes.pubmed_paper(await self._pubmed_article(request.pmid))

    async def pubmed_to_bibtex(self, request: PubmedLookup) -> str:
        """A BibTeX entry keyed ``pmid<PMID>``."""
        article = await self._pubmed_article(request.pmid)
        return to_bibtex(article.to_work(), key=f"pmid{article.pmid}", with_abstract=True)
