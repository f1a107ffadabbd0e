"""Cheap calls under load on ``doiget serve --http``, on loopback, and a cheap tool's
calls/s next to a minimal server on the same MCP SDK.

Set-up: N synthetic stored papers (for doiget_search_local and doiget_info) and N
synthetic passages in a project with hybrid search on (find_chunks, query_hybrid).

1. Load: C clients (each its own MCP session over the SDK's Streamable HTTP client)
   call find_chunks, query_hybrid and doiget_search_local (or the tools --load names)
   in turn, as fast as they are answered, for S seconds; a call refused because the
   server is busy (RATE_LIMITED) waits the retry_after it was given. Meanwhile one probe client
   per cheap tool (doiget_health, list_projects, doiget_info) calls it every 50 ms,
   from a process of their own (as another agent would).
   Reported: p50/p99 per tool as the clients saw them and as the server's access log
   timed them (without the load client's own delays), TIMEOUT errors, refusals, other
   errors, and with --loop-profile the spans > 10 ms during which one callback held
   the event loop.
2. Throughput, before the load and again after it: C clients call list_projects as
   fast as they can for T seconds on doiget and on benchmarks/minimal_server.py (same
   SDK, transport, web server; no auth, log or rate gate), in alternating rounds so a
   change in the machine's load falls on both; calls/s of each, the ratio, and the
   lowest and highest round's.
3. What the HTTP layer costs per request (token check, rate gate, access-log line,
   the log's peek at the body), in microseconds.

    python benchmarks/http_load.py                              # 100k, 50 clients, 60 s
    python benchmarks/http_load.py --entries 20000 --chunks 20000 --seconds 20
    python benchmarks/http_load.py --server-src /path/to/other/checkout/src   # compare
    # 30 clients on find_chunks and search_local for 30 s from a cold server (its first
    # searches included), no throughput rounds:
    python benchmarks/http_load.py --clients 30 --seconds 30 --cold --cheap-seconds 0 \
        --load find_chunks,doiget_search_local

Bounded: S + 4 T seconds of load, loopback only.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import logging
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from httputil import TOKEN, http_session, worker_pids  # noqa: E402
from library_latency import COLLECTION, PROJECT_ID, build  # noqa: E402
from local_search import populate  # noqa: E402

from doiget.papers.index import PaperIndex  # noqa: E402
from doiget.papers.store import Store  # noqa: E402

LOAD = ("find_chunks", "query_hybrid", "doiget_search_local")
CHEAP = ("doiget_health", "list_projects", "doiget_info")
PROBE_GAP = 0.05
# Seconds from the launch of the probes' process to the start of the load: its start,
# its sessions and its first calls happen before.
PROBE_START = 10.0
QUERIES = ("quantum graph", "protein learning", "climate ocean", "sparse tensor", "genome")
HERE = Path(__file__).resolve().parent


@dataclass
class Calls:
    """Latencies (s) by tool, and what went wrong."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    timeouts: int = 0
    refusals: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, tool: str, seconds: float) -> None:
        self.latencies.setdefault(tool, []).append(seconds)

    def count(self, tools: Sequence[str]) -> int:
        return sum(len(self.latencies.get(tool, [])) for tool in tools)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def arguments(tool: str, turn: int) -> dict[str, Any]:
    query = QUERIES[turn % len(QUERIES)]
    if tool == "doiget_search_local":
        return {"query": query, "limit": 10}
    if tool in ("find_chunks", "query_hybrid"):
        return {"project": PROJECT_ID, "query": query, "top_k": 6}
    if tool == "doiget_info":
        return {"ref": f"10.5555/bench.{turn % 1000}"}
    return {}


def wait_healthy(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"a server did not start; see {log}")
        time.sleep(0.2)


def server_log(tmp: Path, port: int) -> Path:
    """The stderr of the server on ``port``: its access log among the rest."""
    return tmp / f"serve-{port}.log"


def served_times(log: Path) -> dict[str, list[float]]:
    """Seconds from request to answer sent, by tool, as the server's access log says
    (what the server took, without the load client's own delays)."""
    times: dict[str, list[float]] = {}
    for line in log.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("tool") and "ms" in record:
            times.setdefault(str(record["tool"]), []).append(float(record["ms"]) / 1000)
    return times


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid``, MiB (0 when it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), "VmRSS: 0 kB")
    return int(line.split()[1]) / 1024


