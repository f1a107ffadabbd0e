"""Cold start of ``doiget serve`` against a one-tool server built on the same MCP SDK.

For each spawn: time from process start to the tools/list answer, then the resident
set size (VmRSS) once idle. The reference server is written to a temp file by this
script; the two are spawned alternately so machine noise hits both alike.

    python benchmarks/cold_start.py              # 15 spawns of each
    python benchmarks/cold_start.py --spawns 30

Both the papers toolset alone and every toolset (the default) are measured.
Targets: doiget's median time <= 1.1 x the reference's; idle RSS <= 1.25 x.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smoke import parse_args

REFERENCE_SERVER = """
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(
        name="echo", description="Echo the text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    )])


async def call_tool(ctx, params):
    text = (params.arguments or {}).get("text", "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def main():
    server = Server("reference", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""

HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def one_spawn(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Seconds from spawn to the tools/list answer, and idle RSS in KiB."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdin and process.stdout
    process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in HANDSHAKE))
    process.stdin.flush()
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"{argv} exited before answering tools/list")
        if json.loads(line).get("id") == 2:
            break
    elapsed = time.perf_counter() - started
    time.sleep(0.3)  # idle
    rss = rss_kib(process.pid)
    process.stdin.close()
    process.wait(timeout=30)
    return elapsed, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spawns", type=int, default=15)
    args = parse_args(parser, spawns=1)
    with tempfile.TemporaryDirectory() as tmp:
        reference = Path(tmp) / "reference_server.py"
        reference.write_text(REFERENCE_SERVER)
        env = {
            **os.environ,
            "DOIGET_STORE_ROOT": str(Path(tmp) / "papers"),
            "DOIGET_LOG_PATH": str(Path(tmp) / "provenance.jsonl"),
            "DOIGET_CONFIG": str(Path(tmp) / "config.toml"),
        }
        servers = {
            "reference (1 tool, same SDK)": [sys.executable, str(reference)],
            "doiget serve --toolsets papers": [
                sys.executable,
                "-m",
                "doiget",
                "serve",
                "--toolsets",
                "papers",
            ],
            "doiget serve (every toolset)": [sys.executable, "-m", "doiget", "serve"],
        }
        for argv in servers.values() if not args.smoke else ():
            one_spawn(argv, env)  # warm the file cache
        times: dict[str, list[float]] = {name: [] for name in servers}
        rss: dict[str, list[int]] = {name: [] for name in servers}
        for _ in range(args.spawns):
            for name, argv in servers.items():
                elapsed, kib = one_spawn(argv, env)
                times[name].append(elapsed)
                rss[name].append(kib)
    names = list(servers)
    base_time = statistics.median(times[names[0]])
    base_rss = statistics.median(rss[names[0]])
    print(f"{args.spawns} spawns of each, alternating\n")
    print("| server | median spawn -> tools/list ms | ratio | median idle RSS MiB | ratio |")
    print("|---|---|---|---|---|")
    for name in names:
        median_time = statistics.median(times[name])
        median_rss = statistics.median(rss[name])
        print(
            f"| {name} | {median_time * 1000:.0f} | {median_time / base_time:.2f} "
            f"| {median_rss / 1024:.1f} | {median_rss / base_rss:.2f} |"
        )


if __name__ == "__main__":
    main()
