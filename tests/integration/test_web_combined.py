"""search_and_scrape through the core: concurrent reads, failures, dedup, caps, scores."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from webutil import open_core

from doiget.web.service import WebCore

from replay import ReplayUpstream, Reply

BRAVE = ("api.search.brave.com", "/res/v1/web/search")
HOST = "blog.example.org"


def _page(title: str, paragraphs: list[str]) -> bytes:
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"{body}</article></body></html>"
    ).encode()


GLACIER = [
    f"Glacier retreat in the Alps accelerated in survey year {n}, with meltwater "
    "measurements showing thinning ice at every monitored station across the range."
    for n in range(40)
]


@pytest.fixture
async def core(doiget_env: dict[str, str]) -> AsyncIterator[WebCore]:
    async with open_core({**doiget_env, "BRAVE_API_KEY": "brave-test-key"}) as web:
        yield web


def _route(upstream: ReplayUpstream) -> None:
    rows = [
        ("Glacier survey", f"https://{HOST}/glaciers"),
        ("Mirror of the survey", f"https://{HOST}/mirror"),
        ("Gone page", f"https://{HOST}/gone"),
        ("Long report", f"https://{HOST}/long"),
    ]
    upstream.json(
        *BRAVE,
        {"web": {"results": [{"title": t, "url": u, "description": "glacier"} for t, u in rows]}},
    )
    survey = _page("Glacier survey", GLACIER[:5])
    html = {"Content-Type": "text/html"}
    upstream.route(HOST, "/glaciers", Reply(200, survey, html))
    upstream.route(HOST, "/mirror", Reply(200, survey, html))
    upstream.route(HOST, "/gone", Reply(404, b"not here"))
    upstream.route(HOST, "/long", Reply(200, _page("Long report", GLACIER[5:]), html))


async def test_one_failure_one_duplicate_one_capped_source(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _route(upstream)
    outcome = await core.search_and_scrape(
        {
            "query": "glacier retreat",
            "num_results": 4,
            "max_length_per_source": 1200,
            "total_max_length": 2000,
        }
    )
    body = outcome.body
    assert body["status"] == "partial"
    assert [failure["url"] for failure in body["scrapeFailures"]] == [f"https://{HOST}/gone"]
    failure = body["scrapeFailures"][0]
    assert failure["kind"] == "not_found" and failure["retryable"] is False
    assert failure["suggestedAction"]
    urls = {source["url"] for source in body["sources"]}
    assert urls == {
        f"https://{HOST}/glaciers",
        f"https://{HOST}/long",
    }  # the mirror was a duplicate
    assert body["summary"]["urlsSearched"] == 4
    assert body["summary"]["urlsScraped"] == 3
    assert body["summary"]["urlsFailed"] == 1
    assert body["summary"]["duplicatesRemoved"] == 1
    for source in body["sources"]:
        assert len(source["content"].encode()) <= 1200
        assert source["trust"] == "untrusted-external-content"
        scores = source["scores"]
        assert set(scores) == {"overall", "relevance", "freshness", "authority", "contentQuality"}
        assert all(0 <= value <= 1 for value in scores.values())
    assert len(body["combinedContent"].encode()) <= 2000
    assert sum(len(source["content"].encode()) for source in body["sources"]) <= 2000
    overall = [source["scores"]["overall"] for source in body["sources"]]
    assert overall == sorted(overall, reverse=True)
    assert body["trust"] == "untrusted-external-content"


async def test_claim_adds_signals_and_filters_off_topic_sources(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _route(upstream)
    upstream.route(
        HOST,
        "/long",
        Reply(
            200,
            _page("Cooking", ["A recipe for bread with flour and water."] * 3),
            {"Content-Type": "text/html"},
        ),
    )
    body = (
        await core.search_and_scrape(
            {"query": "glacier retreat", "num_results": 4, "claim": "Alpine glaciers are thinning"}
        )
    ).body
    assert [source["url"] for source in body["sources"]] == [f"https://{HOST}/glaciers"]
    source = body["sources"][0]
    assert "thinning" in source["claimSignal"]
    assert source["keySentences"] and all("ice" in s for s in source["keySentences"])


async def test_every_page_failing_is_a_failed_status_not_an_error(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, {"web": {"results": [{"title": "x", "url": f"https://{HOST}/gone"}]}})
    upstream.route(HOST, "/gone", Reply(503, b"down"))
    body = (await core.search_and_scrape({"query": "glacier", "num_results": 1})).body
    assert body["status"] == "failed"
    assert body["sources"] == [] and body["combinedContent"] == ""
    assert body["scrapeFailures"][0]["retryable"] is True
    assert "note" in body


async def test_large_combined_result_becomes_a_link(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _route(upstream)
    many = [f"{text} Record {n}." for n in range(8) for text in GLACIER]
    upstream.route(
        HOST, "/long", Reply(200, _page("Long report", many), {"Content-Type": "text/html"})
    )
    outcome = await core.search_and_scrape({"query": "glacier retreat", "num_results": 4})
    assert outcome.link is not None
    assert outcome.body["linked"] is True and outcome.body["bytes"] >= 24 * 1024


async def test_a_malformed_result_url_is_a_listed_failure(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _route(upstream)
    upstream.json(
        *BRAVE,
        {
            "web": {
                "results": [
                    {"title": "Broken", "url": "https://xn--/"},
                    {"title": "Glacier survey", "url": f"https://{HOST}/glaciers"},
                ]
            }
        },
    )
    body = (await core.search_and_scrape({"query": "glacier retreat", "num_results": 2})).body
    assert body["status"] == "partial"
    assert body["scrapeFailures"][0]["url"] == "https://xn--/"
    assert body["scrapeFailures"][0]["kind"] == "validation"


async def test_pages_read_but_all_off_topic_say_so(core: WebCore, upstream: ReplayUpstream) -> None:
    upstream.json(
        *BRAVE, {"web": {"results": [{"title": "Bread", "url": f"https://{HOST}/bread"}]}}
    )
    upstream.route(
        HOST,
        "/bread",
        Reply(
            200,
            _page("Bread", ["A recipe for bread with flour and water."] * 3),
            {"Content-Type": "text/html"},
        ),
    )
    body = (
        await core.search_and_scrape(
            {"query": "glacier retreat", "num_results": 1, "filter_by_query": True}
        )
    ).body
    assert body["status"] == "failed"
    assert body["summary"]["filteredOut"] == 1 and body["scrapeFailures"] == []
    assert "none kept" in body["note"]
