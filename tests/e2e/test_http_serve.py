"""doiget serve --http: authentication on by default, every toolset over Streamable
HTTP with the SDK's client, the guards around /mcp, and a graceful SIGTERM."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from httputil import TOKEN, http_server, http_session, token_file
from mcputil import INITIALIZE
from webpages import LONG_PAGE

from cliutil import doiget
from papersutil import NATURE, route_nature
from replay import ReplayUpstream, Reply

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def team_env(doiget_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {
        **doiget_env,
        "DOIGET_HTTP_TOKENS_FILE": str(token_file(tmp_path, TOKEN, "second-token-0a9b8c7d6e5f4")),
    }


def post(url: str, token: str | None = None, **headers: str) -> httpx.Response:
    sent = {**MCP_HEADERS, **headers}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return httpx.post(url, json=INITIALIZE, headers=sent, timeout=10)


def test_without_a_valid_token_there_is_only_a_401(
    team_env: dict[str, str], tmp_path: Path
) -> None:
    with http_server(team_env, tmp_path) as server:
        for token in (None, "wrong-token-0123456789abcdef", TOKEN[:-1]):
            refused = post(server.url, token)
            assert refused.status_code == 401, token
            assert refused.headers["www-authenticate"].startswith("Bearer")
            assert "mcp-session-id" not in refused.headers
            assert "doiget" not in refused.text
        assert post(server.url, TOKEN).status_code == 200
        health = httpx.get(f"{server.base}/healthz", timeout=5)
        ready = httpx.get(f"{server.base}/readyz", timeout=5)
    assert health.json() == {"status": "ok"}
    assert ready.status_code == 200
    assert set(ready.json()) == {"ready", "checks"}
    assert ready.json()["checks"] == {"store": True, "log": True}
    assert TOKEN not in server.stderr and TOKEN[:12] not in server.stderr
    logged = [json.loads(line) for line in server.stderr.splitlines() if line.startswith("{")]
    assert [line["status"] for line in logged] == [401, 401, 401, 200] or all(
        "token" in line for line in logged
    )


async def test_every_toolset_answers_over_http_with_progress_and_links(
    team_env: dict[str, str], tmp_path: Path, upstream: ReplayUpstream
) -> None:
    route_nature(upstream)
    upstream.fixture(
        "export.arxiv.org", "/api/query", "arxiv/search_query-testing-start0-max10.atom"
    )
    upstream.route(
        "blog.example.org", "/essay", Reply(200, LONG_PAGE, {"Content-Type": "text/html"})
    )
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    with http_server(team_env, tmp_path) as server:
        async with http_session(server.url) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            health = await session.call_tool("doiget_health", {})
            batch = await session.call_tool(
                "doiget_batch_fetch", {"refs": [NATURE]}, progress_callback=on_progress
            )
            hits = await session.call_tool("search_arxiv", {"query": "testing"})
            projects = await session.call_tool("list_projects", {})
            scraped = await session.call_tool(
                "scrape_page", {"url": "https://blog.example.org/essay", "mode": "raw"}
            )
            summary: dict[str, Any] = scraped.structured_content or {}
            read = await session.read_resource(summary["resource"])
    assert {"doiget_fetch_paper", "search_arxiv", "find_chunks", "scrape_page"} <= names
    assert health.structured_content and health.structured_content["ok"] is True
    assert batch.structured_content and batch.structured_content["summary"]["ok"] == 1
    assert seen and seen[-1] == (1.0, 1.0)
    assert hits.structured_content and len(hits.structured_content["result"]) == 10
    assert projects.structured_content and projects.structured_content["projects"][0]["id"] == (
        "doiget/papers"
    )
    assert summary["linked"] is True
    links = [item for item in scraped.content if item.type == "resource_link"]
    assert len(links) == 1
    full = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert "Paragraph 199" in full["content"]
    assert server.exit_code == 0
    calls = [json.loads(line) for line in server.stderr.splitlines() if line.startswith("{")]
    tools = {line.get("tool") for line in calls}
    assert {"doiget_batch_fetch", "search_arxiv", "scrape_page"} <= tools
    assert all(line["token"] == calls[0]["token"] and len(line["token"]) == 12 for line in calls)


def test_host_and_origin_are_checked(team_env: dict[str, str], tmp_path: Path) -> None:
    with http_server(team_env, tmp_path) as server:
        rebound = post(server.url, TOKEN, Host="attacker.example:80")
        foreign = post(server.url, TOKEN, Origin="https://attacker.example")
        local = post(server.url, TOKEN, Origin=f"http://127.0.0.1:{server.port}")
    assert rebound.status_code == 421
    assert foreign.status_code == 403
    assert local.status_code == 403  # no origin is allowed unless configured


def test_each_token_has_a_request_rate(team_env: dict[str, str], tmp_path: Path) -> None:
    env = {**team_env, "DOIGET_HTTP_RATE": "3"}
    with http_server(env, tmp_path) as server:
        answers = [post(server.url, TOKEN).status_code for _ in range(5)]
        other = post(server.url, "second-token-0a9b8c7d6e5f4").status_code
        limited = post(server.url, TOKEN)
    assert answers[:3] == [200, 200, 200] and answers[3:] == [429, 429]
    assert other == 200  # another token has its own budget
    assert int(limited.headers["retry-after"]) >= 1


@pytest.mark.parametrize(
    ("args", "extra", "needle"),
    [
        ((), {}, "no HTTP token is configured"),
        (("--insecure-no-auth", "--host", "0.0.0.0"), {}, "only allowed on a loopback"),
        ((), {"DOIGET_HTTP_TOKENS": "short"}, "at least 16"),
        ((), {"DOIGET_HTTP_TOKENS_FILE": "/nonexistent/tokens"}, "cannot be read"),
    ],
)
def test_a_server_without_real_authentication_does_not_start(
    doiget_env: dict[str, str], args: tuple[str, ...], extra: dict[str, str], needle: str
) -> None:
    done = doiget("serve", "--http", "--port", "1", *args, env={**doiget_env, **extra})
    assert done.returncode == 2, done.stderr
    assert "INVALID_CONFIG" in done.stderr and needle in done.stderr


def test_insecure_no_auth_serves_on_loopback_only(
    doiget_env: dict[str, str], tmp_path: Path
) -> None:
    with http_server(doiget_env, tmp_path, "--insecure-no-auth") as server:
        assert post(server.url).status_code == 200
    assert "authentication OFF" in server.stderr


def test_sigterm_lets_a_call_in_flight_finish_and_exits_zero(
    team_env: dict[str, str], tmp_path: Path, upstream: ReplayUpstream
) -> None:
    """The answer of a call running when SIGTERM arrives reaches its client whole; the
    server then exits 0 with the provenance session closed. (Read with a plain HTTP
    client: the SDK's client, once the server is gone, fails on reconnecting its
    event stream, which says nothing about the server.)"""
    route_nature(upstream)
    slow_pdf = Reply(
        200, b"%PDF-1.4\n" + b"x" * 20000, {"Content-Type": "application/pdf"}, trickle=0.5
    )
    upstream.route("europepmc.org", "/articles/pmc4221854", slow_pdf)
    with http_server(team_env, tmp_path) as server:
        opened = post(server.url, TOKEN)
        headers = {
            **MCP_HEADERS,
            "Authorization": f"Bearer {TOKEN}",
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "Mcp-Protocol-Version": "2025-06-18",
        }
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(server.url, json=ready, headers=headers).status_code == 202
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "doiget_fetch_paper", "arguments": {"ref": NATURE}},
        }
        signalled: list[float] = []

        def terminate() -> None:
            signalled.append(time.monotonic())
            server.process.send_signal(signal.SIGTERM)

        threading.Timer(1.0, terminate).start()
        with httpx.stream("POST", server.url, json=call, headers=headers, timeout=60) as reply:
            body = reply.read().decode()
        code = server.stop()
    assert code == 0, server.stderr
    data = [line.removeprefix("data: ") for line in body.splitlines() if line.startswith("data:")]
    result = json.loads(data[-1])["result"]["structuredContent"]
    assert result["ok"] is True and result["source"] == "oa-publisher"
    # The download was still running when the signal came.
    assert signalled and upstream.requests_to("europepmc.org")[-1].finished > signalled[0]
    rows = [json.loads(line) for line in Path(team_env["DOIGET_LOG_PATH"]).read_text().splitlines()]
    assert rows[-1]["event"] == "session_end"


async def test_metrics_count_tool_calls_upstream_requests_and_cache_hits(
    team_env: dict[str, str], tmp_path: Path, upstream: ReplayUpstream
) -> None:
    upstream.fixture(
        "export.arxiv.org", "/api/query", "arxiv/search_query-testing-start0-max10.atom"
    )
    env = {**team_env, "DOIGET_HTTP_METRICS": "1"}
    with http_server(env, tmp_path) as server:
        async with http_session(server.url) as session:
            await session.call_tool("doiget_health", {})
            await session.call_tool("search_arxiv", {"query": "testing"})
            await session.call_tool("search_arxiv", {"query": "testing"})  # cached
            await session.call_tool("doiget_info", {"ref": "10.1234/not-stored"})
        anonymous = httpx.get(f"{server.base}/metrics", timeout=10)
        page = httpx.get(
            f"{server.base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
        ).text
    assert anonymous.status_code == 401
    assert 'doiget_tool_calls_total{outcome="ok",tool="doiget_health"} 1.0' in page
    assert 'doiget_tool_calls_total{outcome="ok",tool="search_arxiv"} 2.0' in page
    assert 'doiget_tool_calls_total{outcome="error",tool="doiget_info"} 1.0' in page
    assert 'doiget_upstream_requests_total{outcome="2xx",source="arxiv"} 1.0' in page
    assert 'doiget_cache_lookups_total{cache="scholar",result="hit"} 1.0' in page
    assert "doiget_rate_limit_wait_seconds_count" in page
    assert TOKEN not in page
