"""The Qdrant passage index, on qdrant-client's in-process local mode."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from qdrant_client import QdrantClient

from doiget.errors import DoigetError, ErrorCode
from doiget.library import analyzer
from doiget.library.index.base import (
    BM25_B,
    BM25_K1,
    ChunkRecord,
    CollectionInfo,
    Filters,
)
from doiget.library.index.qdrant import QdrantIndex, open_qdrant

NAME = "proj-a__minilm"
# The chunk length BM25's normalisation assumes in the Qdrant backend.
AVGDL = 256.0
INFO = CollectionInfo(name=NAME, project="proj-a", embed_model="test/minilm", dimension=8)

# One topic direction per document; chunks lean slightly off it so ranks are distinct.
TOPICS: dict[str, list[float]] = {
    "ocean": [1.0, 0.2, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0],
    "neural": [0.0, 1.0, 0.3, 0.0, 0.0, 0.1, 0.0, 0.0],
    "metrology": [0.0, 0.0, 1.0, 0.4, 0.0, 0.0, 0.2, 0.0],
    "soil": [0.3, 0.0, 0.0, 1.0, 0.2, 0.0, 0.0, 0.1],
    "protein": [0.0, 0.1, 0.0, 0.0, 1.0, 0.5, 0.0, 0.0],
    "galaxy": [0.0, 0.0, 0.2, 0.0, 0.0, 1.0, 0.6, 0.3],
}

DOCS: dict[str, dict[str, Any]] = {
    "ocean": {
        "tags": ["climate", "ocean"],
        "year": 2019,
        "citekey": "smith2019",
        "texts": [
            "Sea surface temperatures rose steadily across the North Atlantic basin.",
            "Zooplankton grazing controls the spring bloom of coastal phytoplankton.",
            "Ocean heat content is estimated from Argo floats and ship-based profiles.",
            "Warmer currents shift fish stocks northward along the continental shelf.",
        ],
    },
    "neural": {
        "tags": ["ml"],
        "year": 2021,
        "citekey": "lee2021",
        "texts": [
            "Convolutional networks learn hierarchical features from raw image pixels.",
            "Dropout reduces overfitting by randomly silencing units during training.",
            "Transformers replace recurrence with attention over the whole sequence.",
            "Gradient descent updates the weights in the direction of steepest descent.",
        ],
    },
    "metrology": {
        "tags": ["physics", "metrology"],
        "year": 2020,
        "citekey": "garcia2020",
        "texts": [
            "Every measurement carries an uncertainty that must be reported with it.",
            "The kilogram is now defined through the fixed value of the Planck constant.",
            "Calibration against a reference standard removes systematic bias.",
            "Repeated readings of the caliper were averaged to reduce random error.",
        ],
    },
    "soil": {
        "tags": ["climate", "agriculture"],
        "year": 2021,
        "citekey": "okafor2021",
        "texts": [
            "Soil organic carbon declines under intensive tillage and monoculture.",
            "Cover crops protect the topsoil from erosion during winter rains.",
            "Drought stress lowers wheat yields on sandy soils with poor retention.",
            "Nitrogen fertiliser raises yields but leaches into nearby groundwater.",
        ],
    },
    "protein": {
        "tags": ["biology"],
        # Stored as a string, unlike the other years.
        "year": "2018",
        "citekey": "chen2018",
        "texts": [
            "Proteins fold into their native structure within milliseconds.",
            "Chaperones prevent misfolded chains from forming toxic aggregates.",
            "Enzyme kinetics follow the Michaelis-Menten equation at low substrate levels.",
            "Cryo-electron microscopy resolves large complexes at near-atomic detail.",
        ],
    },
    "galaxy": {
        "tags": ["astronomy", "physics"],
        "year": 2022,
        "citekey": "novak2022",
        "texts": [
            "Spiral galaxies rotate faster at their edges than visible matter predicts.",
            "Dark matter halos are inferred from the rotation curves of galaxies.",
            "Redshift surveys map the large-scale structure of the universe.",
            "Supernova light curves serve as standard candles for cosmic distances.",
        ],
    },
}
SECTIONS = ["introduction", "methods", "results", "discussion"]


def chunk_id(doc: str, index: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"doiget-test/{doc}/{index}"))


def vector_for(doc: str, index: int) -> list[float]:
    base = list(TOPICS[doc])
    base[(index * 3 + 1) % 8] += 0.15 * (index + 1)
    base[(index + 5) % 8] -= 0.05 * index
    return base


def make_chunk(doc: str, index: int, text: str | None = None) -> ChunkRecord:
    meta = DOCS[doc]
    return ChunkRecord(
        id=chunk_id(doc, index),
        text=text if text is not None else meta["texts"][index],
        vector=vector_for(doc, index),
        payload={
            "project": "proj-a",
            "doc": {"doc_id": f"doc-{doc}", "section": SECTIONS[index], "chunk": index},
            "source": {"doi": f"10.1000/{doc}", "year": meta["year"], "title": doc.title()},
            "zotero": {"citekey": meta["citekey"], "tags": list(meta["tags"])},
        },
    )


ALL_CHUNKS = [make_chunk(doc, i) for doc in DOCS for i in range(len(DOCS[doc]["texts"]))]
BY_ID = {chunk.id: chunk for chunk in ALL_CHUNKS}


def cosine_ranking(query: list[float], chunks: list[ChunkRecord]) -> list[tuple[str, float]]:
    q = np.asarray(query, dtype=np.float64)
    scored = []
    for chunk in chunks:
        v = np.asarray(chunk.vector, dtype=np.float64)
        scored.append((chunk.id, float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))))
    return sorted(scored, key=lambda item: -item[1])


def bm25(query: str, chunk: ChunkRecord, corpus: list[ChunkRecord]) -> float:
    """BM25 as the index promises it: Qdrant's IDF over the corpus, avgdl fixed."""
    counts = analyzer.term_counts(chunk.text)
    length = sum(counts.values())
    score = 0.0
    for term in analyzer.query_terms(query):
        tf = counts.get(term, 0)
        if not tf:
            continue
        having = sum(1 for other in corpus if term in analyzer.term_counts(other.text))
        idf = math.log(1.0 + (len(corpus) - having + 0.5) / (having + 0.5))
        score += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / AVGDL))
    return score


