"""Two doiget processes (or replicas) fetching the same ref at once download it once:
the second waits for the first and answers from the store."""

from __future__ import annotations

from pathlib import Path

import anyio
from redisutil import RedisServer, needs_redis, redis_server_fixture  # noqa: F401

from doiget.contract import plain
from doiget.papers import contracts as c

from papersutil import NATURE, make_papers, route_nature
from replay import ReplayUpstream, Reply

PDF_PATH = "/articles/pmc4221854"


def route_slow_nature(upstream: ReplayUpstream) -> None:
    route_nature(upstream)
    slow = Reply(
        200, b"%PDF-1.4\n" + b"x" * 12000, {"Content-Type": "application/pdf"}, trickle=0.3
    )
    upstream.route("europepmc.org", PDF_PATH, slow)


async def fetch_twice_at_once(env: dict[str, str]) -> list[dict[str, object]]:
    """The same ref fetched by two independent papers cores at the same moment."""
    cores = [make_papers(env), make_papers(env)]
    results: list[dict[str, object]] = []

    async def fetch(core_index: int) -> None:
        fetched = await cores[core_index].fetch(c.PaperFetch(ref=NATURE))
        results.append(plain(fetched))

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(fetch, 0)
            await anyio.sleep(0.2)
            tasks.start_soon(fetch, 1)
    finally:
        for core in cores:
            await core.aclose()
    return results


async def test_one_download_for_two_fetches_on_one_machine(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_slow_nature(upstream)
    results = await fetch_twice_at_once(doiget_env)
    assert [r["ok"] for r in results] == [True, True]
    assert results[0]["path"] == results[1]["path"]
    assert Path(str(results[0]["path"])).is_file()
    assert len(upstream.requests_to("europepmc.org")) == 1
    assert len(upstream.requests_to("api.unpaywall.org")) == 1  # the waiter asked nothing


@needs_redis
async def test_one_download_for_two_replicas_sharing_redis(
    upstream: ReplayUpstream, doiget_env: dict[str, str], redis_server: RedisServer
) -> None:
    route_slow_nature(upstream)
    results = await fetch_twice_at_once({**doiget_env, "REDIS_URL": redis_server.url})
    assert [r["ok"] for r in results] == [True, True]
    assert len(upstream.requests_to("europepmc.org")) == 1


async def test_a_fetch_after_the_first_ended_fetches_again(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    """Only a fetch that waited answers from the store; a later one refreshes."""
    route_slow_nature(upstream)
    papers = make_papers(doiget_env)
    try:
        await papers.fetch(c.PaperFetch(ref=NATURE))
        await papers.fetch(c.PaperFetch(ref=NATURE))
    finally:
        await papers.aclose()
    assert len(upstream.requests_to("europepmc.org")) == 2
