"""Routes and helpers for the scholar tests: recorded arXiv, Semantic Scholar and PubMed."""

from __future__ import annotations

from doiget.net.network import Network
from doiget.runtime import load_runtime
from doiget.scholar.service import Scholar

from netutil import FAST_RETRY
from replay import ReplayUpstream

ARXIV_API = ("export.arxiv.org", "/api/query")
S2_PNAS = "/graph/v1/paper/DOI:10.1073/pnas.1414271111"
S2_SEARCH = "/graph/v1/paper/search"
S2_CITATIONS = "/graph/v1/paper/CorpusId:14514057/citations"
ESEARCH = "/entrez/eutils/esearch.fcgi"
EFETCH = "/entrez/eutils/efetch.fcgi"
EUTILS = "eutils.ncbi.nlm.nih.gov"
S2 = "api.semanticscholar.org"


def make_scholar(env: dict[str, str]) -> Scholar:
    """The scholar core as the program builds it, with quick retries."""
    runtime = load_runtime(env)
    return Scholar(runtime, Network(runtime.settings, retry=FAST_RETRY))


def route_arxiv_search(upstream: ReplayUpstream) -> bytes:
    return upstream.fixture(*ARXIV_API, "arxiv/search_query-testing-start0-max10.atom")


def route_s2_pnas(upstream: ReplayUpstream) -> bytes:
    return upstream.fixture(S2, S2_PNAS, "semanticscholar/paper-DOI_10.1073_pnas.1414271111.json")


def route_every_scholar_tool(upstream: ReplayUpstream) -> None:
    """The answers one call of each scholar tool needs: Semantic Scholar's PNAS record,
    search and citations, PubMed's search and a record, arXiv's search and one id."""
    route_s2_pnas(upstream)
    upstream.fixture(S2, S2_SEARCH, "semanticscholar/paper-search-turing-fields_title-offset0.json")
    upstream.fixture(
        S2, S2_CITATIONS, "semanticscholar/paper-CorpusID_14514057-citations-offset0.json"
    )
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    upstream.fixture(EUTILS, EFETCH, "pubmed/efetch-pubmed-38147649.xml")
    upstream.fixture(
        *ARXIV_API,
        "arxiv/search_query-testing-start0-max10.atom",
        query={
            "search_query": "all:testing",
            "start": "0",
            "max_results": "10",
            "sortBy": "relevance",
            "sortOrder": "descending",
        },
    )
    upstream.fixture(
        *ARXIV_API,
        "arxiv/id_list-quant-ph_0201082v1.atom",
        query={"id_list": "quant-ph/0201082v1", "max_results": "1"},
    )


def route_pubmed_search(upstream: ReplayUpstream) -> None:
    """esearch answers 20 ids (biopython); efetch answers the two records it was asked for."""
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    upstream.fixture(EUTILS, EFETCH, "pubmed/efetch-pubmed-11748933_11700088.xml")


def route_pubmed_record(upstream: ReplayUpstream) -> None:
    upstream.fixture(EUTILS, EFETCH, "pubmed/efetch-pubmed-29106400.xml")
