"""Ranking variants measured for query_hybrid and not kept (or kept), on one collection.

benchmarks/retrieval_quality.py measures the library itself, step by step. This
script asks "what if" of the parts around it, on a NumPy copy of the sparse side
(BM25 as FTS5 computes it: k1 1.2, b 0.75, IDF log((N - n + 0.5) / (n + 0.5)) floored
at 1e-6, over the library's analysed terms; its first row is checked against the
index's own BM25 by retrieval_quality's "library BM25 alone") and the same MiniLM
vectors retrieval_quality keeps in its vector cache:

    query terms      each once / raw repeats / Okapi k3 3 / k3 8 (the library's)
    abbreviations    the analyser with and without dropping "e.g.", "i.e.", "cf."
    k1               1.2 (FTS5's) against 1.5 and 2.0
    title field      title terms counted twice or three times (BEIR titles only)
    sparse feedback  RM3 from the BM25 top (documents, terms, lambda)
    normalisation    best-score scaling (the library's), min-max, z-scores, a per-query
                     weight from how far each side's best stands above its first ten,
                     all over every candidate scored by both sides, then dense feedback

    python benchmarks/ranking_variants.py --collection DIR   # BEIR or TREC folder

nDCG@10 for all queries and the two folds (odd / even ids), beside bm25s and RRF.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse
from retrieval_quality import (
    DEFAULT_COLLECTION,
    DEPTH,
    VECTOR_CACHE,
    Collection,
    bm25s_run,
    cached_vectors,
    folds,
    load_collection,
    ndcg,
    rrf,
)
from smoke import parse_args

from doiget.library import analyzer
from doiget.library.embedding import embedder_for
from doiget.library.feedback import FEEDBACK_DOCS, FEEDBACK_WEIGHT
from doiget.library.fusion import DENSE_WEIGHT
from doiget.library.projects import DEFAULT_EMBED_MODEL

Weights = dict[str, float]
Ranked = list[int]  # document positions, best first
Analyser = Callable[[str], list[str]]


class NumpyBM25:
    """BM25 over a document-term matrix, scored as FTS5's bm25() scores (see above);
    ``title_weight`` multiplies the term counts of a separate title field, as FTS5's
    column weights do (the length is the two fields' sum)."""

    def __init__(
        self,
        bodies: Sequence[str],
        analyse: Analyser,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        titles: Sequence[str] = (),
        title_weight: float = 1.0,
    ) -> None:
        self.vocabulary: dict[str, int] = {}
        body_entries = self._entries(bodies, analyse)
        title_entries = self._entries(titles, analyse)
        counts = self._matrix(body_entries, len(bodies))
        held = counts
        if titles:
            title_counts = self._matrix(title_entries, len(titles))
            held = counts + title_counts
            counts = counts + title_weight * title_counts
        lengths = np.asarray(held.sum(axis=1)).ravel()
        documents = counts.shape[0]
        frequency = np.diff((held > 0).astype(np.float32).tocsc().indptr).astype(np.float64)
        idf = np.log((documents - frequency + 0.5) / (frequency + 0.5))
        self.idf = np.where(idf <= 0, 1e-6, idf)
        norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9))
        entries = counts.tocoo()
        saturated = entries.data * (k1 + 1) / (entries.data + norm[entries.row])
        self.tf = scipy.sparse.csc_matrix(
            (saturated, (entries.row, entries.col)), shape=counts.shape
        )
        self.counts = counts.tocsr()

    def _entries(
        self, texts: Sequence[str], analyse: Analyser
    ) -> tuple[list[int], list[int], list[float]]:
        rows, cols, values = [], [], []
        for row, text in enumerate(texts):
            for term, count in Counter(analyse(text)).items():
                rows.append(row)
                cols.append(self.vocabulary.setdefault(term, len(self.vocabulary)))
                values.append(float(count))
        return rows, cols, values

    def _matrix(
        self, entries: tuple[list[int], list[int], list[float]], documents: int
    ) -> scipy.sparse.csr_matrix:
        rows, cols, values = entries
        return scipy.sparse.csr_matrix(
            (np.asarray(values), (rows, cols)), shape=(documents, max(len(self.vocabulary), 1))
        )

    def scores(self, weights: Mapping[str, float]) -> np.ndarray:
        total = np.zeros(self.tf.shape[0])
        for term, weight in weights.items():
            column = self.vocabulary.get(term)
            if column is not None and column < self.tf.shape[1]:
                start, end = self.tf.indptr[column], self.tf.indptr[column + 1]
                total[self.tf.indices[start:end]] += (
                    weight * self.idf[column] * self.tf.data[start:end]
                )
        return total

    def rm3(self, weights: Weights, documents: int, terms: int, keep: float) -> Weights:
        """RM3: the query mixed with the terms of its first ``documents``, each document
        weighed by its score, ``keep`` of the weight left on the query."""
        scores = self.scores(weights)
        top = top_k(scores, documents)
        names = {column: term for term, column in self.vocabulary.items()}
        model: Counter[int] = Counter()
        total = sum(scores[d] for d in top) or 1.0
        for document in top:
            row = self.counts.getrow(document)
            length = row.data.sum() or 1.0
            for column, count in zip(row.indices, row.data, strict=True):
                model[int(column)] += count / length * scores[document] / total
        best = model.most_common(terms)
        norm = sum(value for _, value in best) or 1.0
        query_norm = sum(weights.values()) or 1.0
        mixed: Counter[str] = Counter({t: keep * w / query_norm for t, w in weights.items()})
        for column, value in best:
            mixed[names[column]] += (1 - keep) * value / norm
        return dict(mixed)


