"""Load on `doiget serve --http`, on loopback: concurrent MCP clients against one replica
and against two sharing Redis, next to one client over stdio.

Set-up: N synthetic stored papers (for doiget_search_local) and N synthetic passages
in a project (for find_chunks), the test suite's replay upstream for a batch fetch.
Then, per mode, C clients (each its own MCP session over the SDK's Streamable HTTP
client) call doiget_search_local, find_chunks and doiget_health in turn for S
seconds; half-way through, a batch fetch split across the replicas runs against the
replay upstream, whose request times give the rate budget actually kept. Reported:
calls per second, p50/p99 latency per tool, errors, each server's resident memory,
and the rate budget (most requests in one second, smallest gap to one source,
breaches of 5/s or 200 ms). Bounded: S seconds per mode, loopback only.

    python benchmarks/http_load.py                                   # 100k, 50 clients, 60 s
    python benchmarks/http_load.py --entries 20000 --chunks 20000 --seconds 20 --clients 20
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from batch_rate import route_dois  # noqa: E402
from httputil import TOKEN, http_session  # noqa: E402
from library_latency import COLLECTION, PROJECT_ID, build  # noqa: E402
from local_search import populate  # noqa: E402

from doiget.papers.index import PaperIndex  # noqa: E402
from doiget.papers.store import Store  # noqa: E402

from replay import ReplayUpstream  # noqa: E402

TOOLS = ("doiget_search_local", "find_chunks", "doiget_health")
QUERIES = ("quantum graph", "protein learning", "climate ocean", "sparse tensor", "genome")


@dataclass
class Calls:
    """Latencies (s) by tool and the errors seen."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def add(self, tool: str, seconds: float) -> None:
        self.latencies.setdefault(tool, []).append(seconds)

    @property
    def count(self) -> int:
        return sum(len(values) for values in self.latencies.values())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def arguments(tool: str, turn: int) -> dict[str, Any]:
    query = QUERIES[turn % len(QUERIES)]
    if tool == "doiget_search_local":
        return {"query": query, "limit": 10}
    if tool == "find_chunks":
        return {"project": PROJECT_ID, "query": query, "top_k": 6}
    return {}


@contextmanager
def servers(env: dict[str, str], count: int, tmp: Path) -> Iterator[list[tuple[str, int]]]:
    """``count`` replicas of ``doiget serve --http``: (url, pid) each."""
    started = []
    for _ in range(count):
        port = free_port()
        log = (tmp / f"serve-{port}.log").open("w")
        process = subprocess.Popen(
            [sys.executable, "-m", "doiget", "serve", "--http", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        started.append((process, port))
    try:
        for process, port in started:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"a replica did not start; see {tmp}/serve-{port}.log")
                time.sleep(0.2)
        yield [(f"http://127.0.0.1:{port}/mcp", process.pid) for process, port in started]
    finally:
        for process, _ in started:
            process.send_signal(signal.SIGTERM)
        for process, _ in started:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def client_loop(session: Any, until: float, calls: Calls, offset: int) -> None:
    for turn in itertools.count(offset):
        if time.monotonic() >= until:
            return
        tool = TOOLS[turn % len(TOOLS)]
        began = time.perf_counter()
        try:
            result = await session.call_tool(tool, arguments(tool, turn))
            if result.is_error:
                calls.errors.append(f"{tool}: {str(result.content[0])[:120]}")
        except Exception as exc:  # a transport failure is an error of the run
            calls.errors.append(f"{tool}: {type(exc).__name__}: {exc}"[:160])
        calls.add(tool, time.perf_counter() - began)


async def batch_split(urls: Sequence[str], dois: Sequence[str]) -> None:
    shares = [list(dois[n :: len(urls)]) for n in range(len(urls))]

    async def one(url: str, share: list[str]) -> None:
        async with http_session(url) as session:
            await session.call_tool("doiget_batch_fetch", {"refs": share})

    async with anyio.create_task_group() as tasks:
        for url, share in zip(urls, shares, strict=True):
            tasks.start_soon(one, url, share)


async def run_load(
    urls: Sequence[str], clients: int, seconds: float, dois: Sequence[str]
) -> tuple[Calls, float, tuple[float, float]]:
    """The calls of ``clients`` sessions over ``seconds``; wall time; batch window."""
    calls = Calls()
    window = [0.0, 0.0]
    async with AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(http_session(urls[n % len(urls)]))
            for n in range(clients)
        ]
        began = time.monotonic()
        async with anyio.create_task_group() as tasks:
            for n, session in enumerate(sessions):
                tasks.start_soon(client_loop, session, began + seconds, calls, n)
            await anyio.sleep(seconds / 2)
            window[0] = time.monotonic()
            await batch_split(urls, dois)
            window[1] = time.monotonic()
        wall = time.monotonic() - began
    return calls, wall, (window[0], window[1])


async def stdio_load(env: dict[str, str], seconds: float) -> tuple[Calls, float]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "doiget", "serve"], env=env)
    calls = Calls()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        began = time.monotonic()
        await client_loop(session, began + seconds, calls, 0)
        wall = time.monotonic() - began
    return calls, wall


