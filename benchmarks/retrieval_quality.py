"""Retrieval quality of find_chunks and query_hybrid on a test collection, against baselines.

Every document goes through the library as one chunk (store_chunks into a throwaway
project on the embedded SQLite index); every query is ranked by the same code that
answers find_chunks and query_hybrid, asked for 100 results. In the same run:

    BM25 (bm25s)    Snowball stems, bm25s's English stop words, default k1/b
    dense (numpy)   all-MiniLM-L6-v2 exact cosine over the very vectors indexed
    RRF             reciprocal-rank fusion (k = 60) of those two, for reference

Metrics: nDCG@10 (linear gain from the qrels grade, log2 discount, ideal from the
qrels), MAP over the top 100 (divided by every relevant document) and Recall@100.
Then a 2-fold check (odd / even query ids) of the fused ranking, and of the fusion
dense weight: picked on one fold, scored on the other.

    python benchmarks/retrieval_quality.py                       # Vaswani/NPL, bundled
    python benchmarks/retrieval_quality.py --limit-docs 2000     # quick smoke run
    python benchmarks/retrieval_quality.py --collection PATH     # TREC or BEIR folder
    python benchmarks/retrieval_quality.py --encoder plain       # documents by the plain model

Documents are embedded as indexing embeds them (the ONNX int8 variant where it runs),
queries as find_chunks embeds them (the exact model).

A folder is read as BEIR (corpus.jsonl, queries.jsonl, qrels/test.tsv) when it has
corpus.jsonl, else as TREC (<DOC>/<DOCNO> documents, <top>/<num>/<title> topics,
"qid 0 docno rel" qrels). Target: query_hybrid nDCG@10 >= 1.15 x the better of
BM25 and dense.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import bm25s
import numpy as np
import Stemmer
from smoke import parse_args

from doiget.config import load_settings
from doiget.contract import build
from doiget.errors import DoigetError, ErrorCode
from doiget.library import analyzer, hybrid, passage_search
from doiget.library import contracts as c
from doiget.library.feedback import cosine_hits
from doiget.library.fusion import fuse
from doiget.library.hybrid import Candidates
from doiget.library.index.base import Filters, Hit
from doiget.library.ingest import PAYLOAD_VERSION, chunk_id
from doiget.library.notices import PaperNotices
from doiget.library.passage_search import PassageQuery
from doiget.library.projects import Project
from doiget.library.service import Library

DEFAULT_COLLECTION = Path(__file__).parent / "data" / "vaswani_npl"
PROJECT_ID = "bench/retrieval"
DEPTH = 100
NDCG_AT = 10
RRF_K = 60
TARGET_RATIO = 1.15
SWEEP_WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
VECTOR_CACHE = Path(tempfile.gettempdir()) / "doiget-retrieval-vectors"
# Environment a developer may need to find the model weights; nothing else is passed on.
PASSED_ENV = ("DOIGET_EMBED_MODEL_PATH", "HF_HOME", "HF_HUB_CACHE")

Ranking = list[str]  # docnos, best first
Run = dict[str, Ranking]  # query id -> ranking


# -- collections ----------------------------------------------------------------


@dataclass
class Collection:
    """Documents (docno -> text), queries (qid -> text) and graded judgements."""

    name: str
    docs: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _clean(text: str) -> str:
    return " ".join(text.split())


def _first(folder: Path, names: Sequence[str], patterns: Sequence[str]) -> Path:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    for pattern in patterns:
        found = sorted(path for path in folder.glob(pattern) if path.is_file())
        if found:
            return found[0]
    raise SystemExit(f"{folder}: no file like {names[0]} found")


def _load_trec(folder: Path) -> Collection:
    doc_file = _first(folder, ["doc-text.trec", "docs.trec"], ["*doc*.trec", "*.trec"])
    query_file = _first(folder, ["query-text.trec", "topics.trec"], ["*quer*", "*topic*"])
    qrels_file = _first(folder, ["qrels", "qrels.txt"], ["qrels*", "*.qrels"])
    doc_pattern = re.compile(r"<DOC>\s*<DOCNO>\s*(.*?)\s*</DOCNO>(.*?)</DOC>", re.S)
    docs = {
        docno: _clean(re.sub(r"<[^>]+>", " ", text))
        for docno, text in doc_pattern.findall(doc_file.read_text(encoding="utf-8"))
    }
    queries = {}
    for topic in re.findall(r"<top>(.*?)</top>", query_file.read_text(encoding="utf-8"), re.S):
        num = re.search(r"<num>\s*(?:Number:)?\s*(\S+?)\s*(?:</num>|\n)", topic)
        title = re.search(r"<title>(.*?)(?:</title>|<desc>|<narr>|$)", topic, re.S)
        if num and title:
            queries[num.group(1)] = _clean(title.group(1))
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_file.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) == 4:
            qrels.setdefault(fields[0], {})[fields[2]] = int(fields[3])
    return Collection(folder.name, docs, queries, qrels)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _load_beir(folder: Path) -> Collection:
    docs = {
        str(row["_id"]): _clean(f"{row.get('title') or ''}\n{row.get('text') or ''}")
        for row in _jsonl(folder / "corpus.jsonl")
    }
    queries = {str(row["_id"]): _clean(row["text"]) for row in _jsonl(folder / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        fields = line.split("\t")
        if len(fields) >= 3:
            qrels.setdefault(fields[0], {})[fields[1]] = int(float(fields[2]))
    return Collection(folder.name, docs, queries, qrels)


def load_collection(folder: Path, limit_docs: int | None) -> Collection:
    """The collection in ``folder`` (BEIR when corpus.jsonl is there, else TREC), judged
    queries only; with ``limit_docs`` the first N documents and the queries still judged."""
    collection = _load_beir(folder) if (folder / "corpus.jsonl").is_file() else _load_trec(folder)
    # A document with no text cannot be a chunk (Cranfield has two).
    collection.docs = {docno: text for docno, text in collection.docs.items() if text}
    if limit_docs is not None:
        kept = list(collection.docs)[:limit_docs]
        collection.docs = {docno: collection.docs[docno] for docno in kept}
    docs = collection.docs
    qrels = {
        qid: {docno: grade for docno, grade in judged.items() if docno in docs}
        for qid, judged in collection.qrels.items()
    }
    collection.qrels = {
        qid: judged for qid, judged in qrels.items() if any(grade > 0 for grade in judged.values())
    }
    collection.queries = {
        qid: text for qid, text in collection.queries.items() if qid in collection.qrels and text
    }
    return collection


# -- metrics --------------------------------------------------------------------


def ndcg(ranking: Ranking, judged: Mapping[str, int], k: int = NDCG_AT) -> float:
    dcg = sum(
        judged.get(docno, 0) / math.log2(rank + 2)
        for rank, docno in enumerate(ranking[:k])
        if judged.get(docno, 0) > 0
    )
    ideal = sorted((grade for grade in judged.values() if grade > 0), reverse=True)[:k]
    best = sum(grade / math.log2(rank + 2) for rank, grade in enumerate(ideal))
    return dcg / best if best else 0.0


def average_precision(ranking: Ranking, judged: Mapping[str, int], k: int = DEPTH) -> float:
    relevant = {docno for docno, grade in judged.items() if grade > 0}
    found, total = 0, 0.0
    for rank, docno in enumerate(ranking[:k], start=1):
        if docno in relevant:
            found += 1
            total += found / rank
    return total / len(relevant) if relevant else 0.0


def recall(ranking: Ranking, judged: Mapping[str, int], k: int = DEPTH) -> float:
    relevant = {docno for docno, grade in judged.items() if grade > 0}
    return len(relevant.intersection(ranking[:k])) / len(relevant) if relevant else 0.0


def mean_metric(
    run: Run,
    qrels: Mapping[str, Mapping[str, int]],
    qids: Sequence[str],
    metric: Callable[[Ranking, Mapping[str, int]], float] = ndcg,
) -> float:
    return statistics.fmean(metric(run.get(qid, []), qrels[qid]) for qid in qids)


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# -- the library ------------------------------------------------------------------


def cached_vectors(
    folder: Path, model: str, texts: Sequence[str], embed: Callable[[list[str]], np.ndarray]
) -> tuple[np.ndarray, bool]:
    """The vectors of ``texts`` and whether they came from ``folder``, where they are
    kept once this model has embedded the very same texts (embedding a collection
    takes minutes; ranking it, seconds)."""
    digest = hashlib.sha256(model.encode())
    for text in texts:
        digest.update(hashlib.sha256(text.encode()).digest())
    path = folder / f"{digest.hexdigest()[:24]}.npy"
    if path.is_file():
        return np.load(path), True
    vectors = embed(list(texts))
    folder.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npy")
    np.save(partial, vectors)
    partial.replace(path)
    return vectors, False


def open_library(workdir: Path) -> Library:
    """A Library over a fresh data dir, with one hybrid project from a fresh config.toml."""
    config = workdir / "config.toml"
    config.write_text(f'[projects."{PROJECT_ID}"]\nhybrid_enabled = true\n', encoding="utf-8")
    env = {name: os.environ[name] for name in PASSED_ENV if os.environ.get(name)}
    env |= {
        "DOIGET_CONFIG": str(config),
        "DOIGET_DATA_DIR": str(workdir / "data"),
        "DOIGET_LOG_PATH": str(workdir / "provenance.jsonl"),
    }
    return Library(load_settings(env))


def chunk_item(
    project: Project, docno: str, text: str, vector: np.ndarray, encoder: str
) -> dict[str, Any]:
    """A store_chunks item: one chunk per document, payload shaped as ingest writes it
    (``encoder``: the model and variant that made ``vector``)."""
    # A document's content is its docno and text (as a PDF's is its bytes): hashing the
    # text alone would merge abstracts that a collection holds twice under two docnos.
    sha = hashlib.sha256(f"{docno}\n{text}".encode()).hexdigest()
    return {
        "id": chunk_id(sha, 0, project.embed_model),
        "text": text,
        "embedding": vector.tolist(),
        "metadata": {
            "project": project.id,
            "source": {
                "path": None,
                "title": None,
                "doi": None,
                "url": None,
                "authors": [],
                "year": None,
            },
            "zotero": {"citekey": None, "tags": []},
            "doc": {
                "doc_id": docno,
                "content_sha256": sha,
                "chunk_index": 0,
                "page_span": None,
                "section": None,
                "section_path": [],
            },
            "embed_model": encoder,
            "version": PAYLOAD_VERSION,
        },
    }


@dataclass
class IndexReport:
    seconds: float
    batches: int
    slowest_batch: float
    batch_size: int
    timeouts: int


def store_all(library: Library, items: list[dict[str, Any]], batch_size: int) -> IndexReport:
    """Write ``items`` through store_chunks; a batch over the time limit is retried halved."""
    started = time.perf_counter()
    position, batches, slowest, timeouts = 0, 0, 0.0, 0
    while position < len(items):
        batch = items[position : position + batch_size]
        began = time.perf_counter()
        try:
            request = build(c.StoreChunks, project=PROJECT_ID, items=batch)
            anyio.run(library.store_chunks, request)
        except DoigetError as error:
            if error.code != ErrorCode.TIMEOUT or batch_size == 1:
                raise
            timeouts += 1
            batch_size = max(1, batch_size // 2)
            print(f"  store_chunks timed out on a batch; retrying with batches of {batch_size}")
            continue
        slowest = max(slowest, time.perf_counter() - began)
        batches += 1
        position += len(batch)
    return IndexReport(time.perf_counter() - started, batches, slowest, batch_size, timeouts)


# -- comparators ------------------------------------------------------------------


def bm25s_run(
    docnos: Sequence[str], texts: Sequence[str], queries: Mapping[str, str]
) -> tuple[Run, float, list[float]]:
    stemmer = Stemmer.Stemmer("english")
    started = time.perf_counter()
    tokens = bm25s.tokenize(list(texts), stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    index_s = time.perf_counter() - started
    run: Run = {}
    times = []
    depth = min(DEPTH, len(docnos))
    for qid, query in queries.items():
        began = time.perf_counter()
        query_tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
        )
        found, scores = retriever.retrieve(query_tokens, k=depth, show_progress=False)
        times.append(time.perf_counter() - began)
        # Documents with no query term come back with score 0 in arbitrary order: drop them.
        run[qid] = [
            docnos[int(doc)] for doc, score in zip(found[0], scores[0], strict=True) if score > 0
        ]
    return run, index_s, times


def numpy_dense_run(
    docnos: Sequence[str], doc_vectors: np.ndarray, query_vectors: Mapping[str, np.ndarray]
) -> tuple[Run, list[float]]:
    run: Run = {}
    times = []
    depth = min(DEPTH, len(docnos))
    for qid, vector in query_vectors.items():
        began = time.perf_counter()
        scores = doc_vectors @ vector
        top = np.argpartition(-scores, depth - 1)[:depth]
        top = top[np.argsort(-scores[top], kind="stable")]
        times.append(time.perf_counter() - began)
        run[qid] = [docnos[int(doc)] for doc in top]
    return run, times


def rrf(*runs: Run, k: int = RRF_K) -> Run:
    fused: Run = {}
    for qid in runs[0]:
        scores: dict[str, float] = {}
        for run in runs:
            for rank, docno in enumerate(run.get(qid, []), start=1):
                scores[docno] = scores.get(docno, 0.0) + 1.0 / (k + rank)
        fused[qid] = sorted(scores, key=lambda docno: (-scores[docno], docno))[:DEPTH]
    return fused


# -- ranking steps ----------------------------------------------------------------


def _normalised(hits: Sequence[Hit], how: str) -> list[Hit]:
    """``hits`` rescaled so that fuse()'s max-scaling leaves them as ``how`` has them:
    min-max over the list, or distribution-based (mean +- 3 standard deviations)."""
    scores = [hit.score for hit in hits]
    if len(scores) < 2:
        return list(hits)
    if how == "minmax":
        low, high = min(scores), max(scores)
    else:
        mean, spread = statistics.fmean(scores), statistics.pstdev(scores) or 1e-9
        low, high = mean - 3 * spread, mean + 3 * spread
    width = (high - low) or 1e-9
    return [Hit(hit.id, min(max((hit.score - low) / width, 0.0), 1.0)) for hit in hits]


def ranking_steps(
    qids: Sequence[str],
    candidates: Mapping[str, Candidates],
    distinct_terms_hits: Mapping[str, list[Hit]],
    complete_dense: Mapping[str, list[Hit]],
    query_vectors: Mapping[str, np.ndarray],
) -> dict[str, dict[str, list[Hit]]]:
    """query_hybrid's ranking built up one step at a time, and the variants tried and
    not kept, per query (``complete_dense``: every candidate's cosine)."""
    steps: dict[str, dict[str, list[Hit]]] = {
        "dense alone (find_chunks)": {q: candidates[q].dense for q in qids},
        "library BM25, each query term once (before)": dict(distinct_terms_hits),
        "library BM25, query-term frequency saturated (k3 8)": {
            q: candidates[q].sparse for q in qids
        },
        "score fusion of the two top-100 lists, max-scaled, dense weight 0.6": {
            q: fuse(candidates[q].dense, candidates[q].sparse) for q in qids
        },
        "+ every candidate scored by both sides": {
            q: hybrid.rank(candidates[q], query_vectors[q].tolist(), feedback=False) for q in qids
        },
    }
    for how in ("minmax", "distribution"):
        steps[f"  (tried, not kept) {how} normalisation instead"] = {
            q: fuse(_normalised(complete_dense[q], how), _normalised(candidates[q].bm25, how))
            for q in qids
        }
    steps["+ dense feedback, top 3 at weight 0.5 (query_hybrid)"] = {
        q: hybrid.rank(candidates[q], query_vectors[q].tolist()) for q in qids
    }
    return steps


# -- printing ---------------------------------------------------------------------


def print_systems(
    systems: Mapping[str, Run], qrels: Mapping[str, Mapping[str, int]], qids: Sequence[str]
) -> dict[str, float]:
    print("| system | nDCG@10 | MAP | R@100 |")
    print("|---|---|---|---|")
    scores = {}
    for name, run in systems.items():
        scores[name] = mean_metric(run, qrels, qids)
        print(
            f"| {name} | {scores[name]:.4f} | "
            f"{mean_metric(run, qrels, qids, average_precision):.4f} | "
            f"{mean_metric(run, qrels, qids, recall):.4f} |"
        )
    return scores


def folds(qids: Sequence[str]) -> tuple[list[str], list[str]]:
    """Odd and even query ids (by position when the ids are not numbers)."""
    if all(qid.isdigit() for qid in qids):
        return [q for q in qids if int(q) % 2 == 1], [q for q in qids if int(q) % 2 == 0]
    return list(qids[0::2]), list(qids[1::2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", type=Path, default=DEFAULT_COLLECTION)
    parser.add_argument("--limit-docs", type=int, default=None, help="index the first N only")
    parser.add_argument("--batch-size", type=int, default=500, help="chunks per store_chunks")
    parser.add_argument(
        "--encoder",
        choices=("indexing", "plain"),
        default="indexing",
        help="embed documents as indexing does (the ONNX int8 variant where it runs) "
        "or with the plain model; queries always use the plain model",
    )
    parser.add_argument(
        "--vectors",
        type=Path,
        default=VECTOR_CACHE,
        help="folder keeping document vectors between runs (keyed by model and texts)",
    )
    args = parse_args(parser, limit_docs=200)

    collection = load_collection(args.collection, args.limit_docs)
    docnos = list(collection.docs)
    texts = [collection.docs[docno] for docno in docnos]
    qids = list(collection.queries)
    qrels = collection.qrels
    print(f"machine: {os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
    print(
        f"collection: {collection.name} ({args.collection}): {len(docnos):,} documents, "
        f"{len(qids)} judged queries, "
        f"{sum(sum(1 for g in j.values() if g > 0) for j in qrels.values()):,} relevant pairs"
    )

    with tempfile.TemporaryDirectory(prefix="doiget-quality-") as tmp:
        library = open_library(Path(tmp))
        project = library.project(PROJECT_ID)
        embedder = library.embedder(project.embed_model)
        started = time.perf_counter()
        embedder.embed(["warm up"])
        documents = (
            library.document_embedder(project, None) if args.encoder == "indexing" else embedder
        )
        documents.embed(["warm up"])
        load_s = time.perf_counter() - started
        print(f"documents embedded by {documents.model_id}, queries by {embedder.model_id}")

        started = time.perf_counter()
        doc_vectors, from_cache = cached_vectors(
            args.vectors, documents.model_id, texts, documents.embed
        )
        embed_s = time.perf_counter() - started

        items = [
            chunk_item(project, docno, text, vector, documents.model_id)
            for docno, text, vector in zip(docnos, texts, doc_vectors, strict=True)
        ]
        id_to_docno = {item["id"]: docno for item, docno in zip(items, docnos, strict=True)}
        stored = store_all(library, items, args.batch_size)
        name = project.collection
        indexed = library.index.count(name)

        # The product's ranking: the same function find_chunks and query_hybrid call,
        # asked for DEPTH results (the tools themselves stop at top_k_max).
        product: dict[str, Run] = {"find_chunks": {}, "query_hybrid": {}}
        product_times: dict[str, list[float]] = {"find_chunks": [], "query_hybrid": []}
        notices = PaperNotices(library.settings.store_root)
        for fused, tool in ((False, "find_chunks"), (True, "query_hybrid")):
            for qid in qids:
                began = time.perf_counter()
                query = PassageQuery(
                    name,
                    PROJECT_ID,
                    collection.queries[qid],
                    library.settings.embed_model_path,
                    DEPTH,
                    Filters(),
                    fused,
                )
                hits, chunks, _ = passage_search.search(library.index, notices, query)
                product_times[tool].append(time.perf_counter() - began)
                product[tool][qid] = [
                    str(chunks[hit.id].payload["doc"]["doc_id"]) for hit in hits if hit.id in chunks
                ]

        # The public tool call agrees with that ranking over its first 10.
        agree = 0
        for qid in qids:
            request = build(
                c.ChunkSearch, project=PROJECT_ID, query=collection.queries[qid], top_k=10
            )
            answer = anyio.run(functools.partial(library.search, request, hybrid=True))
            ids = [id_to_docno[item.chunk_id] for item in answer.items]
            agree += ids == product["query_hybrid"][qid][:10]

        # Raw candidate lists per side, for the library's own BM25 and the weight sweep.
        started = time.perf_counter()
        query_vectors = dict(
            zip(qids, embedder.embed([collection.queries[q] for q in qids]), strict=True)
        )
        query_embed_s = time.perf_counter() - started
        candidates: dict[str, Candidates] = {}
        distinct_terms_hits: dict[str, list[Hit]] = {}
        for qid in qids:
            query = collection.queries[qid]
            terms = analyzer.query_terms(query)
            candidates[qid] = hybrid.gather(
                library.index, name, query_vectors[qid].tolist(), terms, Filters()
            )
            distinct_terms_hits[qid] = library.index.sparse(
                name, list(dict.fromkeys(terms)), DEPTH, Filters()
            )
        anyio.run(library.aclose)

    def docs_of(hits: Sequence[Hit]) -> Ranking:
        return [id_to_docno[hit.id] for hit in hits]

    library_bm25 = {qid: docs_of(candidates[qid].sparse) for qid in qids}
    bm25, bm25_index_s, bm25_times = bm25s_run(docnos, texts, collection.queries)
    dense, dense_times = numpy_dense_run(docnos, doc_vectors, query_vectors)
    reference = rrf(bm25, dense)

    systems = {
        "find_chunks (library dense)": product["find_chunks"],
        "query_hybrid (library fused)": product["query_hybrid"],
        "library BM25 alone (index.sparse)": library_bm25,
        "(a) BM25, bm25s": bm25,
        "(b) dense, numpy exact cosine": dense,
        "(c) RRF k=60 of (a)+(b)": reference,
    }
    print(
        f"indexed: {indexed:,} chunks; public query_hybrid top 10 = ranked top 10 on "
        f"{agree}/{len(qids)} queries"
    )
    print()
    scores = print_systems(systems, qrels, qids)
    best_name = max(("(a) BM25, bm25s", "(b) dense, numpy exact cosine"), key=scores.get)
    ratio = scores["query_hybrid (library fused)"] / scores[best_name]
    print()
    print(
        f"query_hybrid nDCG@10 / best comparator ({best_name}): {ratio:.3f} "
        f"(target >= {TARGET_RATIO}: {'met' if ratio >= TARGET_RATIO else 'NOT met'})"
    )

    odd, even = folds(qids)
    print()
    print(f"2-fold split: A = odd ids ({len(odd)} queries), B = even ids ({len(even)} queries)")
    print()
    print("| system | nDCG@10 fold A | nDCG@10 fold B |")
    print("|---|---|---|")
    for label, run in systems.items():
        print(
            f"| {label} | {mean_metric(run, qrels, odd):.4f} | "
            f"{mean_metric(run, qrels, even):.4f} |"
        )
    for label, fold in (("A", odd), ("B", even)):
        best = max(mean_metric(bm25, qrels, fold), mean_metric(dense, qrels, fold))
        print(
            f"fold {label}: query_hybrid / best of (a),(b) = "
            f"{mean_metric(product['query_hybrid'], qrels, fold) / best:.3f}"
        )

    complete_dense = {
        qid: cosine_hits(query_vectors[qid].tolist(), candidates[qid].vectors) for qid in qids
    }
    steps = ranking_steps(qids, candidates, distinct_terms_hits, complete_dense, query_vectors)
    print()
    print("ranking steps, each switched on in turn (from index.dense(100) + index.sparse(100)):")
    print()
    print("| step | nDCG@10 all | fold A | fold B |")
    print("|---|---|---|---|")
    for label, hits in steps.items():
        run = {qid: docs_of(hits[qid]) for qid in qids}
        print(
            f"| {label} | {mean_metric(run, qrels, qids):.4f} | "
            f"{mean_metric(run, qrels, odd):.4f} | {mean_metric(run, qrels, even):.4f} |"
        )
    print(
        "RRF (k 60) of bm25s and dense, the reference: "
        f"{mean_metric(reference, qrels, qids):.4f} all, {mean_metric(reference, qrels, odd):.4f}"
        f" / {mean_metric(reference, qrels, even):.4f} by fold"
    )

    sweep = {
        weight: {
            qid: docs_of(fuse(complete_dense[qid], candidates[qid].bm25, dense_weight=weight))
            for qid in qids
        }
        for weight in SWEEP_WEIGHTS
    }
    print()
    print("fusion dense weight sweep (every candidate scored by both sides, no feedback):")
    print()
    print("| dense weight | nDCG@10 fold A | nDCG@10 fold B | nDCG@10 all |")
    print("|---|---|---|---|")
    for weight, run in sweep.items():
        print(
            f"| {weight:.1f} | {mean_metric(run, qrels, odd):.4f} | "
            f"{mean_metric(run, qrels, even):.4f} | {mean_metric(run, qrels, qids):.4f} |"
        )
    print()
    for tuned, held, tuned_name, held_name in ((odd, even, "A", "B"), (even, odd, "B", "A")):
        weight = max(SWEEP_WEIGHTS, key=lambda w: mean_metric(sweep[w], qrels, tuned))
        print(
            f"best weight on fold {tuned_name}: {weight:.1f} "
            f"(nDCG@10 {mean_metric(sweep[weight], qrels, tuned):.4f} there); "
            f"on fold {held_name}: {mean_metric(sweep[weight], qrels, held):.4f} "
            f"(best possible there {max(mean_metric(r, qrels, held) for r in sweep.values()):.4f})"
        )

    def per_query(samples: Sequence[float]) -> str:
        return (
            f"p50 {percentile(samples, 0.5) * 1000:.1f} ms, "
            f"p95 {percentile(samples, 0.95) * 1000:.1f} ms"
        )

    print()
    print("timings:")
    print(f"  model load + first encode: {load_s:.1f} s")
    print(
        f"  embed {len(texts):,} documents: {embed_s:.1f} s ({len(texts) / embed_s:.0f} texts/s"
        f"{', read from the vector cache' if from_cache else ''}); "
        f"{len(qids)} queries in one batch: {query_embed_s:.2f} s"
    )
    print(
        f"  index through store_chunks: {stored.seconds:.1f} s "
        f"({len(items) / stored.seconds:.0f} chunks/s; {stored.batches} batches of "
        f"<= {stored.batch_size}, slowest {stored.slowest_batch:.2f} s, "
        f"timeouts {stored.timeouts})"
    )
    print(f"  bm25s tokenise + index: {bm25_index_s:.2f} s")
    for tool in ("find_chunks", "query_hybrid"):
        print(f"  {tool} (100 results, query embedding included): {per_query(product_times[tool])}")
    print(f"  bm25s query (100, tokenising included): {per_query(bm25_times)}")
    print(f"  numpy dense query (100, embedding excluded): {per_query(dense_times)}")


if __name__ == "__main__":
    main()
