"""Local library search at scale: index rebuild, search and recent latency.

Writes N synthetic store entries (TOML files shaped exactly as doiget writes them),
rebuilds the FTS5 index from them, then times doiget's search and recent calls.

    python benchmarks/local_search.py                 # 100,000 entries
    python benchmarks/local_search.py --entries 20000 --queries 500

Target (DESIGN §8): p50 ≤ 10 ms for search and recent at 100,000 entries.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import tempfile
import time
from pathlib import Path

import tomli_w

from doiget.models import Author, Work
from doiget.papers.index import PaperIndex
from doiget.papers.store import SCHEMA_VERSION, Store, work_to_fields
from doiget.refs import Ref

TOPIC_WORDS = (
    "quantum",
    "neural",
    "protein",
    "graph",
    "learning",
    "climate",
    "ocean",
    "tensor",
    "genome",
    "bayesian",
    "sparse",
    "retrieval",
    "language",
    "model",
    "transformer",
    "protein",
    "folding",
    "lattice",
    "gauge",
    "cosmology",
    "galaxy",
    "dark",
    "matter",
    "enzyme",
    "catalysis",
    "soil",
    "carbon",
    "microbiome",
    "epidemic",
    "vaccine",
    "policy",
    "market",
    "inference",
    "causal",
    "robust",
    "optimal",
    "control",
    "stochastic",
    "diffusion",
    "imaging",
    "cortex",
    "memory",
    "synthesis",
    "polymer",
    "battery",
    "electrolyte",
    "solar",
    "photonic",
    "laser",
    "spin",
    "topology",
    "knot",
)
SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "ze",
    "pa",
    "qu",
    "dr",
    "st",
    "ph",
    "on",
    "ex",
    "al",
    "in",
    "er",
)


def vocabulary(size: int, seed: int) -> list[str]:
    """Topic words plus made-up words, for a Zipf-like spread of term frequencies."""
    rng = random.Random(seed)
    made_up = {
        "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(size)
    }
    return list(TOPIC_WORDS) + sorted(made_up)


WORDS = vocabulary(30_000, 11)
CUMULATIVE = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(WORDS))))


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(WORDS, cum_weights=CUMULATIVE, k=count))


FAMILIES = (
    "Smith",
    "Garcia",
    "Müller",
    "Nakamura",
    "Okafor",
    "Ivanova",
    "Chen",
    "Kumar",
    "Dubois",
    "Rossi",
    "Kowalski",
)
VENUES = ("Nature", "Physical Review E", "PLOS ONE", "NeurIPS", "Cell", "Science", "JMLR")


def synthetic_work(rng: random.Random, number: int) -> Work:
    title = words(rng, rng.randint(4, 10)).capitalize()
    authors = tuple(
        Author(family=rng.choice(FAMILIES), given=rng.choice("ABCDEFGHJK") + ".")
        for _ in range(rng.randint(1, 6))
    )
    abstract = words(rng, rng.randint(60, 150))
    return Work(
        source="crossref",
        title=title,
        authors=authors,
        year=rng.randint(1990, 2026),
        doi=f"10.5555/bench.{number}",
        venue=rng.choice(VENUES),
        abstract=abstract,
        type="article-journal",
    )


def populate(store: Store, entries: int, seed: int) -> None:
    """Write the TOML files directly (no fsync): setup cost is not what is measured."""
    rng = random.Random(seed)
    store.metadata_dir.mkdir(parents=True, exist_ok=True)
    for number in range(entries):
        work = synthetic_work(rng, number)
        ref = Ref("doi", work.doi or "")
        document = {
            "schema_version": SCHEMA_VERSION,
            **work_to_fields(work),
            "doiget": {
                "ref": ref.canonical,
                "source": "crossref",
                "fetched_at": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T12:00:00Z",
            },
        }
        store.metadata_path(ref).write_bytes(tomli_w.dumps(document).encode())


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "papers")
        started = time.perf_counter()
        populate(store, args.entries, args.seed)
        populate_s = time.perf_counter() - started

        index = PaperIndex(store)
        started = time.perf_counter()
        report = index.rebuild()
        rebuild_s = time.perf_counter() - started

        started = time.perf_counter()
        index.close()
        reopened = PaperIndex(store)
        fresh = reopened.ensure_fresh()
        open_s = time.perf_counter() - started

        rng = random.Random(args.seed + 1)
        search_ms: list[float] = []
        hits: list[int] = []
        for _ in range(args.queries):
            query = words(rng, rng.randint(1, 3))
            if rng.random() < 0.3:
                query += " " + rng.choice(FAMILIES)
            started = time.perf_counter()
            results = reopened.search(query, 20)
            search_ms.append((time.perf_counter() - started) * 1000)
            hits.append(len(results))
        recent_ms: list[float] = []
        for _ in range(args.queries):
            started = time.perf_counter()
            reopened.recent(20)
            recent_ms.append((time.perf_counter() - started) * 1000)
        reopened.close()

    print(f"entries: {report.total:,}  (writing the TOML files took {populate_s:.1f} s)")
    print(
        f"index rebuild from TOML: {rebuild_s:.2f} s; reopen + freshness check: "
        f"{open_s * 1000:.0f} ms (resynced: {fresh is not None})"
    )
    print()
    print("| call | p50 ms | p95 ms | max ms | mean hits | target p50 |")
    print("|---|---|---|---|---|---|")
    for name, samples, mean_hits in (
        ("search (20)", search_ms, statistics.mean(hits)),
        ("recent (20)", recent_ms, 20.0),
    ):
        print(
            f"| {name} | {percentile(samples, 0.5):.2f} | {percentile(samples, 0.95):.2f} | "
            f"{max(samples):.2f} | {mean_hits:.1f} | ≤ 10 |"
        )


if __name__ == "__main__":
    main()
