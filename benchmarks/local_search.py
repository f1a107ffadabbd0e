"""Local library search at scale: index rebuild, search and recent latency.

Writes N synthetic store entries (TOML files shaped exactly as doiget writes them),
rebuilds the FTS5 index from them, then times doiget's search and recent calls, rare and
common words apart, in-process (the index work) and over stdio (a spawned ``doiget
serve``, a client calling the MCP tools). Beside each in-process search it runs two
comparators on the same file, FTS5's own bm25() ranking (what search falls back to) and
a statement that joins every matching row before ranking, and checks all three give the
same rows in the same order. Search is timed once the background warming a first search
starts has ended; separate rows time the first searches of a fresh process for each set
(its very first search included, its warming beside them), with the postings file a
warming wrote beside the index and without it (the first process since the index
changed).
``--before-src`` adds the stdio numbers of another checkout's server on the same store.

    python benchmarks/local_search.py                 # 100,000 entries
    python benchmarks/local_search.py --entries 20000 --queries 500
    python benchmarks/local_search.py --before-src /path/to/other/checkout/src
    python benchmarks/local_search.py --store /tmp/bench-papers   # keep and reuse the store

Target: p50 ≤ 10 ms and p99 ≤ 50 ms for search, p50 ≤ 10 ms for recent, at 100,000.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import tomli_w
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from smoke import parse_args

from doiget.models import Author, Work
from doiget.papers.index import _SEARCH, PaperIndex, match_expression
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


# The statement search ran before ranking moved inside FTS5 (the comparator).
BEFORE_SQL = (
    "SELECT entries.key, bm25(entries_fts, 10.0, 5.0, 3.0, 1.0, 2.0) AS score "
    "FROM entries_fts JOIN entries ON entries.id = entries_fts.rowid "
    "WHERE entries_fts MATCH ? ORDER BY score LIMIT ?"
)
LIMIT = 20
RARE_FROM = 2_000  # vocabulary rank from which words are rare (a few hundred entries each)
COMMON_TO = 20  # the most frequent words: tens of thousands of entries each


def query_sets(count: int, seed: int) -> dict[str, list[str]]:
    """Rare words only, common words only, and the Zipf mix (30 % with an author)."""
    rng = random.Random(seed)
    rare = [
        " ".join(rng.choice(WORDS[RARE_FROM:]) for _ in range(rng.randint(1, 2)))
        for _ in range(count)
    ]
    common = [
        " ".join(rng.choice(WORDS[:COMMON_TO]) for _ in range(rng.randint(1, 2)))
        for _ in range(count)
    ]
    mix = []
    for _ in range(count):
        query = words(rng, rng.randint(1, 3))
        if rng.random() < 0.3:
            query += " " + rng.choice(FAMILIES)
        mix.append(query)
    return {"rare": rare, "common": common, "mix": mix}


def timed(call: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = call(*args)
    return (time.perf_counter() - started) * 1000, value


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def row(name: str, samples: list[float], extra: str) -> str:
    return (
        f"| {name} | {percentile(samples, 0.5):.2f} | {percentile(samples, 0.99):.2f} | "
        f"{max(samples):.2f} | {extra} |"
    )


def wait_for_warming() -> float:
    """Seconds until the index's background warming (started by a first search) ends."""
    started = time.perf_counter()
    while any(thread.name == "doiget-search-warm" for thread in threading.enumerate()):
        time.sleep(0.05)
    return time.perf_counter() - started


def first_searches(root: Path, queries: list[str]) -> list[float]:
    """Milliseconds of each of ``queries`` searched in turn on an index just opened in
    this process, the process's very first search included (its warming runs beside
    them): run in a fresh process."""
    index = PaperIndex(Store(root))
    index.ensure_fresh()
    samples = [timed(index.search, query, LIMIT)[0] for query in queries]
    index.close()
    return samples


