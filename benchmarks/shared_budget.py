"""Three doiget processes fetching at once share one request budget.

Starts the test suite's replay upstream (a local TLS server impersonating Crossref,
Unpaywall and a repository), then runs three real ``doiget batch`` processes at the
same time, each fetching its own DOIs, all with one DOIGET_DATA_DIR. The upstream
records every request's arrival; the script reports the busiest second, the smallest
gap between two requests to one source, and the wall time against the floor the
limits allow (all requests at 5 per second).

    python benchmarks/shared_budget.py                 # 3 processes x 10 DOIs
    python benchmarks/shared_budget.py --processes 3 --dois 20 --latency 0.05

Targets: at most 5 requests in any second, at least 200 ms between two requests to
one source, wall at most 1.1 x the floor.
"""

from __future__ import annotations

import argparse
import itertools
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
        }
        shares = [dois[n :: args.processes] for n in range(args.processes)]
        started = time.perf_counter()
        running = [
            subprocess.Popen(
                [sys.executable, "-m", "doiget", "batch", "-", "--json"],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for _ in shares
        ]
        for process, share in zip(running, shares, strict=True):
            assert process.stdin is not None
            process.stdin.write("\n".join(share) + "\n")
            process.stdin.close()
        codes = [process.wait(timeout=600) for process in running]
        wall = time.perf_counter() - started
        requests = list(upstream.requests)

    by_source: dict[str, list[float]] = {}
    for request in requests:
        by_source.setdefault(request.host, []).append(request.started)
    arrivals = [request.started for request in requests]
    floor = (len(requests) - 1) / 5.0
    print(
        f"{args.processes} processes x {args.dois} DOIs, {args.latency * 1000:.0f} ms "
        f"injected latency; exit codes {codes}"
    )
    print()
    print(
        "| requests | worst second | smallest same-source gap ms | floor s | wall s "
        "| wall / floor |"
    )
    print("|---|---|---|---|---|---|")
    print(
        f"| {len(requests)} | {busiest_second(arrivals)} | "
        f"{smallest_gap(by_source) * 1000:.0f} | {floor:.1f} | {wall:.1f} | {wall / floor:.2f} |"
    )


if __name__ == "__main__":
    main()