@pytest.fixture
def index() -> Iterator[QdrantIndex]:
    idx = QdrantIndex(QdrantClient(location=":memory:"))
    yield idx
    idx.close()


@pytest.fixture
def loaded(index: QdrantIndex) -> QdrantIndex:
    index.create_collection(INFO)
    assert index.upsert(NAME, ALL_CHUNKS) == len(ALL_CHUNKS)
    return index


# Collections


def test_collection_info_round_trips_and_create_replaces(index: QdrantIndex) -> None:
    assert index.collection(NAME) is None
    index.create_collection(INFO)
    assert index.collection(NAME) == INFO
    index.upsert(NAME, ALL_CHUNKS[:3])
    assert index.count(NAME) == 3

    other = CollectionInfo(name=NAME, project="proj-a", embed_model="other/model", dimension=4)
    index.create_collection(other)
    assert index.collection(NAME) == other
    assert index.count(NAME) == 0


def test_open_qdrant_local_mode_and_unconfigured() -> None:
    idx = open_qdrant(location=":memory:")
    try:
        idx.create_collection(INFO)
        assert idx.collection(NAME) == INFO
    finally:
        idx.close()
    with pytest.raises(DoigetError) as caught:
        open_qdrant()
    assert caught.value.code is ErrorCode.INDEX_UNAVAILABLE
    assert "QDRANT_URL" in caught.value.message


def test_open_qdrant_on_disk_keeps_collections(tmp_path: Any) -> None:
    path = str(tmp_path / "qdrant")
    idx = open_qdrant(location=path)
    idx.create_collection(INFO)
    idx.upsert(NAME, ALL_CHUNKS[:5])
    idx.close()
    again = open_qdrant(location=path)
    try:
        assert again.collection(NAME) == INFO
        assert again.count(NAME) == 5
    finally:
        again.close()


def test_drop_collection_removes_everything(loaded: QdrantIndex) -> None:
    loaded.drop_collection(NAME)
    assert loaded.collection(NAME) is None
    assert loaded.count(NAME) == 0
    assert loaded.dense(NAME, TOPICS["ocean"], 5, Filters()) == []
    assert loaded.sparse(NAME, ["ocean"], 5, Filters()) == []
    assert loaded.sample(NAME, 5) == []
    assert loaded.fetch(NAME, [ALL_CHUNKS[0].id]) == {}
    loaded.drop_collection(NAME)  # absent: no error


