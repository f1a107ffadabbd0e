"""serve --http with several tokens: what one token does never starves another.
Every test runs with two static tokens and again with the OAuth access tokens of two
subjects (an OpenID provider impersonated on the replay upstream).

MCP sessions are capped per token (the longest idle one ends when a token opens one
more) and end after a short idle time; requests without a valid token are logged and
rate-limited by client address. Every test runs the real server on loopback with real
concurrent clients, bounded in count and time.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from httputil import TOKEN, http_server, token_file
from mcputil import INITIALIZE
from oauthutil import ISSUER, Provider
from redisutil import free_port

from replay import ReplayUpstream

OTHER = "second-token-0a9b8c7d6e5f4"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PROTOCOL = {"Mcp-Protocol-Version": "2025-06-18"}


@dataclass(frozen=True)
class Team:
    """A server's environment and port, and the tokens of its two callers."""

    env: dict[str, str]
    a: str
    b: str
    port: int


@pytest.fixture(params=["static tokens", "OAuth subjects"])
def team(
    request: pytest.FixtureRequest,
    doiget_env: dict[str, str],
    tmp_path: Path,
    upstream: ReplayUpstream,
) -> Team:
    port = free_port()
    if request.param == "static tokens":
        tokens = str(token_file(tmp_path, TOKEN, OTHER))
        return Team({**doiget_env, "DOIGET_HTTP_TOKENS_FILE": tokens}, TOKEN, OTHER, port)
    provider = Provider(upstream)
    provider.publish()
    resource = f"http://127.0.0.1:{port}/mcp"
    env = {**doiget_env, "DOIGET_HTTP_OAUTH_ISSUER": ISSUER, "DOIGET_HTTP_RESOURCE_URL": resource}
    until = int(time.time()) + 3600
    alice, bob = (provider.token(sub=sub, aud=resource, exp=until) for sub in ("alice", "bob"))
    return Team(env, alice, bob, port)


def bearer(token: str, **extra: str) -> dict[str, str]:
    return {**MCP_HEADERS, "Authorization": f"Bearer {token}", **extra}


async def initialize(client: httpx.AsyncClient, url: str, token: str) -> httpx.Response:
    return await client.post(url, json=INITIALIZE, headers=bearer(token))


async def ping(client: httpx.AsyncClient, url: str, token: str, session: str) -> int:
    """The status of a ping in ``session`` (404 once the session has ended)."""
    message = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    headers = bearer(token, **PROTOCOL, **{"Mcp-Session-Id": session})
    return (await client.post(url, json=message, headers=headers)).status_code


async def open_sessions(client: httpx.AsyncClient, url: str, token: str, count: int) -> list[str]:
    """The ids of ``count`` sessions opened one after another with ``token``."""
    return [(await initialize(client, url, token)).headers["mcp-session-id"] for _ in range(count)]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def access_lines(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith('{"token"')]


async def test_thousands_of_sessions_of_one_token_never_refuse_another(
    team: Team, tmp_path: Path
) -> None:
    """3,050 initialize calls with token B (16 at a time, almost a hundred times the
    cap of 32), token A initializing all along. A is never refused, B is never refused
    either (its longest idle sessions end instead), and the server's memory stays
    bounded: each session kept holds about 40 KiB, so 3,000 kept sessions grow the
    server by about 120 MiB, twice the bound (the calls take 5 MiB with the cap)."""
    calls, parallel = 3_050, 16
    env = {**team.env, "DOIGET_HTTP_RATE": "1000000"}  # the request rate is not the subject
    with http_server(env, tmp_path, port=team.port) as server:
        limits = httpx.Limits(max_connections=parallel + 2)
        async with httpx.AsyncClient(timeout=30, limits=limits) as client:
            first = await initialize(client, server.url, team.b)
            assert first.status_code == 200
            await initialize(client, server.url, team.b)
            before = rss_mib(server.process.pid)
            statuses: dict[int, int] = {}
            a_statuses: list[int] = []
            sent = iter(range(calls))

            async def token_b() -> None:
                for _ in sent:
                    status = (await initialize(client, server.url, team.b)).status_code
                    statuses[status] = statuses.get(status, 0) + 1

            async def token_a() -> None:
                while len(a_statuses) < 20:
                    a_statuses.append((await initialize(client, server.url, team.a)).status_code)
                    await anyio.sleep(0.5)

            with anyio.fail_after(900):
                async with anyio.create_task_group() as tasks:
                    for _ in range(parallel):
                        tasks.start_soon(token_b)
                    tasks.start_soon(token_a)
            after = rss_mib(server.process.pid)
            late = await initialize(client, server.url, team.a)
            first_again = await ping(client, server.url, team.b, first.headers["mcp-session-id"])
    assert statuses == {200: calls}
    assert set(a_statuses) == {200} and late.status_code == 200
    assert first_again == 404  # B's oldest idle session made room for its newer ones
    # 32 sessions are kept per token; 3,000 kept sessions took 120 MiB.
    assert after - before < 60, (before, after)


