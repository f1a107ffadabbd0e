"""query_hybrid's ranking over one index: both sides' candidates, fused, refined.

1. Candidates: the dense and the BM25 side each give their best ``CANDIDATES``.
2. Every candidate is scored by both sides: its cosine from its stored vector, its
   BM25 from the index (one query restricted to the candidates). A passage that
   only one side returned is then fused on what the other side really thinks of
   it, instead of on a zero.
3. The two sides are fused (:mod:`doiget.library.fusion`).
4. The dense side is refined by pseudo-relevance feedback from the fused top
   (:mod:`doiget.library.feedback`) and the two sides are fused again.

benchmarks/retrieval_quality.py reports what each step adds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from doiget.library.feedback import cosine_hits, moved_query
from doiget.library.fusion import fuse
from doiget.library.index.base import Filters, Hit, PassageIndex

if TYPE_CHECKING:
    from doiget.library.index.base import Vector

CANDIDATES: Final = 100  # per side, before fusion


@dataclass(frozen=True, slots=True)
class Candidates:
    """What one query's ranking works from."""

    dense: list[Hit]  # the dense side's best, by cosine
    sparse: list[Hit]  # the BM25 side's best
    bm25: list[Hit]  # BM25 of every candidate of either side that holds a query term
    vectors: dict[str, Vector]  # the stored vector of every candidate


def gather(
    index: PassageIndex,
    name: str,
    vector: Sequence[float],
    terms: Sequence[str],
    filters: Filters,
) -> Candidates:
    """Both sides' best ``CANDIDATES`` of collection ``name``, and both sides' scores
    of every one of them."""
    dense = index.dense(name, vector, CANDIDATES, filters)
    sparse = index.sparse(name, terms, CANDIDATES, filters)
    found = {hit.id for hit in sparse}
    dense_only = [hit.id for hit in dense if hit.id not in found]
    bm25 = [*sparse, *index.sparse_scores(name, terms, dense_only)]
    candidates = list(dict.fromkeys(hit.id for hit in (*dense, *sparse)))
    return Candidates(dense, sparse, bm25, index.vectors(name, candidates))


def rank(candidates: Candidates, vector: Sequence[float], *, feedback: bool = True) -> list[Hit]:
    """The candidates fused on both sides' scores, best first (``feedback=False``
    stops before the feedback step, for measuring what it adds)."""
    vectors = candidates.vectors
    dense = cosine_hits(vector, vectors) if vectors else candidates.dense
    fused = fuse(dense, candidates.bm25)
    moved = moved_query(vector, fused, vectors) if feedback else None
    if moved is None:
        return fused
    return fuse(cosine_hits(moved, vectors), candidates.bm25)


def hybrid_ranking(
    index: PassageIndex,
    name: str,
    vector: Sequence[float],
    terms: Sequence[str],
    filters: Filters,
) -> list[Hit]:
    """query_hybrid's ranking of collection ``name``, best first."""
    return rank(gather(index, name, vector, terms, filters), vector)
