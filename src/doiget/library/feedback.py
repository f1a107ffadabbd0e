"""Pseudo-relevance feedback on the dense side of a hybrid query.

The query vector is moved towards the centroid of the passages the first fused
ranking put on top (Rocchio's method on embeddings: ``q + w * mean(top k)``,
renormalised), and every candidate is scored again against it. A short or
ambiguous query thereby borrows the vocabulary its best matches share. It costs one
small matrix product over vectors already read: no second search.

``FEEDBACK_DOCS`` 3 and ``FEEDBACK_WEIGHT`` 0.5 sit where the gain was flat on both
halves of the Vaswani/NPL and SciFact queries (k 3-5, weight 0.3-1.0);
benchmarks/retrieval_quality.py reports the ranking with and without this step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from doiget.library.index.base import Hit

if TYPE_CHECKING:
    from doiget.library.index.base import Vector

FEEDBACK_DOCS: Final = 3
FEEDBACK_WEIGHT: Final = 0.5


def moved_query(
    query: Sequence[float] | Vector, ranked: Sequence[Hit], vectors: Mapping[str, Vector]
) -> Vector | None:
    """``query`` moved towards the first ``FEEDBACK_DOCS`` of ``ranked`` and
    renormalised; None when none of them has a vector."""
    import numpy as np

    top = [vectors[hit.id] for hit in ranked[:FEEDBACK_DOCS] if hit.id in vectors]
    if not top:
        return None
    moved = np.asarray(query, dtype=np.float32) + FEEDBACK_WEIGHT * np.mean(np.stack(top), axis=0)
    length = float(np.linalg.norm(moved))
    return moved / length if length > 0.0 else None


def cosine_hits(query: Sequence[float] | Vector, vectors: Mapping[str, Vector]) -> list[Hit]:
    """Every chunk of ``vectors`` (unit length) scored by cosine against ``query``,
    best first."""
    import numpy as np

    if not vectors:
        return []
    ids = list(vectors)
    scores = np.stack([vectors[chunk] for chunk in ids]) @ np.asarray(query, dtype=np.float32)
    order = np.argsort(-scores, kind="stable")
    return [Hit(ids[int(index)], float(scores[index])) for index in order]
