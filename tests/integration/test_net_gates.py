"""A slow or hung host delays only requests to itself; the request budget is shared
by every process (and, with Redis, every machine) using one data directory."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from redisutil import RedisServer, needs_redis, redis_server_fixture  # noqa: F401

from doiget.contract import parse
from doiget.net.budget import Budget, FileBudget, LocalBudget
from doiget.net.ratelimit import RateLimiter
from doiget.web.requests import ScrapePageRequest
from doiget.web.scrape.service import Scraper

from netutil import breaches_of_window, make_network, min_gap
from replay import ReplayUpstream, Reply

PAGE = b"<html><body><h1>Fast</h1><p>" + b"word " * 200 + b"</p></body></html>"
# 64 KiB, 4 KiB every 0.5 s: about 8 s a body.
SLOW = Reply(200, b"<html><body>" + b"x" * 65536, {"Content-Type": "text/html"}, trickle=0.5)


async def test_five_calls_stuck_on_one_host_do_not_delay_other_hosts(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("blog.example.org", "/slow", SLOW)
    upstream.route("docs.example.org", "/fast", Reply(200, PAGE, {"Content-Type": "text/html"}))
    upstream.json("api.crossref.org", "/works/fast", {"status": "ok"})
    network = make_network(doiget_env)
    scraper = Scraper(network)
    slow_done = 0
    fast_finished_while_stuck: list[str] = []

    async def slow() -> None:
        nonlocal slow_done
        await scraper.scrape(parse(ScrapePageRequest, {"url": "https://blog.example.org/slow"}))
        slow_done += 1

    try:
        async with anyio.create_task_group() as tasks:
            for _ in range(5):
                tasks.start_soon(slow)
            # Wait until all five are on the wire (their bodies trickling).
            with anyio.fail_after(10):
                while upstream.max_in_flight < 5:
                    await anyio.sleep(0.05)
            await scraper.scrape(parse(ScrapePageRequest, {"url": "https://docs.example.org/fast"}))
            if slow_done == 0:
                fast_finished_while_stuck.append("scrape")
            await network.client("crossref").get_json("https://api.crossref.org/works/fast")
            if slow_done == 0:
                fast_finished_while_stuck.append("crossref")
    finally:
        await network.aclose()
    assert fast_finished_while_stuck == ["scrape", "crossref"]


async def test_five_places_per_host_still_hold(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route(
        "blog.example.org", "/held", Reply(200, PAGE, {"Content-Type": "text/html"}, delay=0.4)
    )
    network = make_network(doiget_env)
    client = network.client("web", any_public_host=True)
    try:
        async with anyio.create_task_group() as tasks:
            for _ in range(8):
                tasks.start_soon(client.get, "https://blog.example.org/held")
    finally:
        await network.aclose()
    assert len(upstream.requests_to("blog.example.org")) == 8
    assert upstream.max_in_flight <= 5


async def _hammer(budget_a: object, budget_b: object) -> list[float]:
    """Two budgets taking 12 starts each to one source: the start times."""
    starts: list[float] = []

    async def take(budget: object) -> None:
        for _ in range(12):
            while (wait := await budget.try_start("crossref", 0.2, 5, 1.0)) > 0:  # type: ignore[attr-defined]
                await anyio.sleep(wait)
            starts.append(time.time())

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(take, budget_a)
        tasks.start_soon(take, budget_b)
    return starts


async def test_two_file_budgets_on_one_data_dir_are_one_budget(tmp_path: Path) -> None:
    path = tmp_path / "rate-budget.json"
    starts = await _hammer(FileBudget(path), FileBudget(path))
    assert len(starts) == 24
    assert min_gap(starts) >= 0.2 - 0.01
    assert breaches_of_window(starts, 5, 1.0 - 0.01) == 0


async def test_separate_local_budgets_are_not_shared(tmp_path: Path) -> None:
    # The control: without sharing, the two would overlap.
    starts = await _hammer(LocalBudget(), LocalBudget())
    assert min_gap(starts) < 0.1


async def test_an_unwritable_budget_file_falls_back_to_the_process(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    budget = FileBudget(blocker / "rate-budget.json")
    assert await budget.try_start("crossref", 0.2, 5, 1.0) == 0
    assert await budget.try_start("crossref", 0.2, 5, 1.0) > 0
    assert "keeps its own limits" in caplog.text


@asynccontextmanager
async def two_redis_budgets(url: str) -> AsyncIterator[tuple[Budget, Budget]]:
    """Two budgets on one Redis server, as two processes would hold them."""
    from doiget.net.budget import RedisBudget

    first, second = RedisBudget(url), RedisBudget(url)
    try:
        yield first, second
    finally:
        await first.aclose()
        await second.aclose()


@needs_redis
async def test_two_redis_budgets_are_one_budget(redis_server: RedisServer) -> None:
    async with two_redis_budgets(redis_server.url) as (first, second):
        starts = await _hammer(first, second)
    assert min_gap(starts) >= 0.2 - 0.01
    assert breaches_of_window(starts, 5, 1.0 - 0.01) == 0


async def _gap_after_a_late_send(first: Budget, second: Budget) -> float:
    """A start granted by ``first`` whose headers went out 150 ms later: how long
    ``second`` is then told to wait for the same key."""
    assert await first.try_start("crossref", 0.2, 5, 1.0) == 0
    await anyio.sleep(0.15)  # a busy process sends its headers late
    await first.sent("crossref")
    return await second.try_start("crossref", 0.2, 5, 1.0)


async def test_the_gap_counts_from_when_the_headers_were_sent(tmp_path: Path) -> None:
    path = tmp_path / "rate-budget.json"
    wait = await _gap_after_a_late_send(FileBudget(path), FileBudget(path))
    assert wait > 0.15  # 200 ms from the send, not from the grant


@needs_redis
async def test_the_gap_counts_from_the_send_in_redis_too(redis_server: RedisServer) -> None:
    async with two_redis_budgets(redis_server.url) as (first, second):
        wait = await _gap_after_a_late_send(first, second)
    assert wait > 0.15


async def _releases_around_a_late_send(first: Budget, second: Budget) -> list[float]:
    """``first`` is granted a start whose headers go out 300 ms later; meanwhile
    ``second`` starts one at 250 ms, then four more once the late one is out, the last
    as soon as the budget allows. When each of the six requests was sent."""
    sent: list[float] = []

    async def start(budget: Budget, key: str) -> None:
        while (wait := await budget.try_start(key, 0.2, 5, 1.0)) > 0:
            await anyio.sleep(wait)

    async def send(budget: Budget, key: str) -> None:
        await budget.sent(key)
        sent.append(time.time())

    await start(first, "late")
    await anyio.sleep(0.25)
    await start(second, "k0")
    await send(second, "k0")
    await anyio.sleep(0.05)
    await send(first, "late")  # a busy process sends its headers late
    for key in ("k1", "k2", "k3", "k4"):
        await start(second, key)
        await send(second, key)
    return sent


async def test_a_late_send_moves_its_own_start_in_one_process() -> None:
    budget = LocalBudget()
    sent = await _releases_around_a_late_send(budget, budget)
    assert breaches_of_window(sent, 5, 1.0 - 0.05) == 0


async def test_a_late_send_moves_its_own_start_not_another_process_s(tmp_path: Path) -> None:
    path = tmp_path / "rate-budget.json"
    sent = await _releases_around_a_late_send(FileBudget(path), FileBudget(path))
    assert breaches_of_window(sent, 5, 1.0 - 0.05) == 0
    # The budget's own record is the moments the requests were sent.
    recorded = json.loads(path.read_text())["starts"]
    assert max(abs(a - b) for a, b in zip(sorted(recorded), sorted(sent), strict=True)) < 0.05


async def test_each_send_is_logged_at_the_moment_the_budget_keeps(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="doiget.net")
    path = tmp_path / "rate-budget.json"
    budget = FileBudget(path)
    assert await budget.try_start("crossref", 0.2, 5, 1.0) == 0
    await anyio.sleep(0.05)
    await budget.sent("crossref")
    logged = re.search(r"request to crossref sent at (\d+\.\d+)", caplog.text)
    assert logged is not None
    assert json.loads(path.read_text())["starts"] == [pytest.approx(float(logged[1]), abs=1e-5)]


@needs_redis
async def test_a_late_send_moves_its_own_start_in_redis_too(redis_server: RedisServer) -> None:
    async with two_redis_budgets(redis_server.url) as (first, second):
        sent = await _releases_around_a_late_send(first, second)
    assert breaches_of_window(sent, 5, 1.0 - 0.05) == 0


class _Recording:
    """A budget that grants every start and notes each send."""

    def __init__(self) -> None:
        self.sends: list[str] = []

    async def try_start(self, key: str, gap: float, limit: int, window: float) -> float:
        return 0.0

    async def sent(self, key: str) -> None:
        self.sends.append(key)


@pytest.mark.parametrize("outcome", ["complete", "failed"])
async def test_headers_sent_or_failed_part_way_count_as_sent(outcome: str) -> None:
    budget = _Recording()
    limiter = RateLimiter(budget=budget)
    async with limiter.turn("crossref") as turn:
        await turn.trace("http11.send_request_headers.started", {})
        await turn.trace(f"http11.send_request_headers.{outcome}", {})
    assert budget.sends == ["crossref"]


async def _order_behind_another_process_s_start(first: Budget, second: Budget) -> list[str]:
    """``first`` (another process) has just started a request to Crossref; this
    process then has one to Crossref, which must wait out the gap, and, a moment later,
    one to Unpaywall. The order in which this process's two start."""
    assert await first.try_start("crossref", 0.2, 5, 1.0) == 0
    limiter = RateLimiter(budget=second)
    order: list[str] = []

    async def start(source: str) -> None:
        async with limiter.turn(source) as turn:
            await turn.trace("http11.send_request_headers.started", {})
            order.append(source)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(start, "crossref")
        await anyio.sleep(0.02)
        tasks.start_soon(start, "unpaywall")
    return order


