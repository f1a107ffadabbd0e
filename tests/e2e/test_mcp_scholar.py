"""The scholar toolset over stdio with the official MCP client, upstreams replayed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import bibtexparser
import pytest
from mcp.client.session import ClientSession
from mcputil import SCHOLAR_TOOLS, call, converse, mcp_session, spawn_server
from pybtex.database import parse_string as pybtex_parse

from pacing import unpaced_env

from netutil import breaches_of_window, min_gap
from papersutil import STUB_PDF
from replay import ReplayUpstream, Reply
from scholarutil import (
    ARXIV_API,
    ESEARCH,
    EUTILS,
    S2,
    S2_CITATIONS,
    S2_SEARCH,
    route_arxiv_search,
    route_every_scholar_tool,
    route_pubmed_record,
    route_s2_pnas,
)

SECTIONS = ("WHEN TO USE:", "INPUTS:", "OUTPUTS:", "COSTS:", "SIDE EFFECTS:", "LIMITS:")


async def scholar_call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    """Call a scholar tool; return the spec's value (parsed JSON, or the BibTeX text).

    Checks the text and structured forms agree and isError is set exactly on errors.
    """
    result = await session.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    structured = result.structured_content
    assert structured is not None
    if result.is_error:
        assert json.loads(text) == structured and set(structured) == {"error"}
        return structured
    if "result" in structured:
        value = structured["result"]
        assert (text if isinstance(value, str) else json.loads(text)) == value
        return value
    assert json.loads(text) == structured
    return structured


async def test_tools_list_is_the_scholar_toolset(doiget_env: dict[str, str]) -> None:
    async with mcp_session(doiget_env, toolsets="scholar") as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == SCHOLAR_TOOLS
    for tool in tools.values():
        description = tool.description or ""
        positions = [description.find(section) for section in SECTIONS]
        assert all(p >= 0 for p in positions) and positions == sorted(positions), tool.name
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        if "maxResults" in schema["properties"]:
            bounds = schema["properties"]["maxResults"]
            assert (bounds["minimum"], bounds["maximum"], bounds["default"]) == (1, 100, 10)
        assert tool.output_schema and tool.output_schema["type"] == "object"
        hints = tool.annotations
        assert hints is not None and hints.read_only_hint is True
        assert hints.destructive_hint is False and hints.open_world_hint is True
    assert tools["search_arxiv"].input_schema["properties"]["sortBy"]["enum"] == [
        "relevance",
        "lastUpdatedDate",
        "submittedDate",
    ]
    for name in ("search_arxiv", "search_semantic_scholar", "search_pubmed"):
        assert tools[name].input_schema["required"] == ["query"]
        assert {"startYear", "endYear"} <= set(tools[name].input_schema["properties"])
    assert tools["get_pubmed_paper"].input_schema["properties"]["pmid"]["pattern"]


# Tests whose subject is an answer run unpaced (tests/pacing.py); those of the spacing
# itself (three seconds apart, three or ten a second) keep it.
async def test_every_scholar_tool_end_to_end(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_every_scholar_tool(upstream)
    async with mcp_session(unpaced_env(doiget_env), toolsets="scholar") as session:
        arxiv_hits = await scholar_call(session, "search_arxiv", {"query": "testing"})
        arxiv_paper = await scholar_call(
            session, "get_arxiv_paper", {"arxivId": "quant-ph/0201082v1"}
        )
        arxiv_bib = await scholar_call(
            session, "arxiv_to_bibtex", {"arxivId": "arXiv:quant-ph/0201082v1"}
        )
        s2_hits = await scholar_call(
            session, "search_semantic_scholar", {"query": "turing", "maxResults": 3}
        )
        s2_paper = await scholar_call(
            session, "get_semantic_scholar_paper", {"identifier": "10.1073/pnas.1414271111"}
        )
        cited_by = await scholar_call(
            session, "get_paper_citations", {"paperId": "CorpusId:14514057", "maxResults": 2}
        )
        s2_bib = await scholar_call(
            session, "semantic_scholar_to_bibtex", {"identifier": "DOI:10.1073/pnas.1414271111"}
        )
        pubmed_hits = await scholar_call(
            session, "search_pubmed", {"query": "gut microbiota[MeSH]", "maxResults": 1}
        )
        pubmed_record = await scholar_call(session, "get_pubmed_paper", {"pmid": "38147649"})
        pubmed_bib = await scholar_call(session, "pubmed_to_bibtex", {"pmid": "38147649"})
    assert len(arxiv_hits) == 10 and arxiv_hits[0]["id"] == "2202.12139v1"
    assert arxiv_paper["id"] == "quant-ph/0201082v1"
    assert arxiv_paper["ref"] == "arXiv:quant-ph/0201082"
    assert arxiv_paper["categories"] and arxiv_paper["primaryCategory"] == "quant-ph"
    assert "eprint = {quant-ph/0201082v1}" in arxiv_bib
    assert [hit["title"] for hit in s2_hits][1] == (
        "Quantum theory, the Church\u2013Turing principle and the universal quantum computer"
    )
    assert s2_paper["citationCount"] == 136 and s2_paper["ref"] == "10.1073/pnas.1414271111"
    assert (
        len(cited_by) == 2 and cited_by[0]["paperId"] == "344e7fb2000d9063cbc9deb550e46946bafe3c90"
    )
    assert s2_bib.startswith("@article{makris2014developing,") and "pmid = {25349395}" in s2_bib
    assert pubmed_hits[0]["pmid"] == "38147649" == pubmed_record["pmid"]
    assert pubmed_record["title"] == (
        "Social anxiety disorder-associated gut microbiota increases social fear."
    )
    assert pubmed_record["journal"].startswith("Proceedings of the National Academy of Sciences")
    assert pubmed_record["year"] == "2024" and pubmed_record["doi"] == "10.1073/pnas.2308706120"
    assert "Journal Article" in pubmed_record["publicationTypes"]
    assert "Gastrointestinal Microbiome" in pubmed_record["meshTerms"]
    assert pubmed_record["abstract"].startswith("Social anxiety disorder (SAD) is a crippling")
    assert pubmed_bib.startswith("@article{pmid38147649,")
    for text in (arxiv_bib, s2_bib, pubmed_bib):
        parsed = bibtexparser.parse_string(text)
        assert len(parsed.entries) == 1 and not parsed.failed_blocks
        assert len(pybtex_parse(text, "bibtex").entries) == 1
    # Each search's request ran once: the lookups that followed came from the cache.
    assert len(upstream.requests_to("export.arxiv.org")) == 2
    assert (
        len([r for r in upstream.requests_to(S2) if r.path.startswith("/graph/v1/paper/DOI")]) == 1
    )


async def test_a_ref_from_scholar_goes_straight_to_doiget_fetch_paper(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture(*ARXIV_API, "arxiv/id_list-1605.08386.atom")
    pdf = upstream.fixture("arxiv.org", "/pdf/1605.08386v1", STUB_PDF)
    async with mcp_session(unpaced_env(doiget_env), toolsets="papers,scholar") as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        paper = await scholar_call(session, "get_arxiv_paper", {"arxivId": "1605.08386v1"})
        fetched = await call(session, "doiget_fetch_paper", {"ref": paper["ref"]})
    assert names >= SCHOLAR_TOOLS and "doiget_fetch_paper" in names
    assert paper["ref"] == "arXiv:1605.08386"
    assert fetched["ok"] and Path(fetched["path"]).read_bytes() == pdf


BAD_INPUTS: list[tuple[str, dict[str, Any], str]] = [
    ("search_arxiv", {"query": "x", "maxResults": 0}, "maxResults"),
    ("search_semantic_scholar", {"query": "x", "maxResults": 101}, "maxResults"),
    ("search_pubmed", {"query": "x", "startYear": 2024, "endYear": 2020}, "startYear (2024)"),
    ("search_arxiv", {"query": "x", "sortBy": "date"}, "sortBy"),
    ("get_pubmed_paper", {"pmid": "PMC123"}, "pmid"),
    ("pubmed_to_bibtex", {"pmid": 38147649}, "pmid"),
    ("search_pubmed", {}, "query"),
    ("search_arxiv", {"query": ""}, "query"),
    ("search_arxiv", {"query": "x", "limit": 5}, "limit"),
    ("get_arxiv_paper", {"arxivId": "10.1038/nature12373"}, "not an arXiv id"),
    ("get_semantic_scholar_paper", {"identifier": "'; DROP TABLE papers; --"}, "identifier"),
    ("get_paper_citations", {"paperId": "x" * 300}, "paperId"),
    ("search_semantic_scholar", {"query": "x", "startYear": "2020"}, "startYear"),
]


async def test_bad_input_is_an_invalid_parameter_and_reaches_no_upstream(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    async with mcp_session(doiget_env, toolsets="scholar") as session:
        answers = [await scholar_call(session, tool, args) for tool, args, _ in BAD_INPUTS]
    for (tool, _, words), answer in zip(BAD_INPUTS, answers, strict=True):
        assert answer["error"].startswith("Invalid parameter: "), (tool, answer)
        assert words in answer["error"], (tool, answer)
    assert upstream.requests == []


async def test_upstream_failures_read_as_the_spec_says(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture(
        S2, "/graph/v1/paper/CorpusId:0", "semanticscholar/paper-0-not-found-404.json", status=404
    )
    upstream.route(S2, S2_SEARCH, Reply(503, b"Service Unavailable"))
    upstream.route(EUTILS, ESEARCH, Reply(200, b"<eSearchResult><Count>1"))
    upstream.fixture(*ARXIV_API, "arxiv/id_list-0000.0000-empty.atom")
    async with mcp_session(unpaced_env(doiget_env), toolsets="scholar") as session:
        missing = await scholar_call(
            session, "get_semantic_scholar_paper", {"identifier": "CorpusId:0"}
        )
        down = await scholar_call(session, "search_semantic_scholar", {"query": "turing"})
        garbled = await scholar_call(session, "search_pubmed", {"query": "x"})
        no_paper = await scholar_call(session, "get_arxiv_paper", {"arxivId": "0000.0000"})
    assert missing == {"error": "Paper not found"} == no_paper
    assert down["error"].startswith("API error: ") and "HTTP 503" in down["error"]
    assert "try again later" in down["error"]
    assert len(upstream.requests_to(S2)) == 1 + 4  # the 404 once; the 503 four times
    assert garbled["error"].startswith("Failed to parse response: ")


async def test_zero_hits_are_an_empty_array_not_an_error(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture(S2, S2_SEARCH, "semanticscholar/paper-search-no-results.json")
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-protein-abcXYZ-noresults.xml")
    async with mcp_session(doiget_env, toolsets="scholar") as session:
        s2 = await session.call_tool("search_semantic_scholar", {"query": "n0 r3sult"})
        pubmed = await session.call_tool("search_pubmed", {"query": "abcXYZ"})
    for result in (s2, pubmed):
        assert result.is_error is False
        assert result.content[0].text == "[]"  # type: ignore[union-attr]
        assert result.structured_content == {"result": []}


async def _burst(env: dict[str, str], tool: str, count: int) -> None:
    async with mcp_session(env, toolsets="scholar") as session, anyio.create_task_group() as tasks:
        for index in range(count):
            tasks.start_soon(session.call_tool, tool, {"query": f"cancer {index}"})


@pytest.mark.slow
async def test_pubmed_without_a_key_stays_at_three_per_second(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pubmed_record(upstream)
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    await _burst(doiget_env, "search_pubmed", 10)
    starts = [request.started for request in upstream.requests_to(EUTILS)]
    assert len(starts) == 20
    assert breaches_of_window(starts, limit=3, window=1.0) == 0
    assert min_gap(starts) >= 1 / 3


@pytest.mark.slow
async def test_pubmed_with_a_key_may_go_faster_but_never_past_ten_per_second(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pubmed_record(upstream)
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    await _burst({**doiget_env, "PUBMED_API_KEY": "ncbi-key"}, "search_pubmed", 10)
    requests = upstream.requests_to(EUTILS)
    starts = [request.started for request in requests]
    assert len(starts) == 20 and all(r.query["api_key"] == "ncbi-key" for r in requests)
    assert breaches_of_window(starts, limit=10, window=1.0) == 0
    assert min_gap(starts) < 1 / 3  # the key lifted the 3/s ceiling


@pytest.mark.slow
async def test_arxiv_searches_are_three_seconds_apart(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_arxiv_search(upstream)
    await _burst(doiget_env, "search_arxiv", 3)
    starts = [request.started for request in upstream.requests_to("export.arxiv.org")]
    assert len(starts) == 3 and min_gap(starts) >= 3.0


def test_stdout_carries_only_json_rpc_across_every_scholar_tool(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_s2_pnas(upstream)
    route_pubmed_record(upstream)
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    upstream.fixture(S2, S2_SEARCH, "semanticscholar/paper-search-no-results.json")
    upstream.fixture(
        S2, S2_CITATIONS, "semanticscholar/paper-CorpusID_14514057-citations-offset0.json"
    )
    upstream.fixture(*ARXIV_API, "arxiv/id_list-1605.08386.atom")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_arxiv", {"query": "markov bases", "maxResults": 1}),
        ("get_arxiv_paper", {"arxivId": "1605.08386"}),
        ("arxiv_to_bibtex", {"arxivId": "1605.08386"}),
        ("search_semantic_scholar", {"query": "nothing here"}),
        ("get_semantic_scholar_paper", {"identifier": "10.1073/pnas.1414271111"}),
        ("get_paper_citations", {"paperId": "CorpusId:14514057", "maxResults": 1}),
        ("semantic_scholar_to_bibtex", {"identifier": "10.1073/pnas.1414271111"}),
        ("search_pubmed", {"query": "telomere", "maxResults": 1}),
        ("get_pubmed_paper", {"pmid": "27797938"}),
        ("pubmed_to_bibtex", {"pmid": "27797938"}),
        ("get_pubmed_paper", {"pmid": "not-a-pmid"}),
    ]
    env = unpaced_env({**doiget_env, "DOIGET_LOG_LEVEL": "DEBUG"})
    answers, stderr = converse(spawn_server(env, "scholar"), calls)
    for number, (tool, _) in enumerate(calls, start=2):
        result = answers[number]["result"]
        assert result.get("isError", False) is (number == len(calls) + 1), (tool, result)
    assert b"DEBUG" in stderr


async def test_scholar_results_are_recorded_in_the_research_session_named(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pubmed_record(upstream)
    async with mcp_session(doiget_env, toolsets="scholar,web") as session:
        first = await session.call_tool(
            "sequential_search",
            {"searchStep": "Find the record", "stepNumber": 1, "nextStepNeeded": True},
        )
        assert first.structured_content is not None
        sid = first.structured_content["sessionId"]
        paper = await scholar_call(
            session, "get_pubmed_paper", {"pmid": "38147649", "sessionId": sid}
        )
        view = await session.call_tool("get_research_session", {"sessionId": sid})
        gone = await scholar_call(
            session, "get_pubmed_paper", {"pmid": "38147649", "sessionId": "no-such-session"}
        )
    assert view.structured_content is not None
    (source,) = view.structured_content["sources"]
    assert source["tool"] == "get_pubmed_paper" and source["url"] == paper["url"]
    assert source.get("doi") == paper["doi"]
    assert "error" in gone
