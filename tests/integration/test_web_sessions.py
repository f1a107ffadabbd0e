"""Research sessions end to end: a session across a restart, every export format, link
checks through the SSRF guard against the replay upstream, and the Redis store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import bibtexparser
import jsonschema
import pytest
import redis.asyncio
from redisutil import RedisServer, needs_redis, raw_fixture, redis_server_fixture  # noqa: F401
from webutil import Clock, JsonResearch

from doiget.cite.csl import SCHEMA_PATH
from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.net.network import Network
from doiget.web.failure import Kind, failure_of
from doiget.web.research import Research
from doiget.web.sessions import SESSION_TTL, RedisSessionStore, open_session_store

from netutil import CountingBackend, make_network
from replay import ReplayUpstream, Reply

# What the web and scholar tools would report for the session, as they call
# record_sources after answering (hand-made, in the tools' documented shapes).
WEB_RESULTS = [
    {
        "url": "https://blog.example.org/coffee-and-sleep",
        "title": "Coffee, sleep & you",
        "kind": "web",
    },
    {"url": "https://docs.example.org/caffeine/", "title": "Caffeine half-life", "kind": "web"},
]
PAPERS = [
    {
        "url": "https://doi.org/10.1038/nature12373",
        "title": "Nanometre-scale thermometry in a living cell",
        "doi": "10.1038/nature12373",
        "authors": ["Kucsko, G.", "Maurer, P. C."],
        "year": 2013,
        "journal": "Nature",
        "kind": "paper",
    },
    {
        "url": "https://arxiv.org/abs/2101.00001",
        "title": "A preprint on caffeine",
        "authors": ["Müller, Jürgen"],
        "year": 2021,
        "kind": "paper",
    },
]
PATENTS = [
    {
        "url": "https://patents.example.net/US1234567B2",
        "title": "Decaffeination process",
        "authors": ["Inventor, Ann"],
        "year": 2019,
        "kind": "patent",
    }
]


def step(number: int, session_id: str | None, text: str, **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"searchStep": text, "stepNumber": number, "nextStepNeeded": True}
    if session_id is not None:
        args["sessionId"] = session_id
    return {**args, **extra}


async def five_steps(research: Research, clock: Clock) -> str:
    """A session with a revision (step 4 revises 2) and a branch (step 5 from step 3)."""
    first = await research.step(
        step(
            1,
            None,
            "Survey what is known about caffeine and sleep",
            researchGoal="How does caffeine affect sleep?",
            reasoning="Start broad",
            confidence=0.5,
        )
    )
    session_id: str = first["sessionId"]
    await research.record_sources(session_id, "web_search", WEB_RESULTS)
    clock.now += 60
    await research.step(
        step(
            2,
            session_id,
            "Look for randomised trials",
            rejectedApproaches=["news articles", "forums"],
            knowledgeGap="No trials after 2021",
        )
    )
    await research.record_sources(session_id, "academic_search", PAPERS)
    clock.now += 60
    await research.step(step(3, session_id, "Check patents on decaffeination"))
    await research.record_sources(session_id, "patent_search", PATENTS)
    clock.now += 60
    await research.step(
        step(4, session_id, "Trials are few: use cohort studies", isRevision=True, revisesStep=2)
    )
    clock.now += 60
    await research.step(
        step(
            5,
            session_id,
            "Industry angle",
            branchFromStep=3,
            branchId="industry",
            nextStepNeeded=False,
            confidence=0.8,
        )
    )
    return session_id


async def test_a_session_survives_a_restart_exports_everywhere_and_expires(
    doiget_env: dict[str, str],
) -> None:
    clock = Clock()
    settings = load_settings(doiget_env)
    network = Network(settings)
    first = JsonResearch(Research(settings, network, clock=clock))
    session_id = await five_steps(first, clock)
    await first.aclose()

    # A new process: a new store over the same data dir and key file.
    restarted = JsonResearch(Research(load_settings(doiget_env), network, clock=clock))
    view = await restarted.session({"sessionId": session_id})
    assert view["stepCount"] == 5
    assert view["sourceCount"] == 5
    assert view["isComplete"] is True
    assert [entry.get("supersededBy") for entry in view["stepIndex"]] == [
        None,
        4,
        None,
        None,
        None,
    ]
    assert view["branches"] == [{"branchId": "industry", "fromStep": 3, "steps": [5]}]
    assert view["gaps"] == [{"gap": "No trials after 2021", "foundInStep": 2}]

    exports = {
        name: await restarted.export({"sessionId": session_id, "format": name})
        for name in ("markdown", "json", "bibtex", "csl-json", "ris")
    }
    for name, out in exports.items():
        assert out["format"] == name
        assert out["sessionId"] == session_id
        assert out["researchGoal"] == "How does caffeine affect sleep?"
        assert out["stepCount"] == 5
        assert out["sourceCount"] == 5
        assert out["trust"] == "untrusted-external-content"
        assert "linkStatus" not in out

    markdown = exports["markdown"]["document"]
    assert markdown.startswith("# Research: How does caffeine affect sleep?\n")
    for text in (
        "### Step 2 (superseded by step 4)",
        "### Step 4 (revises step 2)",
        "### Step 5 (branch industry from step 3)",
        "Look for randomised trials",
        "- Rejected approaches: news articles; forums",
        "## Open questions",
        "- No trials after 2021 (step 2)",
        "1. [Coffee, sleep & you](<https://blog.example.org/coffee-and-sleep>)",
        "5. [Decaffeination process]",
    ):
        assert text in markdown

    document = json.loads(exports["json"]["document"])
    assert document["sessionId"] == session_id
    assert [s["stepNumber"] for s in document["steps"]] == [1, 2, 3, 4, 5]
    assert document["steps"][1]["supersededBy"] == 4
    assert document["steps"][3]["revisesStep"] == 2
    assert len(document["sources"]) == 5

    library = bibtexparser.parse_string(exports["bibtex"]["document"])
    assert library.failed_blocks == []
    entries = {entry.key: entry for entry in library.entries}
    assert len(entries) == 5
    article = entries["kucsko2013nanometre"]
    assert article.entry_type == "article"
    assert article.fields_dict["doi"].value == "10.1038/nature12373"
    assert article.fields_dict["journal"].value == "Nature"
    assert article.fields_dict["author"].value == "Kucsko, G. and Maurer, P. C."
    web = next(e for e in library.entries if "blog.example.org" in e.fields_dict["url"].value)
    assert web.entry_type == "misc"
    assert web.fields_dict["urldate"].value == "2027-01-15"
    assert web.fields_dict["howpublished"].value == (
        "\\url{https://blog.example.org/coffee-and-sleep}"
    )
    assert web.fields_dict["title"].value == "Coffee, sleep \\& you"

    items = json.loads(exports["csl-json"]["document"])
    jsonschema.validate(items, json.loads(SCHEMA_PATH.read_text()))
    assert [item["type"] for item in items] == [
        "webpage",
        "webpage",
        "article-journal",
        "article",
        "patent",
    ]
    assert [item["id"] for item in items] == [entry.key for entry in library.entries]
    assert items[0]["accessed"] == {"date-parts": [[2027, 1, 15]]}
    assert items[2]["DOI"] == "10.1038/nature12373"
    assert items[3]["author"] == [{"family": "Müller", "given": "Jürgen"}]

    ris = exports["ris"]["document"]
    records = [record for record in ris.split("\n\n") if record.strip()]
    assert len(records) == 5
    assert "\r" not in ris
    for record in records:
        lines = record.strip("\n").split("\n")
        assert lines[0].startswith("TY  - ")
        assert lines[-1] == "ER  - "
        for line in lines:
            assert line[2:6] == "  - ", line
            assert line[:2] in {"TY", "ID", "AU", "TI", "PY", "DO", "UR", "JO", "ER"}, line
    journal = records[2].split("\n")
    assert journal == [
        "TY  - JOUR",
        "ID  - kucsko2013nanometre",
        "AU  - Kucsko, G.",
        "AU  - Maurer, P. C.",
        "TI  - Nanometre-scale thermometry in a living cell",
        "PY  - 2013",
        "JO  - Nature",
        "DO  - 10.1038/nature12373",
        "UR  - https://doi.org/10.1038/nature12373",
        "ER  - ",
    ]
    assert records[0].startswith("TY  - ELEC\n")
    assert records[4].startswith("TY  - PAT\n")

    # Four hours after the last write the session is gone, for every reader.
    clock.now += SESSION_TTL
    for call in (
        restarted.session({"sessionId": session_id}),
        restarted.export({"sessionId": session_id, "format": "markdown"}),
        restarted.step(step(6, session_id, "too late")),
    ):
        with pytest.raises(DoigetError) as caught:
            await call
        assert failure_of(caught.value).kind is Kind.NOT_FOUND
        assert "start a new one with sequential_search step 1" in caught.value.message
    await restarted.aclose()
    await network.aclose()


async def test_exports_are_identical_apart_from_the_export_time(
    doiget_env: dict[str, str],
) -> None:
    clock = Clock()
    settings = load_settings(doiget_env)
    network = Network(settings)
    research = JsonResearch(Research(settings, network, clock=clock))
    session_id = await five_steps(research, clock)
    for name in ("markdown", "json", "bibtex", "csl-json", "ris"):
        first = await research.export({"sessionId": session_id, "format": name})
        clock.now += 600  # reads do not refresh the idle TTL: stay well inside it
        second = await research.export({"sessionId": session_id, "format": name})
        assert first["exportedAt"] != second["exportedAt"]
        first.pop("exportedAt")
        second.pop("exportedAt")
        assert first == second, name
    await research.aclose()
    await network.aclose()


async def test_verify_links_checks_liveness_through_the_ssrf_guard(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.route("blog.example.org", "/live", Reply(200, b"<html>fine</html>"))
    upstream.route("docs.example.org", "/gone", Reply(404, b"not here"))
    backend = CountingBackend()
    network = make_network(doiget_env, backend=backend)
    research = JsonResearch(Research(load_settings(doiget_env), network, clock=Clock()))
    session_id = (await research.step(step(1, None, "links")))["sessionId"]
    await research.record_sources(
        session_id,
        "web_search",
        [
            {"url": "https://blog.example.org/live", "title": "Live"},
            {"url": "https://docs.example.org/gone", "title": "Gone"},
            {"url": "http://10.0.0.8/internal", "title": "Private"},
        ],
    )
    out = await research.export(
        {"sessionId": session_id, "format": "markdown", "verify_links": True}
    )
    assert out["linkStatus"] == {
        "http://10.0.0.8/internal": "refused",
        "https://blog.example.org/live": "live",
        "https://docs.example.org/gone": "dead",
    }
    assert all(host != "10.0.0.8" for host, _ in backend.attempts)
    assert [r.path for r in upstream.requests_to("blog.example.org")] == ["/live"]
    assert [r.path for r in upstream.requests_to("docs.example.org")] == ["/gone"]
    assert out["trust"] == "untrusted-external-content"
    await research.aclose()
    await network.aclose()


# -- Redis ------------------------------------------------------------------------------


def redis_env(tmp_path: Path, url: str) -> dict[str, str]:
    return {
        "DOIGET_CONFIG": str(tmp_path / "absent.toml"),
        "DOIGET_DATA_DIR": str(tmp_path / "data"),
        "REDIS_URL": url,
        "DOIGET_CACHE_KEY": "shared by every host of this deployment",
    }


@needs_redis
async def test_redis_store_roundtrip_ttl_and_expiry(
    redis_server: RedisServer, raw: redis.asyncio.Redis, tmp_path: Path
) -> None:
    clock = Clock()
    settings = load_settings(redis_env(tmp_path, redis_server.url))
    network = Network(settings)
    research = JsonResearch(Research(settings, network, clock=clock))
    session_id = await five_steps(research, clock)
    await research.aclose()

    store = open_session_store(settings, clock)
    assert isinstance(store, RedisSessionStore)
    key = store.redis_key(session_id)
    assert session_id not in key
    stored = await raw.get(key)
    assert stored is not None
    assert b"caffeine" not in stored
    assert SESSION_TTL - 5 <= await raw.ttl(key) <= SESSION_TTL
    assert not (tmp_path / "data" / "research-sessions").exists()

    # Another process (or pod) sharing the Redis and the key reads the same session.
    other = JsonResearch(
        Research(load_settings(redis_env(tmp_path, redis_server.url)), network, clock=clock)
    )
    view = await other.session({"sessionId": session_id})
    assert view["stepCount"] == 5
    assert view["sourceCount"] == 5
    document = json.loads(
        (await other.export({"sessionId": session_id, "format": "json"}))["document"]
    )
    assert document["steps"][1]["supersededBy"] == 4

    # The sealed idle TTL decides, whatever Redis's own expiry still says.
    clock.now += SESSION_TTL
    with pytest.raises(DoigetError) as caught:
        await other.require(session_id)
    assert failure_of(caught.value).kind is Kind.NOT_FOUND
    await store.aclose()
    await other.aclose()
    await network.aclose()


@needs_redis
async def test_redis_store_evicts_the_longest_idle_beyond_the_cap(
    redis_server: RedisServer, raw: redis.asyncio.Redis
) -> None:
    clock = Clock()
    store = RedisSessionStore(redis_server.url, bytes(32), clock, max_sessions=3)
    try:
        for name in ("a", "b", "c"):
            await store.create(name, {"id": name, "n": 0})
            clock.now += 1

        def bump(session: dict[str, Any]) -> int:
            session["n"] += 1
            return int(session["n"])

        assert await store.update("a", bump) == 1  # "a" is now the most recently used
        clock.now += 1
        await store.create("d", {"id": "d", "n": 0})
        assert await store.load("b") is None
        assert await raw.exists(store.redis_key("b")) == 0
        assert await store.load("a") == {"id": "a", "n": 1}
        assert await store.load("d") == {"id": "d", "n": 0}
        assert await raw.zcard("doiget:research:index") == 3
    finally:
        await store.aclose()


@needs_redis
async def test_redis_down_is_a_clear_error(redis_server: RedisServer, tmp_path: Path) -> None:
    settings = load_settings(redis_env(tmp_path, redis_server.url))
    network = Network(settings)
    research = JsonResearch(Research(settings, network, clock=Clock()))
    redis_server.stop()
    with pytest.raises(DoigetError) as caught:
        await research.step(step(1, None, "no redis"))
    failure = failure_of(caught.value)
    assert failure.kind is Kind.NETWORK
    assert "Redis" in failure.message
    assert redis_server.url not in failure.message
    await research.aclose()
    await network.aclose()
