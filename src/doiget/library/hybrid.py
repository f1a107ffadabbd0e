"""query_hybrid's ranking over one index: both sides' candidates, fused, refined.

The dense and the BM25 side each give their best ``CANDIDATES``; they are fused
(:mod:`doiget.library.fusion`), the dense side is refined by pseudo-relevance
feedback from the fused top (:mod:`doiget.library.feedback`) and fused again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from doiget.library.feedback import refined_dense
from doiget.library.fusion import fuse
from doiget.library.index.base import Filters, Hit, PassageIndex

CANDIDATES: Final = 100  # per side, before fusion


def hybrid_ranking(
    index: PassageIndex,
    name: str,
    vector: Sequence[float],
    terms: Sequence[str],
    filters: Filters,
    *,
    feedback: bool = True,
) -> list[Hit]:
    """The fused candidates of collection ``name``, best first (``feedback=False``
    stops after the first fusion, for measuring what the feedback step adds)."""
    dense = index.dense(name, vector, CANDIDATES, filters)
    sparse = index.sparse(name, terms, CANDIDATES, filters)
    fused = fuse(dense, sparse)
    if not feedback:
        return fused
    candidates = dict.fromkeys(hit.id for hit in (*dense, *sparse))
    refined = refined_dense(vector, fused, index.vectors(name, list(candidates)), CANDIDATES)
    return fuse(refined, sparse) if refined is not None else fused
