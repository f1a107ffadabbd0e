"""``--json`` prints what the matching MCP tool returns, successes and errors alike.

Each case runs one command and calls its tool against the same replay upstream and
the same library, then compares the two JSON documents. What may differ, and why:
values that change from call to call (VOLATILE), and next steps, which each surface
names in its own terms (a tool an agent calls, a command a person runs).
"""

from __future__ import annotations

import json
from typing import Any

from mcputil import mcp_session, walked

from doiget.config import KNOWN_TOOLSETS
from doiget.server.snapshot import listing
from doiget.surfaces import TOOL_COMMANDS, for_command_line
from pacing import unpaced_env

from cliutil import doiget
from replay import ReplayUpstream, Reply

# Tools with no command, and why.
NO_COMMAND = {"store_chunks": "takes client-computed embeddings; `doiget index` stores passages"}
# Commands with no tool, and why.
CLI_ONLY = {
    "serve": "starts the server itself",
    "delete": "deletes files: the command line only",
    "reindex": "maintenance of the local search index",
    "audit-log": "verifies the provenance log file",
    "ris": "doiget_format_references gives RIS with style ris",
    "projects add": "edits config.toml",
    "projects remove": "edits config.toml and deletes passages",
}
VOLATILE = frozenset({"generated_at", "checked_at", "fetched_at", "timestamp", "expiresInSeconds"})
UNSTORED = "10.1000/never-stored"

# (command line, tool, arguments)
CASES: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (("info", UNSTORED), "doiget_info", {"ref": UNSTORED}),
    (("pdf-path", UNSTORED), "doiget_paper_pdf_path", {"ref": UNSTORED}),
    (("bib", UNSTORED), "doiget_bibtex_export", {"refs": [UNSTORED]}),
    (("csl", UNSTORED), "doiget_csl_export", {"refs": [UNSTORED]}),
    (("fetch", "10.1371/notarealdoi"), "doiget_fetch_paper", {"ref": "10.1371/notarealdoi"}),
    (
        ("metadata", "10.1371/notarealdoi"),
        "doiget_metadata_only",
        {"ref": "10.1371/notarealdoi"},
    ),
    (("resolve", "10.1371/notarealdoi"), "doiget_resolve_paper", {"ref": "10.1371/notarealdoi"}),
    (("fetch", UNSTORED, "--dry-run"), "doiget_fetch_paper", {"ref": UNSTORED, "dry_run": True}),
    (("search", "thermometry"), "doiget_search_local", {"query": "thermometry"}),
    (("recent",), "doiget_list_recent", {}),
    (("graph", UNSTORED), "doiget_expand_citation_graph", {"ref": UNSTORED}),
    (("scholar", "s2", "search", "turing"), "search_semantic_scholar", {"query": "turing"}),
    (
        ("scholar", "s2", "get", "10.1000/x"),
        "get_semantic_scholar_paper",
        {"identifier": "10.1000/x"},
    ),
    (("scholar", "s2", "citations", "10.1000/x"), "get_paper_citations", {"paperId": "10.1000/x"}),
    (("scholar", "pubmed", "get", "PMC123"), "get_pubmed_paper", {"pmid": "PMC123"}),
    (("projects", "list"), "list_projects", {}),
    (("projects", "inspect", "no/such"), "inspect_collection", {"project": "no/such"}),
    (("query", "no/such", "words"), "find_chunks", {"project": "no/such", "query": "words"}),
    (
        ("index", UNSTORED, "--project", "no/such"),
        "index_papers",
        {"project": "no/such", "refs": [UNSTORED]},
    ),
    (("web", "scrape", "http://127.0.0.1/admin"), "scrape_page", {"url": "http://127.0.0.1/admin"}),
    (
        ("web", "research", "show", "nosuchsession"),
        "get_research_session",
        {"sessionId": "nosuchsession"},
    ),
    (
        ("web", "research", "export", "nosuchsession"),
        "research_export",
        {"sessionId": "nosuchsession"},
    ),
    (("web", "patents", "solar cell"), "patent_search", {"query": "solar cell"}),
]


def _steady(value: Any) -> Any:
    return walked(value, text=for_command_line, dropped=VOLATILE)


def test_every_tool_has_a_command_or_a_reason() -> None:
    everything = listing(KNOWN_TOOLSETS)
    assert everything is not None
    tools = {tool["name"] for tool in everything.tools}
    assert tools == set(TOOL_COMMANDS) | set(NO_COMMAND)


async def test_json_output_is_the_tools_output(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route(
        "api.crossref.org", "/works/10.1371/notarealdoi", Reply(404, b"Resource not found.")
    )
    upstream.route("api.unpaywall.org", "/v2/10.1371/notarealdoi", Reply(404, b"{}"))
    upstream.route("api.semanticscholar.org", "/graph/v1/paper/search", Reply(503, b"down"))
    upstream.route("api.semanticscholar.org", "/graph/v1/paper/DOI:10.1000/x", Reply(404, b"{}"))
    upstream.route(
        "api.semanticscholar.org", "/graph/v1/paper/DOI:10.1000/x/citations", Reply(404, b"{}")
    )
    # Unpaced: the answer is the subject, and Semantic Scholar's retried requests 1 s apart
    # would be a third of the test's time.
    env = unpaced_env({**doiget_env, "DOIGET_SCHOLAR_CACHE_TTL": "0"})
    from_tools: list[Any] = []
    async with mcp_session(env, toolsets="papers,scholar,library,web") as session:
        for _, tool, arguments in CASES:
            result = await session.call_tool(tool, arguments)
            from_tools.append(json.loads(result.content[0].text))  # type: ignore[union-attr]
    checked = 0
    for (command, tool, _), expected in zip(CASES, from_tools, strict=True):
        done = doiget(*command, "--json", env=env)
        printed = [line for line in done.stdout.splitlines() if line.strip()]
        assert len(printed) == 1, (command, done.stdout, done.stderr)
        assert _steady(json.loads(printed[0])) == _steady(expected), (command, tool)
        checked += 1
    assert checked == len(CASES)


def test_batch_json_is_one_document_like_the_tool(doiget_env: dict[str, str]) -> None:
    dry = doiget("batch", "-", "--dry-run", "--json", env=doiget_env, stdin=f"{UNSTORED}\n")
    assert dry.returncode == 0, dry.stderr
    document = json.loads(dry.stdout)
    assert document["ok"] is True and document["results"][0]["ref"] == {"doi": UNSTORED}
