"""The scholar toolset: arXiv, Semantic Scholar and PubMed search, lookup, citations, BibTeX.

Inputs are camelCase; each result adds ``ref`` (a DOI or arXiv id doiget_fetch_paper
takes, or null). Handlers call :class:`doiget.scholar.service.Scholar`, built on the
first call. Tools whose results are papers also take a ``sessionId``: their results
are then recorded in that research session.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, cast

from pydantic import Field, create_model

from doiget.contract import LINK_SESSION, RequestT, SessionId, plain
from doiget.envelopes import SCHOLAR_ENVELOPE
from doiget.runtime import Runtime
from doiget.scholar import contracts as c
from doiget.server.toolset import Hints, LazyCore, ServedTool, Tool, ToolCall, Toolset, describe

if TYPE_CHECKING:
    from doiget.scholar.service import Scholar
    from doiget.web.research import Research

READS_REMOTE: Final = Hints(read_only=True, destructive=False, idempotent=True, open_world=True)

_CACHE: Final = "Repeats within 10 min are free."


class ScholarTools:
    """Handlers sharing one lazily built :class:`Scholar`."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._core = LazyCore(self._build)
        self._research = LazyCore(self._build_research)

    async def close(self) -> None:
        """Close the scholar core and the research session store, if built."""
        await self._core.close()
        await self._research.close()

    def _build(self) -> Scholar:
        from doiget.scholar.service import Scholar

        return Scholar(self.runtime)

    def _build_research(self) -> Research:
        from doiget.web.research import Research

        return Research(self.runtime.settings, self.runtime.network())

    @property
    def scholar(self) -> Scholar:
        return self._core.get()

    # -- research sessions ----------------------------------------------------------

    async def _record(self, session_id: str, tool: str, result: Any) -> None:
        """Record a result's papers in a research session; the answer is the caller's
        either way, so a failure here is only logged."""
        from doiget.web.recording import record_found
        from doiget.web.research import paper_sources

        papers = plain(result)
        found = paper_sources(papers if isinstance(papers, list) else [papers])
        await record_found(self._research.get(), session_id, tool, found)

    def session_linked(self, tool: Tool[RequestT]) -> Tool[RequestT]:
        """``tool`` also taking a ``sessionId`` (a session that must exist before the call)."""
        linked = cast(
            "type[RequestT]",
            create_model(
                tool.request.__name__,
                __base__=tool.request,
                session_id=(
                    SessionId | None,
                    Field(None, alias="sessionId", description=LINK_SESSION),
                ),
            ),
        )
        inner = tool.handler

        async def handle(request: RequestT, call: ToolCall) -> Any:
            session_id: str | None = getattr(request, "session_id", None)
            if session_id is None:
                return await inner(request, call)
            await self._research.get().require(session_id)
            result = await inner(request, call)
            await self._record(session_id, tool.name, result)
            return result

        return replace(tool, request=linked, handler=handle)

    # -- handlers -------------------------------------------------------------------

    async def search_arxiv(self, request: c.ArxivSearch, call: ToolCall) -> Any:
        return await self.scholar.search_arxiv(request)

    async def get_arxiv_paper(self, request: c.ArxivLookup, call: ToolCall) -> Any:
        return await self.scholar.get_arxiv_paper(request)

    async def arxiv_to_bibtex(self, request: c.ArxivLookup, call: ToolCall) -> Any:
        return await self.scholar.arxiv_to_bibtex(request)

    async def search_semantic_scholar(self, request: c.ScholarSearch, call: ToolCall) -> Any:
        return await self.scholar.search_semantic_scholar(request)

    async def get_semantic_scholar_paper(
        self, request: c.SemanticScholarLookup, call: ToolCall
    ) -> Any:
        return await self.scholar.get_semantic_scholar_paper(request)

    async def get_paper_citations(self, request: c.CitingPapers, call: ToolCall) -> Any:
        return await self.scholar.get_paper_citations(request)

    async def semantic_scholar_to_bibtex(
        self, request: c.SemanticScholarLookup, call: ToolCall
    ) -> Any:
        return await self.scholar.semantic_scholar_to_bibtex(request)

    async def search_pubmed(self, request: c.ScholarSearch, call: ToolCall) -> Any:
        return await self.scholar.search_pubmed(request)

    async def get_pubmed_paper(self, request: c.PubmedLookup, call: ToolCall) -> Any:
        return await self.scholar.get_pubmed_paper(request)

    async def pubmed_to_bibtex(self, request: c.PubmedLookup, call: ToolCall) -> Any:
        return await self.scholar.pubmed_to_bibtex(request)