def test_collections_are_isolated(loaded: QdrantIndex) -> None:
    other = CollectionInfo(name="proj-b__minilm", project="proj-b", embed_model="m", dimension=8)
    loaded.create_collection(other)
    galaxy = [c for c in ALL_CHUNKS if c.payload["doc"]["doc_id"] == "doc-galaxy"]
    loaded.upsert(other.name, galaxy)

    assert loaded.collection(NAME) == INFO
    assert loaded.collection(other.name) == other
    assert loaded.count(other.name) == 4
    assert loaded.count(NAME) == len(ALL_CHUNKS)
    assert {h.id for h in loaded.dense(other.name, TOPICS["ocean"], 10, Filters())} == {
        c.id for c in galaxy
    }
    assert loaded.sparse(other.name, analyzer.query_terms("zooplankton"), 5, Filters()) == []

    # Replacing a document in one collection leaves the other alone.
    loaded.upsert(other.name, [], replace_docs=["doc-galaxy"])
    assert loaded.count(other.name) == 0
    assert loaded.count(NAME) == len(ALL_CHUNKS)
    loaded.drop_collection(other.name)
    assert loaded.collection(NAME) == INFO


# Dense


def test_dense_order_and_scores_match_brute_force_cosine(loaded: QdrantIndex) -> None:
    query = [0.5, 0.1, 0.7, 0.3, 0.0, 0.2, 0.1, 0.0]
    expected = cosine_ranking(query, ALL_CHUNKS)
    hits = loaded.dense(NAME, query, len(ALL_CHUNKS), Filters())
    assert [h.id for h in hits] == [chunk_id for chunk_id, _ in expected]
    for hit, (_, score) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, abs=1e-5)

    top = loaded.dense(NAME, query, 5, Filters())
    assert [h.id for h in top] == [chunk_id for chunk_id, _ in expected[:5]]


def test_dense_filters(loaded: QdrantIndex) -> None:
    query = TOPICS["soil"]

    def expect(predicate: Any) -> list[str]:
        chunks = [c for c in ALL_CHUNKS if predicate(c)]
        return [chunk_id for chunk_id, _ in cosine_ranking(query, chunks)]

    tags = Filters({"tags": ("ocean", "biology")})
    assert [h.id for h in loaded.dense(NAME, query, 50, tags)] == expect(
        lambda c: set(c.payload["zotero"]["tags"]) & {"ocean", "biology"}
    )
    # The year is an int in most payloads and a string in one; filters are strings.
    year = Filters({"year": ("2021", "2018")})
    assert [h.id for h in loaded.dense(NAME, query, 50, year)] == expect(
        lambda c: str(c.payload["source"]["year"]) in {"2021", "2018"}
    )
    doc = Filters({"doc_id": ("doc-neural",)})
    assert [h.id for h in loaded.dense(NAME, query, 50, doc)] == expect(
        lambda c: c.payload["doc"]["doc_id"] == "doc-neural"
    )
    # Keys combine with AND.
    both = Filters({"tags": ("climate",), "year": ("2021",), "section": ("methods", "results")})
    got = [h.id for h in loaded.dense(NAME, query, 50, both)]
    assert got == expect(
        lambda c: (
            c.payload["doc"]["doc_id"] == "doc-soil"
            and c.payload["doc"]["section"] in {"methods", "results"}
        )
    )
    assert len(got) == 2
    assert loaded.dense(NAME, query, 50, Filters({"citekey": ("nobody1999",)})) == []
    assert loaded.dense(NAME, query, 50, Filters({"tags": ()})) == []


# Sparse


def test_sparse_term_unique_to_one_chunk_ranks_it_first(loaded: QdrantIndex) -> None:
    terms = analyzer.query_terms("zooplankton grazing")
    hits = loaded.sparse(NAME, terms, 10, Filters())
    assert [h.id for h in hits] == [chunk_id("ocean", 1)]
    assert hits[0].score > 0

    terms = analyzer.query_terms("dark matter rotation curves of galaxies")
    hits = loaded.sparse(NAME, terms, 10, Filters())
    assert hits[0].id == chunk_id("galaxy", 1)
    assert chunk_id("galaxy", 0) in {h.id for h in hits}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_sparse_scores_are_bm25(loaded: QdrantIndex) -> None:
    query = "soil yields drought carbon"
    hits = loaded.sparse(NAME, analyzer.query_terms(query), 50, Filters())
    expected = {c.id: bm25(query, c, ALL_CHUNKS) for c in ALL_CHUNKS}
    matching = {chunk_id: score for chunk_id, score in expected.items() if score > 0}
    assert {h.id for h in hits} == set(matching)
    for hit in hits:
        assert hit.score == pytest.approx(matching[hit.id], rel=1e-4)
    assert hits[0].id == max(matching, key=lambda k: matching[k])


