"""Talking to a spawned ``doiget serve`` with the official MCP client."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession, MessageHandlerFnT
from mcp.client.stdio import StdioServerParameters, stdio_client

from cliutil import clean_env, command

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
    "doiget_verify_references",
    "doiget_check_claims",
    "doiget_import_bibliography",
    "doiget_format_references",
    "doiget_read_paper",
    "doiget_check_quote",
    "doiget_add_pdf",
    "doiget_audit_manuscript",
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


def walked(
    value: Any,
    *,
    text: Callable[[str], str] | None = None,
    dropped: frozenset[str] = frozenset(),
) -> Any:
    """A tool result (JSON) with the keys in ``dropped`` left out of every object and
    ``text`` applied to every string: the form two results are compared in."""
    if isinstance(value, dict):
        return {
            k: walked(v, text=text, dropped=dropped) for k, v in value.items() if k not in dropped
        }
    if isinstance(value, list):
        return [walked(item, text=text, dropped=dropped) for item in value]
    if isinstance(value, str) and text is not None:
        return text(value)
    return value


@asynccontextmanager
async def mcp_session(
    env: dict[str, str],
    *args: str,
    toolsets: str = "papers",
    message_handler: MessageHandlerFnT | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialised client session with ``doiget serve --toolsets <toolsets>``; the
    server's notifications go to ``message_handler``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doiget", "serve", "--toolsets", toolsets, *args],
        env=clean_env(env),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=message_handler) as session,
    ):
        await session.initialize()
        yield session


async def with_roots(env: dict[str, str], roots: list[Path], work: Any) -> Any:
    """``work(session)`` with ``doiget serve`` for a client that declares ``roots``."""

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri()) for root in roots])

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "doiget", "serve", "--toolsets", "papers"],
        env=clean_env(env),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots) as session,
    ):
        await session.initialize()
        return await work(session)


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


# The client's first message, as raw JSON-RPC (id 1).
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"},
    },
}


def frames(*requests: tuple[str, dict[str, Any]]) -> bytes:
    """initialize + initialized, then one tools/call per (tool, arguments), ids from 2."""
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for number, (tool, arguments) in enumerate(requests, start=2):
        lines.append(
            {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def responses(stdout: bytes) -> dict[int, dict[str, Any]]:
    """Every stdout line must be a JSON-RPC message; the responses by id."""
    by_id = {}
    for line in stdout.splitlines():
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0", line
        if "id" in message and ("result" in message or "error" in message):
            by_id[message["id"]] = message
    return by_id


def spawn_server(env: dict[str, str], toolsets: str = "papers") -> subprocess.Popen[bytes]:
    """``doiget serve --toolsets <toolsets>`` with pipes on all three streams."""
    return subprocess.Popen(
        command("serve", "--toolsets", toolsets),
        env=clean_env(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def converse(
    process: subprocess.Popen[bytes], calls: list[tuple[str, dict[str, Any]]], *, first: int = 0
) -> tuple[dict[int, dict[str, Any]], bytes]:
    """Initialise a spawned server and make ``calls``, then close its stdin.

    The first ``first`` calls are answered before the rest are sent (calls run
    concurrently). Returns the responses by id (the calls are ids 2, 3, ...) and
    stderr, after checking the process exited 0.
    """
    everything = frames(*calls)
    opening = frames(*calls[:first])
    lines: list[bytes] = []
    for chunk, wanted in (
        (opening, set(range(1, first + 2))),
        (everything[len(opening) :], set(range(1, len(calls) + 2))),
    ):
        process.stdin.write(chunk)  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        while not wanted <= set(responses(b"".join(lines))):
            line = process.stdout.readline()  # type: ignore[union-attr]
            assert line, "the server closed stdout early"
            lines.append(line)
    process.stdin.close()  # type: ignore[union-attr]
    rest, stderr = process.stdout.read(), process.stderr.read()  # type: ignore[union-attr]
    process.wait(timeout=30)
    assert process.returncode == 0, stderr.decode()
    return responses(b"".join(lines) + rest), stderr
