"""web_search end to end through the core: lenses, dedup, reputation, claims, hints, cache."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from webutil import JsonCore, open_core

from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.web.failure import Kind, failure_of
from doiget.web.lens import builtin_lenses
from doiget.web.service import WebCore

from netutil import make_network
from replay import ReplayUpstream

BRAVE = ("api.search.brave.com", "/res/v1/web/search")


def brave_results(*rows: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "type": "search",
        "web": {
            "type": "search",
            "results": [
                {"title": title, "url": url, "description": text} for title, url, text in rows
            ],
        },
    }


ROWS = (
    (
        "Coffee and heart health",
        "https://www.nature.com/articles/coffee",
        "Moderate coffee intake was linked to lower heart failure risk. Tea was not studied.",
    ),
    ("Same page again", "https://www.nature.com/articles/coffee/#section", "Duplicate."),
    ("A forum thread", "https://forum.unknown-host.net/t/1", "People discuss caffeine."),
)


@pytest.fixture
async def core(doiget_env: dict[str, str]) -> AsyncIterator[WebCore]:
    async with open_core({**doiget_env, "BRAVE_API_KEY": "brave-test-key"}) as web:
        yield web


async def test_results_are_deduplicated_with_reputation_and_trust(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, brave_results(*ROWS))
    outcome = await core.search({"query": "coffee heart", "num_results": 5})
    body = outcome.body
    assert body["urls"] == [ROWS[0][1], ROWS[2][1]]
    assert body["resultCount"] == 2
    first, second = body["results"]
    assert first["displayLink"] == "nature.com"
    assert first["sourceReputation"]["tier"] == "high"
    assert "sourceReputation" not in second  # unknown host: absent, not "bad"
    assert "claimSignal" not in first
    assert "hints" not in body
    assert body["trust"] == "untrusted-external-content"
    assert outcome.meta == {
        "cached": False,
        "ageSeconds": 0,
        "maxAgeSeconds": 1800,
        "freshness": "fresh",
    }


async def test_claim_signal_is_on_every_result(core: WebCore, upstream: ReplayUpstream) -> None:
    upstream.json(*BRAVE, brave_results(*ROWS))
    body = (
        await core.search({"query": "coffee", "claim": "coffee lowers heart failure risk"})
    ).body
    signals = [result["claimSignal"] for result in body["results"]]
    assert signals[0] == "Moderate coffee intake was linked to lower heart failure risk."
    assert signals[1] == ""


async def test_lens_domains_become_site_terms_and_a_cap_is_reported(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, brave_results(ROWS[0]))
    body = (await core.search({"query": "coffee", "lens": "medical"})).body
    sent = upstream.requests_to(BRAVE[0])[0].query["q"]
    domains = builtin_lenses()["medical"].domains
    assert len(domains) > 10
    assert all(f"site:{domain}" in sent for domain in domains[:10])
    assert f"site:{domains[10]}" not in sent
    assert any("dropped" in note or str(len(domains)) in note for note in body["notes"])


async def test_site_and_lens_together_are_refused_before_any_request(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    with pytest.raises(DoigetError) as caught:
        await core.search({"query": "q", "site": "nature.com", "lens": "academic"})
    assert failure_of(caught.value).kind is Kind.VALIDATION
    assert upstream.requests == []


async def test_unknown_lens_lists_the_available_ones(core: WebCore) -> None:
    with pytest.raises(DoigetError) as caught:
        await core.search({"query": "q", "lens": "astrology"})
    assert "academic" in caught.value.message and "programming" in caught.value.message


async def test_user_lens_from_the_lens_directory(
    doiget_env: dict[str, str], upstream: ReplayUpstream, tmp_path: Any
) -> None:
    lens_dir = tmp_path / "lenses"
    lens_dir.mkdir()
    (lens_dir / "mine.json").write_text('{"name": "mine", "domains": ["example.org"]}')
    (lens_dir / "broken.json").write_text("{not json")
    env = {**doiget_env, "BRAVE_API_KEY": "k", "DOIGET_LENS_DIR": str(lens_dir)}
    web = JsonCore(WebCore(load_settings(env), make_network(env)))
    try:
        upstream.json(*BRAVE, brave_results())
        await web.search({"query": "q", "lens": "mine"})
    finally:
        await web.network.aclose()
        await web.aclose()
    assert "site:example.org" in upstream.requests_to(BRAVE[0])[0].query["q"]


async def test_zero_results_carry_hints_with_healthy_providers(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, brave_results())
    body = (await core.search({"query": "zzqx", "time_range": "day", "site": "nature.com"})).body
    assert body["urls"] == [] and body["results"] == []
    hints = body["hints"]
    assert hints["reason"] == "filters_too_restrictive"
    assert hints["filtersApplied"] == ["site", "time_range"]
    actions = " | ".join(hints["suggestedActions"])
    assert "remove the site filter" in actions
    assert "try provider=duckduckgo" in actions
    assert "try provider=brave" not in actions  # the one that just answered
    assert "tavily" not in actions  # not configured


async def test_second_identical_search_is_served_from_cache(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    upstream.json(*BRAVE, brave_results(*ROWS))
    first = await core.search({"query": "coffee"})
    sid = (
        await core.research_step({"searchStep": "start", "stepNumber": 1, "nextStepNeeded": True})
    ).body["sessionId"]
    second = await core.search({"query": "coffee", "num_results": 5, "sessionId": sid})
    assert len(upstream.requests_to(BRAVE[0])) == 1
    assert second.body == first.body
    assert second.meta is not None and second.meta["cached"] is True
    upstream.json(*BRAVE, brave_results(ROWS[2]))
    third = await core.search({"query": "coffee", "safe": "high"})
    assert len(upstream.requests_to(BRAVE[0])) == 2
    assert third.body["urls"] == [ROWS[2][1]]


async def test_lens_with_its_own_engine_goes_to_that_google_engine(
    doiget_env: dict[str, str], upstream: ReplayUpstream, tmp_path: Any
) -> None:
    lens_dir = tmp_path / "lenses"
    lens_dir.mkdir()
    (lens_dir / "engine.json").write_text(
        '{"name": "engine", "domains": ["a.org", "b.org"], "cx": "lens-engine-1"}'
    )
    env = {
        **doiget_env,
        "BRAVE_API_KEY": "k",
        "GOOGLE_API_KEY": "g-key",
        "GOOGLE_CX": "default-engine",
        "DOIGET_LENS_DIR": str(lens_dir),
    }
    web = JsonCore(WebCore(load_settings(env), make_network(env)))
    upstream.json("www.googleapis.com", "/customsearch/v1", {"items": []})
    upstream.json(*BRAVE, brave_results())
    try:
        await web.search({"query": "q", "lens": "engine", "provider": "google"})
        await web.search({"query": "q", "lens": "engine"})  # brave answers by default
    finally:
        await web.network.aclose()
        await web.aclose()
    sent = upstream.requests_to("www.googleapis.com")[0].query
    assert sent["cx"] == "lens-engine-1" and "site:" not in sent["q"]
    # Another provider answers: the lens's domains travel as site: terms.
    assert "site:a.org" in upstream.requests_to(BRAVE[0])[0].query["q"]
