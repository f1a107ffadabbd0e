"""scrape_page refuses private destinations on the first URL and on every redirect hop."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest
from webutil import loopback_server

from doiget.contract import parse
from doiget.errors import DoigetError
from doiget.web.failure import Kind, failure_of
from doiget.web.requests import ScrapePageRequest
from doiget.web.scrape.service import Scraper

from netutil import CountingBackend, make_network
from replay import ReplayUpstream


async def _scrape(network: Any, url: str) -> Any:
    return await Scraper(network).scrape(parse(ScrapePageRequest, {"url": url}))


async def _refusal(env: dict[str, str], url: str, backend: CountingBackend) -> DoigetError:
    network = make_network(env, backend=backend)
    try:
        with pytest.raises(DoigetError) as caught:
            await _scrape(network, url)
    finally:
        await network.aclose()
    return caught.value


async def test_loopback_server_is_refused_and_never_reached(doiget_env: dict[str, str]) -> None:
    with loopback_server() as server:
        url = f"http://127.0.0.1:{server.server_address[1]}/admin"
        backend = CountingBackend()
        error = await _refusal(doiget_env, url, backend)
        assert server.log == []
    assert backend.attempts == []
    failure = failure_of(error)
    assert failure.kind is Kind.VALIDATION
    assert failure.retryable is False
    assert "127.0.0.1" in failure.message


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0x7f.1/",
        "http://2130706433/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.0.0.8/",
    ],
)
async def test_private_address_literals_are_refused_without_a_connection(
    doiget_env: dict[str, str], url: str
) -> None:
    backend = CountingBackend()
    error = await _refusal(doiget_env, url, backend)
    assert backend.attempts == []
    assert failure_of(error).kind is Kind.VALIDATION
    assert "private" in error.message


async def test_public_looking_name_resolving_to_loopback_is_refused(
    doiget_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = anyio.getaddrinfo

    async def resolver(host: Any, port: Any, **kwargs: Any) -> Any:
        if host == "innocent-news.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return await real(host, port, **kwargs)

    monkeypatch.setattr(anyio, "getaddrinfo", resolver)
    with loopback_server() as server:
        backend = CountingBackend()
        error = await _refusal(
            doiget_env, f"http://innocent-news.com:{server.server_address[1]}/", backend
        )
        assert server.log == []
    assert backend.attempts == []
    assert failure_of(error).kind is Kind.VALIDATION
    assert "innocent-news.com" in error.message


async def test_public_page_redirecting_to_loopback_is_refused_at_that_hop(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    with loopback_server() as server:
        target = f"http://127.0.0.1:{server.server_address[1]}/internal"
        upstream.redirect("blog.example.org", "/post", target)
        backend = CountingBackend()
        error = await _refusal(doiget_env, "https://blog.example.org/post", backend)
        assert server.log == []
    assert len(upstream.requests_to("blog.example.org")) == 1
    assert error.denial is not None and error.denial.hop_index == 1
    assert failure_of(error).kind is Kind.VALIDATION


@pytest.mark.parametrize("url", ["ftp://example.org/file", "file:///etc/passwd", "http:///x"])
async def test_non_http_urls_are_refused(doiget_env: dict[str, str], url: str) -> None:
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            await _scrape(network, url)
    finally:
        await network.aclose()
    assert failure_of(caught.value).kind is Kind.VALIDATION