def budget(requests: Sequence[Any], window: tuple[float, float]) -> tuple[int, float, int]:
    """(most requests in one second, smallest same-host gap ms, breaches) in ``window``."""
    inside = [r for r in requests if window[0] <= r.started <= window[1] + 30]
    times = sorted(r.started for r in inside)
    worst = max(
        (sum(1 for t in times[i:] if t < start + 1.0) for i, start in enumerate(times)), default=0
    )
    gaps = []
    by_host: dict[str, list[float]] = {}
    for request in inside:
        by_host.setdefault(request.host, []).append(request.started)
    for starts in by_host.values():
        gaps += [b - a for a, b in itertools.pairwise(sorted(starts))]
    smallest = min(gaps, default=float("inf"))
    breaches = sum(1 for g in gaps if g < 0.195) + sum(
        1 for i in range(len(times) - 5) if times[i + 5] - times[i] < 0.98
    )
    return worst, smallest * 1000, breaches


def p50_p99(samples: Sequence[float]) -> str:
    ordered = sorted(samples) or [0.0]
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    return f"{statistics.median(ordered) * 1000:.0f} / {p99 * 1000:.0f}"


def report(label: str, calls: Calls, wall: float, rss: list[float], rate: Any) -> None:
    line = [
        label,
        f"{calls.count / wall:.1f}",
        *(p50_p99(calls.latencies.get(tool, [])) for tool in TOOLS),
        str(len(calls.errors)),
        " + ".join(f"{value:.0f}" for value in rss) or "-",
        rate,
    ]
    print("| " + " | ".join(line) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000, help="stored papers")
    parser.add_argument("--chunks", type=int, default=100_000, help="passages")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--dois", type=int, default=20, help="refs in the concurrent batch")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch, ReplayUpstream() as upstream:
        tmp = Path(scratch)
        upstream.start(tmp)
        dois = route_dois(upstream, args.dois, 0.05)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("DOIGET_")},
            **upstream.isolated_env(tmp),
            "DOIGET_EMAIL": "bench@example.org",
            "DOIGET_HTTP_TOKENS": TOKEN,
            "DOIGET_HTTP_RATE": "1000000",
            "DOIGET_CACHE_KEY": "http-load-shared-sealing-key-01",
        }
        began = time.perf_counter()
        store = Store(tmp / "papers")
        populate(store, args.entries, 7)
        PaperIndex(store).rebuild()
        (tmp / "data" / "library").mkdir(parents=True)
        build(tmp / "data" / "library" / "passages.sqlite3", args.chunks, 1000, 7)
        (tmp / "config.toml").write_text(
            f'[projects."{PROJECT_ID}"]\ncollection = "{COLLECTION}"\n'
        )
        print(
            f"machine: {os.cpu_count()} cores; set-up {time.perf_counter() - began:.0f} s "
            f"({args.entries:,} stored papers, {args.chunks:,} passages); {args.clients} "
            f"clients for {args.seconds:g} s per mode; a {args.dois}-ref batch fetch half-way"
        )
        print()
        print(
            "| mode | calls/s | search_local p50/p99 ms | find_chunks p50/p99 ms | "
            "health p50/p99 ms | errors | RSS MB | rate budget: worst second, "
            "smallest gap ms, breaches |"
        )
        print("|---|---|---|---|---|---|---|---|")
        modes: list[tuple[str, int, dict[str, str]]] = [("HTTP, 1 replica", 1, env)]
        redis_server = shutil.which("redis-server")
        redis_process = None
        if redis_server:
            port = free_port()
            redis_process = subprocess.Popen(
                [redis_server, "--save", "", "--appendonly", "no", "--port", str(port)],
                stdout=subprocess.DEVNULL,
                cwd=tmp,
            )
            time.sleep(0.5)
            modes.append(
                ("HTTP, 2 replicas + Redis", 2, {**env, "REDIS_URL": f"redis://127.0.0.1:{port}/0"})
            )
        errors: list[str] = []
        try:
            for label, count, mode_env in modes:
                with servers(mode_env, count, tmp) as running:
                    urls = [url for url, _ in running]
                    mark = len(upstream.requests)
                    calls, wall, window = anyio.run(
                        run_load, urls, args.clients, args.seconds, dois
                    )
                    rss = [rss_mb(pid) for _, pid in running]
                    requests = upstream.requests[mark:]
                worst, gap, breaches = budget(requests, window)
                report(label, calls, wall, rss, f"{worst}, {gap:.0f}, {breaches}")
                errors += calls.errors
            calls, wall = anyio.run(stdio_load, env, args.seconds / 3)
            report("stdio, 1 client", calls, wall, [], "-")
            errors += calls.errors
        finally:
            if redis_process is not None:
                redis_process.terminate()
                redis_process.wait()
        print()
        print(f"errors: {len(errors)}")
        for error in errors[:10]:
            print(f"- {error}")


if __name__ == "__main__":
    main()