def test_sparse_stemming_meets_across_word_forms(loaded: QdrantIndex) -> None:
    hits = loaded.sparse(NAME, analyzer.query_terms("measuring"), 10, Filters())
    assert [h.id for h in hits] == [chunk_id("metrology", 0)]
    assert "measurement" in BY_ID[hits[0].id].text


def test_sparse_empty_and_unknown_terms(loaded: QdrantIndex) -> None:
    assert loaded.sparse(NAME, [], 10, Filters()) == []
    assert loaded.sparse(NAME, analyzer.query_terms("the of and"), 10, Filters()) == []
    assert loaded.sparse(NAME, ["xylophonist"], 10, Filters()) == []


def test_sparse_filters(loaded: QdrantIndex) -> None:
    terms = analyzer.query_terms("yields structure rotation fold")
    unfiltered = {h.id for h in loaded.sparse(NAME, terms, 50, Filters())}
    assert {BY_ID[i].payload["doc"]["doc_id"] for i in unfiltered} == {
        "doc-soil",
        "doc-galaxy",
        "doc-protein",
    }

    tagged = loaded.sparse(NAME, terms, 50, Filters({"tags": ("astronomy", "biology")}))
    assert tagged
    assert {BY_ID[h.id].payload["doc"]["doc_id"] for h in tagged} == {"doc-galaxy", "doc-protein"}

    year = loaded.sparse(NAME, terms, 50, Filters({"year": ("2021",)}))
    assert year
    assert {BY_ID[h.id].payload["doc"]["doc_id"] for h in year} == {"doc-soil"}
    string_year = loaded.sparse(NAME, terms, 50, Filters({"year": ("2018",)}))
    assert {BY_ID[h.id].payload["doc"]["doc_id"] for h in string_year} == {"doc-protein"}

    doc = loaded.sparse(NAME, terms, 50, Filters({"doc_id": ("doc-galaxy",)}))
    assert doc
    assert {BY_ID[h.id].payload["doc"]["doc_id"] for h in doc} == {"doc-galaxy"}
    assert loaded.sparse(NAME, terms, 50, Filters({"doi": ("10.1000/neural",)})) == []


# Writes


def test_upsert_replace_docs_leaves_no_old_chunks(loaded: QdrantIndex) -> None:
    new = [
        ChunkRecord(
            id=chunk_id("ocean-v2", i),
            text=text,
            vector=vector_for("ocean", i),
            payload={**make_chunk("ocean", i).payload, "version": 2},
        )
        for i, text in enumerate(
            [
                "Marine heatwaves have doubled in frequency since the early eighties.",
                "Kelp forests collapse when heatwaves persist for several weeks.",
            ]
        )
    ]
    assert loaded.upsert(NAME, new, replace_docs=["doc-ocean"]) == 2

    assert loaded.count(NAME) == len(ALL_CHUNKS) - 4 + 2
    old_ids = [chunk_id("ocean", i) for i in range(4)]
    assert loaded.fetch(NAME, old_ids) == {}
    ocean = loaded.dense(NAME, TOPICS["ocean"], 50, Filters({"doc_id": ("doc-ocean",)}))
    assert {h.id for h in ocean} == {c.id for c in new}
    assert loaded.sparse(NAME, analyzer.query_terms("zooplankton"), 10, Filters()) == []
    heat = loaded.sparse(NAME, analyzer.query_terms("heatwaves"), 10, Filters())
    assert {h.id for h in heat} == {c.id for c in new}
    # Other documents are untouched.
    assert loaded.count(NAME) - 2 == len([c for c in ALL_CHUNKS if c.id not in old_ids])
    assert set(loaded.fetch(NAME, [chunk_id("soil", 0)])) == {chunk_id("soil", 0)}


def test_upsert_same_id_overwrites_without_duplicates(loaded: QdrantIndex) -> None:
    changed = make_chunk("metrology", 2, "Calibration drift was corrected every morning.")
    assert loaded.upsert(NAME, [changed]) == 1
    assert loaded.count(NAME) == len(ALL_CHUNKS)
    assert loaded.fetch(NAME, [changed.id])[changed.id].text == changed.text
    assert loaded.sparse(NAME, analyzer.query_terms("systematic bias"), 10, Filters()) == []
    drift = loaded.sparse(NAME, analyzer.query_terms("drift"), 10, Filters())
    assert [h.id for h in drift] == [changed.id]
    dense = loaded.dense(NAME, TOPICS["metrology"], 50, Filters())
    assert len(dense) == len({h.id for h in dense}) == len(ALL_CHUNKS)