def top_k(scores: np.ndarray, k: int = DEPTH, *, matched_only: bool = True) -> Ranked:
    """The best ``k`` positions, best first; with ``matched_only``, those scoring above 0."""
    k = min(k, len(scores))
    found = np.argpartition(-scores, k - 1)[:k]
    found = found[np.argsort(-scores[found], kind="stable")]
    return [int(p) for p in found if not matched_only or scores[p] > 0]


def repeats(saturation: float | None) -> Callable[[str], Weights]:
    """Query weights: raw counts (None), or the library's saturation with k3
    ``saturation`` (0 lists each term once)."""

    def weigh(query: str) -> Weights:
        counts = Counter(analyzer.terms(query))
        if saturation is None:
            return {term: float(count) for term, count in counts.items()}
        return {
            term: float(analyzer.query_term_weight(count, saturation))
            for term, count in counts.items()
        }

    return weigh


@contextlib.contextmanager
def abbreviations_kept() -> Iterator[None]:
    """The analyser without its step that drops "e.g.", "i.e.", "cf." and "viz."."""
    saved = analyzer._LATIN_ABBREVIATIONS
    analyzer._LATIN_ABBREVIATIONS = re.compile(r"(?!)")
    try:
        yield
    finally:
        analyzer._LATIN_ABBREVIATIONS = saved


def scaled_by_best(scores: np.ndarray) -> np.ndarray:
    best = scores.max(initial=0.0)
    return np.clip(scores, 0.0, None) / best if best > 0 else np.zeros_like(scores)


def min_max(scores: np.ndarray) -> np.ndarray:
    width = scores.max() - scores.min()
    return (scores - scores.min()) / width if width > 0 else np.zeros_like(scores)


def z_scores(scores: np.ndarray) -> np.ndarray:
    spread = scores.std()
    return (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)


def separation(scores: np.ndarray) -> float:
    """How far the best score stands above the mean of the first ten, as a share."""
    ordered = np.sort(scores)[::-1]
    return float((ordered[0] - ordered[:10].mean()) / ordered[0]) if ordered[0] > 0 else 0.0


def hybrid(
    query: np.ndarray,
    doc_vectors: np.ndarray,
    sparse_scores: np.ndarray,
    normalise: Callable[[np.ndarray], np.ndarray],
    adaptive: bool = False,
) -> Ranked:
    """The library's ranking with another normalisation (or a per-query weight): both
    sides' top 100, every candidate scored by both, fused, dense feedback, fused."""
    dense_all = doc_vectors @ query
    candidates = np.asarray(
        list(dict.fromkeys([*top_k(dense_all, matched_only=False), *top_k(sparse_scores)])),
        dtype=np.int64,
    )
    sparse = sparse_scores[candidates]

    def fused(dense: np.ndarray) -> np.ndarray:
        weight = DENSE_WEIGHT
        if adaptive:
            a, b = separation(dense), separation(sparse)
            weight = 0.5 * DENSE_WEIGHT + 0.5 * a / (a + b) if a + b > 0 else DENSE_WEIGHT
        return weight * normalise(dense) + (1 - weight) * normalise(sparse)

    first = fused(doc_vectors[candidates] @ query)
    top = candidates[np.argsort(-first, kind="stable")[:FEEDBACK_DOCS]]
    moved = query + FEEDBACK_WEIGHT * doc_vectors[top].mean(axis=0)
    moved /= np.linalg.norm(moved)
    final = fused(doc_vectors[candidates] @ moved)
    return [int(candidates[i]) for i in np.argsort(-final, kind="stable")[:DEPTH]]