async def test_a_source_waiting_out_its_gap_does_not_hold_up_another(tmp_path: Path) -> None:
    path = tmp_path / "rate-budget.json"
    order = await _order_behind_another_process_s_start(FileBudget(path), FileBudget(path))
    assert order == ["unpaywall", "crossref"]


@needs_redis
async def test_a_source_waiting_out_its_gap_does_not_hold_up_another_in_redis(
    redis_server: RedisServer,
) -> None:
    async with two_redis_budgets(redis_server.url) as (first, second):
        order = await _order_behind_another_process_s_start(first, second)
    assert order == ["unpaywall", "crossref"]


_PROCESS = """
import anyio, sys
from doiget.config import load_settings
from doiget.net.network import Network

async def main():
    network = Network(load_settings())
    client = network.client("crossref")
    for n in range(int(sys.argv[1])):
        await client.get_json(f"https://api.crossref.org/works/p{sys.argv[2]}-{n}")
    await network.aclose()

anyio.run(main)
"""


def test_three_processes_share_the_rate_limits(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    for process in range(3):
        for n in range(4):
            upstream.json("api.crossref.org", f"/works/p{process}-{n}", {"status": "ok"})
    env = {**doiget_env, "PATH": "/usr/bin:/bin"}
    running = [
        subprocess.Popen([sys.executable, "-c", _PROCESS, "4", str(process)], env=env)
        for process in range(3)
    ]
    for process in running:
        assert process.wait(timeout=60) == 0
    arrivals = [request.started for request in upstream.requests_to("api.crossref.org")]
    assert len(arrivals) == 12
    assert min_gap(arrivals) >= 0.2 - 0.01
    assert breaches_of_window(arrivals, 5, 1.0 - 0.01) == 0
