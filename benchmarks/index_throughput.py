"""Indexing throughput: passages embedded per second by sentence-transformers (the
plain model, as indexing used it before) and by the document encoder indexing uses now
(the ONNX int8 variant), in the same run on the same passages, with how close their
vectors are and what a query costs.

Passages are made as ingestion makes them: the bundled Vaswani/NPL abstracts, grouped
into documents of 40 (one section each), or with ``--pdfs`` the PDFs of a folder read
and sectioned as indexing reads them; cut by the library's chunker into chunks of the
default 200 model tokens and 32 overlap, each embedded under its document's title and
section, :data:`~doiget.library.ingest.PASSAGE_BATCH` at a time, as ``prepare`` does.
A first round of each encoder is not counted (what a first call sets up); then the two
take turns for several rounds (the machine is shared: the ratio of each round is
printed, and the median of each).

    python benchmarks/index_throughput.py                 # 600 passages, 3 rounds
    python benchmarks/index_throughput.py --passages 200 --rounds 2
    python benchmarks/index_throughput.py --pdfs tests/fixtures/pdf   # their 143 passages

The nDCG@10 of either encoder on Vaswani/NPL and SciFact is measured by
``benchmarks/retrieval_quality.py`` (``--encoder plain`` for the plain model).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from retrieval_quality import DEFAULT_COLLECTION, load_collection
from smoke import parse_args

from doiget.documents.sentences import Sentence, split_sentences
from doiget.library.bert import BertEncoder
from doiget.library.chunking import Chunk, chunk_sentences
from doiget.library.embedding import Embedder, document_embedder, embedder_for
from doiget.library.ingest import (
    PASSAGE_BATCH,
    embedding_text,
    read_pdf,
    sectioned,
    sentences,
    without_debris,
)
from doiget.library.projects import DEFAULT_EMBED_MODEL

DOC_ABSTRACTS = 40
CHUNK_TOKENS = 200
CHUNK_OVERLAP = 32
QUERIES = (
    "thermometry in living cells",
    "electron scattering from helium atoms at low energy",
    "measurement of the magnetic moment of the neutron",
    "microwave propagation in the ionosphere",
    "noise in transistor amplifiers",
)
FIRST_QUERY = """
import time
started = time.perf_counter()
from doiget.library.embedding import embedder_for
from doiget.library.projects import DEFAULT_EMBED_MODEL
embedder_for(DEFAULT_EMBED_MODEL).embed(["thermometry in living cells"])
print(time.perf_counter() - started)
"""


def documents(count: int, counter: Embedder) -> list[list[str]]:
    """The texts the model reads, per document, until ``count`` passages."""
    collection = load_collection(DEFAULT_COLLECTION, None)
    abstracts = list(collection.docs.values())
    out: list[list[str]] = []
    total = 0
    for number, start in enumerate(range(0, len(abstracts), DOC_ABSTRACTS)):
        sentences = [
            Sentence(abstract[a:b], ("Results",), 1, 1, index == 0)
            for abstract in abstracts[start : start + DOC_ABSTRACTS]
            for index, (a, b) in enumerate(split_sentences(abstract))
        ]
        chunks: list[Chunk] = chunk_sentences(
            sentences, CHUNK_TOKENS, CHUNK_OVERLAP, counter.count_tokens
        )
        title = f"Collected physics abstracts, part {number + 1}"
        texts = [embedding_text(chunk, title) for chunk in chunks][: count - total]
        out.append(texts)
        total += len(texts)
        if total >= count:
            break
    return out


def pdf_documents(folder: Path, counter: Embedder) -> list[list[str]]:
    """The texts the model reads, per PDF of ``folder``, as indexing makes them."""
    out = []
    for path in sorted(folder.glob("*.pdf")):
        text = read_pdf(path)
        chunks = chunk_sentences(
            sentences(without_debris(sectioned(text.lines))),
            CHUNK_TOKENS,
            CHUNK_OVERLAP,
            counter.count_tokens,
        )
        out.append([embedding_text(chunk, path.stem) for chunk in chunks])
    return out


def rate(embedder: Embedder, docs: Sequence[Sequence[str]]) -> tuple[float, np.ndarray]:
    """Passages per second over ``docs`` (:data:`PASSAGE_BATCH` a call), and the vectors."""
    started = time.perf_counter()
    vectors = [
        embedder.embed(list(texts[start : start + PASSAGE_BATCH]))
        for texts in docs
        for start in range(0, len(texts), PASSAGE_BATCH)
    ]
    seconds = time.perf_counter() - started
    return sum(len(texts) for texts in docs) / seconds, np.vstack(vectors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pdfs", type=Path, help="embed the passages of these PDFs instead")
    args = parse_args(parser, passages=16, rounds=1)

    print(f"machine: {os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
    plain = embedder_for(DEFAULT_EMBED_MODEL)
    docs = pdf_documents(args.pdfs, plain) if args.pdfs else documents(args.passages, plain)
    passages = [text for texts in docs for text in texts]
    tokens = [plain.count_tokens(text) for text in passages]
    print(
        f"{len(passages)} passages in {len(docs)} documents, "
        f"{statistics.fmean(tokens):.0f} model tokens each on average"
    )
    with tempfile.TemporaryDirectory(prefix="doiget-encoders-") as cache:
        started = time.perf_counter()
        fast = document_embedder(DEFAULT_EMBED_MODEL, None, Path(cache))
        export_s = time.perf_counter() - started
        started = time.perf_counter()
        plain.warm(queries=False)
        load_s = time.perf_counter() - started
        print(
            f"first use: {fast.model_id} exported and loaded in {export_s:.1f} s; "
            f"sentence-transformers loaded in {load_s:.1f} s"
        )
        rates: dict[str, list[float]] = {plain.model_id: [], fast.model_id: []}
        vectors: dict[str, np.ndarray] = {}
        for embedder in (plain, fast):  # not counted
            rate(embedder, docs)
        for _ in range(args.rounds):
            for embedder in (plain, fast):
                per_second, vectors[embedder.model_id] = rate(embedder, docs)
                rates[embedder.model_id].append(per_second)
            print(
                f"  round: {rates[plain.model_id][-1]:.1f} -> {rates[fast.model_id][-1]:.1f} "
                f"passages/s (x{rates[fast.model_id][-1] / rates[plain.model_id][-1]:.2f}), "
                f"load average {os.getloadavg()[0]:.2f}"
            )
    cosines = (vectors[plain.model_id] * vectors[fast.model_id]).sum(axis=1)
    before = statistics.median(rates[plain.model_id])
    after = statistics.median(rates[fast.model_id])
    print()
    print("| document encoder | passages/s (median) | ratio | cosine to plain, min / mean |")
    print("|---|---|---|---|")
    print(f"| sentence-transformers, plain model (before) | {before:.1f} | 1.00 | 1 / 1 |")
    print(
        f"| {fast.model_id} (indexing now) | {after:.1f} | {after / before:.2f} | "
        f"{cosines.min():.4f} / {cosines.mean():.4f} |"
    )

    # Queries are embedded by the plain model's NumPy encoder, before and after alike.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    firsts = [
        float(
            subprocess.run(
                [sys.executable, "-c", FIRST_QUERY], env=env, capture_output=True, text=True
            ).stdout.split()[-1]
        )
        for _ in range(3)
    ]
    query_encoder = BertEncoder(plain.folder)  # what embeds a query in a serving process
    times = []
    for _ in range(10):
        for query in QUERIES:
            started = time.perf_counter()
            query_encoder.encode([query])
            times.append(time.perf_counter() - started)
    print()
    print(
        f"query encoding (plain model, unchanged): first query of a fresh process "
        f"{statistics.median(firsts) * 1000:.0f} ms (median of 3, imports included); "
        f"p50 {statistics.median(times) * 1000:.1f} ms over {len(times)} queries"
    )


if __name__ == "__main__":
    main()
