"""Talking to a spawned ``doiget serve`` with the official MCP client."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from cliutil import clean_env

PAPERS_TOOLS = {
    "doiget_resolve_paper",
    "doiget_fetch_paper",
    "doiget_metadata_only",
    "doiget_batch_fetch",
    "doiget_info",
    "doiget_search_local",
    "doiget_list_recent",
    "doiget_paper_pdf_path",
    "doiget_capability_profile",
    "doiget_health",
    "doiget_expand_citation_graph",
    "doiget_bibtex_export",
    "doiget_csl_export",
}


SCHOLAR_TOOLS = {
    "search_arxiv",
    "get_arxiv_paper",
    "arxiv_to_bibtex",
    "search_semantic_scholar",
    "get_semantic_scholar_paper",
    "get_paper_citations",
    "semantic_scholar_to_bibtex",
    "search_pubmed",
    "get_pubmed_paper",
    "pubmed_to_bibtex",
}


@asynccontextmanager
async def mcp_session(
    env: dict[str, str], *args: str, toolsets: str = "papers"
) -> AsyncIterator[ClientSession]:
    """An initialised client session with ``doiget serve --toolsets <toolsets>``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doiget", "serve", "--toolsets", toolsets, *args],
        env=clean_env(env),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(
    session: ClientSession, tool: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Call a tool; check the text and structured forms agree and isError matches ok."""
    result = await session.call_tool(tool, arguments or {})
    structured = result.structured_content
    assert structured is not None
    assert json.loads(result.content[0].text) == structured  # type: ignore[union-attr]
    assert bool(result.is_error) == (structured.get("ok") is False)
    return structured
