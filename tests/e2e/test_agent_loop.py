"""An agent's whole loop over MCP on a fresh install, with no command-line step:
search_arxiv → doiget_fetch_paper (the result's ref) → index_papers (default
project) → query_hybrid → doiget_bibtex_export; and projects made only on request."""

from __future__ import annotations

import tomllib
from pathlib import Path

from mcputil import call, mcp_session

from papersutil import JOSE_PDF
from replay import ReplayUpstream

# A sentence on page 3 of the paper the replay serves as the arXiv PDF.
PAGE3_QUERY = "reports can be exported as HTML with the interactivity of the charts maintained"


async def test_search_fetch_index_query_cite_with_no_human(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    # The arXiv API answers the search and the fetch's id lookup with the same entry.
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-1605.08386.atom")
    upstream.fixture("arxiv.org", "/pdf/1605.08386v1", JOSE_PDF)
    assert not Path(doiget_env["DOIGET_CONFIG"]).exists()
    async with mcp_session(doiget_env, toolsets="papers,scholar,library") as session:
        hits = await session.call_tool("search_arxiv", {"query": "heat-bath random walks"})
        assert not hits.is_error and hits.structured_content is not None
        ref = hits.structured_content["result"][0]["ref"]
        fetched = await call(session, "doiget_fetch_paper", {"ref": ref})
        indexed = await session.call_tool("index_papers", {"refs": [ref]})
        found = await session.call_tool(
            "query_hybrid", {"project": "doiget/papers", "query": PAGE3_QUERY, "top_k": 3}
        )
        cited = await call(session, "doiget_bibtex_export", {"refs": [ref]})
    assert ref == "arXiv:1605.08386"
    assert fetched["ok"] is True and fetched["source"] == "arxiv"
    report = indexed.structured_content
    assert not indexed.is_error and report is not None
    assert report["project"] == "doiget/papers" and report["indexed"] == 1
    passages = found.structured_content
    assert not found.is_error and passages is not None and passages["count"] == 3
    assert passages["items"][0]["page_span"][0] <= 3 <= passages["items"][0]["page_span"][1]
    assert "Heat-bath random walks with Markov bases" in cited["bibtex"]
    # The default project needed no configuration file.
    assert not Path(doiget_env["DOIGET_CONFIG"]).exists()


async def test_a_project_is_created_only_when_asked(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    async with mcp_session(doiget_env, toolsets="library") as session:
        typo = await session.call_tool(
            "index_papers", {"project": "lab/paperz", "refs": ["10.9999/x"]}
        )
        created = await session.call_tool(
            "index_papers", {"project": "lab/papers", "refs": ["10.9999/x"], "create": True}
        )
        listed = await session.call_tool("list_projects", {})
        bad_id = await session.call_tool(
            "index_papers", {"project": "Not A Project", "refs": ["10.9999/x"], "create": True}
        )
    assert typo.is_error and typo.structured_content is not None
    error = typo.structured_content["error"]
    assert error["code"] == "INVALID_PROJECT"
    assert error["details"]["available_projects"] == ["doiget/papers"]
    assert "create" in error["message"]
    assert not created.is_error and created.structured_content is not None
    assert created.structured_content["project"] == "lab/papers"
    assert created.structured_content["documents"][0]["reason"] == "not_stored"
    assert listed.structured_content is not None
    assert [p["id"] for p in listed.structured_content["projects"]] == [
        "doiget/papers",
        "lab/papers",
    ]
    assert bad_id.is_error and bad_id.structured_content is not None
    assert bad_id.structured_content["error"]["code"] == "INVALID_PROJECT"
    with Path(doiget_env["DOIGET_CONFIG"]).open("rb") as handle:
        config = tomllib.load(handle)
    assert set(config["projects"]) == {"lab/papers"}
    assert config["projects"]["lab/papers"]["hybrid_enabled"] is True
