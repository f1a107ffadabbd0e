"""The five web search providers against replayed answers in each one's own format.

DuckDuckGo's page is a hand-made fixture in its HTML results markup; the API answers
are hand-made here in the documented shapes of Brave, Tavily, Google and SearXNG.
Every request goes to the replay upstream or to a plain-HTTP server on loopback.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.web.failure import Kind, failure_of, kind_of
from doiget.web.providers import (
    PROVIDER_NAMES,
    build_provider,
    configured_providers,
)
from doiget.web.providers.base import ProviderAnswer, ProviderQuery, SearchHit, SearchProvider

from netutil import make_network
from replay import ReplayUpstream, Reply

DDG = "html.duckduckgo.com"
BRAVE = "api.search.brave.com"
TAVILY = "api.tavily.com"
GOOGLE = "www.googleapis.com"

BRAVE_KEY = "test-brave-key"
TAVILY_KEY = "tvly-test-key-0001"
GOOGLE_KEY = "AIzaSyTest-google-key-0001"
GOOGLE_CX = "017576662512468239146:omuauf_lfve"

KEYS = {
    "BRAVE_API_KEY": BRAVE_KEY,
    "TAVILY_API_KEY": TAVILY_KEY,
    "GOOGLE_API_KEY": GOOGLE_KEY,
    "GOOGLE_CX": GOOGLE_CX,
}


@asynccontextmanager
async def provider(name: str, env: dict[str, str]) -> AsyncIterator[SearchProvider]:
    """Provider ``name`` built exactly as the program builds it, closed afterwards."""
    network = make_network(env)
    try:
        yield build_provider(name, load_settings(env), network)
    finally:
        await network.aclose()


async def search(name: str, env: dict[str, str], request: ProviderQuery) -> ProviderAnswer:
    async with provider(name, env) as chosen:
        return await chosen.search(request)


async def search_error(name: str, env: dict[str, str], request: ProviderQuery) -> DoigetError:
    with pytest.raises(DoigetError) as caught:
        await search(name, env, request)
    return caught.value


@pytest.fixture
def env(doiget_env: dict[str, str]) -> dict[str, str]:
    return {**doiget_env, **KEYS}


# -- the registry ---------------------------------------------------------------------


async def test_an_unknown_provider_is_refused_listing_each_provider_once(
    env: dict[str, str],
) -> None:
    error = await search_error("bing", env, ProviderQuery("q"))
    assert kind_of(error) is Kind.VALIDATION
    for name in PROVIDER_NAMES:
        assert error.message.count(name) == 1
    assert error.message == (
        "'bing' is not a search provider; use one of: duckduckgo, searxng, brave, tavily, google."
    )


@pytest.mark.parametrize(
    ("name", "unset", "named"),
    [
        ("brave", ("BRAVE_API_KEY",), "set BRAVE_API_KEY."),
        ("tavily", ("TAVILY_API_KEY",), "set TAVILY_API_KEY."),
        ("google", ("GOOGLE_API_KEY", "GOOGLE_CX"), "set GOOGLE_API_KEY and GOOGLE_CX."),
        ("google", ("GOOGLE_CX",), "set GOOGLE_CX."),
        ("searxng", (), "set SEARXNG_URL."),
    ],
)
async def test_a_provider_without_its_key_is_not_configured_and_names_the_variable(
    env: dict[str, str], name: str, unset: tuple[str, ...], named: str
) -> None:
    partial = {var: value for var, value in env.items() if var not in unset}
    error = await search_error(name, partial, ProviderQuery("q"))
    failure = failure_of(error)
    assert failure.kind is Kind.NOT_CONFIGURED
    assert failure.provider == name
    assert failure.message.endswith(named)


def test_configured_providers_follow_the_settings(doiget_env: dict[str, str]) -> None:
    assert configured_providers(load_settings(doiget_env)) == ("duckduckgo",)
    everything = {**doiget_env, **KEYS, "SEARXNG_URL": "https://search.example.org"}
    assert configured_providers(load_settings(everything)) == PROVIDER_NAMES
    half_google = {**doiget_env, "GOOGLE_API_KEY": GOOGLE_KEY}
    assert configured_providers(load_settings(half_google)) == ("duckduckgo",)


# -- DuckDuckGo -----------------------------------------------------------------------


async def test_duckduckgo_reads_the_results_page_and_sends_region_time_and_safety(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.fixture(DDG, "/html/", "web/duckduckgo-html-results.html")
    request = ProviderQuery(
        "python asyncio tutorial",
        num_results=3,
        time_range="month",
        safe="high",
        country="us",
        language="en",
    )
    answer = await search("duckduckgo", env, request)
    assert answer.provider == "duckduckgo"
    assert answer.notes == ()
    assert answer.hits == (
        SearchHit(
            "Coroutines and Tasks \u2014 Python 3.12.4 documentation",
            "https://docs.python.org/3/library/asyncio-task.html?highlight=gather"
            "#running-tasks-concurrently",
            "This section outlines high-level asyncio APIs to work with coroutines and Tasks. "
            "Coroutines declared with the async/await syntax is the preferred way of writing "
            "asyncio applications.",
        ),
        SearchHit(
            "Async IO in Python: A Complete Walkthrough \u2013 Real Python",
            "https://realpython.com/async-io-python/",
            "This tutorial will give you a firm grasp of Python's approach to async IO, which "
            "is a concurrent programming design that has received dedicated support in "
            "Python, evolving rapidly from Python 3.4 through 3.7 and probably beyond.",
        ),
        SearchHit(
            "asyncio patterns: gather, TaskGroup & timeouts",
            "https://www.example.org/blog/asyncio-patterns?ref=ddg&lang=en",
            "When to use asyncio.gather versus TaskGroup, and how asyncio.timeout composes "
            "with both.",
        ),
    )
    (sent,) = upstream.requests_to(DDG)
    assert sent.method == "GET"
    assert sent.query == {"q": "python asyncio tutorial", "kp": "1", "kl": "us-en", "df": "m"}


async def test_duckduckgo_parses_the_page_off_the_event_loop(
    upstream: ReplayUpstream, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from doiget.web.providers import duckduckgo

    upstream.fixture(DDG, "/html/", "web/duckduckgo-html-results.html")
    parsed_on: list[threading.Thread] = []
    real_parse = duckduckgo.parse_page

    def recording_parse(*args: Any) -> Any:
        parsed_on.append(threading.current_thread())
        return real_parse(*args)

    monkeypatch.setattr(duckduckgo, "parse_page", recording_parse)
    answer = await search("duckduckgo", env, ProviderQuery("python asyncio tutorial"))
    assert answer.hits
    assert parsed_on and parsed_on[0] is not threading.main_thread()


async def test_duckduckgo_skips_the_ad_and_puts_operators_in_the_query(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.fixture(DDG, "/html/", "web/duckduckgo-html-results.html")
    request = ProviderQuery(
        "asyncio",
        num_results=10,
        safe="off",
        language="de",
        sites=("docs.python.org", "realpython.com"),
        exact_terms="task group",
        exclude_terms="trio",
    )
    answer = await search("duckduckgo", env, request)
    assert [urlsplit(hit.url).hostname for hit in answer.hits] == [
        "docs.python.org",
        "realpython.com",
        "www.example.org",
        "stackoverflow.com",
    ]
    assert answer.notes == ("language is not supported by duckduckgo and was not applied",)
    assert upstream.requests_to(DDG)[0].query == {
        "q": 'asyncio "task group" -trio (site:docs.python.org OR site:realpython.com)',
        "kp": "-2",
    }


async def test_duckduckgo_no_results_page_is_an_empty_answer(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.fixture(DDG, "/html/", "web/duckduckgo-html-no-results.html")
    answer = await search("duckduckgo", env, ProviderQuery("zqxjv wkpqz flrbt"))
    assert answer.hits == ()
    assert upstream.requests_to(DDG)[0].query["kp"] == "-1"


async def test_duckduckgo_bot_challenge_is_a_rate_limit(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.fixture(DDG, "/html/", "web/duckduckgo-html-anomaly.html", status=202)
    failure = failure_of(await search_error("duckduckgo", env, ProviderQuery("q")))
    assert failure.kind is Kind.RATE_LIMIT
    assert failure.provider == "duckduckgo"
    assert failure.retryable
    assert "bot challenge" in failure.message


async def test_duckduckgo_refusing_with_403_is_a_rate_limit(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.route(DDG, "/html/", Reply(403, b"<html><body>Forbidden</body></html>"))
    failure = failure_of(await search_error("duckduckgo", env, ProviderQuery("q")))
    assert (failure.kind, failure.provider) == (Kind.RATE_LIMIT, "duckduckgo")


async def test_duckduckgo_page_without_results_or_markers_is_schema_drift(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.route(DDG, "/html/", Reply(200, b"<html><body><p>Hello</p></body></html>"))
    error = await search_error("duckduckgo", env, ProviderQuery("q"))
    assert failure_of(error).kind is Kind.UPSTREAM
    assert failure_of(error).provider == "duckduckgo"


# -- SearXNG --------------------------------------------------------------------------

SEARXNG_ANSWER: dict[str, Any] = {
    "query": "rust async runtime",
    "number_of_results": 0,
    "results": [
        {
            "url": "https://tokio.rs/",
            "title": "Tokio - An asynchronous Rust runtime",
            "content": "Tokio is an asynchronous runtime for the Rust programming language.",
            "engine": "duckduckgo",
            "parsed_url": ["https", "tokio.rs", "/", "", "", ""],
            "template": "default.html",
            "engines": ["duckduckgo", "brave"],
            "positions": [1, 1],
            "score": 4.0,
            "category": "general",
        },
        {
            "url": "https://docs.rs/async-std/latest/async_std/",
            "title": "async_std - Rust",
            "content": "Async version of the Rust standard library.",
            "engine": "brave",
            "engines": ["brave"],
            "positions": [2],
            "score": 0.5,
            "category": "general",
        },
        {
            "url": "magnet:?xt=urn:btih:0000",
            "title": "not a page",
            "content": "",
            "engine": "piratebay",
        },
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["rust async runtime comparison"],
    "unresponsive_engines": [["google", "timeout"], ["qwant", "Suspended: access denied"]],
}


@dataclass
class LoopbackSearXNG:
    """A plain-HTTP SearXNG stand-in on 127.0.0.1."""

    status: int = 200
    answer: dict[str, Any] = field(default_factory=lambda: SEARXNG_ANSWER)
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    port: int = 0


@pytest.fixture
def searxng_server() -> Iterator[LoopbackSearXNG]:
    state = LoopbackSearXNG()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            state.seen.append((parts.path, dict(parse_qsl(parts.query))))
            body = json.dumps(state.answer).encode() if state.status == 200 else b"Forbidden"
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = int(server.server_address[1])
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


async def test_searxng_on_a_loopback_http_endpoint_is_allowed_and_sends_its_filters(
    searxng_server: LoopbackSearXNG, env: dict[str, str]
) -> None:
    local = {**env, "SEARXNG_URL": f"http://127.0.0.1:{searxng_server.port}/"}
    request = ProviderQuery(
        "rust async runtime",
        num_results=5,
        time_range="week",
        safe="high",
        language="de",
        country="ch",
        sites=("tokio.rs", "docs.rs"),
    )
    answer = await search("searxng", local, request)
    assert answer.hits == (
        SearchHit(
            "Tokio - An asynchronous Rust runtime",
            "https://tokio.rs/",
            "Tokio is an asynchronous runtime for the Rust programming language.",
        ),
        SearchHit(
            "async_std - Rust",
            "https://docs.rs/async-std/latest/async_std/",
            "Async version of the Rust standard library.",
        ),
    )
    assert answer.notes == (
        "searxng engines that did not answer: google (timeout), qwant (Suspended: access denied)",
    )
    assert searxng_server.seen == [
        (
            "/search",
            {
                "q": "rust async runtime (site:tokio.rs OR site:docs.rs)",
                "format": "json",
                "pageno": "1",
                "safesearch": "2",
                "time_range": "week",
                "language": "de-CH",
            },
        )
    ]


async def test_searxng_without_the_json_format_says_how_to_enable_it(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.route("docs.example.org", "/searx/search", Reply(403, b"Forbidden"))
    remote = {**env, "SEARXNG_URL": "https://docs.example.org/searx"}
    failure = failure_of(await search_error("searxng", remote, ProviderQuery("q", country="de")))
    assert failure.kind is Kind.NOT_CONFIGURED
    assert failure.provider == "searxng"
    assert "JSON API is not enabled" in failure.message
    assert "search.formats" in failure.suggested_action
    assert "settings.yml" in failure.suggested_action
    (sent,) = upstream.requests_to("docs.example.org")
    assert sent.query == {"q": "q", "format": "json", "pageno": "1", "safesearch": "1"}


async def test_searxng_with_no_results_is_an_empty_answer(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(
        "docs.example.org",
        "/search",
        {"query": "q", "number_of_results": 0, "results": [], "unresponsive_engines": []},
    )
    remote = {**env, "SEARXNG_URL": "https://docs.example.org"}
    answer = await search("searxng", remote, ProviderQuery("q", country="de"))
    assert answer.hits == ()
    assert answer.notes == (
        "country is applied by searxng only together with a language and was not applied",
    )


# -- Brave ----------------------------------------------------------------------------

BRAVE_ANSWER: dict[str, Any] = {
    "type": "search",
    "query": {
        "original": "rust borrow checker",
        "show_strict_warning": False,
        "is_navigational": False,
        "country": "jp",
        "more_results_available": True,
    },
    "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "References and Borrowing - The Rust Programming Language",
                "url": "https://doc.rust-lang.org/book/ch04-02-references-and-borrowing.html",
                "is_source_local": False,
                "is_source_both": False,
                "description": "The <strong>borrow</strong> <strong>checker</strong> "
                "enforces that references are always valid &amp; it&#x27;s strict.",
                "page_age": "2024-03-01T00:00:00",
                "profile": {"name": "Rust-lang", "url": "https://doc.rust-lang.org"},
                "language": "en",
                "family_friendly": True,
                "type": "search_result",
                "subtype": "generic",
                "meta_url": {
                    "scheme": "https",
                    "netloc": "doc.rust-lang.org",
                    "hostname": "doc.rust-lang.org",
                    "path": "/book/ch04-02-references-and-borrowing.html",
                },
                "age": "March 1, 2024",
            },
            {
                "title": "No link",
                "description": "a result without a url is skipped",
                "type": "search_result",
            },
            {
                "title": "Non-lexical lifetimes | Rust Blog",
                "url": "https://blog.rust-lang.org/2022/08/05/nll-by-default.html",
                "description": "NLL makes the <strong>borrow checker</strong> smarter.",
                "type": "search_result",
            },
        ],
        "family_friendly": True,
    },
}


async def test_brave_sends_key_and_filters_and_returns_plain_text_hits(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(BRAVE, "/res/v1/web/search", BRAVE_ANSWER)
    request = ProviderQuery(
        "rust borrow checker",
        num_results=25,
        time_range="week",
        safe="high",
        language="ja",
        country="jp",
        sites=("doc.rust-lang.org", "blog.rust-lang.org"),
        exclude_terms="gc",
    )
    answer = await search("brave", env, request)
    assert answer.hits == (
        SearchHit(
            "References and Borrowing - The Rust Programming Language",
            "https://doc.rust-lang.org/book/ch04-02-references-and-borrowing.html",
            "The borrow checker enforces that references are always valid & it's strict.",
        ),
        SearchHit(
            "Non-lexical lifetimes | Rust Blog",
            "https://blog.rust-lang.org/2022/08/05/nll-by-default.html",
            "NLL makes the borrow checker smarter.",
        ),
    )
    assert answer.notes == ("brave returns at most 20 results per search; 25 were asked for",)
    (sent,) = upstream.requests_to(BRAVE)
    assert sent.headers["x-subscription-token"] == BRAVE_KEY
    assert sent.query == {
        "q": "rust borrow checker -gc (site:doc.rust-lang.org OR site:blog.rust-lang.org)",
        "count": "20",
        "safesearch": "strict",
        "result_filter": "web",
        "freshness": "pw",
        "search_lang": "jp",
        "country": "JP",
    }
    assert BRAVE_KEY not in json.dumps(sent.query)


async def test_brave_takes_the_first_ten_sites_and_says_so(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(BRAVE, "/res/v1/web/search", {"type": "search", "query": {"original": "q"}})
    sites = tuple(f"s{i}.example" for i in range(14))
    answer = await search("brave", env, ProviderQuery("q", sites=sites))
    assert answer.hits == ()
    assert answer.notes == (
        "14 site domains were given; brave takes at most 10, so the first 10 were searched "
        "and 4 were dropped",
    )
    assert upstream.requests_to(BRAVE)[0].query["q"].count("site:") == 10


@pytest.mark.parametrize("status", [401, 403])
async def test_brave_refusing_the_key_is_not_configured(
    upstream: ReplayUpstream, env: dict[str, str], status: int
) -> None:
    upstream.json(BRAVE, "/res/v1/web/search", {"message": "Unauthorized"}, status=status)
    failure = failure_of(await search_error("brave", env, ProviderQuery("q")))
    assert failure.kind is Kind.NOT_CONFIGURED
    assert failure.provider == "brave"
    assert failure.message == f"brave rejected the API key (HTTP {status}); check BRAVE_API_KEY."


async def test_brave_invalid_token_422_is_not_configured(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    body = {
        "type": "ErrorResponse",
        "error": {
            "id": "c5e8d8a0-7a1d-4c55-9f3e-0b1f2d9b3a11",
            "status": 422,
            "code": "SUBSCRIPTION_TOKEN_INVALID",
            "detail": "The provided subscription token is invalid.",
            "meta": {"component": "authentication"},
        },
        "time": 1718200000,
    }
    upstream.json(BRAVE, "/res/v1/web/search", body, status=422)
    failure = failure_of(await search_error("brave", env, ProviderQuery("q")))
    assert failure.kind is Kind.NOT_CONFIGURED
    assert "BRAVE_API_KEY" in failure.message
    assert "SUBSCRIPTION_TOKEN_INVALID" in failure.message


async def test_brave_refusing_a_parameter_is_a_validation_error(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    body = {
        "type": "ErrorResponse",
        "error": {
            "id": "0b8e3c52-1f1e-4f8e-9d2b-6c1a5f0e9d77",
            "status": 422,
            "code": "VALIDATION",
            "detail": "Unable to validate request parameter(s)",
            "meta": {
                "errors": [
                    {
                        "type": "enum",
                        "loc": ["query", "country"],
                        "msg": "Input should be 'AR', 'AU', 'AT' or 'ALL'",
                    }
                ]
            },
        },
    }
    upstream.json(BRAVE, "/res/v1/web/search", body, status=422)
    failure = failure_of(await search_error("brave", env, ProviderQuery("q", country="zz")))
    assert failure.kind is Kind.VALIDATION
    assert failure.provider == "brave"
    assert "Input should be 'AR', 'AU', 'AT' or 'ALL'" in failure.message


async def test_brave_rate_limit_is_reported_with_its_wait(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(
        BRAVE,
        "/res/v1/web/search",
        {"type": "ErrorResponse", "error": {"status": 429, "code": "RATE_LIMITED"}},
        status=429,
        headers={"Retry-After": "120"},
    )
    error = await search_error("brave", env, ProviderQuery("q"))
    assert kind_of(error) is Kind.RATE_LIMIT
    assert error.retry_after == 120.0
    assert failure_of(error).provider == "brave"
    assert len(upstream.requests_to(BRAVE)) == 1


# -- Tavily ---------------------------------------------------------------------------

TAVILY_ANSWER: dict[str, Any] = {
    "query": 'heat pump efficiency "seasonal performance factor"',
    "follow_up_questions": None,
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "Seasonal performance factor of heat pumps",
            "url": "https://www.energy.example.de/heat-pumps/spf",
            "content": "The seasonal performance factor (SPF) measures a heat pump's "
            "efficiency over a whole heating season.",
            "score": 0.91,
            "raw_content": None,
        },
        {
            "title": "Field test: heat pumps in existing buildings",
            "url": "https://www.ise.example.de/field-test",
            "content": "Measured SPF values between 2.6 and 5.4 in 56 buildings.",
            "score": 0.83,
            "raw_content": None,
        },
    ],
    "response_time": 1.07,
    "request_id": "3f0c9e8b-52a7-4d0f-b6f1-9e2a7c1d4b55",
}


async def test_tavily_posts_filters_as_json_with_a_bearer_key(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(TAVILY, "/search", TAVILY_ANSWER)
    request = ProviderQuery(
        "heat pump efficiency",
        num_results=4,
        time_range="year",
        safe="high",
        language="de",
        country="DE",
        sites=("energy.example.de", "ise.example.de"),
        exact_terms="seasonal performance factor",
    )
    answer = await search("tavily", env, request)
    assert answer.hits == (
        SearchHit(
            "Seasonal performance factor of heat pumps",
            "https://www.energy.example.de/heat-pumps/spf",
            "The seasonal performance factor (SPF) measures a heat pump's efficiency over a "
            "whole heating season.",
        ),
        SearchHit(
            "Field test: heat pumps in existing buildings",
            "https://www.ise.example.de/field-test",
            "Measured SPF values between 2.6 and 5.4 in 56 buildings.",
        ),
    )
    assert answer.notes == (
        "language is not supported by tavily and was not applied",
        "safe search is not supported by tavily and was not applied",
        "tavily documents no exact-phrase or exclusion operators; exact_terms and "
        "exclude_terms were written into the query and may be honoured loosely",
    )
    (sent,) = upstream.requests_to(TAVILY)
    assert sent.method == "POST"
    assert sent.headers["authorization"] == f"Bearer {TAVILY_KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert json.loads(sent.body) == {
        "query": 'heat pump efficiency "seasonal performance factor"',
        "max_results": 4,
        "search_depth": "basic",
        "topic": "general",
        "time_range": "year",
        "include_domains": ["energy.example.de", "ise.example.de"],
        "country": "germany",
    }


async def test_tavily_reports_a_country_it_cannot_name(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(TAVILY, "/search", {"query": "q", "results": [], "response_time": 0.4})
    answer = await search("tavily", env, ProviderQuery("q", country="is"))
    assert answer.hits == ()
    assert answer.notes == (
        "country 'is' has no tavily country name known to doiget and was not applied",
    )
    assert "country" not in json.loads(upstream.requests_to(TAVILY)[0].body)


async def test_tavily_refusing_the_key_is_not_configured(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(
        TAVILY,
        "/search",
        {"detail": {"error": "Unauthorized: missing or invalid API key."}},
        status=401,
    )
    failure = failure_of(await search_error("tavily", env, ProviderQuery("q")))
    assert failure.kind is Kind.NOT_CONFIGURED
    assert failure.message == "tavily rejected the API key (HTTP 401); check TAVILY_API_KEY."


async def test_tavily_plan_limit_is_a_rate_limit_with_its_own_advice(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(
        TAVILY,
        "/search",
        {"detail": {"error": "This request exceeds your plan's set usage limit."}},
        status=432,
    )
    failure = failure_of(await search_error("tavily", env, ProviderQuery("q")))
    assert (failure.kind, failure.provider) == (Kind.RATE_LIMIT, "tavily")
    assert "plan" in failure.suggested_action


# -- Google ---------------------------------------------------------------------------

GOOGLE_ANSWER: dict[str, Any] = {
    "kind": "customsearch#search",
    "url": {
        "type": "application/json",
        "template": "https://www.googleapis.com/customsearch/v1?q={searchTerms}&num={count?}",
    },
    "queries": {
        "request": [
            {
                "title": "Google Custom Search - crispr off-target",
                "totalResults": "1830",
                "searchTerms": "crispr off-target",
                "count": 2,
                "startIndex": 1,
                "safe": "active",
                "cx": GOOGLE_CX,
            }
        ]
    },
    "context": {"title": "doiget test engine"},
    "searchInformation": {
        "searchTime": 0.31,
        "formattedSearchTime": "0.31",
        "totalResults": "1830",
        "formattedTotalResults": "1,830",
    },
    "items": [
        {
            "kind": "customsearch#result",
            "title": "Off-target effects in CRISPR/Cas9 gene editing - PMC",
            "htmlTitle": "<b>Off-target</b> effects in <b>CRISPR</b>/Cas9 gene editing - PMC",
            "link": "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC10000000/",
            "displayLink": "www.ncbi.nlm.nih.gov",
            "snippet": "Mar 9, 2023 ... Off-target effects occur when Cas9 cuts at\n"
            "sites other than the intended one.",
            "htmlSnippet": "Mar 9, 2023 <b>...</b> <b>Off-target</b> effects occur when Cas9 "
            "cuts at<br>\nsites other than the intended one.",
            "formattedUrl": "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC10000000/",
            "pagemap": {"metatags": [{"og:type": "article"}]},
        },
        {
            "kind": "customsearch#result",
            "title": "Measuring off-target editing",
            "link": "https://www.ncbi.nlm.nih.gov/books/NBK000001/",
            "displayLink": "www.ncbi.nlm.nih.gov",
            "snippet": "GUIDE-seq and CIRCLE-seq detect off-target cleavage genome-wide.",
        },
    ],
}


async def test_google_sends_key_engine_and_native_filters(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(GOOGLE, "/customsearch/v1", GOOGLE_ANSWER)
    request = ProviderQuery(
        "crispr off-target",
        num_results=12,
        time_range="day",
        safe="medium",
        language="en",
        country="GB",
        sites=("www.ncbi.nlm.nih.gov",),
        exact_terms="guide rna",
        exclude_terms="plants",
    )
    answer = await search("google", env, request)
    assert answer.hits == (
        SearchHit(
            "Off-target effects in CRISPR/Cas9 gene editing - PMC",
            "https://www.ncbi.nlm.nih.gov/pmc/articles/PMC10000000/",
            "Mar 9, 2023 ... Off-target effects occur when Cas9 cuts at sites other than the "
            "intended one.",
        ),
        SearchHit(
            "Measuring off-target editing",
            "https://www.ncbi.nlm.nih.gov/books/NBK000001/",
            "GUIDE-seq and CIRCLE-seq detect off-target cleavage genome-wide.",
        ),
    )
    assert answer.notes == ("google returns at most 10 results per search; 12 were asked for",)
    (sent,) = upstream.requests_to(GOOGLE)
    assert sent.query == {
        "key": GOOGLE_KEY,
        "cx": GOOGLE_CX,
        "q": "crispr off-target",
        "num": "10",
        "safe": "active",
        "exactTerms": "guide rna",
        "excludeTerms": "plants",
        "siteSearch": "www.ncbi.nlm.nih.gov",
        "siteSearchFilter": "i",
        "dateRestrict": "d1",
        "lr": "lang_en",
        "gl": "gb",
    }


async def test_google_puts_several_sites_and_excluded_words_in_the_query(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(GOOGLE, "/customsearch/v1", {"kind": "customsearch#search", "queries": {}})
    request = ProviderQuery(
        "crispr", safe="off", sites=("a.example", "b.example"), exclude_terms="plants mice"
    )
    answer = await search("google", env, request)
    assert answer.hits == ()  # no "items": no results
    sent = upstream.requests_to(GOOGLE)[0].query
    assert sent["q"] == "crispr -plants -mice (site:a.example OR site:b.example)"
    assert sent["safe"] == "off"
    assert not {"siteSearch", "excludeTerms", "exactTerms", "dateRestrict"} & set(sent)


async def test_google_server_error_never_shows_the_key(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    upstream.json(
        GOOGLE,
        "/customsearch/v1",
        {"error": {"code": 500, "message": "Backend Error", "status": "INTERNAL"}},
        status=500,
    )
    error = await search_error("google", env, ProviderQuery("q"))
    failure = failure_of(error)
    assert failure.provider == "google"
    assert failure.retryable
    assert GOOGLE_KEY not in error.message
    assert GOOGLE_KEY not in json.dumps(failure.to_dict())
    assert GOOGLE_KEY not in repr(error)
    assert upstream.requests_to(GOOGLE)[0].query["key"] == GOOGLE_KEY


async def test_google_invalid_key_is_not_configured_and_the_key_is_scrubbed(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    body = {
        "error": {
            "code": 400,
            "message": f"API key not valid. Please pass a valid API key. ({GOOGLE_KEY})",
            "errors": [
                {
                    "message": "API key not valid. Please pass a valid API key.",
                    "domain": "global",
                    "reason": "badRequest",
                }
            ],
            "status": "INVALID_ARGUMENT",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID",
                    "domain": "googleapis.com",
                    "metadata": {"service": "customsearch.googleapis.com"},
                }
            ],
        }
    }
    upstream.json(GOOGLE, "/customsearch/v1", body, status=400)
    error = await search_error("google", env, ProviderQuery("q"))
    failure = failure_of(error)
    assert failure.kind is Kind.NOT_CONFIGURED
    assert failure.provider == "google"
    assert "API key not valid" in failure.message
    assert "GOOGLE_API_KEY and GOOGLE_CX" in failure.message
    assert GOOGLE_KEY not in json.dumps(failure.to_dict())


async def test_google_spent_quota_is_a_rate_limit(
    upstream: ReplayUpstream, env: dict[str, str]
) -> None:
    body = {
        "error": {
            "code": 403,
            "message": "Daily Limit Exceeded. The quota will be reset at midnight Pacific Time.",
            "errors": [{"domain": "usageLimits", "reason": "dailyLimitExceeded"}],
        }
    }
    upstream.json(GOOGLE, "/customsearch/v1", body, status=403)
    failure = failure_of(await search_error("google", env, ProviderQuery("q")))
    assert (failure.kind, failure.provider) == (Kind.RATE_LIMIT, "google")


async def test_google_401_is_not_configured(upstream: ReplayUpstream, env: dict[str, str]) -> None:
    upstream.json(GOOGLE, "/customsearch/v1", {"error": {"code": 401}}, status=401)
    failure = failure_of(await search_error("google", env, ProviderQuery("q")))
    assert failure.kind is Kind.NOT_CONFIGURED
    assert GOOGLE_KEY not in failure.message
