"""Retries, Retry-After and the rate gate, as the upstream sees them."""

from __future__ import annotations

import itertools

import anyio
import pytest

from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.net.client import RetryPolicy

from netutil import breaches_of_window, make_network, min_gap, raised
from replay import ReplayUpstream, Reply


async def test_429_with_retry_after_then_200_succeeds_after_the_wait(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route(
        "api.crossref.org",
        "/works/x",
        Reply(429, b"slow down", {"Retry-After": "1"}),
        Reply(200, b'{"ok": true}', {"Content-Type": "application/json"}),
    )
    network = make_network(doiget_env)
    try:
        data = await network.client("crossref").get_json("https://api.crossref.org/works/x")
    finally:
        await network.aclose()
    assert data == {"ok": True}
    first, second = upstream.requests
    assert (first.status, second.status) == (429, 200)
    assert second.started - first.started >= 0.95


async def test_retry_after_longer_than_the_longest_wait_fails_at_once_saying_when(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/works/x", Reply(429, b"", {"Retry-After": "3600"}))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get_json("https://api.crossref.org/works/x"),
    )
    assert error.code is ErrorCode.RATE_LIMITED
    assert error.retry_after == 3600
    assert "3600 s" in error.message
    assert error.denial is not None
    assert error.denial.reason is DenialReason.RATE_LIMIT_WINDOW
    assert len(upstream.requests) == 1


async def test_503_four_times_is_network_error_after_three_retries(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/works/x", Reply(503, b"down"))
    error = await raised(
        make_network(doiget_env),
        lambda network: network.client("crossref").get_json("https://api.crossref.org/works/x"),
    )
    assert error.code is ErrorCode.NETWORK_ERROR
    assert error.denial is None
    assert len(upstream.requests) == 4


async def test_503_three_times_then_200_succeeds(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route(
        "api.crossref.org", "/works/x", Reply(503), Reply(502), Reply(500), Reply(200, b"[]")
    )
    network = make_network(doiget_env)
    try:
        assert await network.client("crossref").get_json("https://api.crossref.org/works/x") == []
    finally:
        await network.aclose()
    assert [request.status for request in upstream.requests] == [503, 502, 500, 200]


async def test_backoff_grows_between_retries(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/works/x", Reply(503))
    network = make_network(doiget_env, retry=RetryPolicy(max_retries=3, base_delay=0.3))
    try:
        with pytest.raises(DoigetError):
            await network.client("crossref").get_json("https://api.crossref.org/works/x")
    finally:
        await network.aclose()
    starts = [request.started for request in upstream.requests]
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[0] >= 0.3 and gaps[1] >= 0.6 and gaps[2] >= 1.2


async def test_400_is_not_retried(upstream: ReplayUpstream, doiget_env: dict[str, str]) -> None:
    upstream.route("api.crossref.org", "/works/x", Reply(400, b"bad"))
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            await network.client("crossref").get_json("https://api.crossref.org/works/x")
        accepted = await network.client("crossref").get(
            "https://api.crossref.org/works/x", accept_status={400}
        )
    finally:
        await network.aclose()
    assert caught.value.code is ErrorCode.NETWORK_ERROR
    assert "HTTP 400" in caught.value.message
    assert (accepted.status, accepted.content) == (400, b"bad")
    assert len(upstream.requests) == 2


async def test_keys_in_urls_never_reach_error_messages(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    secret = "s2-secret-key-123456"
    env = {**doiget_env, "SEMANTIC_SCHOLAR_API_KEY": secret}
    upstream.route("api.semanticscholar.org", "/graph/v1/paper/x", Reply(503))
    network = make_network(env)
    try:
        with pytest.raises(DoigetError) as caught:
            await network.client("s2").get(
                "https://api.semanticscholar.org/graph/v1/paper/x",
                params={"api_key": secret, "fields": "title"},
            )
    finally:
        await network.aclose()
    assert secret not in caught.value.message
    assert secret not in repr(caught.value)
    assert "api_key=%5Bredacted%5D" in caught.value.message or "[redacted]" in caught.value.message


@pytest.mark.slow
async def test_thirty_concurrent_requests_to_two_sources_respect_every_limit(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    for index in range(15):
        upstream.route("api.crossref.org", f"/works/{index}", Reply(200, b"{}", delay=0.3))
        upstream.route("api.unpaywall.org", f"/v2/{index}", Reply(200, b"{}", delay=0.3))
    network = make_network(doiget_env)
    results: list[object] = []

    async def one(source: str, url: str) -> None:
        results.append(await network.client(source).get_json(url))

    try:
        async with anyio.create_task_group() as tasks:
            for index in range(15):
                tasks.start_soon(one, "crossref", f"https://api.crossref.org/works/{index}")
                tasks.start_soon(one, "unpaywall", f"https://api.unpaywall.org/v2/{index}")
    finally:
        await network.aclose()
    assert len(results) == 30
    starts = [request.started for request in upstream.requests]
    assert len(starts) == 30
    assert breaches_of_window(starts, limit=5, window=1.0) == 0
    for host in ("api.crossref.org", "api.unpaywall.org"):
        assert min_gap(r.started for r in upstream.requests_to(host)) >= 0.2
    assert upstream.max_in_flight <= 5


@pytest.mark.slow
async def test_arxiv_requests_are_three_seconds_apart(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("export.arxiv.org", "/api/query", Reply(200, b"<feed/>"))
    network = make_network(doiget_env)
    client = network.client("arxiv")
    try:
        async with anyio.create_task_group() as tasks:
            for _ in range(2):
                tasks.start_soon(client.get, "https://export.arxiv.org/api/query")
    finally:
        await network.aclose()
    assert min_gap(r.started for r in upstream.requests) >= 3.0
