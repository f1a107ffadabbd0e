"""SourceClient.send (the methods besides GET and POST), a URL's own query, and an
upstream's Backoff, against the replay upstream."""

from __future__ import annotations

import pytest

from netutil import make_network
from replay import ReplayUpstream, Reply


@pytest.mark.parametrize("method", ["PATCH", "PUT", "POST"])
async def test_send_carries_its_method_headers_and_body(
    method: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", "/things/1", Reply(204, b"", {"X-Seen": "yes"}))
    network = make_network(doiget_env)
    try:
        fetched = await network.client("crossref").send(
            method,
            "https://api.crossref.org/things/1",
            headers={"Content-Type": "application/json", "If-Unmodified-Since-Version": "7"},
            body=b'{"title": "\xc3\x9cber"}',
        )
    finally:
        await network.aclose()
    (seen,) = upstream.requests
    assert fetched.status == 204 and fetched.headers["x-seen"] == "yes"
    assert seen.method == method and seen.body == b'{"title": "\xc3\x9cber"}'
    assert seen.headers["if-unmodified-since-version"] == "7"


async def test_send_never_deletes(upstream: ReplayUpstream, doiget_env: dict[str, str]) -> None:
    network = make_network(doiget_env)
    try:
        with pytest.raises(ValueError, match="DELETE"):
            await network.client("crossref").send("delete", "https://api.crossref.org/x")
    finally:
        await network.aclose()
    assert upstream.requests == []


@pytest.mark.parametrize("how", ["get", "send"])
async def test_a_urls_own_query_is_sent_when_no_params_are_given(
    how: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.json("api.crossref.org", "/works", {"ok": True})
    network = make_network(doiget_env)
    url = "https://api.crossref.org/works?query=%C3%BCber&rows=2&tag=a&tag=b"
    try:
        client = network.client("crossref")
        await (client.get(url) if how == "get" else client.send("GET", url))
    finally:
        await network.aclose()
    (seen,) = upstream.requests
    assert seen.query == {"query": "über", "rows": "2", "tag": "b"}
    assert seen.raw_query == "query=%C3%BCber&rows=2&tag=a&tag=b"


async def test_any_upstreams_backoff_holds_its_next_request(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route(
        "api.crossref.org",
        "/works/1",
        Reply(200, b"{}", {"Backoff": "2", "Content-Type": "application/json"}),
        Reply(200, b"{}", {"Content-Type": "application/json"}),
    )
    network = make_network(doiget_env)
    try:
        client = network.client("crossref")
        for _ in range(3):
            await client.get_json("https://api.crossref.org/works/1")
    finally:
        await network.aclose()
    starts = [r.started for r in upstream.requests]
    assert starts[1] - starts[0] >= 1.9  # the Backoff, not the 0.2 s per-source gap
    assert starts[2] - starts[1] < 1.9