async def test_one_more_session_ends_the_longest_idle_of_that_token_only(
    team: Team, tmp_path: Path
) -> None:
    env = {**team.env, "DOIGET_HTTP_MAX_SESSIONS": "3"}
    with http_server(env, tmp_path, port=team.port) as server:
        async with httpx.AsyncClient(timeout=30) as client:
            mine = await open_sessions(client, server.url, team.a, 3)
            # The second is used again: the first is now the longest idle.
            assert await ping(client, server.url, team.a, mine[1]) == 200
            theirs = await open_sessions(client, server.url, team.b, 5)
            fourth = await initialize(client, server.url, team.a)
            mine_now = [await ping(client, server.url, team.a, sid) for sid in mine]
            theirs_now = [await ping(client, server.url, team.b, sid) for sid in theirs]
    assert fourth.status_code == 200
    assert mine_now == [404, 200, 200]
    assert theirs_now == [404, 404, 200, 200, 200]  # B's own cap, B's own oldest


async def test_when_every_session_of_a_token_is_busy_one_more_is_refused_by_name(
    team: Team, tmp_path: Path
) -> None:
    """An open event stream (GET) keeps a session busy: it is never ended to make room."""
    env = {**team.env, "DOIGET_HTTP_MAX_SESSIONS": "2"}
    with http_server(env, tmp_path, port=team.port) as server:
        async with httpx.AsyncClient(timeout=30) as client:
            sessions = await open_sessions(client, server.url, team.a, 2)
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            async with anyio.create_task_group() as tasks:
                opened = anyio.Event()
                streams = 0

                async def listen(sid: str) -> None:
                    nonlocal streams
                    headers = bearer(team.a, **PROTOCOL, **{"Mcp-Session-Id": sid})
                    await client.post(server.url, json=ready, headers=headers)
                    headers["Accept"] = "text/event-stream"
                    async with client.stream("GET", server.url, headers=headers) as stream:
                        assert stream.status_code == 200
                        streams += 1
                        if streams == len(sessions):
                            opened.set()
                        await anyio.sleep_forever()

                for sid in sessions:
                    tasks.start_soon(listen, sid)
                with anyio.fail_after(30):
                    await opened.wait()
                refused = await initialize(client, server.url, team.a)
                other = await initialize(client, server.url, team.b)
                still = [await ping(client, server.url, team.a, sid) for sid in sessions]
                tasks.cancel_scope.cancel()
    assert refused.status_code == 429
    assert "DOIGET_HTTP_MAX_SESSIONS" in refused.json()["error"]
    assert int(refused.headers["retry-after"]) >= 1
    assert other.status_code == 200
    assert still == [200, 200]


async def test_idle_sessions_end_after_the_idle_setting(team: Team, tmp_path: Path) -> None:
    env = {**team.env, "DOIGET_HTTP_SESSION_IDLE": "1"}
    with http_server(env, tmp_path, port=team.port) as server:
        async with httpx.AsyncClient(timeout=30) as client:
            sid = (await initialize(client, server.url, team.a)).headers["mcp-session-id"]
            assert await ping(client, server.url, team.a, sid) == 200
            with anyio.fail_after(60):
                while await ping(client, server.url, team.a, sid) == 200:
                    await anyio.sleep(2.5)  # more than the idle time between pings
            again = await initialize(client, server.url, team.a)
    assert again.status_code == 200


