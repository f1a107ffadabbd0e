"""Provider routing: fallback on failure, circuit breakers, explicit providers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from webutil import Clock

from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.web.breaker import OPEN_SECONDS, CircuitBreaker
from doiget.web.failure import Kind, failure_of
from doiget.web.providers.base import ProviderQuery
from doiget.web.router import Router

from netutil import make_network
from replay import ReplayUpstream, Reply

BRAVE = ("api.search.brave.com", "/res/v1/web/search")
TAVILY = ("api.tavily.com", "/search")
BRAVE_ANSWER = {
    "web": {
        "results": [
            {"title": "Brave hit", "url": "https://www.nature.com/articles/y", "description": "B."}
        ]
    }
}
TAVILY_ANSWER = {
    "query": "q",
    "results": [
        {"title": "Tavily hit", "url": "https://www.nature.com/articles/x", "content": "A."}
    ],
}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def router(doiget_env: dict[str, str], clock: Clock) -> AsyncIterator[Router]:
    env = {
        **doiget_env,
        "BRAVE_API_KEY": "brave-test-key",
        "TAVILY_API_KEY": "tavily-test-key",
        "DOIGET_SEARCH_ROUTING": "brave,tavily",
    }
    network = make_network(env)
    yield Router(load_settings(env), network, lambda: CircuitBreaker(clock, lambda: 0.0))
    await network.aclose()


def brave_fails(upstream: ReplayUpstream, status: int = 500) -> None:
    upstream.route(*BRAVE, Reply(status, b'{"error": "down"}', {"Retry-After": "0"}))


async def test_fallback_to_the_next_provider_when_the_first_answers_500(
    router: Router, upstream: ReplayUpstream
) -> None:
    brave_fails(upstream)
    upstream.json(*TAVILY, TAVILY_ANSWER)
    answer, trace = await router.search(ProviderQuery("q"))
    assert answer.provider == "tavily"
    assert [hit.title for hit in answer.hits] == ["Tavily hit"]
    assert trace.to_meta() == {
        "provider_used": "tavily",
        "providers_attempted": ["brave", "tavily"],
        "fallback": True,
        "fallback_reason": "primary_unavailable",
    }
    assert upstream.requests_to(BRAVE[0])


async def test_open_breaker_skips_the_provider_until_a_probe_is_due(
    router: Router, upstream: ReplayUpstream, clock: Clock
) -> None:
    brave_fails(upstream)
    upstream.json(*TAVILY, TAVILY_ANSWER)
    for _ in range(3):
        await router.search(ProviderQuery("q"))
    asked = len(upstream.requests_to(BRAVE[0]))
    answer, trace = await router.search(ProviderQuery("q"))
    assert answer.provider == "tavily"
    assert trace.attempted == ["tavily"]
    assert trace.fallback_reason == "circuit_open"
    assert len(upstream.requests_to(BRAVE[0])) == asked  # not asked while open
    assert "brave" not in router.healthy()

    clock.now += OPEN_SECONDS + 1  # half-open: one probe goes through and succeeds
    upstream.json(*BRAVE, {"web": {"results": [{"title": "B", "url": "https://b.org/"}]}})
    answer, _ = await router.search(ProviderQuery("q"))
    assert answer.provider == "brave"
    assert "brave" in router.healthy()


async def test_429_opens_the_breaker_at_once(router: Router, upstream: ReplayUpstream) -> None:
    brave_fails(upstream, 429)
    upstream.json(*TAVILY, TAVILY_ANSWER)
    await router.search(ProviderQuery("q"))
    asked = len(upstream.requests_to(BRAVE[0]))
    answer, trace = await router.search(ProviderQuery("q"))
    assert answer.provider == "tavily"
    assert trace.fallback_reason == "circuit_open"
    assert len(upstream.requests_to(BRAVE[0])) == asked


async def test_explicit_provider_does_not_fall_back(
    router: Router, upstream: ReplayUpstream
) -> None:
    brave_fails(upstream)
    upstream.json(*TAVILY, TAVILY_ANSWER)
    with pytest.raises(DoigetError) as caught:
        await router.search(ProviderQuery("q"), provider="brave")
    assert upstream.requests_to(TAVILY[0]) == []
    failure = failure_of(caught.value)
    assert failure.provider == "brave"
    assert failure.retryable is True


async def test_rate_limited_explicit_provider_suggests_the_wait_and_a_healthy_alternative(
    router: Router, upstream: ReplayUpstream
) -> None:
    brave_fails(upstream, 429)
    with pytest.raises(DoigetError) as caught:
        await router.search(ProviderQuery("q"), provider="brave")
    failure = failure_of(caught.value)
    assert failure.kind is Kind.RATE_LIMIT
    assert "Wait" in failure.suggested_action
    assert "provider=duckduckgo / tavily" in failure.suggested_action
    # Asked again while its breaker is open: refused without a request.
    asked = len(upstream.requests_to(BRAVE[0]))
    with pytest.raises(DoigetError) as again:
        await router.search(ProviderQuery("q"), provider="brave")
    assert failure_of(again.value).kind is Kind.RATE_LIMIT
    assert len(upstream.requests_to(BRAVE[0])) == asked


async def test_unknown_provider_lists_every_supported_provider_once(router: Router) -> None:
    with pytest.raises(DoigetError) as caught:
        await router.search(ProviderQuery("q"), provider="bing")
    message = caught.value.message
    for name in ("duckduckgo", "searxng", "brave", "tavily", "google"):
        assert message.count(name) == 1
    assert failure_of(caught.value).kind is Kind.VALIDATION


async def test_every_provider_failing_reports_each_one(
    router: Router, upstream: ReplayUpstream
) -> None:
    brave_fails(upstream)
    upstream.route(*TAVILY, Reply(502, b"bad gateway"))
    with pytest.raises(DoigetError) as caught:
        await router.search(ProviderQuery("q"))
    assert "brave:" in caught.value.message and "tavily:" in caught.value.message
    assert "tavily-test-key" not in caught.value.message


async def test_a_cancelled_probe_does_not_leave_the_breaker_stuck(
    router: Router, upstream: ReplayUpstream, clock: Clock
) -> None:
    import anyio

    brave_fails(upstream, 429)
    upstream.json(*TAVILY, TAVILY_ANSWER)
    await router.search(ProviderQuery("q"))  # 429: brave's breaker opens
    clock.now += OPEN_SECONDS + 1
    upstream.json(*BRAVE, {"web": {"results": []}}, delay=2.0)
    with anyio.move_on_after(0.3):
        await router.search(ProviderQuery("q"), provider="brave")  # the probe, cancelled
    clock.now += OPEN_SECONDS + 1
    upstream.json(*BRAVE, {"web": {"results": [{"title": "B", "url": "https://b.org/"}]}})
    answer, _ = await router.search(ProviderQuery("q"), provider="brave")
    assert answer.provider == "brave"


async def test_google_answer_that_is_not_json_never_shows_the_key(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    env = {**doiget_env, "GOOGLE_API_KEY": "AIzaSECRETSECRET", "GOOGLE_CX": "cx1"}
    network = make_network(env)
    upstream.route(
        "www.googleapis.com",
        "/customsearch/v1",
        Reply(200, b"<html>maintenance</html>", {"Content-Type": "text/html"}),
    )
    try:
        with pytest.raises(DoigetError) as caught:
            await Router(load_settings(env), network).search(ProviderQuery("q"))
    finally:
        await network.aclose()
    failure = failure_of(caught.value)
    assert "AIzaSECRETSECRET" not in failure.message
    assert failure.provider == "google"


@pytest.mark.parametrize(
    ("names", "first"),
    [
        ({"SEARCH_ROUTING": "tavily,brave"}, "tavily"),
        ({"SEARCH_ROUTING": "tavily,brave", "DOIGET_SEARCH_ROUTING": "brave,tavily"}, "brave"),
        ({"DOIGET_SEARCH_ROUTING": "brave", "SEARCH_ROUTING": "tavily"}, "brave"),
    ],
)
async def test_the_spec_routing_name_is_read_and_doigets_own_wins(
    doiget_env: dict[str, str],
    upstream: ReplayUpstream,
    clock: Clock,
    names: dict[str, str],
    first: str,
) -> None:
    env = {**doiget_env, "BRAVE_API_KEY": "b-key", "TAVILY_API_KEY": "t-key", **names}
    upstream.json(*BRAVE, BRAVE_ANSWER)
    upstream.json(*TAVILY, TAVILY_ANSWER)
    settings = load_settings(env)
    network = make_network(env)
    try:
        router = Router(settings, network, lambda: CircuitBreaker(clock, lambda: 0.0))
        answer, trace = await router.search(ProviderQuery("q"))
    finally:
        await network.aclose()
    assert answer.provider == first
    assert trace.to_meta()["providers_attempted"] == [first]
    assert next(iter(router.order())) == first