def titles_and_bodies(folder: Path, docnos: Sequence[str]) -> tuple[list[str], list[str]]:
    """A BEIR corpus's titles and texts apart (empty lists for a TREC folder)."""
    corpus = folder / "corpus.jsonl"
    if not corpus.is_file():
        return [], []
    with corpus.open(encoding="utf-8") as handle:
        rows = {str(row["_id"]): row for row in map(json.loads, filter(str.strip, handle))}
    return (
        [rows[d].get("title") or "" for d in docnos],
        [rows[d].get("text") or "" for d in docnos],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", type=Path, default=DEFAULT_COLLECTION)
    parser.add_argument("--vectors", type=Path, default=VECTOR_CACHE)
    parser.add_argument("--limit-docs", type=int, default=None, help="the first N only")
    args = parse_args(parser, limit_docs=200)
    collection: Collection = load_collection(args.collection, args.limit_docs)
    docnos = list(collection.docs)
    texts = [collection.docs[d] for d in docnos]
    qids = list(collection.queries)
    queries = [collection.queries[q] for q in qids]
    embedder = embedder_for(DEFAULT_EMBED_MODEL)
    doc_vectors, _ = cached_vectors(args.vectors, DEFAULT_EMBED_MODEL, texts, embedder.embed)
    query_vectors = np.asarray(embedder.embed(queries), dtype=np.float32)
    odd, even = folds(qids)

    def report(label: str, ranked: Sequence[Ranked]) -> None:
        per_query = {
            q: ndcg([docnos[d] for d in r], collection.qrels[q])
            for q, r in zip(qids, ranked, strict=True)
        }
        score = {
            name: statistics.fmean(per_query[q] for q in part)
            for name, part in (("all", qids), ("A", odd), ("B", even))
        }
        print(f"| {label} | {score['all']:.4f} | {score['A']:.4f} | {score['B']:.4f} |")

    print(f"collection: {collection.name}: {len(docnos):,} documents, {len(qids)} queries")
    print()
    print("| variant | nDCG@10 all | fold A | fold B |")
    print("|---|---|---|---|")
    position = {docno: i for i, docno in enumerate(docnos)}
    reference, _, _ = bm25s_run(docnos, texts, collection.queries)
    report("bm25s (reference)", [[position[d] for d in reference[q]] for q in qids])
    dense_runs = [top_k(doc_vectors @ v, matched_only=False) for v in query_vectors]
    report(
        "RRF (k 60) of bm25s and dense (reference)",
        [
            [position[d] for d in rrf({"q": reference[q]}, {"q": [docnos[i] for i in dense]})["q"]]
            for q, dense in zip(qids, dense_runs, strict=True)
        ],
    )

    index = NumpyBM25(texts, analyzer.terms)
    for label, saturation in (
        ("each once", 0.0),
        ("raw repeats", None),
        ("k3 3", 3.0),
        ("k3 8, the library's", 8.0),
    ):
        weigh = repeats(saturation)
        report(f"BM25, query terms {label}", [top_k(index.scores(weigh(q))) for q in queries])
    with abbreviations_kept():
        kept = NumpyBM25(texts, analyzer.terms)
        report(
            "BM25, k3 8, abbreviations kept", [top_k(kept.scores(repeats(8.0)(q))) for q in queries]
        )
    for k1 in (1.5, 2.0):
        other = NumpyBM25(texts, analyzer.terms, k1=k1)
        report(f"BM25, k3 8, k1 {k1}", [top_k(other.scores(repeats(8.0)(q))) for q in queries])
    titles, bodies = titles_and_bodies(args.collection, docnos)
    if any(titles):
        for weight in (2.0, 3.0):
            fielded = NumpyBM25(bodies, analyzer.terms, titles=titles, title_weight=weight)
            report(
                f"BM25, k3 8, title terms x{weight:g}",
                [top_k(fielded.scores(repeats(8.0)(q))) for q in queries],
            )
    for documents, terms, keep in ((10, 10, 0.5), (10, 20, 0.7), (5, 10, 0.7), (10, 10, 0.8)):
        report(
            f"BM25 + RM3 ({documents} docs, {terms} terms, query {keep})",
            [
                top_k(index.scores(index.rm3(repeats(8.0)(q), documents, terms, keep)))
                for q in queries
            ],
        )
    sparse = [index.scores(repeats(8.0)(q)) for q in queries]
    for label, normalise, adaptive in (
        ("hybrid, best-score scaling (the library's)", scaled_by_best, False),
        ("hybrid, min-max", min_max, False),
        ("hybrid, z-scores", z_scores, False),
        ("hybrid, per-query weight from separation", scaled_by_best, True),
    ):
        report(
            label,
            [
                hybrid(v, doc_vectors, s, normalise, adaptive)
                for v, s in zip(query_vectors, sparse, strict=True)
            ],
        )


if __name__ == "__main__":
    main()
