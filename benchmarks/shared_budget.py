"""Three doiget processes fetching at once share one request budget.

Starts the test suite's replay upstream (a local TLS server impersonating Crossref,
Unpaywall and a repository), then runs three real ``doiget batch`` processes at the
same time, each fetching its own DOIs, all with one DOIGET_DATA_DIR.

Two records of the requests are compared: the upstream's stamp of each arrival, and
the budget's own stamp of when each process sent each request (its debug log). The
upstream runs in this script's threads, so on a loaded machine its stamps can lag
the send by tens of milliseconds, unevenly: a window or gap that looks too short
there but not in the budget's record is the stamping, not the senders.

Time is split three ways, each reported: start-up (spawn to the first request:
interpreters and imports), fetching (the first request's arrival to the last answer,
which the limits govern) and wind-down (the last answer to the last process's exit).

    python benchmarks/shared_budget.py                 # 3 processes x 10 DOIs
    python benchmarks/shared_budget.py --processes 3 --dois 20 --latency 0.05

Targets: at most 5 requests in any second, at least 200 ms between two requests to
one source, fetching at most 1.1 x the floor (all requests at 5 per second).
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from batch_rate import route_dois  # noqa: E402

from replay import ReplayUpstream  # noqa: E402

# The budget's debug line for each request sent (doiget.net.budget).
SENT = re.compile(r"request to (\S+) sent at (\d+\.\d+)")


def busiest_second(times: list[float]) -> int:
    """The most requests that arrived within any one-second window."""
    ordered = sorted(times)
    most = 0
    for i, start in enumerate(ordered):
        most = max(most, sum(1 for t in ordered[i:] if t < start + 1.0))
    return most


def smallest_gap(times_by_source: dict[str, list[float]]) -> float:
    gaps = [
        b - a for times in times_by_source.values() for a, b in itertools.pairwise(sorted(times))
    ]
    return min(gaps, default=float("inf"))


def limits_row(name: str, stamps: list[tuple[str, float]]) -> str:
    by_source: dict[str, list[float]] = {}
    for source, at in stamps:
        by_source.setdefault(source, []).append(at)
    times = [at for _, at in stamps]
    return (
        f"| {name} | {len(stamps)} | {busiest_second(times)} | "
        f"{smallest_gap(by_source) * 1000:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--dois", type=int, default=10, help="DOIs per process")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per answer")
    args = parse_args(parser, processes=2, dois=2, latency=0.0)

    with tempfile.TemporaryDirectory() as tmp, ReplayUpstream() as upstream:
        upstream.start(Path(tmp))
        dois = route_dois(upstream, args.dois * args.processes, args.latency)
        env = {
            **upstream.env,
            "PATH": "/usr/bin:/bin",
            "DOIGET_CONFIG": f"{tmp}/config.toml",
            "DOIGET_STORE_ROOT": f"{tmp}/papers",
            "DOIGET_LOG_PATH": f"{tmp}/provenance.jsonl",
            "DOIGET_DATA_DIR": f"{tmp}/data",
            "DOIGET_EMAIL": "bench@example.org",
            "DOIGET_LOG_LEVEL": "DEBUG",
        }
        if "PYTHONPATH" in os.environ:  # the checkout being measured
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        shares = [dois[n :: args.processes] for n in range(args.processes)]
        logs = [Path(tmp) / f"stderr-{n}.log" for n in range(args.processes)]
        spawned = time.monotonic()
        running = []
        for log in logs:
            with log.open("w") as stderr:
                running.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "doiget", "batch", "-", "--json"],
                        env=env,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL,
                        stderr=stderr,
                        text=True,
                    )
                )
        for process, share in zip(running, shares, strict=True):
            assert process.stdin is not None
            process.stdin.write("\n".join(share) + "\n")
            process.stdin.close()
        codes = [process.wait(timeout=600) for process in running]
        exited = time.monotonic()
        requests = list(upstream.requests)
        sent = [
            (match[1], float(match[2]))
            for log in logs
            for match in SENT.finditer(log.read_text(errors="replace"))
        ]

    began = min(request.started for request in requests)
    ended = max(request.finished for request in requests)
    fetching, wall = ended - began, exited - spawned
    floor = (len(requests) - 1) / 5.0
    print(
        f"{args.processes} processes x {args.dois} DOIs, {args.latency * 1000:.0f} ms "
        f"injected latency; exit codes {codes}; load average {os.getloadavg()[0]:.1f}"
    )
    print()
    print(
        "| requests | start-up s | fetching s | floor s | fetching / floor "
        "| wind-down s | wall s (spawn to exit) | wall / floor |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {len(requests)} | {began - spawned:.1f} | {fetching:.1f} | "
        f"{floor:.1f} | {fetching / floor:.2f} | {exited - ended:.1f} | {wall:.1f} | "
        f"{wall / floor:.2f} |"
    )
    print()
    print("| record | requests | busiest second | smallest same-source gap ms |")
    print("|---|---|---|---|")
    print(limits_row("upstream's arrival stamps", [(r.host, r.started) for r in requests]))
    print(limits_row("budget's send stamps", sent))


if __name__ == "__main__":
    main()
