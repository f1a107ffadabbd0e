"""Dense pseudo-relevance feedback: the query moves towards its best passages."""

from __future__ import annotations

import itertools
import math

from doiget.library.feedback import FEEDBACK_DOCS, refined_dense
from doiget.library.index.base import Hit


def unit(*values: float) -> list[float]:
    length = math.sqrt(sum(v * v for v in values))
    return [v / length for v in values]


def test_candidates_near_the_top_passages_rise() -> None:
    query = unit(1.0, 0.0)
    vectors = {
        "top": unit(0.6, 0.8),  # the fused ranking's best passage
        "like-top": unit(0.5, 0.866),  # shares the top passage's direction
        "literal": unit(0.55, -0.835),  # a little closer to the query alone
        "sparse-only": unit(0.3, 0.95),  # the dense side never returned it
    }
    ranked = [Hit("top", 0.9)]  # the only passage ranked so far
    before = sorted(
        vectors, key=lambda c: -sum(a * b for a, b in zip(query, vectors[c], strict=True))
    )
    assert before.index("literal") < before.index("like-top")
    refined = refined_dense(query, ranked, vectors, limit=10)
    assert refined is not None
    order = [hit.id for hit in refined]
    assert set(order) == set(vectors)  # every candidate has a dense score now
    assert order.index("like-top") < order.index("literal")
    assert all(a.score >= b.score for a, b in itertools.pairwise(refined))


def test_only_the_first_passages_are_feedback() -> None:
    query = unit(1.0, 0.0)
    vectors = {"a": unit(1.0, 0.1), "b": unit(0.9, 0.2), "c": unit(0.8, 0.3), "d": unit(0.0, 1.0)}
    ranked = [Hit(chunk, 1.0) for chunk in ("a", "b", "c", "d")]
    assert FEEDBACK_DOCS == 3
    refined = refined_dense(query, ranked, vectors, limit=10)
    assert refined is not None and refined[-1].id == "d"  # "d" did not pull the query


def test_limit_and_no_feedback_cases() -> None:
    vectors = {f"c{n}": unit(1.0, n / 10) for n in range(20)}
    ranked = [Hit("c0", 1.0)]
    refined = refined_dense(unit(1.0, 0.0), ranked, vectors, limit=5)
    assert refined is not None and len(refined) == 5
    assert refined_dense(unit(1.0, 0.0), [Hit("gone", 1.0)], vectors, limit=5) is None
    assert refined_dense(unit(1.0, 0.0), [], vectors, limit=5) is None
    assert refined_dense(unit(1.0, 0.0), ranked, {}, limit=5) is None
