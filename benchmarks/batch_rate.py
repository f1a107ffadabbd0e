"""Batch fetch under the rate gate: wall time against the floor the limits allow.

Starts the test suite's replay upstream (a local TLS server impersonating Crossref,
Unpaywall and a publisher), injects latency into every answer, and runs doiget's
real batch fetch of N DOIs through the DOIGET_HOST_MAP seam. The upstream records
every request; the script counts breaches of the limits as the upstream saw them.

    python benchmarks/batch_rate.py                  # 100 DOIs, 150 ms latency
    python benchmarks/batch_rate.py --dois 20 --latency 0.05

Target: every DOI fetched (time queued at the rate gate is charged to no deadline),
wall <= 1.05 x (requests / 5 per s) (DESIGN §8 allows 1.1); zero breaches of 5/s,
200 ms per source and 5 in flight.
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import anyio
from smoke import parse_args

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from doiget.contract import plain  # noqa: E402
from doiget.net.network import Network  # noqa: E402
from doiget.papers.contracts import BatchFetch  # noqa: E402
from doiget.papers.service import Papers  # noqa: E402
from doiget.runtime import load_runtime  # noqa: E402

from replay import FIXTURES, ReplayUpstream, Reply  # noqa: E402

CROSSREF_TEMPLATE = "crossref/works-10.1073_pnas.1414271111.json"
UNPAYWALL_TEMPLATE = "unpaywall/v2-10.1038_nature12373.json"
PDF = "pdf/colrev-SrivastavaShainesh2015-stub.pdf"


def route_dois(upstream: ReplayUpstream, count: int, latency: float) -> list[str]:
    crossref = json.loads((FIXTURES / CROSSREF_TEMPLATE).read_text())
    unpaywall = json.loads((FIXTURES / UNPAYWALL_TEMPLATE).read_text())
    pdf = (FIXTURES / PDF).read_bytes()
    dois = []
    for number in range(count):
        doi = f"10.5555/bench.{number}"
        dois.append(doi)
        work = copy.deepcopy(crossref)
        work["message"]["DOI"] = doi
        upstream.route(
            "api.crossref.org",
            f"/works/{doi}",
            Reply(
                200, json.dumps(work).encode(), {"Content-Type": "application/json"}, delay=latency
            ),
        )
        record = copy.deepcopy(unpaywall)
        location = {
            "url_for_pdf": f"https://europepmc.org/bench/{number}.pdf",
            "url": f"https://europepmc.org/bench/{number}",
            "license": "cc-by",
            "host_type": "repository",
            "version": "publishedVersion",
        }
        record.update(doi=doi, best_oa_location=location, oa_locations=[location])
        upstream.route(
            "api.unpaywall.org",
            f"/v2/{doi}",
            Reply(
                200,
                json.dumps(record).encode(),
                {"Content-Type": "application/json"},
                delay=latency,
            ),
        )
        upstream.route(
            "europepmc.org",
            f"/bench/{number}.pdf",
            Reply(200, pdf, {"Content-Type": "application/pdf"}, delay=latency),
        )
    return dois


def window_breaches(times: list[float], limit: int, window: float) -> int:
    ordered = sorted(times)
    return sum(1 for i in range(len(ordered) - limit) if ordered[i + limit] - ordered[i] < window)


def gap_breaches(times: list[float], gap: float) -> int:
    ordered = sorted(times)
    return sum(1 for a, b in itertools.pairwise(ordered) if b - a < gap)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dois", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.150, help="seconds per answer")
    args = parse_args(parser, dois=3, latency=0.01)

    with tempfile.TemporaryDirectory() as tmp, ReplayUpstream() as upstream:
        upstream.start(Path(tmp))
        dois = route_dois(upstream, args.dois, args.latency)
        env = {
            **upstream.env,
            "DOIGET_CONFIG": f"{tmp}/config.toml",
            "DOIGET_STORE_ROOT": f"{tmp}/papers",
            "DOIGET_LOG_PATH": f"{tmp}/provenance.jsonl",
            "DOIGET_DATA_DIR": f"{tmp}/data",
            "DOIGET_EMAIL": "bench@example.org",
        }
        runtime = load_runtime(env)
        papers = Papers(runtime, Network(runtime.settings))

        async def run() -> object:
            try:
                return await papers.batch(BatchFetch(refs=dois))
            finally:
                await papers.aclose()

        started = time.perf_counter()
        result = anyio.run(run)
        wall = time.perf_counter() - started
        requests = list(upstream.requests)
        max_in_flight = upstream.max_in_flight

    summary = plain(result)["summary"]
    starts = [r.started for r in requests]
    floor = len(requests) / 5.0
    per_host = {}
    for request in requests:
        per_host.setdefault(request.host, []).append(request.started)
    gap = sum(gap_breaches(times, 0.2) for times in per_host.values())
    print(
        f"{args.dois} DOIs, {args.latency * 1000:.0f} ms injected latency; "
        f"fetched {summary['ok']} ok, {summary['failed']} failed"
    )  # type: ignore[index]
    print()
    print(
        "| requests | floor s (req / 5/s) | wall s | wall / floor | >5 in 1 s "
        "| <200 ms same source | max in flight |"
    )
    print("|---|---|---|---|---|---|---|")
    print(
        f"| {len(requests)} | {floor:.1f} | {wall:.1f} | {wall / floor:.3f} | "
        f"{window_breaches(starts, 5, 1.0)} | {gap} | {max_in_flight} |"
    )


if __name__ == "__main__":
    main()
