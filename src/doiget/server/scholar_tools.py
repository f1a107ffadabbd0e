"""The scholar toolset: arXiv, Semantic Scholar and PubMed search, lookup, citations, BibTeX.

Names, camelCase inputs and result fields follow spec/scholar-api.md; each result
adds ``ref`` (a DOI or arXiv id doiget_fetch_paper takes, or null). Handlers call
:class:`doiget.scholar.service.Scholar`, built on the first call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from doiget.runtime import Runtime
from doiget.server.envelopes import SCHOLAR_ENVELOPE
from doiget.server.toolset import (
    Handler,
    Hints,
    LazyCore,
    ToolCall,
    Toolset,
    ToolSpec,
    describe,
    object_schema,
    tool_spec,
)

if TYPE_CHECKING:
    from doiget.scholar.service import Scholar, SearchRequest
    from doiget.web.research import Research

READS_REMOTE: Final = Hints(read_only=True, destructive=False, idempotent=True, open_world=True)

_STR: Final = {"type": "string"}
_STRS: Final = {"type": "array", "items": _STR}
_NULLABLE_STR: Final = {"type": ["string", "null"]}
_REF: Final = {
    "type": ["string", "null"],
    "description": "DOI or arXiv id for doiget_fetch_paper; null when the work has none.",
}
_COUNT: Final = {"type": "integer", "minimum": 0}

QUERY: Final = {"type": "string", "minLength": 1, "maxLength": 1000}
MAX_RESULTS: Final = {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}
YEAR: Final = {"type": "integer", "minimum": 1900, "maximum": 2100}
ID: Final = {"type": "string", "minLength": 1, "maxLength": 256}
PMID: Final = {
    "type": "string",
    "pattern": "^[0-9]{1,10}$",
    "description": "PubMed id, digits only (e.g. '29106400').",
}


def _closed(properties: Mapping[str, Any]) -> dict[str, Any]:
    """A result object whose every field is always present."""
    return object_schema(properties, tuple(properties))


ARXIV_PAPER: Final = _closed(
    {
        "id": _STR,
        "title": _STR,
        "authors": _STRS,
        "abstract": _STR,
        "published": _STR,
        "updated": _STR,
        "url": _STR,
        "pdfUrl": _STR,
        "categories": _STRS,
        "primaryCategory": _STR,
        "ref": _REF,
    }
)
S2_PAPER: Final = _closed(
    {
        "paperId": _STR,
        "title": _STR,
        "abstract": _NULLABLE_STR,
        "year": {"type": ["integer", "null"]},
        "authors": {
            "type": "array",
            "items": _closed({"authorId": _NULLABLE_STR, "name": _STR}),
        },
        "citationCount": _COUNT,
        "referenceCount": _COUNT,
        "influentialCitationCount": _COUNT,
        "url": _STR,
        "venue": _NULLABLE_STR,
        "publicationDate": _NULLABLE_STR,
        "ref": _REF,
    }
)
PUBMED_PAPER: Final = _closed(
    {
        "pmid": _STR,
        "title": _STR,
        "abstract": _STR,
        "authors": _STRS,
        "journal": _STR,
        "year": _STR,
        "doi": _NULLABLE_STR,
        "url": _STR,
        "publicationTypes": _STRS,
        "meshTerms": _STRS,
        "ref": _REF,
    }
)


def _list_of(item: Mapping[str, Any]) -> dict[str, Any]:
    return _closed({"result": {"type": "array", "items": dict(item)}})


BIBTEX_OUTPUT: Final = _closed({"result": _STR})
SEARCH_INPUT: Final = {
    "query": QUERY,
    "maxResults": MAX_RESULTS,
    "startYear": YEAR,
    "endYear": YEAR,
}
_SEARCH_ERRORS: Final = (
    "Errors: {error: 'Invalid parameter: ...'} for bad input (maxResults outside 1-100, "
    "startYear after endYear), {error: 'API error: ...'} when the upstream fails or rate "
    "limits after retries (the message says when to try again), {error: 'Failed to parse "
    "response: ...'} when its answer is malformed. An empty array means the upstream found "
    "nothing."
)
_LOOKUP_ERRORS: Final = (
    "Errors: {error: 'Paper not found'}, {error: 'Invalid parameter: ...'}, "
    "{error: 'API error: ...'}, {error: 'Failed to parse response: ...'}."
)
_CACHE: Final = "Answers are reused for 10 minutes (DOIGET_SCHOLAR_CACHE_TTL): a repeat is free."


# Tools whose results a research session can record (the BibTeX exports are not).
SESSION_LINKED: Final = frozenset(
    {
        "search_arxiv",
        "get_arxiv_paper",
        "search_semantic_scholar",
        "get_semantic_scholar_paper",
        "get_paper_citations",
        "search_pubmed",
        "get_pubmed_paper",
    }
)


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

    def _build_research(self) -> Research:
        from doiget.web.research import Research

        return Research(self.runtime.settings, self.runtime.network())

    def session_linked(self, spec: ToolSpec) -> ToolSpec:
        """``spec`` taking a ``sessionId``: its results are recorded in that research
        session (which must exist before the call)."""
        from doiget.web.params import SESSION_ID

        inner = spec.handler

        async def handle(args: Mapping[str, Any], call: ToolCall) -> Any:
            session_id = args.get("sessionId")
            if not session_id:
                return await inner(args, call)
            await self._research.get().require(session_id)
            result = await inner({k: v for k, v in args.items() if k != "sessionId"}, call)
            from doiget.web.recording import record_found
            from doiget.web.research import paper_sources

            papers = result if isinstance(result, list) else [result]
            await record_found(self._research.get(), session_id, spec.name, paper_sources(papers))
            return result

        schema = dict(spec.input_schema)
        schema["properties"] = {**schema["properties"], "sessionId": SESSION_ID}
        return replace(spec, input_schema=schema, handler=handle)

    def _build(self) -> Scholar:
        from doiget.scholar.service import Scholar

        return Scholar(self.runtime)

    @property
    def scholar(self) -> Scholar:
        return self._core.get()

    @staticmethod
    def _request(args: Mapping[str, Any]) -> SearchRequest:
        from doiget.scholar.service import SearchRequest

        return SearchRequest(
            args["query"],
            int(args.get("maxResults", 10)),
            args.get("startYear"),
            args.get("endYear"),
        )

    async def search_arxiv(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        return await self.scholar.search_arxiv(
            self._request(args),
            author=args.get("author"),
            sort_by=args.get("sortBy", "relevance"),
        )

    def lookup(self, method: str, field: str) -> Handler:
        """A handler passing ``args[field]`` to the Scholar method named ``method``."""

        async def handle(args: Mapping[str, Any], call: ToolCall) -> Any:
            return await getattr(self.scholar, method)(args[field])

        return handle

    async def search_semantic_scholar(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        return await self.scholar.search_semantic_scholar(self._request(args))

    async def get_paper_citations(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        return await self.scholar.get_paper_citations(
            args["paperId"], int(args.get("maxResults", 10))
        )

    async def search_pubmed(self, args: Mapping[str, Any], call: ToolCall) -> Any:
        return await self.scholar.search_pubmed(self._request(args))


def _spec(
    name: str,
    description: str,
    inputs: Mapping[str, Any],
    required: tuple[str, ...],
    output: Mapping[str, Any],
    handler: Handler,
) -> ToolSpec:
    return tool_spec(
        name, description, inputs, required, output, READS_REMOTE, handler, SCHOLAR_ENVELOPE
    )


def scholar_toolset(runtime: Runtime) -> Toolset:
    """The scholar toolset for one server."""
    tools = ScholarTools(runtime)
    arxiv_id = {"arxivId": ID}
    s2_id = {"identifier": ID}
    pmid = {"pmid": PMID}
    specs = [
        _spec(
            "search_arxiv",
            describe(
                when="Find preprints on arXiv (physics, maths, CS, quantitative biology, "
                "statistics, EE, economics) by topic or author.",
                inputs="query (words, or arXiv syntax such as 'ti:transformer AND cat:cs.CL'); "
                "maxResults 1-100 (default 10); startYear / endYear (submission years, "
                "inclusive); author; sortBy: relevance (default) | lastUpdatedDate | "
                "submittedDate.",
                outputs="JSON array of { id (versioned, e.g. '2301.12345v1'), title, authors, "
                "abstract, published, updated, url, pdfUrl, categories, primaryCategory, ref }. "
                + _SEARCH_ERRORS,
                costs="One arXiv API request; arXiv allows 1 request per 3 s, so calls queue. "
                + _CACHE,
                side_effects="None.",
                limits="At most 100 results. relevance is arXiv's own relevance ranking.",
            ),
            {
                **SEARCH_INPUT,
                "author": {"type": "string", "minLength": 1, "maxLength": 200},
                "sortBy": {
                    "type": "string",
                    "enum": ["relevance", "lastUpdatedDate", "submittedDate"],
                    "default": "relevance",
                },
            },
            ("query",),
            _list_of(ARXIV_PAPER),
            tools.search_arxiv,
        ),
        _spec(
            "get_arxiv_paper",
            describe(
                when="You have an arXiv id and want its metadata.",
                inputs="arxivId: '2301.12345', '2301.12345v2', 'arXiv:2301.12345', "
                "'hep-th/9901001', an arxiv.org/abs link or a 10.48550/arXiv.* DOI.",
                outputs="{ id, title, authors, abstract, published, updated, url, pdfUrl, "
                "categories, primaryCategory, ref }. " + _LOOKUP_ERRORS,
                costs="One arXiv API request (1 per 3 s). " + _CACHE,
                side_effects="None: nothing is stored (use doiget_fetch_paper with ref).",
                limits="The latest version unless the id names one.",
            ),
            arxiv_id,
            ("arxivId",),
            ARXIV_PAPER,
            tools.lookup("get_arxiv_paper", "arxivId"),
        ),
        _spec(
            "arxiv_to_bibtex",
            describe(
                when="You need a BibTeX entry for an arXiv paper.",
                inputs="arxivId (any form get_arxiv_paper takes).",
                outputs="BibTeX text (key like 'vaswani2017attention'; eprint, archivePrefix, "
                "primaryClass, doi when known, abstract). " + _LOOKUP_ERRORS,
                costs="One arXiv API request, shared with get_arxiv_paper's cache.",
                side_effects="None.",
                limits="One paper per call.",
            ),
            arxiv_id,
            ("arxivId",),
            BIBTEX_OUTPUT,
            tools.lookup("arxiv_to_bibtex", "arxivId"),
        ),
        _spec(
            "search_semantic_scholar",
            describe(
                when="Find papers across all fields with citation counts (Semantic Scholar).",
                inputs="query; maxResults 1-100 (default 10); startYear / endYear "
                "(publication years, inclusive).",
                outputs="JSON array of { paperId, title, abstract|null, year|null, authors: "
                "[{ authorId, name }], citationCount, referenceCount, influentialCitationCount, "
                "url, venue|null, publicationDate|null, ref }. " + _SEARCH_ERRORS,
                costs="One request; 1/s without SEMANTIC_SCHOLAR_API_KEY, calls queue. " + _CACHE,
                side_effects="None.",
                limits="At most 100 results, in Semantic Scholar's relevance order.",
            ),
            SEARCH_INPUT,
            ("query",),
            _list_of(S2_PAPER),
            tools.search_semantic_scholar,
        ),
        _spec(
            "get_semantic_scholar_paper",
            describe(
                when="You have a Semantic Scholar id, DOI or arXiv id and want the paper's "
                "metadata and citation counts.",
                inputs="identifier: 40-hex S2 id, DOI ('10.1234/abc'), arXiv id, or a prefixed "
                "id ('CorpusId:123', 'PMID:123', 'DOI:...', 'ARXIV:...').",
                outputs="{ paperId, title, abstract, year, authors, citationCount, "
                "referenceCount, influentialCitationCount, url, venue, publicationDate, ref }. "
                + _LOOKUP_ERRORS,
                costs="One request (1/s without a key). " + _CACHE,
                side_effects="None.",
                limits="One paper per call.",
            ),
            s2_id,
            ("identifier",),
            S2_PAPER,
            tools.lookup("get_semantic_scholar_paper", "identifier"),
        ),
        _spec(
            "get_paper_citations",
            describe(
                when="You want the papers that cite a given paper (forward citation search).",
                inputs="paperId (any identifier get_semantic_scholar_paper takes); maxResults "
                "1-100 (default 10).",
                outputs="JSON array of citing papers, same fields as search_semantic_scholar. "
                + _LOOKUP_ERRORS,
                costs="One request per page of up to 100 citing papers (1/s without a key). "
                + _CACHE,
                side_effects="None.",
                limits="At most 100 citing papers; ones Semantic Scholar cannot identify are "
                "skipped.",
            ),
            {"paperId": ID, "maxResults": MAX_RESULTS},
            ("paperId",),
            _list_of(S2_PAPER),
            tools.get_paper_citations,
        ),
        _spec(
            "semantic_scholar_to_bibtex",
            describe(
                when="You need a BibTeX entry for a paper known to Semantic Scholar.",
                inputs="identifier (as for get_semantic_scholar_paper).",
                outputs="BibTeX text (key like 'makris2014developing'; doi, pmid, eprint when "
                "known). " + _LOOKUP_ERRORS,
                costs="One request, shared with get_semantic_scholar_paper's cache.",
                side_effects="None.",
                limits="One paper per call.",
            ),
            s2_id,
            ("identifier",),
            BIBTEX_OUTPUT,
            tools.lookup("semantic_scholar_to_bibtex", "identifier"),
        ),
        _spec(
            "search_pubmed",
            describe(
                when="Find biomedical and life-science literature (PubMed/MEDLINE).",
                inputs="query (PubMed syntax passes through: 'diabetes[MeSH] AND treatment'); "
                "maxResults 1-100 (default 10); startYear / endYear (publication years, "
                "inclusive).",
                outputs="JSON array of { pmid, title, abstract, authors ('Smith J'), journal, "
                "year, doi|null, url, publicationTypes, meshTerms, ref }. " + _SEARCH_ERRORS,
                costs="Two requests (esearch + efetch); 3/s without PUBMED_API_KEY, 10/s with "
                "it. " + _CACHE,
                side_effects="None.",
                limits="At most 100 results, by PubMed relevance.",
            ),
            SEARCH_INPUT,
            ("query",),
            _list_of(PUBMED_PAPER),
            tools.search_pubmed,
        ),
        _spec(
            "get_pubmed_paper",
            describe(
                when="You have a PMID and want the record: abstract (structured sections "
                "labelled), MeSH terms, publication types, DOI.",
                inputs="pmid: digits, e.g. '29106400'.",
                outputs="{ pmid, title, abstract, authors, journal, year, doi, url, "
                "publicationTypes, meshTerms, ref }. " + _LOOKUP_ERRORS,
                costs="One efetch request. " + _CACHE,
                side_effects="None.",
                limits="One record per call.",
            ),
            pmid,
            ("pmid",),
            PUBMED_PAPER,
            tools.lookup("get_pubmed_paper", "pmid"),
        ),
        _spec(
            "pubmed_to_bibtex",
            describe(
                when="You need a BibTeX entry for a PubMed record.",
                inputs="pmid: digits.",
                outputs="BibTeX text keyed 'pmid<PMID>' with journal, doi, pmid, abstract. "
                + _LOOKUP_ERRORS,
                costs="One efetch request, shared with get_pubmed_paper's cache.",
                side_effects="None.",
                limits="One record per call.",
            ),
            pmid,
            ("pmid",),
            BIBTEX_OUTPUT,
            tools.lookup("pubmed_to_bibtex", "pmid"),
        ),
    ]
    specs = [tools.session_linked(spec) if spec.name in SESSION_LINKED else spec for spec in specs]
    return Toolset(
        "scholar",
        specs,
        instructions="Scholar tools (search_arxiv, search_semantic_scholar, search_pubmed and "
        "their lookups) return the results themselves, or { error: '...' } with isError set; "
        "each result's ref can be handed to doiget_fetch_paper.",
        close=tools.close,
    )
