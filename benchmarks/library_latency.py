"""Passage index latency at scale (embedded SQLite backend), and ingestion throughput.

For each size: N synthetic chunks (random unit vectors of 384 floats; 60-150 words
drawn from a Zipf-weighted vocabulary of made-up words; payloads shaped as ingest
writes them, with project, doc.doc_id and zotero.tags) are written through
SqliteIndex.upsert in batches. The index is closed, then measured:

    open      SqliteIndex(path) + the first count(), median of several fresh opens
    RSS       resident set of a fresh process after it opens the index (and after
              its first queries), from /proc/self/statm
    dense     index.dense(6): find_chunks without the query embedding
    find      dense(6) + fetch of those 6: find_chunks' index work
    hybrid    dense(100) + sparse(100) + BM25 of the dense-only candidates + the
              candidates' vectors read and rescored + fuse + dense feedback (fused
              again) + fetch of the top 6: query_hybrid's index work (query terms:
              2-4 vocabulary words through the analyser); timed twice, the first run
              of each query reading its terms' postings from FTS5 (see
              doiget/fts5rank.py), then with them in memory

Query embedding is left out everywhere (it is the same model call for every size).
Then ingestion: the PDF fixtures through ingest.prepare (read, section, chunk,
embed), next to the model's raw encode rate on the same chunk texts. Last, the
first query of a fresh process, as a person and an agent meet it: one fixture PDF
indexed into the default project, then `doiget query` run as a new process, and a
spawned `doiget serve` answering its first find_chunks (time from the call to the
answer, after initialize).

    python benchmarks/library_latency.py                        # 10,000 and 100,000
    python benchmarks/library_latency.py --sizes 10000 --no-ingest
    python benchmarks/library_latency.py --sizes "" --no-ingest  # first query only

Beside find_chunks it times the comparator, an exact NumPy cosine scan of the same
vectors held in memory plus the same fetch, and prints their ratio, how often the
top 6 ids agree and recall@10 against that exact scan.

    python benchmarks/library_latency.py --sizes 1000000 --no-ingest --no-first-query

Targets (DESIGN §8): at 100,000 chunks open <= 0.5 s and find_chunks' index work
<= 1.5 x the exact NumPy scan; at 1,000,000 chunks find_chunks p50 <= 50 ms and
query_hybrid p50 <= 120 ms, recall@10 >= 0.99 if the search is approximate.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from smoke import parse_args

from doiget.library import analyzer
from doiget.library.fusion import unit_interval
from doiget.library.hybrid import gather, rank
from doiget.library.index.base import ChunkRecord, CollectionInfo, Filters, Hit
from doiget.library.index.sqlite import SqliteIndex, _tables
from doiget.library.ingest import PAYLOAD_VERSION, chunk_id
from doiget.library.projects import DEFAULT_EMBED_MODEL

DIMENSION = 384
COLLECTION = "proj-bench-latency"
PROJECT_ID = "bench/latency"
CHUNKS_PER_DOC = 10
TOP_K = 6
CANDIDATES = 100
TAGS = ("methods", "review", "to-read", "physics", "ml", "bio", "core", "thesis")
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qu", "dr", "st")
SYLLABLES += ("ph", "on", "ex", "al", "in", "er", "bo", "gi", "mu", "te", "ly", "or")
FIXTURE_PDFS = (
    Path(__file__).parent.parent / "tests" / "fixtures" / "pdf",
    Path(__file__).parent.parent.parent / "shared" / "fixtures" / "pdf",
)
SMOKE_PDF = FIXTURE_PDFS[0] / "colrev-SrivastavaShainesh2015-stub.pdf"  # one page
TARGETS = {"open": 500.0, "find": 50.0, "hybrid": 120.0}  # ms; find and hybrid at 1,000,000

# Run in a fresh interpreter: what opening the index costs a process that has done
# nothing else (the parent holds the generated corpus and, later, the model).
RSS_PROBE = """
import json, os, sys, time
import numpy as np
from doiget.library import analyzer
from doiget.library.hybrid import hybrid_ranking
from doiget.library.index.base import Filters
from doiget.library.index.sqlite import SqliteIndex