def scholar_toolset(runtime: Runtime) -> Toolset:
    """The scholar toolset for one server."""
    tools = ScholarTools(runtime)
    linked = tools.session_linked
    specs: list[ServedTool] = [
        linked(
            Tool(
                "search_arxiv",
                describe(
                    when="Find arXiv preprints (physics, maths, CS, q-bio, stats, EE, econ) "
                    "by topic or author.",
                    inputs="query (arXiv syntax passes through: 'ti:transformer AND "
                    "cat:cs.CL'); startYear/endYear: submission years.",
                    outputs="Papers (id is versioned, e.g. '2301.12345v1').",
                    costs="arXiv allows 1 request per 3 s; calls queue. " + _CACHE,
                    side_effects="None.",
                    limits="relevance is arXiv's own ranking.",
                ),
                c.ArxivSearch,
                c.ArxivPapers,
                READS_REMOTE,
                tools.search_arxiv,
                SCHOLAR_ENVELOPE,
            )
        ),
        linked(
            Tool(
                "get_arxiv_paper",
                describe(
                    when="Metadata of an arXiv paper.",
                    inputs="arxivId: '2301.12345', '2301.12345v2', 'arXiv:…', 'hep-th/9901001', "
                    "an arxiv.org/abs link or a 10.48550/arXiv.* DOI.",
                    outputs="The paper.",
                    costs="One arXiv request (1 per 3 s). " + _CACHE,
                    side_effects="None (doiget_fetch_paper with ref stores it).",
                    limits="The latest version unless the id names one.",
                ),
                c.ArxivLookup,
                c.ArxivPaper,
                READS_REMOTE,
                tools.get_arxiv_paper,
                SCHOLAR_ENVELOPE,
            )
        ),
        Tool(
            "arxiv_to_bibtex",
            describe(
                when="BibTeX for an arXiv paper.",
                inputs="arxivId, as get_arxiv_paper.",
                outputs="BibTeX text (key like 'vaswani2017attention', eprint, primaryClass).",
                costs="Shares get_arxiv_paper's request and cache.",
                side_effects="None.",
                limits="One paper.",
            ),
            c.ArxivLookup,
            c.Bibtex,
            READS_REMOTE,
            tools.arxiv_to_bibtex,
            SCHOLAR_ENVELOPE,
        ),
        linked(
            Tool(
                "search_semantic_scholar",
                describe(
                    when="Find papers in all fields, with citation counts.",
                    inputs="query; startYear/endYear: publication years.",
                    outputs="Papers.",
                    costs="1 request/s without SEMANTIC_SCHOLAR_API_KEY; calls queue. " + _CACHE,
                    side_effects="None.",
                    limits="Semantic Scholar's relevance order.",
                ),
                c.ScholarSearch,
                c.SemanticScholarPapers,
                READS_REMOTE,
                tools.search_semantic_scholar,
                SCHOLAR_ENVELOPE,
            )
        ),
        linked(
            Tool(
                "get_semantic_scholar_paper",
                describe(
                    when="A paper's metadata and citation counts from Semantic Scholar.",
                    inputs="identifier: S2 id, DOI, arXiv id, or 'CorpusId:…', 'PMID:…', "
                    "'DOI:…', 'ARXIV:…'.",
                    outputs="The paper.",
                    costs="One request (1/s without a key). " + _CACHE,
                    side_effects="None.",
                    limits="One paper.",
                ),
                c.SemanticScholarLookup,
                c.SemanticScholarPaper,
                READS_REMOTE,
                tools.get_semantic_scholar_paper,
                SCHOLAR_ENVELOPE,
            )
        ),
        linked(
            Tool(
                "get_paper_citations",
                describe(
                    when="Papers citing a paper (forward citation search).",
                    inputs="paperId, as get_semantic_scholar_paper's identifier.",
                    outputs="Citing papers.",
                    costs="One request per 100 citing papers (1/s without a key). " + _CACHE,
                    side_effects="None.",
                    limits="Citing papers Semantic Scholar cannot identify are skipped.",
                ),
                c.CitingPapers,
                c.SemanticScholarPapers,
                READS_REMOTE,
                tools.get_paper_citations,
                SCHOLAR_ENVELOPE,
            )
        ),
        Tool(
            "semantic_scholar_to_bibtex",
            describe(
                when="BibTeX for a paper known to Semantic Scholar.",
                inputs="identifier, as get_semantic_scholar_paper.",
                outputs="BibTeX text (doi, pmid, eprint when known).",
                costs="Shares get_semantic_scholar_paper's request and cache.",
                side_effects="None.",
                limits="One paper.",
            ),
            c.SemanticScholarLookup,
            c.Bibtex,
            READS_REMOTE,
            tools.semantic_scholar_to_bibtex,
            SCHOLAR_ENVELOPE,
        ),
        linked(
            Tool(
                "search_pubmed",
                describe(
                    when="Find biomedical and life-science literature (PubMed).",
                    inputs="query (PubMed syntax passes through: 'diabetes[MeSH] AND "
                    "treatment'); startYear/endYear: publication years.",
                    outputs="Records.",
                    costs="Two requests; 3/s without PUBMED_API_KEY, 10/s with. " + _CACHE,
                    side_effects="None.",
                    limits="PubMed relevance order.",
                ),
                c.ScholarSearch,
                c.PubmedPapers,
                READS_REMOTE,
                tools.search_pubmed,
                SCHOLAR_ENVELOPE,
            )
        ),
        linked(
            Tool(
                "get_pubmed_paper",
                describe(
                    when="A PubMed record: labelled abstract, MeSH terms, publication types, DOI.",
                    inputs="pmid: digits, e.g. '29106400'.",
                    outputs="The record.",
                    costs="One request. " + _CACHE,
                    side_effects="None.",
                    limits="One record.",
                ),
                c.PubmedLookup,
                c.PubmedPaper,
                READS_REMOTE,
                tools.get_pubmed_paper,
                SCHOLAR_ENVELOPE,
            )
        ),
        Tool(
            "pubmed_to_bibtex",
            describe(
                when="BibTeX for a PubMed record.",
                inputs="pmid: digits.",
                outputs="BibTeX text keyed 'pmid<PMID>'.",
                costs="Shares get_pubmed_paper's request and cache.",
                side_effects="None.",
                limits="One record.",
            ),
            c.PubmedLookup,
            c.Bibtex,
            READS_REMOTE,
            tools.pubmed_to_bibtex,
            SCHOLAR_ENVELOPE,
        ),
    ]
    return Toolset(
        "scholar",
        specs,
        instructions="Scholar tools (search_arxiv, search_semantic_scholar, search_pubmed and "
        "their lookups) return the results themselves, or { error: '...' } with isError set: "
        "'Paper not found', 'Invalid parameter: …', 'API error: …' (the message says when "
        "to retry) or 'Failed to parse response: …'. Each result's ref can be handed to "
        "doiget_fetch_paper.",
        close=tools.close,
    )
