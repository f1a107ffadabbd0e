"""Dense pseudo-relevance feedback: the query moves towards its best passages."""

from __future__ import annotations

import itertools
import math

from doiget.library.feedback import FEEDBACK_DOCS, cosine_hits, moved_query
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
    before = [hit.id for hit in cosine_hits(query, vectors)]
    assert before.index("literal") < before.index("like-top")
    moved = moved_query(query, [Hit("top", 0.9)], vectors)
    assert moved is not None
    assert math.isclose(float(sum(v * v for v in moved)), 1.0, rel_tol=1e-5)
    refined = cosine_hits(moved.tolist(), vectors)
    order = [hit.id for hit in refined]
    assert set(order) == set(vectors)  # every candidate has a dense score
    assert order.index("like-top") < order.index("literal")
    assert all(a.score >= b.score for a, b in itertools.pairwise(refined))


def test_only_the_first_passages_are_feedback() -> None:
    query = unit(1.0, 0.0)
    vectors = {"a": unit(1.0, 0.1), "b": unit(0.9, 0.2), "c": unit(0.8, 0.3), "d": unit(0.0, 1.0)}
    ranked = [Hit(chunk, 1.0) for chunk in ("a", "b", "c", "d")]
    assert FEEDBACK_DOCS == 3
    moved = moved_query(query, ranked, vectors)
    assert moved is not None
    assert cosine_hits(moved.tolist(), vectors)[-1].id == "d"  # "d" did not pull the query


def test_no_feedback_without_a_vector_for_the_top_passages() -> None:
    vectors = {f"c{n}": unit(1.0, n / 10) for n in range(20)}
    assert moved_query(unit(1.0, 0.0), [Hit("gone", 1.0)], vectors) is None
    assert moved_query(unit(1.0, 0.0), [], vectors) is None
    assert moved_query(unit(1.0, 0.0), [Hit("c0", 1.0)], {}) is None
    assert cosine_hits(unit(1.0, 0.0), {}) == []
    # A query opposite to its only feedback passage cancels out: no direction left.
    assert moved_query([-0.5, 0.0], [Hit("c0", 1.0)], {"c0": [1.0, 0.0]}) is None