def rss_mb():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

path, name, dim, terms = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
out = {"imported": rss_mb()}
started = time.perf_counter()
index = SqliteIndex(__import__("pathlib").Path(path))
index.count(name)
out["open_ms"] = (time.perf_counter() - started) * 1000
out["opened"] = rss_mb()
vector = np.random.default_rng(0).standard_normal(dim).astype(np.float32)
vector /= np.linalg.norm(vector)
index.dense(name, vector.tolist(), 6, Filters())
out["after_dense"] = rss_mb()
ranked = hybrid_ranking(
    index, name, vector.tolist(), analyzer.query_terms(" ".join(terms)), Filters()
)
index.fetch(name, [hit.id for hit in ranked[:6]])
out["after_hybrid"] = rss_mb()
index.close()
print(json.dumps(out))
"""


# -- synthetic corpus -------------------------------------------------------------


class Vocabulary:
    """Made-up words with Zipf weights (1 / rank)."""

    def __init__(self, size: int, rng: np.random.Generator) -> None:
        words: dict[str, None] = {}
        while len(words) < size:
            parts = rng.choice(len(SYLLABLES), size=int(rng.integers(2, 5)))
            words["".join(SYLLABLES[part] for part in parts)] = None
        self.words = np.array(list(words), dtype=object)
        weights = 1.0 / np.arange(1, size + 1)
        self.weights = weights / weights.sum()

    def draw(self, rng: np.random.Generator, count: int, zipf: bool = True) -> list[str]:
        picks = rng.choice(len(self.words), size=count, p=self.weights if zipf else None)
        return [str(word) for word in self.words[picks]]


def unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSION)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def synthetic_batch(
    rng: np.random.Generator, vocabulary: Vocabulary, start: int, count: int
) -> list[ChunkRecord]:
    """Chunks ``start``..``start + count``, ten to a document, payloads as ingest writes."""
    lengths = rng.integers(60, 151, size=count)
    words = vocabulary.draw(rng, int(lengths.sum()))
    vectors = unit_vectors(rng, count)
    records = []
    offset = 0
    for row in range(count):
        number = start + row
        doc, position = divmod(number, CHUNKS_PER_DOC)
        text = " ".join(words[offset : offset + int(lengths[row])])
        offset += int(lengths[row])
        sha = hashlib.sha256(f"bench-doc-{doc}".encode()).hexdigest()
        tag_count = int(rng.integers(0, 4))
        tags = sorted({TAGS[int(i)] for i in rng.integers(0, len(TAGS), size=tag_count)})
        payload = {
            "project": PROJECT_ID,
            "source": {
                "path": f"/papers/bench-{doc}.pdf",
                "title": f"Synthetic paper {doc}",
                "doi": f"10.5555/bench.{doc}",
                "url": None,
                "authors": ["A. Author", "B. Author"],
                "year": 1990 + doc % 36,
            },
            "zotero": {"citekey": f"author{1990 + doc % 36}bench{doc}", "tags": tags},
            "doc": {
                "doc_id": f"doi:10.5555/bench.{doc}",
                "content_sha256": sha,
                "chunk_index": position,
                "page_span": [position + 1, position + 1],
                "section": "Results",
                "section_path": ["Results"],
            },
            "embed_model": DEFAULT_EMBED_MODEL,
            "version": PAYLOAD_VERSION,
        }
        records.append(
            ChunkRecord(
                chunk_id(sha, position, DEFAULT_EMBED_MODEL),
                text,
                vectors[row].tolist(),
                payload,
            )
        )
    return records


# -- measuring --------------------------------------------------------------------


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def timed(call: Callable[[], Any], runs: int, warmup: int = 3) -> list[float]:
    """Milliseconds of ``runs`` calls, after ``warmup`` untimed ones."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def rotating(items: Sequence[Any]) -> Iterator[Any]:
    while True:
        yield from items


