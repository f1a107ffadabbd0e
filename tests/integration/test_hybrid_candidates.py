"""What hybrid ranking reads from an index: weighted query terms, BM25 and vectors of
its candidates, on both backends."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from doiget.library import analyzer, hybrid
from doiget.library.index.base import ChunkRecord, CollectionInfo, Filters, PassageIndex
from doiget.library.index.qdrant import open_qdrant
from doiget.library.index.sqlite import SqliteIndex

NAME = "proj-weights"
INFO = CollectionInfo(name=NAME, project="lab/weights", embed_model="test/model", dimension=4)

TEXTS = {
    "titles": "Descriptive titles written by authors.",
    "retrieval": "Automatic retrieval from a catalogue by approximate matching.",
    "articles": "Retrieval of the articles against catalogue entries.",
    "indexing": "Indexing vocabularies for a library catalogue and subject headings.",
    "weather": "Rainfall over the plateau was measured by the field stations each month.",
}
# Passages on other subjects, so that the terms above are rare enough to weigh.
FILLER = [
    "Soil organic carbon declines under intensive tillage and monoculture.",
    "Convolutional networks learn hierarchical features from raw image pixels.",
    "The kilogram is defined through the fixed value of the Planck constant.",
    "Zooplankton grazing controls the spring bloom of coastal phytoplankton.",
    "Enzyme kinetics follow the Michaelis-Menten equation at low substrate levels.",
    "Rotation curves of spiral galaxies stay flat far beyond the visible disc.",
    "Cover crops protect the topsoil from erosion during winter rains.",
    "Dropout reduces overfitting by randomly silencing units during training.",
]
# The dense side's view: "weather" is nearest to the query vector below, though it
# holds no query term; "indexing" next.
VECTORS = {
    "weather": [1.0, 0.1, 0.0, 0.0],
    "indexing": [1.0, 0.12, 0.0, 0.0],
    "articles": [0.2, 1.0, 0.0, 0.0],
    "retrieval": [0.0, 0.3, 1.0, 0.0],
    "titles": [0.0, 0.0, 0.3, 1.0],
}
QUERY_VECTOR = [1.0, 0.0, 0.0, 0.0]


def _unit(vector: list[float]) -> list[float]:
    length = math.sqrt(sum(v * v for v in vector))
    return [v / length for v in vector]


@pytest.fixture(params=["sqlite", "qdrant"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PassageIndex]:
    backend: PassageIndex = (
        SqliteIndex(tmp_path / "passages.sqlite3")
        if request.param == "sqlite"
        else open_qdrant(location=":memory:")
    )
    backend.create_collection(INFO)
    backend.upsert(
        NAME,
        [
            ChunkRecord(
                id=chunk,
                text=text,
                vector=_unit(VECTORS[chunk]),
                payload={"project": INFO.project, "doc": {"doc_id": chunk}},
            )
            for chunk, text in TEXTS.items()
        ]
        + [
            ChunkRecord(
                id=f"filler-{n}",
                text=text,
                vector=_unit([0.0, 0.0, -1.0, float(n)]),
                payload={"project": INFO.project, "doc": {"doc_id": f"filler-{n}"}},
            )
            for n, text in enumerate(FILLER)
        ],
    )
    yield backend
    backend.close()


def _scores(index: PassageIndex, terms: list[str]) -> dict[str, float]:
    return {hit.id: hit.score for hit in index.sparse(NAME, terms, 10, Filters())}


def test_a_term_listed_twice_weighs_twice(index: PassageIndex) -> None:
    once, twice = _scores(index, ["titl"]), _scores(index, ["titl", "titl"])
    assert set(once) == set(twice) == {"titles"}
    for chunk, score in once.items():
        assert twice[chunk] == pytest.approx(2 * score, rel=1e-6)


def test_the_term_a_question_repeats_decides_the_ranking(index: PassageIndex) -> None:
    question = "Titles of articles? Retrieval by titles: which titles, whose titles?"
    # Each term once, the passage holding two of its words wins ...
    distinct = list(dict.fromkeys(analyzer.terms(question)))
    assert next(iter(_scores(index, distinct))) == "articles"
    # ... weighed as the question weighs them, the one about its subject does.
    assert next(iter(_scores(index, analyzer.query_terms(question)))) == "titles"


def test_candidate_scores_equal_the_search_scores(index: PassageIndex) -> None:
    terms = analyzer.query_terms("retrieval of articles from the catalogue")
    searched = _scores(index, terms)
    scored = {hit.id: hit.score for hit in index.sparse_scores(NAME, terms, [*TEXTS, "gone"])}
    # Every chunk holding a term has its score; "gone" is no chunk.
    assert set(scored) == set(searched) == {"retrieval", "articles", "indexing"}
    for chunk, score in scored.items():
        assert score == pytest.approx(searched[chunk], rel=1e-6)
    assert index.sparse_scores(NAME, terms, []) == []
    assert index.sparse_scores(NAME, [], list(TEXTS)) == []
    assert index.sparse_scores(NAME, terms, ["weather", "titles"]) == []


def test_every_candidate_is_scored_by_both_sides(
    index: PassageIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two candidates per side: the dense side's "indexing" is not among BM25's best
    # two, yet it holds "catalogue", so its BM25 counts in the fusion.
    monkeypatch.setattr(hybrid, "CANDIDATES", 2)
    terms = analyzer.query_terms("retrieval of articles from the catalogue")
    found = hybrid.gather(index, NAME, _unit(QUERY_VECTOR), terms, Filters())
    assert [hit.id for hit in found.dense] == ["weather", "indexing"]
    assert "indexing" not in {hit.id for hit in found.sparse}
    bm25 = {hit.id: hit.score for hit in found.bm25}
    assert bm25["indexing"] == pytest.approx(_scores(index, terms)["indexing"], rel=1e-6)
    assert "weather" not in bm25  # no query term: nothing to add
    assert set(found.vectors) == {hit.id for hit in (*found.dense, *found.sparse)}
    ranked = hybrid.rank(found, _unit(QUERY_VECTOR), feedback=False)
    # Scored on both sides, "indexing" (near the query, holds a term) beats "weather"
    # (nearest, holds none), which a dense-only zero on the BM25 side would not show.
    order = [hit.id for hit in ranked]
    assert order.index("indexing") < order.index("weather")
    assert all(0.0 <= hit.score <= 1.0 for hit in ranked)
    full = hybrid.hybrid_ranking(index, NAME, _unit(QUERY_VECTOR), terms, Filters())
    assert {hit.id for hit in full} == {hit.id for hit in ranked}


def test_candidate_vectors_come_back_as_stored(index: PassageIndex) -> None:
    found = index.vectors(NAME, ["weather", "titles", "gone"])
    assert set(found) == {"weather", "titles"}
    for chunk, vector in found.items():
        assert list(vector) == pytest.approx(_unit(VECTORS[chunk]), abs=1e-6)


def test_terms_at_the_idf_floor_are_not_matched_beside_others(tmp_path: Path) -> None:
    index = SqliteIndex(tmp_path / "passages.sqlite3")
    index.create_collection(INFO)
    texts = {f"common-{n}": f"Every sample was weighed {n} times." for n in range(6)}
    texts |= {
        "rare-1": "The sample glowed under ultraviolet light.",
        "rare-2": "Ultraviolet lamps faded the labels.",
        "other-1": "Rainfall over the plateau was measured monthly.",
        "other-2": "Convolutional networks learn features from pixels.",
    }
    index.upsert(
        NAME,
        [
            ChunkRecord(chunk, text, _unit([1.0, float(n), 0.0, 0.0]), {})
            for n, (chunk, text) in enumerate(texts.items())
        ],
    )
    try:
        # "sampl" is held by 7 of 10 chunks: bm25() weighs it at its floor, so only the
        # chunks holding "ultraviolet" are matched, ranked as they were with it.
        both = _scores(index, ["sampl", "ultraviolet"])
        assert list(both) == ["rare-1", "rare-2"]
        assert both == pytest.approx(_scores(index, ["ultraviolet"]))
        assert {
            hit.id for hit in index.sparse_scores(NAME, ["sampl", "ultraviolet"], list(texts))
        } == {
            "rare-1",
            "rare-2",
        }
        # Alone, such a term is still matched: term frequency is all BM25 has.
        alone = _scores(index, ["sampl"])
        assert set(alone) == {*(f"common-{n}" for n in range(6)), "rare-1"}
        # A term no chunk holds does not make the common one disappear.
        assert set(_scores(index, ["sampl", "xylophon"])) == set(alone)
        # Dropped and made again, the collection is read afresh.
        index.drop_collection(NAME)
        index.create_collection(INFO)
        index.upsert(
            NAME, [ChunkRecord("only", "One sample only.", _unit([1.0, 0.0, 0.0, 0.0]), {})]
        )
        assert list(_scores(index, ["sampl", "ultraviolet"])) == ["only"]
    finally:
        index.close()