def first_pass(root: Path, sets: dict[str, list[str]], count: int, filed: bool) -> list[str]:
    """For each query set, its first ``count`` queries searched by a fresh process, as
    an agent's first searches after the server starts (or after a write empties a
    worker's cache over HTTP); with the postings file a warming wrote (``filed``: it
    must be there) or without it."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    postings = PaperIndex(Store(root)).postings_path
    if filed and not postings.exists():
        raise SystemExit(f"no postings file at {postings}: the warming did not write it")
    if not filed:
        postings.unlink(missing_ok=True)
    lines = []
    for name, queries in sets.items():
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as fresh:
            samples = fresh.submit(first_searches, root, queries[:count]).result()
        lines.append(
            row(
                f"search, {name} — now, first searches of a fresh process, "
                f"{'with' if filed else 'without'} the postings file",
                samples,
                f"the very first {samples[0]:.1f} ms",
            )
        )
    return lines


def in_process(index: PaperIndex, sets: dict[str, list[str]]) -> tuple[list[str], float]:
    """Rows for each query set: a statement that joins every matching row, then ranks,
    FTS5's own ranking (what search falls back to) and doiget's search; checks all
    give the same rows."""
    reference = sqlite3.connect(index.path)

    def fetch(sql: str, parameters: tuple[Any, ...]) -> list[Any]:
        return reference.execute(sql, parameters).fetchall()

    index.search("warming", LIMIT)
    warm_s = wait_for_warming()
    lines = []
    for name, queries in sets.items():
        joined: list[float] = []
        fts5: list[float] = []
        new: list[float] = []
        matches: list[int] = []
        same = 0
        for query in queries:
            expression = match_expression(query)
            ms, rows = timed(fetch, BEFORE_SQL, (expression, LIMIT))
            joined.append(ms)
            ms, ranked = timed(fetch, _SEARCH, (expression, LIMIT))
            fts5.append(ms)
            ms, hits = timed(index.search, query, LIMIT)
            new.append(ms)
            expected = [key for key, _ in rows]
            same += expected == [hit["key"] for hit in hits] == [r[0] for r in ranked]
            matches.append(
                reference.execute(
                    "SELECT count(*) FROM entries_fts WHERE entries_fts MATCH ?", (expression,)
                ).fetchone()[0]
            )
        detail = f"median {statistics.median(matches):,.0f} matching"
        lines.append(row(f"search, {name} — all matches joined, then ranked", joined, detail))
        lines.append(row(f"search, {name} — FTS5 bm25() ranking", fts5, detail))
        lines.append(
            row(f"search, {name} — now", new, f"{detail}; same rows {same}/{len(queries)}")
        )
    again = [timed(index.search, query, LIMIT)[0] for query in sets["mix"]]
    lines.append(
        row("search, mix — now, the same queries again", again, "every word searched before")
    )
    recent = [timed(lambda: index.recent(LIMIT))[0] for _ in range(len(sets["mix"]))]
    lines.append(row("recent", recent, ""))
    reference.close()
    return lines, warm_s


async def over_stdio(
    sources: list[str], env: dict[str, str], sets: dict[str, list[str]], settle_s: float
) -> list[str]:
    """Rows for the MCP tools of one ``doiget serve`` per src folder, all running at once
    and called in turn with the same query, so the machine's load falls on each alike;
    timed ``settle_s`` after a first search, the time to warm each server's index."""
    async with AsyncExitStack() as stack:
        sessions = []
        for src in sources:
            params = StdioServerParameters(
                command=sys.executable,
                args=["-m", "doiget", "serve", "--toolsets", "papers"],
                env={**env, "PYTHONPATH": src},
            )
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.call_tool("doiget_list_recent", {"limit": 1})  # the first call syncs
            await session.call_tool("doiget_search_local", {"query": "warming"})
            sessions.append(session)
        await anyio.sleep(settle_s)
        samples: dict[tuple[str, str], list[float]] = {}
        for name, queries in [*sets.items(), ("recent", sets["mix"])]:
            for query in queries:
                tool, arguments = (
                    ("doiget_list_recent", {"limit": LIMIT})
                    if name == "recent"
                    else ("doiget_search_local", {"query": query, "limit": LIMIT})
                )
                for src, session in zip(sources, sessions, strict=True):
                    started = time.perf_counter()
                    result = await session.call_tool(tool, arguments)
                    samples.setdefault((name, src), []).append(
                        (time.perf_counter() - started) * 1000
                    )
                    if result.is_error:
                        raise SystemExit(f"{tool} failed: {result.content}")
    return [
        row(f"{'search, ' if name != 'recent' else ''}{name}", values, src)
        for (name, src), values in sorted(
            samples.items(), key=lambda item: item[0][1] == sources[-1]
        )
    ]