class Built:
    """What a build wrote, kept in memory for the exact comparator."""

    def __init__(self, size: int) -> None:
        self.matrix = np.empty((size, DIMENSION), dtype=np.float32)
        self.ids: list[str] = []
        self.upsert_s = 0.0
        self.rates: list[float] = []

    def exact(self, vector: Sequence[float], limit: int) -> list[str]:
        """The exact cosine top ``limit`` ids: one NumPy scan of the vectors in memory."""
        scores = self.matrix @ np.asarray(vector, dtype=np.float32)
        top = np.argpartition(-scores, limit - 1)[:limit]
        return [self.ids[int(row)] for row in top[np.argsort(-scores[top], kind="stable")]]


def build(path: Path, size: int, batch: int, seed: int) -> tuple[Built, Vocabulary]:
    """Write ``size`` chunks; the seconds spent in upsert and each batch's chunks/s."""
    rng = np.random.default_rng(seed)
    vocabulary = Vocabulary(4000, rng)
    index = SqliteIndex(path)
    index.create_collection(CollectionInfo(COLLECTION, PROJECT_ID, DEFAULT_EMBED_MODEL, DIMENSION))
    built = Built(size)
    for start in range(0, size, batch):
        records = synthetic_batch(rng, vocabulary, start, min(batch, size - start))
        built.matrix[start : start + len(records)] = [record.vector for record in records]
        built.ids += [record.id for record in records]
        began = time.perf_counter()
        index.upsert(COLLECTION, records)
        spent = time.perf_counter() - began
        built.upsert_s += spent
        built.rates.append(len(records) / spent)
    index.close()
    return built, vocabulary


def disk_mb(folder: Path) -> float:
    """Bytes allocated to every file under ``folder`` (the database, its WAL, vector
    files), in MB."""
    files = folder.rglob("*") if folder.is_dir() else []
    return sum(p.stat().st_blocks * 512 for p in files if p.is_file()) / 2**20


def recall(index: SqliteIndex, built: Built, vectors: Sequence[list[float]], k: int) -> float:
    """Mean share of the exact top ``k`` that index.dense(k) returns."""
    shares = [
        len({hit.id for hit in index.dense(COLLECTION, vector, k, Filters())} & set(exact)) / k
        for vector in vectors
        for exact in [built.exact(vector, k)]
    ]
    return statistics.fmean(shares)