def memory(pid: int) -> str:
    """The server's resident memory, and its worker processes' (multiprocessing's
    resource tracker left out)."""
    sizes = [rss_mib(worker) for worker in worker_pids(pid)]
    return (
        f"server RSS after the load: {rss_mib(pid):.0f} MiB, and {len(sizes)} worker processes "
        f"{' + '.join(f'{size:.0f}' for size in sizes) or '0'} MiB"
    )


@contextmanager
def server(
    command: list[str], env: dict[str, str], tmp: Path, port: int
) -> Iterator[tuple[str, int]]:
    """A server process on ``port``; its /mcp URL and pid. Stopped with SIGTERM."""
    log = server_log(tmp, port)
    with log.open("w") as err:
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_healthy(process, port, log)
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


def structured(result: Any) -> dict[str, Any]:
    value = result.structured_content
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(result.content[0].text)
    except (ValueError, AttributeError, IndexError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def error_code(body: dict[str, Any]) -> tuple[str, float]:
    """(code, retry seconds) of a papers or library error body."""
    error = body.get("error")
    if not isinstance(error, dict):
        return "", 0.0
    details = error.get("details") or {}
    wait = details.get("retry_after_seconds") or (error.get("denial_context") or {}).get("actual")
    return str(error.get("code", "")), float(wait or 1)


async def call(session: Any, tool: str, turn: int, calls: Calls) -> float:
    """One call, recorded; the seconds to wait before the next (a refusal's hint)."""
    began = time.perf_counter()
    try:
        result = await session.call_tool(tool, arguments(tool, turn))
    except Exception as exc:  # a transport failure is an error of the run
        calls.errors.append(f"{tool}: {type(exc).__name__}: {exc}"[:160])
        return 0.0
    took = time.perf_counter() - began
    if not result.is_error:
        calls.add(tool, took)
        return 0.0
    code, wait = error_code(structured(result))
    if code == "RATE_LIMITED":
        calls.refusals += 1
        return wait
    if code == "TIMEOUT":
        calls.timeouts += 1
    else:
        calls.errors.append(f"{tool}: {str(result.content[0])[:120]}")
    calls.add(tool, took)
    return 0.0


async def load_client(
    session: Any, tools: Sequence[str], until: float, calls: Calls, offset: int
) -> None:
    for turn in itertools.count(offset):
        if time.monotonic() >= until:
            return
        wait = await call(session, tools[turn % len(tools)], turn, calls)
        if wait:
            await anyio.sleep(wait)


async def probe_client(session: Any, tool: str, until: float, calls: Calls) -> None:
    for turn in itertools.count():
        if time.monotonic() >= until:
            return
        await call(session, tool, turn, calls)
        await anyio.sleep(PROBE_GAP)


async def run_probes(url: str, start: float, until: float) -> Calls:
    """The cheap probes, from ``start`` to ``until`` (monotonic clock times)."""
    calls = Calls()
    async with AsyncExitStack() as stack:
        probes = [await stack.enter_async_context(http_session(url)) for _ in CHEAP]
        for tool, session in zip(CHEAP, probes, strict=True):  # first calls build the cores
            await session.call_tool(tool, arguments(tool, 0))
        await anyio.sleep(max(0.0, start - time.monotonic()))
        async with anyio.create_task_group() as tasks:
            for tool, session in zip(CHEAP, probes, strict=True):
                tasks.start_soon(probe_client, session, tool, until, calls)
    return calls


def probe_process(url: str, start: float, until: float) -> Calls:
    """:func:`run_probes` in a process of its own: a cheap call's client is another
    agent than the load's, not a task waiting its turn on the 50 load clients' loop."""
    return anyio.run(run_probes, url, start, until)


async def run_load(
    url: str, tools: Sequence[str], clients: int, seconds: float, cold: bool
) -> tuple[Calls, float]:
    """The load and the probes; unless ``cold``, one find_chunks first (the server's
    first search, its worker processes' start) before the clock starts."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    calls = Calls()
    start = time.monotonic() + PROBE_START
    until = start + seconds
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as apart:
        probed = apart.submit(probe_process, url, start, until)
        async with AsyncExitStack() as stack:
            loaders = [await stack.enter_async_context(http_session(url)) for _ in range(clients)]
            if not cold:
                await loaders[0].call_tool("find_chunks", arguments("find_chunks", 0))
            await anyio.sleep(max(0.0, start - time.monotonic()))
            async with anyio.create_task_group() as tasks:
                for n, session in enumerate(loaders):
                    tasks.start_soon(load_client, session, tools, until, calls, n)
            wall = time.monotonic() - start
        probes = probed.result()
    calls.latencies.update(probes.latencies)
    calls.timeouts += probes.timeouts
    calls.refusals += probes.refusals
    calls.errors += probes.errors
    return calls, wall


async def run_cheap(
    urls: tuple[str, str], clients: int, seconds: float, rounds: int
) -> list[tuple[float, float]]:
    """calls/s of list_projects from ``clients`` sessions on doiget and on the minimal
    server, in ``rounds`` alternating rounds of ``seconds / rounds`` each (so a change
    in the machine's load falls on both alike): (doiget, minimal) per round."""
    done = [0]

    async def one(session: Any, until: float) -> None:
        while time.monotonic() < until:
            await session.call_tool("list_projects", {})
            done[0] += 1

    async def rate(sessions: list[Any]) -> float:
        done[0] = 0
        began = time.monotonic()
        async with anyio.create_task_group() as tasks:
            for session in sessions:
                tasks.start_soon(one, session, began + seconds / rounds)
        return done[0] / (time.monotonic() - began)

    async with AsyncExitStack() as stack:
        fleets = []
        for url, token in ((urls[0], TOKEN), (urls[1], None)):
            sessions = [
                await stack.enter_async_context(http_session(url, token)) for _ in range(clients)
            ]
            await sessions[0].call_tool("list_projects", {})
            fleets.append(sessions)
        return [(await rate(fleets[0]), await rate(fleets[1])) for _ in range(rounds)]


def p50_p99(samples: Sequence[float]) -> str:
    ordered = sorted(samples) or [0.0]
    p99 = ordered[int(0.99 * (len(ordered) - 1))]
    return f"{statistics.median(ordered) * 1000:.0f} / {p99 * 1000:.0f}"


def layer_costs() -> list[tuple[str, float]]:
    """Microseconds per request of each part of the HTTP layer around the SDK."""
    from doiget.server import http
    from doiget.server.tokens import StaticTokens

    tokens = StaticTokens([TOKEN, "another-team-token-0123456789"])
    gate = http._Tokens(600_000)
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "find_chunks", "arguments": {"query": "x" * 200, "top_k": 6}},
        }
    ).encode()
    record = {"token": "0123456789ab", "http": "POST", "method": "tools/call", "status": 200}
    log = logging.getLogger("doiget.http")
    log.handlers[:] = [logging.StreamHandler(Path(os.devnull).open("w"))]  # noqa: SIM115
    log.propagate = False
    log.setLevel(logging.INFO)

    def verify() -> None:  # the coroutine never awaits: run it without a loop
        with contextlib.suppress(StopIteration):
            tokens.verify_token(TOKEN).send(None)

    runs = 20_000
    costs = [
        ("token check", verify),
        ("rate gate", lambda: gate.wait_for("0123456789ab")),
        ("access-log line", lambda: http.RequestLog._write(dict(record), 0.0)),
        ("log's peek at the body", lambda: http._jsonrpc_names(body)),
    ]
    return [(name, timeit.timeit(fn, number=runs) / runs * 1e6) for name, fn in costs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000, help="stored papers")
    parser.add_argument("--chunks", type=int, default=100_000, help="passages")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0, help="of load")
    parser.add_argument(
        "--cheap-seconds", type=float, default=15.0, help="of throughput, each server (0: none)"
    )
    parser.add_argument(
        "--cheap-rounds", type=int, default=5, help="alternating rounds the seconds are split in"
    )
    parser.add_argument("--cheap-clients", type=int, default=10)
    parser.add_argument(
        "--load", default=",".join(LOAD), help="the tools the load clients call, in turn"
    )
    parser.add_argument(
        "--cold", action="store_true", help="no search before the load: first searches count"
    )
    parser.add_argument("--label", default="doiget")
    parser.add_argument("--workers", type=int, help="DOIGET_WORKERS for the server (a lane)")
    parser.add_argument("--server-src", help="run the servers from this src folder instead")
    parser.add_argument("--loop-profile", action="store_true", help="record loop spans > 10 ms")
    args = parse_args(
        parser,
        entries=40,
        chunks=40,
        clients=2,
        seconds=2.0,
        cheap_seconds=1.0,
        cheap_rounds=1,
        cheap_clients=1,
        loop_profile=True,
    )
    tools = tuple(args.load.split(","))
    if not set(tools) <= set(LOAD):
        parser.error(f"--load takes tools among {', '.join(LOAD)}")

    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("DOIGET_")},
            "DOIGET_DATA_DIR": str(tmp / "data"),
            "DOIGET_STORE_ROOT": str(tmp / "papers"),
            "DOIGET_LOG_PATH": str(tmp / "provenance.jsonl"),
            "DOIGET_CONFIG": str(tmp / "config.toml"),
            "DOIGET_TOOLSETS": "papers,library",
            "DOIGET_HTTP_TOKENS": TOKEN,
            "DOIGET_HTTP_RATE": "1000000",
            "DOIGET_HTTP_MAX_SESSIONS": str(args.clients + 10),
        }
        if args.server_src:
            env["PYTHONPATH"] = args.server_src
        if args.workers:
            env["DOIGET_WORKERS"] = str(args.workers)
        began = time.perf_counter()
        store = Store(tmp / "papers")
        populate(store, args.entries, 7)
        PaperIndex(store).rebuild()
        (tmp / "data" / "library").mkdir(parents=True)
        build(tmp / "data" / "library" / "passages.sqlite3", args.chunks, 1000, 7)
        (tmp / "config.toml").write_text(
            f'[projects."{PROJECT_ID}"]\ncollection = "{COLLECTION}"\nhybrid_enabled = true\n'
        )
        print(
            f"machine: {os.cpu_count()} cores; set-up {time.perf_counter() - began:.0f} s "
            f"({args.entries:,} stored papers, {args.chunks:,} passages); {args.clients} "
            f"clients for {args.seconds:g} s; cheap probes every {PROBE_GAP * 1000:.0f} ms"
        )
        print()
        port = free_port()
        profile = tmp / "loop-profile.txt"
        command = [sys.executable, "-m", "doiget"]
        if args.loop_profile:
            command = [sys.executable, str(HERE / "loop_profile.py"), str(profile)]
        command += ["serve", "--http", "--port", str(port)]
        minimal_port = free_port()
        minimal = [sys.executable, str(HERE / "minimal_server.py"), str(minimal_port)]
        throughput = {}
        with (
            server(command, env, tmp, port) as (url, pid),
            server(minimal, env, tmp, minimal_port) as (minimal_url, _),
        ):
            cheap = (run_cheap, (url, minimal_url), args.cheap_clients, args.cheap_seconds)
            if args.cheap_seconds:
                throughput["fresh"] = anyio.run(*cheap, args.cheap_rounds)
            calls, wall = anyio.run(run_load, url, tools, args.clients, args.seconds, args.cold)
            served = served_times(server_log(tmp, port))
            held = memory(pid)
            if args.cheap_seconds:
                throughput["after the load"] = anyio.run(*cheap, args.cheap_rounds)

        heads = [f"{tool} p50/p99 ms" for tool in (*LOAD, *CHEAP)]
        print(f"| server | load calls/s | {' | '.join(heads)} | TIMEOUTs | refusals | errors |")
        print("|---" * (len(heads) + 5) + "|")
        cells = [
            args.label,
            f"{calls.count(tools) / wall:.1f}",
            *(p50_p99(calls.latencies.get(tool, [])) for tool in (*LOAD, *CHEAP)),
            str(calls.timeouts),
            str(calls.refusals),
            str(len(calls.errors)),
        ]
        print("| " + " | ".join(cells) + " |")
        print(
            "| as the server's access log times them | | "
            + " | ".join(p50_p99(served.get(tool, [])) for tool in (*LOAD, *CHEAP))
            + " | | | |"
        )
        print()
        print(
            "| server | when | list_projects calls/s | minimal SDK server calls/s | ratio | "
            "lowest / highest of the rounds |"
        )
        print("|---|---|---|---|---|---|")
        for when, rates in throughput.items():
            doiget_rate = statistics.fmean(d for d, _ in rates)
            minimal_rate = statistics.fmean(m for _, m in rates)
            ratios = sorted(d / m for d, m in rates)
            print(
                f"| {args.label} | {when} | {doiget_rate:.0f} | {minimal_rate:.0f} | "
                f"{doiget_rate / minimal_rate:.2f} | {ratios[0]:.2f} / {ratios[-1]:.2f} |"
            )
        print()
        print("HTTP layer per request: " + "; ".join(f"{n} {us:.1f} µs" for n, us in layer_costs()))
        print(held)
        if args.loop_profile and profile.exists():
            print()
            print("event loop, " + profile.read_text())
        for error in calls.errors[:10]:
            print(f"- {error}")


if __name__ == "__main__":
    main()