def test_refusals_without_a_token_are_logged_and_limited_per_address(
    team: Team, tmp_path: Path
) -> None:
    env = {**team.env, "DOIGET_HTTP_UNAUTH_RATE": "3", "DOIGET_HTTP_METRICS": "1"}
    with http_server(env, tmp_path, port=team.port) as server:
        wrong = {**MCP_HEADERS, "Authorization": "Bearer wrong-token-0123456789abcdef"}
        refused = [
            httpx.post(server.url, json=INITIALIZE, headers=headers, timeout=10)
            for headers in (MCP_HEADERS, wrong, MCP_HEADERS)
        ]
        limited = httpx.post(server.url, json=INITIALIZE, headers=wrong, timeout=10)
        metrics = httpx.get(f"{server.base}/metrics", timeout=10)
        # Another address has its own budget (the loopback net is all this machine's).
        other_address = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"))
        with other_address:
            elsewhere = other_address.post(
                f"http://127.0.0.1:{server.port}/mcp", json=INITIALIZE, timeout=10
            )
        token = httpx.post(server.url, json=INITIALIZE, headers=bearer(team.a), timeout=10)
        health = httpx.get(f"{server.base}/healthz", timeout=10)
    assert [r.status_code for r in refused] == [401, 401, 401]
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert "doiget" not in limited.text
    assert metrics.status_code == 429
    assert elsewhere.status_code == 401
    assert token.status_code == 200 and health.status_code == 200
    logged = access_lines(server.stderr)
    anonymous = [(line["status"], line["path"]) for line in logged if line["token"] == "-"]
    assert anonymous == [
        (401, "/mcp"),
        (401, "/mcp"),
        (401, "/mcp"),
        (429, "/mcp"),
        (429, "/metrics"),
        (401, "/mcp"),
    ]
    assert [line["status"] for line in logged if line["token"] != "-"] == [200]
    assert "wrong-token" not in server.stderr
    assert all("ms" in line for line in logged)


async def test_slow_connections_without_a_token_do_not_starve_a_client(
    team: Team, tmp_path: Path
) -> None:
    """500 connections that send a request head one line a second (half of them) or
    nothing more (the other half), against a server whose open-file limit is 400 as on
    a small host. A client that sends its request at once still gets /healthz and an
    MCP call answered, and every slow connection is closed by the server."""
    slow_count = 500
    env = {**team.env, "DOIGET_HTTP_HEADER_TIMEOUT": "4"}
    with http_server(env, tmp_path, port=team.port, open_files=400) as server:
        closed = 0
        all_open = anyio.Event()
        opened = 0

        async def slow(number: int) -> None:
            nonlocal closed, opened
            stream = await anyio.connect_tcp("127.0.0.1", server.port)
            async with stream:
                await stream.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                opened += 1
                if opened == slow_count:
                    all_open.set()
                try:
                    while True:
                        if number % 2:
                            await stream.send(b"X-Slow: 1\r\n")
                        with anyio.move_on_after(1):
                            if not await stream.receive():
                                break
                except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    pass
                closed += 1

        async with httpx.AsyncClient(timeout=30) as client, anyio.create_task_group() as tasks:
            for number in range(slow_count):
                tasks.start_soon(slow, number)
            with anyio.fail_after(60):
                await all_open.wait()
            health = await client.get(f"{server.base}/healthz")
            opened_session = await initialize(client, server.url, team.a)
            sid = opened_session.headers.get("mcp-session-id", "")
            listed = await client.post(
                server.url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers=bearer(team.a, **PROTOCOL, **{"Mcp-Session-Id": sid}),
            )
            with anyio.fail_after(120):
                while closed < slow_count:
                    await anyio.sleep(0.5)
        assert server.process.poll() is None
    assert health.status_code == 200
    assert opened_session.status_code == 200 and listed.status_code == 200
    assert "doiget_health" in listed.text
