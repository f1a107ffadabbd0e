"""Searches in worker processes, end to end: ``doiget serve --http`` runs them apart by
default, stdio does when DOIGET_SEARCH_PROCESSES=1; either way the answers are those
of the stdio server's threads, the workers are the server's children at a lower
priority, stdout carries JSON-RPC frames only, and the workers end with the server."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from httputil import http_server, http_session, token_file, worker_pids
from mcp.client.session import ClientSession
from mcputil import mcp_session

from cliutil import doiget
from papersutil import NATURE, PNAS, route_nature, route_pnas
from replay import ReplayUpstream

PROJECT = "lab/notes"
PATIENCE = 30.0  # upper bound on any wait, never a measurement
SEARCHES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("doiget_search_local", {"query": "collagen", "limit": 5}),
    ("doiget_search_local", {"query": "tissue", "limit": 5}),
    ("find_chunks", {"project": PROJECT, "query": "sea ice radar", "top_k": 4}),
    ("query_hybrid", {"project": PROJECT, "query": "lake ice warming", "top_k": 4}),
    (
        "query_hybrid",
        {"project": PROJECT, "query": "glacier", "top_k": 3, "filters": {"tags": "radar"}},
    ),
)
TEXTS = ("sea ice from radar", "lake ice and warming winters", "glacier flow by radar")


def _items() -> list[dict[str, Any]]:
    items = []
    for n in range(12):
        vector = [0.0] * 384
        vector[n], vector[n + 100] = 1.0, 0.5
        items.append(
            {
                "id": f"c{n}",
                "text": f"{TEXTS[n % 3]}, note {n}",
                "embedding": vector,
                "metadata": {"zotero": {"tags": ["radar" if n % 2 else "ice"]}},
            }
        )
    return items


def _stock(upstream: ReplayUpstream, env: dict[str, str]) -> None:
    route_nature(upstream)
    route_pnas(upstream)
    assert doiget("fetch", NATURE, env=env).returncode == 0
    assert doiget("metadata", PNAS, env=env).returncode == 0
    with Path(env["DOIGET_CONFIG"]).open("a") as config:
        config.write(f'\n[projects."{PROJECT}"]\nhybrid_enabled = true\n')


async def _answers(session: ClientSession) -> list[Any]:
    answers = []
    for tool, arguments in SEARCHES:
        result = await session.call_tool(tool, arguments)
        assert not result.is_error, result.content
        assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
        answers.append(result.structured_content)
    return answers


def _niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


async def test_http_searches_apart_answer_as_stdio_and_end_with_the_server(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    _stock(upstream, doiget_env)
    async with mcp_session(doiget_env, toolsets="papers,library") as session:
        stored = await session.call_tool("store_chunks", {"project": PROJECT, "items": _items()})
        assert not stored.is_error, stored.content
        in_threads = await _answers(session)
    assert all(answer["count"] for answer in in_threads)

    # A metadata file the library cannot read: health's scan, apart too, names it.
    broken = Path(doiget_env["DOIGET_STORE_ROOT"]) / ".metadata" / "10.9999_broken.toml"
    broken.write_text('schema_version = "1.0"\ntitle = [\n')
    env = {**doiget_env, "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, "t" * 24))}
    with http_server(env, tmp_path) as server:
        async with http_session(server.url, "t" * 24) as session:
            apart = await _answers(session)
            health = (await session.call_tool("doiget_health", {})).structured_content or {}
            workers = worker_pids(server.process.pid)
        assert apart == in_threads
        assert health["unreadable_entries"] == 1
        assert health["unreadable_files"][0].startswith("10.9999_broken.toml")
        # Two lanes (stored papers, library), one worker a core each at the most, and
        # the scan's own.
        assert 3 <= len(workers) <= 2 * (os.cpu_count() or 1) + 1
        assert all(_niceness(w) > _niceness(server.process.pid) for w in workers)
        assert server.stop() == 0
    assert not [w for w in workers if Path(f"/proc/{w}").exists()]


async def test_stdio_searches_apart_keep_stdout_to_frames(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    """Worker processes share the server's stdout; any byte of theirs there would break
    the client's framing. Every answer arriving whole shows none came."""
    _stock(upstream, doiget_env)
    threads_env = {**doiget_env, "DOIGET_SEARCH_PROCESSES": "0"}
    async with mcp_session(threads_env, toolsets="papers,library") as session:
        stored = await session.call_tool("store_chunks", {"project": PROJECT, "items": _items()})
        assert not stored.is_error, stored.content
        in_threads = await _answers(session)
    apart_env = {**doiget_env, "DOIGET_SEARCH_PROCESSES": "1"}
    async with mcp_session(apart_env, toolsets="papers,library") as session:
        assert await _answers(session) == in_threads
        assert await _answers(session) == in_threads


async def test_workers_end_when_the_server_is_killed(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    """A killed server says nothing to its workers; they notice it is gone and end."""
    _stock(upstream, doiget_env)
    env = {**doiget_env, "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, "t" * 24))}
    with http_server(env, tmp_path) as server:
        async with http_session(server.url, "t" * 24) as session:
            found = await session.call_tool("doiget_search_local", {"query": "collagen"})
            assert not found.is_error, found.content
        workers = worker_pids(server.process.pid)
        assert workers
        server.process.send_signal(signal.SIGKILL)
        server.process.wait()
        deadline = time.monotonic() + PATIENCE
        while [w for w in workers if _running(w)] and time.monotonic() < deadline:
            time.sleep(0.1)
    assert not [w for w in workers if _running(w)]


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