@contextmanager
def store_at(path: str | None) -> Iterator[Path]:
    if path:
        yield Path(path)
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp) / "papers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000, help="per query set, in-process")
    parser.add_argument("--stdio-queries", type=int, default=200, help="per query set")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", help="keep the store here; reuse it if it is there")
    parser.add_argument("--before-src", help="also time this src folder's server over stdio")
    # The fewest entries at which a search warms the postings cache (and files it).
    args = parse_args(parser, entries=20_000, queries=5, stdio_queries=3)

    with store_at(args.store) as root:
        store = Store(root)
        populate_s = rebuild_s = 0.0
        if not (root / ".index").exists():
            populate_s, _ = timed(lambda: populate(store, args.entries, args.seed))
            rebuild_s, _ = timed(lambda: PaperIndex(store).rebuild())
        open_ms, fresh = timed(lambda: PaperIndex(store).ensure_fresh())
        index = PaperIndex(store)
        total = index.count()
        sets = query_sets(args.queries, args.seed + 1)
        local, warm_s = in_process(index, sets)  # its warming writes the postings file
        held = index._cache.phrases_held if index._cache else 0
        index.close()
        cold = first_pass(root, sets, args.stdio_queries, filed=True)
        cold += first_pass(root, sets, args.stdio_queries, filed=False)

        env = {k: v for k, v in os.environ.items() if not k.startswith("DOIGET_")}
        env |= {
            "DOIGET_STORE_ROOT": str(root),
            "DOIGET_DATA_DIR": str(root.parent / "data"),
            "DOIGET_LOG_PATH": str(root.parent / "provenance.jsonl"),
            "DOIGET_CONFIG": str(root.parent / "config.toml"),
        }
        stdio_sets = {name: queries[: args.stdio_queries] for name, queries in sets.items()}
        here = str(Path(__file__).resolve().parents[1] / "src")
        sources = [args.before_src, here] if args.before_src else [here]
        # As long as warming took in-process, and a second; a smoke run's numbers
        # measure nothing, so it calls the servers while they warm.
        settle_s = 0.0 if args.smoke else warm_s + 1
        remote = anyio.run(over_stdio, sources, env, stdio_sets, settle_s)

    print(f"entries: {total:,}; machine: {os.cpu_count()} cores")
    if rebuild_s:
        print(
            f"writing the TOML files: {populate_s / 1000:.1f} s; "
            f"index rebuild: {rebuild_s / 1000:.1f} s"
        )
    print(f"reopen + freshness check: {open_ms:.0f} ms (resynced: {fresh is not None})")
    print()
    print(f"In-process index work ({args.queries} queries a set, limit {LIMIT}):")
    print()
    print("| call | p50 ms | p99 ms | max ms | |")
    print("|---|---|---|---|---|")
    print("\n".join([*local, *cold]))
    print()
    print(f"warming after the first search: {warm_s:.1f} s in the background, {held} phrases held")
    print()
    print(
        f"Over stdio ({args.stdio_queries} calls a set, one client a server, the servers "
        "called in turn; MCP round trip):"
    )
    print()
    print("| call | p50 ms | p99 ms | max ms | server src |")
    print("|---|---|---|---|---|")
    print("\n".join(remote))


if __name__ == "__main__":
    main()
