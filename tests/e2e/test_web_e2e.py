"""The web tools over MCP (a spawned ``doiget serve``) and from the CLI."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcputil import converse, mcp_session, spawn_server
from webpages import BRAVE, BRAVE_ANSWER, LONG_PAGE

from cliutil import doiget
from replay import ReplayUpstream, Reply

WEB_TOOLS = {
    "web_search",
    "scrape_page",
    "search_and_scrape",
    "academic_search",
    "patent_search",
    "sequential_search",
    "get_research_session",
    "research_export",
}


async def _call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    result = await session.call_tool(tool, arguments)
    structured = result.structured_content
    assert structured is not None
    assert json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
    assert bool(result.is_error) == ("error" in structured)
    return result


@pytest.fixture
def web_env(doiget_env: dict[str, str]) -> dict[str, str]:
    return {**doiget_env, "BRAVE_API_KEY": "brave-e2e-key"}


async def test_web_tools_are_listed_with_contracts_and_the_artifact_template(
    web_env: dict[str, str],
) -> None:
    async with mcp_session(web_env, toolsets="web") as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == WEB_TOOLS
        for tool in tools.values():
            assert tool.input_schema["additionalProperties"] is False
            assert tool.annotations is not None
            local = tool.name in ("sequential_search", "get_research_session")
            assert tool.annotations.open_world_hint is not local
            assert "WHEN TO USE:" in (tool.description or "")
        assert tools["web_search"].input_schema["required"] == ["query"]
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["research://artifact/{id}"]


async def test_search_then_cache_hit_over_mcp(
    web_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, BRAVE_ANSWER)
    async with mcp_session(web_env, toolsets="web") as session:
        first = await _call(session, "web_search", {"query": "graphene"})
        second = await _call(session, "web_search", {"query": "graphene"})
    body = first.structured_content
    assert body["urls"] == ["https://www.nature.com/articles/graphene"]
    assert body["results"][0]["snippet"] == "Graphene conducts electricity well."
    assert body["trust"] == "untrusted-external-content"
    assert first.meta["cached"] is False
    assert second.meta["cached"] is True
    assert "brave-e2e-key" not in json.dumps(body)
    assert len(upstream.requests_to(BRAVE[0])) == 1


async def test_full_and_preview_scrapes_inline_and_a_large_raw_one_is_linked(
    web_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.route(
        "blog.example.org", "/essay", Reply(200, LONG_PAGE, {"Content-Type": "text/html"})
    )
    url = "https://blog.example.org/essay"
    async with mcp_session(web_env, toolsets="web") as session:
        full = await _call(session, "scrape_page", {"url": url})
        preview = await _call(session, "scrape_page", {"url": url, "mode": "preview"})
        raw = await _call(session, "scrape_page", {"url": url, "mode": "raw"})
        summary = raw.structured_content
        read = await session.read_resource(summary["resource"])
        with pytest.raises(Exception, match="no resource"):
            await session.read_resource("research://artifact/" + "0" * 64)
    # full: the article inline up to the default max_length (50,000 bytes), no link.
    body = full.structured_content
    assert "linked" not in body
    assert not [item for item in full.content if item.type == "resource_link"]
    assert body["truncated"] is True  # 400 paragraphs exceed the 50,000-byte default
    assert 45_000 < body["contentLength"] <= 50_000
    assert "Paragraph 199" in body["content"]
    assert body["citation"]["metadata"]["title"] == "A long essay"
    assert preview.structured_content["contentLength"] <= 5000
    assert "linked" not in preview.structured_content
    # raw: the verbatim page is one of the heaviest results, so it is linked.
    assert summary["linked"] is True and summary["bytes"] >= 24 * 1024
    links = [item for item in raw.content if item.type == "resource_link"]
    assert len(links) == 1 and str(links[0].uri) == summary["resource"]
    stored = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert stored["raw"] is True and "Paragraph 199" in stored["content"]
    assert len(json.dumps(stored, ensure_ascii=False).encode()) == summary["bytes"]


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [
        ({"query": "q", "site": "nature.com", "lens": "academic"}, "validation"),
        ({"query": "q", "color": "blue"}, "validation"),
        ({"query": ""}, "validation"),
        ({"query": "q", "num_results": 11}, "validation"),
        ({"query": "q", "provider": "bing"}, "validation"),
        ({"query": "q", "provider": "tavily"}, "not_configured"),
    ],
)
async def test_bad_search_input_is_a_coded_error(
    web_env: dict[str, str], arguments: dict[str, Any], kind: str
) -> None:
    async with mcp_session(web_env, toolsets="web") as session:
        result = await _call(session, "web_search", arguments)
        assert result.is_error
        error = result.structured_content["error"]
        assert error["kind"] == kind
        assert error["suggestedAction"]
        assert isinstance(error["retryable"], bool)
        if kind == "not_configured":
            assert "TAVILY_API_KEY" in error["message"]


async def test_scrape_of_a_private_address_is_refused_and_the_server_keeps_serving(
    web_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, BRAVE_ANSWER)
    async with mcp_session(web_env, toolsets="web") as session:
        for url in ("http://127.0.0.1:9/", "http://169.254.169.254/", "ftp://example.org/x"):
            result = await _call(session, "scrape_page", {"url": url})
            assert result.is_error
            assert result.structured_content["error"]["kind"] == "validation"
        ok = await _call(session, "web_search", {"query": "graphene"})
        assert not ok.is_error


def test_cli_search_and_scrape(web_env: dict[str, str], upstream: ReplayUpstream) -> None:
    upstream.json(*BRAVE, BRAVE_ANSWER)
    upstream.route(
        "blog.example.org", "/essay", Reply(200, LONG_PAGE, {"Content-Type": "text/html"})
    )
    searched = doiget("web", "search", "graphene", "--json", env=web_env)
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)["urls"] == ["https://www.nature.com/articles/graphene"]
    text = doiget("web", "search", "graphene", env=web_env)
    assert "Graphene review" in text.stdout
    scraped = doiget(
        "web",
        "scrape",
        "https://blog.example.org/essay",
        "--max-length",
        "2000",
        "--json",
        env=web_env,
    )
    assert scraped.returncode == 0, scraped.stderr
    body = json.loads(scraped.stdout)
    assert body["truncated"] is True and body["contentLength"] <= 2000
    refused = doiget("web", "scrape", "http://127.0.0.1:9/", env=web_env)
    assert refused.returncode != 0
    assert "127.0.0.1" in refused.stderr
    bad = doiget("web", "search", "q", "--num-results", "50", env=web_env)
    assert bad.returncode == 2


def test_stdout_carries_only_json_rpc_across_the_web_tools(
    web_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.fixture(
        "html.duckduckgo.com",
        "/html/",
        "web/duckduckgo-html-results.html",
        content_type="text/html; charset=utf-8",
    )
    upstream.json(*BRAVE, BRAVE_ANSWER)
    upstream.route(
        "blog.example.org", "/essay", Reply(200, LONG_PAGE, {"Content-Type": "text/html"})
    )
    calls: list[tuple[str, dict[str, Any]]] = [
        ("web_search", {"query": "graphene", "provider": "duckduckgo", "claim": "graphene"}),
        ("web_search", {"query": "graphene", "lens": "science"}),
        ("scrape_page", {"url": "https://blog.example.org/essay"}),
        ("scrape_page", {"url": "https://blog.example.org/essay", "mode": "raw"}),
        ("scrape_page", {"url": "http://169.254.169.254/latest/meta-data/"}),
    ]
    env = {**web_env, "DOIGET_LOG_LEVEL": "DEBUG"}
    answers, stderr = converse(spawn_server(env, "web"), calls)
    for number, (tool, _) in enumerate(calls, start=2):
        result = answers[number]["result"]
        assert result.get("isError", False) is (number == len(calls) + 1), (tool, result)
    assert answers[2]["result"]["structuredContent"]["resultCount"] > 0
    assert "Paragraph 199" in answers[4]["result"]["structuredContent"]["content"]
    assert answers[5]["result"]["structuredContent"]["linked"] is True
    assert b"DEBUG" in stderr
    assert b"brave-e2e-key" not in stderr


async def _step(session: ClientSession, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await _call(session, "sequential_search", arguments)
    assert not result.is_error, result.structured_content
    body: dict[str, Any] = result.structured_content
    return body


async def test_research_session_across_a_restart_and_every_export_format(
    web_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    import bibtexparser
    import jsonschema

    from doiget.cite import csl

    upstream.json(*BRAVE, BRAVE_ANSWER)
    async with mcp_session(web_env, toolsets="web") as session:
        first = await _step(
            session,
            {
                "searchStep": "Survey graphene conductivity reviews",
                "stepNumber": 1,
                "nextStepNeeded": True,
                "researchGoal": "How well does graphene conduct?",
            },
        )
        sid = first["sessionId"]
        found = await _call(session, "web_search", {"query": "graphene", "sessionId": sid})
        assert not found.is_error
        await _step(
            session,
            {
                "searchStep": "Compare with copper",
                "stepNumber": 2,
                "nextStepNeeded": True,
                "sessionId": sid,
                "knowledgeGap": "No room-temperature data yet",
            },
        )
        await _step(
            session,
            {
                "searchStep": "Compare with silver instead",
                "stepNumber": 3,
                "nextStepNeeded": True,
                "sessionId": sid,
                "revisesStep": 2,
            },
        )
        await _step(
            session,
            {
                "searchStep": "Branch: doped graphene",
                "stepNumber": 4,
                "nextStepNeeded": True,
                "sessionId": sid,
                "branchFromStep": 1,
                "branchId": "doped",
            },
        )
        await _step(
            session,
            {"searchStep": "Summarise", "stepNumber": 5, "nextStepNeeded": False, "sessionId": sid},
        )
        unknown = await _call(session, "web_search", {"query": "x", "sessionId": "no-such-id"})
        assert unknown.is_error
        assert unknown.structured_content["error"]["kind"] == "not_found"

    async with mcp_session(web_env, toolsets="web") as session:  # a new server process
        read = await _call(session, "get_research_session", {"sessionId": sid})
        stored = read.structured_content
        assert stored["researchGoal"] == "How well does graphene conduct?"
        assert [source["url"] for source in stored["sources"]] == [
            "https://www.nature.com/articles/graphene"
        ]
        exports = {}
        for fmt in ("markdown", "json", "bibtex", "csl-json", "ris"):
            result = await _call(session, "research_export", {"sessionId": sid, "format": fmt})
            assert not result.is_error, result.structured_content
            exports[fmt] = result.structured_content
    assert all(body["stepCount"] == 5 and body["sourceCount"] == 1 for body in exports.values())
    assert "Compare with silver instead" in exports["markdown"]["document"]
    assert json.loads(exports["json"]["document"])["sessionId"] == sid
    library = bibtexparser.parse_string(exports["bibtex"]["document"])
    assert len(library.entries) == 1 and not library.failed_blocks
    assert library.entries[0]["url"] == "https://www.nature.com/articles/graphene"
    items = json.loads(exports["csl-json"]["document"])
    jsonschema.validate(items, json.loads(csl.SCHEMA_PATH.read_text()))
    assert items[0]["URL"] == "https://www.nature.com/articles/graphene"
    assert "UR  - https://www.nature.com/articles/graphene" in exports["ris"]["document"]


def test_cli_research_session_papers_and_patents(
    web_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, BRAVE_ANSWER)
    started = doiget(
        "web",
        "research",
        "step",
        "Survey",
        "--number",
        "1",
        "--goal",
        "Graphene",
        "--json",
        env=web_env,
    )
    assert started.returncode == 0, started.stderr
    sid = json.loads(started.stdout)["sessionId"]
    searched = doiget("web", "search", "graphene", "--session", sid, env=web_env)
    assert searched.returncode == 0, searched.stderr
    shown = doiget("web", "research", "show", sid, env=web_env)
    assert "https://www.nature.com/articles/graphene" in shown.stdout
    exported = doiget("web", "research", "export", sid, "--format", "ris", env=web_env)
    assert exported.returncode == 0, exported.stderr
    assert "UR  - https://www.nature.com/articles/graphene" in exported.stdout
    gone = doiget("web", "research", "show", "no-such-session", env=web_env)
    assert gone.returncode != 0 and "expired or does not exist" in gone.stderr

    patents = doiget("web", "patents", "robot hand", env=web_env)
    assert patents.returncode != 0
    assert "LENS_API_TOKEN" in patents.stderr and "EPO_OPS_KEY" in patents.stderr


async def test_a_scholar_tool_records_its_paper_in_a_research_session(
    web_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    from scholarutil import route_pubmed_record

    route_pubmed_record(upstream)
    async with mcp_session(web_env, toolsets="scholar,web") as session:
        sid = (
            await _step(
                session, {"searchStep": "Find the paper", "stepNumber": 1, "nextStepNeeded": True}
            )
        )["sessionId"]
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "sessionId" in tools["get_pubmed_paper"].input_schema["properties"]
        assert "sessionId" not in tools["pubmed_to_bibtex"].input_schema["properties"]
        paper = await session.call_tool("get_pubmed_paper", {"pmid": "38147649", "sessionId": sid})
        assert not paper.is_error
        gone = await session.call_tool(
            "get_pubmed_paper", {"pmid": "38147649", "sessionId": "nope"}
        )
        assert gone.is_error and "expired or does not exist" in gone.content[0].text  # type: ignore[union-attr]
        stored = (
            await _call(session, "get_research_session", {"sessionId": sid})
        ).structured_content
    (source,) = stored["sources"]
    assert source["kind"] == "paper" and source["tool"] == "get_pubmed_paper"
    assert "pubmed.ncbi.nlm.nih.gov" in source["url"]
