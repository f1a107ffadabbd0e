"""Hybrid ranking: dense and BM25 candidates fused into one score in [0, 1].

Each side's scores are scaled into [0, 1] against a fixed floor and the best score
of that query — cosine from 0 (MiniLM puts unrelated text near 0, never far below),
BM25 from 0 — and the fused score is their weighted sum. Unlike reciprocal-rank
fusion this keeps how far apart the candidates are, so a passage that both sides
rate highly beats one that a single side ranks first by a hair. A candidate that
one side did not score gets 0 from it (query_hybrid has both sides score every
candidate first: :mod:`doiget.library.hybrid`).

The dense weight 0.6: on the six judged collections of the retrieval benchmark
(docs/benchmarks.md) the best weight lies between 0.5 and 0.7, and 0.6 is within 0.009
nDCG@10 of it on each; benchmarks/retrieval_quality.py prints the sweep on two folds of
the queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from doiget.library.index.base import Hit

DENSE_WEIGHT: Final = 0.6


def _scaled(hits: Sequence[Hit]) -> dict[str, float]:
    best = max((hit.score for hit in hits), default=0.0)
    if best <= 0.0:
        return {}
    return {hit.id: max(hit.score, 0.0) / best for hit in hits}


def fuse(
    dense: Sequence[Hit], sparse: Sequence[Hit], dense_weight: float = DENSE_WEIGHT
) -> list[Hit]:
    """Dense and sparse hits fused (see the module docstring), best first."""
    dense_scores = _scaled(dense)
    sparse_scores = _scaled(sparse)
    ids = dict.fromkeys([*(hit.id for hit in dense), *(hit.id for hit in sparse)])
    fused = [
        Hit(
            chunk,
            dense_weight * dense_scores.get(chunk, 0.0)
            + (1.0 - dense_weight) * sparse_scores.get(chunk, 0.0),
        )
        for chunk in ids
    ]
    fused.sort(key=lambda hit: (-hit.score, hit.id))
    return fused


def unit_interval(score: float) -> float:
    """A returned score: a fused score, or find_chunks' cosine similarity, clamped into [0, 1]."""
    return min(1.0, max(0.0, score))
