"""fetch → index → find_chunks / query_hybrid, over the real CLI and a spawned MCP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcputil import mcp_session

from cliutil import doiget
from papersutil import NATURE, PNAS, route_nature, route_pnas
from replay import ReplayUpstream

LIBRARY_TOOLS = {
    "store_chunks",
    "find_chunks",
    "query_hybrid",
    "inspect_collection",
    "list_projects",
    "index_papers",
}
# A sentence on page 3 of the OpenQuestion paper that the replay serves for NATURE.
PAGE3_QUERY = "reports can be exported as HTML with the interactivity of the charts maintained"


def _stock(upstream: ReplayUpstream, env: dict[str, str], timeouts: str = "") -> None:
    """One stored paper with a PDF, one stored without, and a project."""
    route_nature(upstream)
    route_pnas(upstream)
    assert doiget("fetch", NATURE, env=env).returncode == 0
    assert doiget("metadata", PNAS, env=env).returncode == 0
    added = doiget("projects", "add", "lab/papers", "--json", env=env)
    assert added.returncode == 0, added.stderr
    if timeouts:
        with Path(env["DOIGET_CONFIG"]).open("a") as config:
            config.write(timeouts)


async def _call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    result = await session.call_tool(tool, arguments)
    structured = result.structured_content
    assert structured is not None
    assert json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
    return bool(result.is_error), structured


async def test_index_and_search_over_mcp(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    _stock(upstream, doiget_env, "\n[library.timeouts]\nfind_chunks = 0.000001\n")
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with mcp_session(doiget_env, toolsets="library") as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert names == LIBRARY_TOOLS
        failed, listed = await _call(session, "list_projects", {})
        assert not failed
        assert [p["id"] for p in listed["projects"]] == ["doiget/papers", "lab/papers"]

        result = await session.call_tool(
            "index_papers",
            {"project": "lab/papers", "refs": [NATURE, PNAS, "10.9999/not-stored"]},
            progress_callback=on_progress,
        )
        report = result.structured_content
        assert report is not None and not result.is_error
        status = {row["doc_id"]: (row["status"], row["reason"]) for row in report["documents"]}
        assert status[NATURE] == ("indexed", None)
        assert status[PNAS] == ("skipped", "no_pdf")
        assert status["10.9999/not-stored"] == ("skipped", "not_stored")
        # A paper stored without a PDF is reported with what would make it indexable,
        # never with a guess at why it has none.
        (no_pdf,) = [row["message"] for row in report["documents"] if row["doc_id"] == PNAS]
        assert "doiget_fetch_paper" in no_pdf and "doiget_add_pdf" in no_pdf
        assert "no Open Access copy was found" not in no_pdf
        assert report["indexed"] == 1 and report["chunks_written"] > 5
        assert seen and seen[-1] == (1.0, 1.0)

        failed, found = await _call(
            session, "query_hybrid", {"project": "lab/papers", "query": PAGE3_QUERY, "top_k": 3}
        )
        assert not failed and found["hybrid_enabled"] is True and found["count"] == 3
        best = found["items"][0]
        assert best["doi"] == NATURE and best["citekey"]
        assert best["page_span"][0] <= 3 <= best["page_span"][1]
        assert best["full_text"] is None and best["section"]

        # find_chunks is configured to a limit no search can meet: TIMEOUT, then the
        # server goes on serving.
        failed, timed_out = await _call(
            session, "find_chunks", {"project": "lab/papers", "query": PAGE3_QUERY}
        )
        assert failed and timed_out["error"]["code"] == "TIMEOUT"
        failed, inspected = await _call(
            session, "inspect_collection", {"project": "lab/papers", "sample": 2}
        )
        assert not failed and inspected["size"] == report["chunks_written"]
        assert len(inspected["sample"]) == 2

        failed, unknown = await _call(session, "find_chunks", {"project": "x/y", "query": "q"})
        assert failed and unknown["error"]["code"] == "INVALID_PROJECT"
        assert unknown["error"]["details"]["available_projects"] == [
            "doiget/papers",
            "lab/papers",
        ]
        failed, bad = await _call(
            session, "query_hybrid", {"project": "lab/papers", "query": "q", "top_k": 0}
        )
        assert failed and bad["error"]["code"] == "INVALID_ARGUMENT"


def test_index_and_query_from_the_cli(upstream: ReplayUpstream, doiget_env: dict[str, str]) -> None:
    _stock(upstream, doiget_env)
    indexed = doiget("index", "--project", "lab/papers", "--all", "--json", env=doiget_env)
    assert indexed.returncode == 0, indexed.stderr
    report = json.loads(indexed.stdout)
    assert report["indexed"] == 1 and report["documents"][0]["doc_id"] == NATURE

    queried = doiget("query", "lab/papers", PAGE3_QUERY, "--json", "-k", "2", env=doiget_env)
    assert queried.returncode == 0, queried.stderr
    found = json.loads(queried.stdout)
    assert found["count"] == 2 and found["items"][0]["doi"] == NATURE
    assert "hybrid_enabled" not in found

    text = doiget("query", "lab/papers", PAGE3_QUERY, "--hybrid", env=doiget_env)
    assert text.returncode == 0 and "p. 3" in text.stdout

    listed = doiget("projects", "list", "--json", env=doiget_env)
    collections = [p["collection"] for p in json.loads(listed.stdout)["projects"]]
    assert collections == ["proj-doiget-papers", "proj-lab-papers"]
    refused = doiget("projects", "remove", "lab/papers", env=doiget_env, stdin="n\n")
    assert refused.returncode == 1
    removed = doiget("projects", "remove", "lab/papers", "--yes", env=doiget_env)
    assert removed.returncode == 0, removed.stderr
    gone = doiget("query", "lab/papers", "x", "--json", env=doiget_env)
    assert gone.returncode == 2 and "INVALID_PROJECT" in gone.stdout