def test_upsert_refuses_zero_vectors_and_missing_collections(index: QdrantIndex) -> None:
    chunk = make_chunk("ocean", 0)
    with pytest.raises(DoigetError) as missing:
        index.upsert(NAME, [chunk])
    assert missing.value.code is ErrorCode.INDEX_UNAVAILABLE
    assert NAME in missing.value.message

    index.create_collection(INFO)
    zero = ChunkRecord(id=chunk.id, text=chunk.text, vector=[0.0] * 8, payload=chunk.payload)
    with pytest.raises(DoigetError) as refused:
        index.upsert(NAME, [zero])
    assert refused.value.code is ErrorCode.EMBEDDING_MISMATCH
    assert index.count(NAME) == 0


# Reads


def test_fetch_returns_original_payloads(loaded: QdrantIndex) -> None:
    wanted = [chunk_id("protein", 1), chunk_id("ocean", 2), str(uuid.uuid4())]
    got = loaded.fetch(NAME, wanted)
    assert set(got) == set(wanted[:2])
    for chunk_id_ in wanted[:2]:
        stored, original = got[chunk_id_], BY_ID[chunk_id_]
        assert stored.id == original.id
        assert stored.text == original.text
        assert stored.payload == original.payload
    # The year keeps its stored type.
    assert got[chunk_id("ocean", 2)].payload["source"]["year"] == 2019
    assert got[chunk_id("protein", 1)].payload["source"]["year"] == "2018"
    assert loaded.fetch(NAME, []) == {}


def test_payload_keys_clashing_with_private_fields_survive(index: QdrantIndex) -> None:
    index.create_collection(INFO)
    base = make_chunk("galaxy", 0)
    odd = ChunkRecord(
        id="not-a-uuid:galaxy/0",
        text=base.text,
        vector=base.vector,
        payload={**base.payload, "text": "caller's own field", "_keys": [1, 2]},
    )
    index.upsert(NAME, [odd])
    stored = index.fetch(NAME, [odd.id])[odd.id]
    assert stored.id == odd.id
    assert stored.text == base.text
    assert stored.payload == odd.payload
    assert [h.id for h in index.dense(NAME, base.vector, 1, Filters())] == [odd.id]
    assert index.payload_keys(NAME) == ["_keys", "doc", "project", "source", "text", "zotero"]


def test_sample_count_and_payload_keys(loaded: QdrantIndex) -> None:
    assert loaded.count(NAME) == len(ALL_CHUNKS)
    first = loaded.sample(NAME, 7)
    assert len(first) == 7
    assert [c.id for c in first] == [c.id for c in loaded.sample(NAME, 7)]
    everything = loaded.sample(NAME, 1000)
    assert sorted(c.id for c in everything) == sorted(BY_ID)
    assert [c.id for c in everything[:7]] == [c.id for c in first]
    for chunk in everything:
        assert chunk.text == BY_ID[chunk.id].text
        assert chunk.payload == BY_ID[chunk.id].payload
    assert loaded.payload_keys(NAME) == ["doc", "project", "source", "zotero"]
    assert loaded.payload_keys("absent") == []
    assert loaded.count("absent") == 0


def test_indexes_name_filter_paths_and_text(loaded: QdrantIndex) -> None:
    described = loaded.indexes(NAME)
    assert set(described["keyword"]) == {
        "project",
        "zotero.tags",
        "zotero.citekey",
        "source.doi",
        "source.year",
        "doc.section",
        "doc.doc_id",
    }
    assert described["fulltext"] == ["text"]


def test_unreachable_server_is_index_unavailable_without_the_key() -> None:
    secret = "s3cr3t-api-key-value"
    idx = open_qdrant("https://127.0.0.1:1", api_key=secret)
    try:
        with pytest.raises(DoigetError) as caught:
            idx.collection(NAME)
        assert caught.value.code is ErrorCode.INDEX_UNAVAILABLE
        assert "QDRANT_URL" in caught.value.message
        assert secret not in caught.value.message
        assert secret not in repr(caught.value)
        with pytest.raises(DoigetError) as dense:
            idx.dense(NAME, TOPICS["ocean"], 3, Filters())
        assert dense.value.code is ErrorCode.INDEX_UNAVAILABLE
    finally:
        idx.close()