def rss_probe(path: Path, terms: Sequence[str]) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, str(path), COLLECTION, str(DIMENSION), " ".join(terms)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def measure_size(size: int, args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="doiget-latency-") as tmp:
        path = Path(tmp) / "passages.sqlite3"
        built, vocabulary = build(path, size, args.batch, args.seed)
        upsert_s, rates = built.upsert_s, built.rates
        db_mb = disk_mb(Path(tmp))
        vectors_mb = disk_mb(path.with_name(path.name + ".vectors")) if size else 0.0
        tenth = max(1, len(rates) // 10)

        opens = []
        for _ in range(args.opens):
            started = time.perf_counter()
            index = SqliteIndex(path)
            index.count(COLLECTION)
            opens.append((time.perf_counter() - started) * 1000)
            index.close()

        rng = np.random.default_rng(args.seed + 1)
        vectors = [row.tolist() for row in unit_vectors(rng, args.queries)]
        zipf_terms = [vocabulary.draw(rng, int(rng.integers(2, 5))) for _ in range(args.queries)]
        uniform_terms = [
            vocabulary.draw(rng, int(rng.integers(2, 5)), zipf=False) for _ in range(args.queries)
        ]
        probes = [rss_probe(path, zipf_terms[i]) for i in range(3)]

        index = SqliteIndex(path)
        none = Filters()
        tag_filter = Filters({"tags": ("review",)})

        def dense(limit: int, filters: Filters = none) -> Callable[[], Any]:
            queries = rotating(vectors)
            return lambda: index.dense(COLLECTION, next(queries), limit, filters)

        def find(filters: Filters = none) -> Callable[[], Any]:
            queries = rotating(vectors)

            def call() -> Any:
                hits = [
                    Hit(hit.id, unit_interval(hit.score))
                    for hit in index.dense(COLLECTION, next(queries), TOP_K, filters)
                ]
                return index.fetch(COLLECTION, [hit.id for hit in hits])

            return call

        def numpy_find() -> Callable[[], Any]:
            """The comparator: an exact NumPy scan of the same vectors held in memory,
            plus the same fetch."""
            queries = rotating(vectors)
            return lambda: index.fetch(COLLECTION, built.exact(next(queries), TOP_K))

        def sparse(term_lists: Sequence[list[str]]) -> Callable[[], Any]:
            queries = rotating(term_lists)
            return lambda: index.sparse(
                COLLECTION, analyzer.query_terms(" ".join(next(queries))), CANDIDATES, none
            )

        def hybrid(term_lists: Sequence[list[str]], feedback: bool = True) -> Callable[[], Any]:
            queries = rotating(list(zip(vectors, term_lists, strict=True)))

            def call() -> Any:
                vector, terms = next(queries)
                found = gather(
                    index, COLLECTION, vector, analyzer.query_terms(" ".join(terms)), none
                )
                ranked = rank(found, vector, feedback=feedback)
                return index.fetch(COLLECTION, [hit.id for hit in ranked[:TOP_K]])

            return call

        def dense_only_scores(term_lists: Sequence[list[str]]) -> Callable[[], Any]:
            """BM25 of the dense side's candidates that the sparse side did not return."""
            asks = []
            for vector, words in zip(vectors, term_lists, strict=True):
                terms = analyzer.query_terms(" ".join(words))
                found = {hit.id for hit in index.sparse(COLLECTION, terms, CANDIDATES, none)}
                dense_ids = [hit.id for hit in index.dense(COLLECTION, vector, CANDIDATES, none)]
                asks.append((terms, [chunk for chunk in dense_ids if chunk not in found]))
            queries = rotating(asks)
            return lambda: index.sparse_scores(COLLECTION, *next(queries))

        fts, _ = _tables(COLLECTION)

        def matched(terms: list[str]) -> float:
            """Share of the chunks holding at least one of ``terms`` (what BM25 must score)."""
            query = " OR ".join(f'"{term}"' for term in analyzer.query_terms(" ".join(terms)))
            rows = index._conn.execute(f"SELECT count(*) FROM {fts} WHERE {fts} MATCH ?", (query,))
            return int(next(rows)[0]) / size

        zipf_share = statistics.median(matched(terms) for terms in zipf_terms)
        uniform_share = statistics.median(matched(terms) for terms in uniform_terms)
        n = args.queries
        same_top = statistics.fmean(
            [hit.id for hit in index.dense(COLLECTION, vector, TOP_K, none)]
            == built.exact(vector, TOP_K)
            for vector in vectors
        )
        recall_10 = recall(index, built, vectors, 10)
        comparator = timed(numpy_find(), n)
        find_samples = timed(find(), n)
        rows = [
            ("dense(6) = find_chunks minus embedding", timed(dense(TOP_K), n), None),
            ("find_chunks equivalent: dense(6) + fetch(6)", find_samples, "find"),
            ("comparator: exact NumPy scan in memory (6) + fetch(6)", comparator, None),
            (
                "query_hybrid equivalent, Zipf-drawn terms, first run (postings read from FTS5)",
                timed(hybrid(zipf_terms), n, warmup=0),
                None,
            ),
            ("query_hybrid equivalent, Zipf-drawn terms", timed(hybrid(zipf_terms), n), "hybrid"),
            (
                "query_hybrid equivalent, uniform-drawn terms, first run",
                timed(hybrid(uniform_terms), n, warmup=0),
                None,
            ),
            ("query_hybrid equivalent, uniform-drawn terms", timed(hybrid(uniform_terms), n), None),
            (
                "  the same, Zipf-drawn terms, without dense feedback",
                timed(hybrid(zipf_terms, feedback=False), n),
                None,
            ),
            ("  part: dense(100)", timed(dense(CANDIDATES), n), None),
            (
                "  part: BM25 of the dense-only candidates, Zipf-drawn terms",
                timed(dense_only_scores(zipf_terms), n),
                None,
            ),
            ("  part: sparse(100), Zipf-drawn terms", timed(sparse(zipf_terms), n), None),
            ("  part: sparse(100), uniform-drawn terms", timed(sparse(uniform_terms), n), None),
            ("  part: count()", timed(lambda: index.count(COLLECTION), n), None),
            ("find_chunks equivalent + filter tags=review", timed(find(tag_filter), n), None),
        ]
        index.close()

    mean_terms = statistics.fmean(len(terms) for terms in zipf_terms)
    print(f"## {size:,} chunks")
    print()
    print(
        f"write: {size:,} chunks via upsert in batches of {args.batch}: {upsert_s:.1f} s "
        f"({size / upsert_s:,.0f} chunks/s; first tenth of batches "
        f"{statistics.fmean(rates[:tenth]):,.0f}/s, last tenth "
        f"{statistics.fmean(rates[-tenth:]):,.0f}/s); on disk {db_mb:,.0f} MB (database, "
        f"WAL and vector files; the vector files {vectors_mb:,.0f} MB)"
    )
    print(
        f"open + first count(): median {statistics.median(opens):.1f} ms over {args.opens} "
        f"opens in this process (max {max(opens):.1f} ms); in a fresh process "
        f"{statistics.median(p['open_ms'] for p in probes):.1f} ms (median of {len(probes)}); "
        f"target at 100k <= {TARGETS['open']:.0f} ms"
    )
    probe = sorted(probes, key=lambda p: p["opened"])[len(probes) // 2]
    print(
        f"RSS of a fresh process (VmRSS via /proc/self/statm; Python + numpy + doiget index "
        f"modules imported): {probe['imported']:.0f} MB before open, "
        f"{probe['opened']:.0f} MB after open + count, {probe['after_dense']:.0f} MB after a "
        f"dense query, {probe['after_hybrid']:.0f} MB after a hybrid query"
    )
    print()
    print(
        f"{n} queries each (after 3 warm-up calls); query terms per query {mean_terms:.1f}; "
        f"chunks holding a query term (median): {zipf_share:.0%} for Zipf-drawn terms, "
        f"{uniform_share:.1%} for uniform-drawn terms"
    )
    print()
    ratio = percentile(find_samples, 0.5) / percentile(comparator, 0.5)
    print(
        f"find_chunks / exact NumPy scan (p50): {ratio:.2f} (target <= 1.5 at 100k); "
        f"same top {TOP_K} ids (in order) as the exact scan on {same_top:.0%} of the queries; "
        f"recall@10 against the exact scan {recall_10:.4f}; exact scan's vectors in memory "
        f"{built.matrix.nbytes / 2**20:,.0f} MiB"
    )
    print()
    print("| call | p50 ms | p95 ms | max ms | target p50 |")
    print("|---|---|---|---|---|")
    for label, samples, target in rows:
        goal = f"<= {TARGETS[target]:.0f} ms at 1M" if target else ""
        print(
            f"| {label} | {percentile(samples, 0.5):.2f} | {percentile(samples, 0.95):.2f} | "
            f"{max(samples):.2f} | {goal} |"
        )
    print()


# -- ingestion --------------------------------------------------------------------


def fixture_pdfs(folders: Sequence[Path]) -> list[Path]:
    """PDFs in ``folders`` (or PDFs named directly), one per distinct content."""
    seen: dict[str, Path] = {}
    for folder in folders:
        paths = sorted(folder.glob("*.pdf")) if folder.is_dir() else [folder]
        for path in paths if folder.exists() else []:
            seen.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return list(seen.values())


def measure_ingest(folders: Sequence[Path], rounds: int) -> None:
    from doiget.documents.pdftext import UnusableDocument, read_pdf
    from doiget.documents.sections import sectioned
    from doiget.documents.sentences import sentences
    from doiget.library.chunking import chunk_sentences
    from doiget.library.embedding import embedder_for
    from doiget.library.ingest import SourceDocument, embedding_text, prepare
    from doiget.library.projects import Project, default_collection

    configured = os.environ.get("DOIGET_EMBED_MODEL_PATH")
    embedder = embedder_for(DEFAULT_EMBED_MODEL, Path(configured) if configured else None)
    project = Project(id=PROJECT_ID, collection=default_collection(PROJECT_ID))
    started = time.perf_counter()
    embedder.warm(queries=False)
    embedder.count_tokens("warm up")
    load_s = time.perf_counter() - started

    documents = [
        SourceDocument(doc_id=f"file:{path}", path=path, title=path.stem)
        for path in fixture_pdfs(folders)
    ]
    print("## ingestion (ingest.prepare per PDF: read, section, chunk, embed)")
    print()
    print(f"model load + first encode: {load_s:.1f} s (excluded below)")
    usable = []
    for document in documents:
        try:
            prepared = prepare(document, project, embedder)
        except UnusableDocument as problem:
            print(f"- {document.path.name}: skipped ({problem.reason})")
            continue
        usable.append(document)
        print(f"- {document.path.name}: {prepared.pages} pages, {len(prepared.records)} chunks")
    if not usable:
        print("no usable PDF found")
        return

    prepare_s, read_s, chunk_s, embed_s = [], [], [], []
    chunks = pages = 0
    texts: list[str] = []
    for _ in range(rounds):
        started = time.perf_counter()
        for document in usable:
            prepare(document, project, embedder)
        prepare_s.append(time.perf_counter() - started)
        # The same stages one by one, to see where the time goes.
        round_read = round_chunk = round_embed = 0.0
        texts, chunks, pages = [], 0, 0
        for document in usable:
            began = time.perf_counter()
            text = read_pdf(document.path)
            round_read += time.perf_counter() - began
            began = time.perf_counter()
            found = chunk_sentences(
                sentences(sectioned(text.lines)),
                project.chunk_tokens,
                project.chunk_overlap,
                embedder.count_tokens,
            )
            round_chunk += time.perf_counter() - began
            inputs = [embedding_text(chunk, document.title) for chunk in found]
            began = time.perf_counter()
            embedder.embed(inputs)
            round_embed += time.perf_counter() - began
            texts += inputs
            chunks += len(found)
            pages += text.pages
        read_s.append(round_read)
        chunk_s.append(round_chunk)
        embed_s.append(round_embed)
    raw_s = [timed(lambda: embedder.embed(texts), 1, warmup=0)[0] / 1000 for _ in range(rounds)]
    batch_s = statistics.median(raw_s)
    total = statistics.median(prepare_s)
    print()
    print(
        f"{len(usable)} PDFs, {pages} pages, {chunks} chunks "
        f"(mean {statistics.fmean(len(t) for t in texts):.0f} characters embedded per chunk); "
        f"median of {rounds} rounds"
    )
    print()
    print("| stage | seconds | chunks/s | pages/s |")
    print("|---|---|---|---|")
    for label, seconds in (
        ("ingest.prepare, whole pipeline", total),
        ("  read_pdf (text extraction)", statistics.median(read_s)),
        ("  sectioning + sentence chunking (token counts)", statistics.median(chunk_s)),
        ("  embed, one call per document", statistics.median(embed_s)),
        ("raw encode: embedder.embed on all chunk texts at once", batch_s),
    ):
        print(f"| {label} | {seconds:.2f} | {chunks / seconds:.1f} | {pages / seconds:.1f} |")
    print()
    print(
        f"pipeline overhead over raw encode: {total / batch_s:.2f}x "
        f"({(total - batch_s) / total:.0%} of the prepare time is not the encode of all "
        "chunks in one batch)"
    )


# -- the first query of a fresh process ---------------------------------------------

FIRST_QUESTION = "reports exported as HTML with interactive charts"
FIRST_TARGET_S = 1.5


def _fresh_env(data: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("DOIGET_")}
    return keep | {
        "DOIGET_DATA_DIR": str(data / "data"),
        "DOIGET_CONFIG": str(data / "config.toml"),
        "DOIGET_STORE_ROOT": str(data / "papers"),
        "DOIGET_LOG_PATH": str(data / "provenance.jsonl"),
    }


def _doiget(env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "doiget", *args], env=env, check=True, capture_output=True
    )
    return time.perf_counter() - started


async def _first_mcp_query(env: dict[str, str]) -> tuple[float, float]:
    """(seconds to initialize, seconds for the first find_chunks) of a spawned server."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "doiget", "serve", "--toolsets", "library"], env=env
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        ready = time.perf_counter()
        result = await session.call_tool(
            "find_chunks", {"project": "doiget/papers", "query": FIRST_QUESTION}
        )
        answered = time.perf_counter()
    assert not result.is_error, result
    return ready - started, answered - ready


def measure_first_query(folders: Sequence[Path], rounds: int) -> None:
    import anyio

    pdfs = fixture_pdfs(folders)
    pdf = next((p for p in pdfs if "jose" in p.name), pdfs[0])  # the question is on jose
    with tempfile.TemporaryDirectory() as scratch:
        env = _fresh_env(Path(scratch))
        _doiget(env, "index", str(pdf))
        cli = [
            _doiget(env, "query", "doiget/papers", FIRST_QUESTION, "--json") for _ in range(rounds)
        ]
        hybrid = [
            _doiget(env, "query", "doiget/papers", FIRST_QUESTION, "--hybrid", "--json")
            for _ in range(rounds)
        ]
        baseline = [_doiget(env, "--version") for _ in range(rounds)]
        mcp = [anyio.run(_first_mcp_query, env) for _ in range(rounds)]
    print(f"## first query of a fresh process (median of {rounds}; target {FIRST_TARGET_S} s)")
    print()
    print("| what | seconds |")
    print("|---|---|")
    for label, seconds in (
        ("`doiget --version` (interpreter + CLI start, for scale)", statistics.median(baseline)),
        ("`doiget query` (find_chunks), whole process", statistics.median(cli)),
        ("`doiget query --hybrid` (query_hybrid), whole process", statistics.median(hybrid)),
        ("MCP server start to initialize", statistics.median(m[0] for m in mcp)),
        ("MCP first find_chunks call to its answer", statistics.median(m[1] for m in mcp)),
    ):
        print(f"| {label} | {seconds:.2f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma list of chunk counts")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--opens", type=int, default=7)
    parser.add_argument("--batch", type=int, default=1000, help="chunks per upsert")
    parser.add_argument("--rounds", type=int, default=3, help="ingestion repeats")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-ingest", action="store_true")
    parser.add_argument("--no-first-query", action="store_true")
    parser.add_argument(
        "--pdfs", type=Path, action="append", help="a PDF or a folder of PDFs (repeatable)"
    )
    args = parse_args(
        parser, sizes="200", queries=3, opens=1, batch=100, rounds=1, pdfs=[SMOKE_PDF]
    )

    print(
        f"machine: {os.cpu_count()} cores; load average at start "
        f"{os.getloadavg()[0]:.2f}; Python {sys.version.split()[0]}"
    )
    print()
    for size in (int(part) for part in args.sizes.split(",") if part.strip()):
        measure_size(size, args)
    if not args.no_ingest:
        measure_ingest(args.pdfs or FIXTURE_PDFS, args.rounds)
    if not args.no_first_query:
        measure_first_query(args.pdfs or FIXTURE_PDFS, args.rounds)


if __name__ == "__main__":
    main()
