"""Local search ranks as it always did: bm25 over title, authors, venue, abstract, year.

Ranking moved inside FTS5 (the best rows are ranked first and only they are read
from ``entries``); these tests pin the order on fixed corpora, both as literal
expectations and against the statement that joined every matching row first.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from doiget.models import Author, Work
from doiget.papers.index import PaperIndex, match_expression
from doiget.papers.store import Store
from doiget.refs import Ref

# The statement search ran before, kept here as the reference order.
JOINED_FIRST = (
    "SELECT entries.key FROM entries_fts JOIN entries ON entries.id = entries_fts.rowid "
    "WHERE entries_fts MATCH ? ORDER BY bm25(entries_fts, 10.0, 5.0, 3.0, 1.0, 2.0) LIMIT ?"
)
WORDS = (
    "quantum",
    "neural",
    "protein",
    "graph",
    "lattice",
    "gauge",
    "enzyme",
    "soil",
    "carbon",
    "spin",
    "knot",
    "photonic",
    "topology",
    "cortex",
    "polymer",
)
FAMILIES = ("Smith", "Müller", "Nakamura", "Okafor", "Chen")


def add(store: Store, number: int, work: Work) -> None:
    ref = Ref("doi", f"10.5555/rank.{number}")
    store.write_metadata(ref, replace(work, doi=ref.value), doiget_fields={"source": "crossref"})


def key(number: int) -> str:
    return Store(Path()).key(Ref("doi", f"10.5555/rank.{number}"))


def indexed(tmp_path: Path, works: list[Work]) -> PaperIndex:
    store = Store(tmp_path / "papers")
    for number, work in enumerate(works):
        add(store, number, work)
    index = PaperIndex(store)
    index.rebuild()
    return index


def work(title: str, abstract: str = "", *, family: str = "Doe", year: int = 2020) -> Work:
    return Work(
        source="crossref",
        title=title,
        authors=(Author(family=family, given="A."),),
        year=year,
        venue="Journal of Tests",
        abstract=abstract or None,
        type="article-journal",
    )


@pytest.fixture
def hand_made(tmp_path: Path) -> Iterator[PaperIndex]:
    index = indexed(
        tmp_path,
        [
            work("Lattice gauge theory", "We study lattice models."),  # 0
            work("Protein folding", "A lattice model of proteins with lattice lattice terms."),
            work("Gauge fields on a lattice", "Lattice."),  # 2
            work("Unrelated title", "Nothing here but soil."),  # 3
            work("Soil carbon", "Soil soil soil carbon.", family="Lattice"),  # 4
            work("Identical twin", "Same words twice."),  # 5
            work("Identical twin", "Same words twice."),  # 6
            work("Identical twin", "Same words twice."),  # 7
        ],
    )
    yield index
    index.close()


def keys(index: PaperIndex, query: str, limit: int = 20) -> list[str]:
    return [hit["key"] for hit in index.search(query, limit)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Title hits (weight 10) before author (5) before abstract-only (1) hits; within
        # one column, more occurrences in a shorter entry first.
        ("lattice", [2, 0, 4, 1]),
        ("latt", [2, 0, 4, 1]),  # the last word as a prefix ranks the same
        ("gauge lattice", [2, 0]),
        ("soil", [4, 3]),
        ("twin", [5, 6, 7]),  # equal scores: the entry indexed first comes first
        ("identical twin", [5, 6, 7]),
        ("absent", []),
    ],
)
def test_search_order_on_a_fixed_corpus(
    hand_made: PaperIndex, query: str, expected: list[int]
) -> None:
    assert keys(hand_made, query) == [key(number) for number in expected]


def test_a_smaller_limit_takes_the_head_of_the_ranking(hand_made: PaperIndex) -> None:
    full = keys(hand_made, "lattice", 100)
    for limit in range(1, len(full) + 1):
        assert keys(hand_made, "lattice", limit) == full[:limit]


def test_rows_carry_every_field_of_the_entry(hand_made: PaperIndex) -> None:
    [hit] = hand_made.search("gauge fields", 5)
    assert hit == {
        "ref": "10.5555/rank.2",
        "key": key(2),
        "title": "Gauge fields on a lattice",
        "authors": ["Doe, A."],
        "year": 2020,
        "venue": "Journal of Tests",
        "doi": "10.5555/rank.2",
        "arxiv_id": None,
        "fetched_at": hit["fetched_at"],
        "has_pdf": False,
        "path": None,
    }
    assert hit["fetched_at"]


def random_corpus(count: int, seed: int) -> list[Work]:
    """Short entries over a small vocabulary: many matches, many equal scores."""
    rng = random.Random(seed)
    return [
        work(
            " ".join(rng.choices(WORDS, k=rng.randint(1, 4))),
            " ".join(rng.choices(WORDS, k=rng.randint(0, 12))),
            family=rng.choice(FAMILIES),
            year=rng.choice((2019, 2020, 2021)),
        )
        for _ in range(count)
    ]


def test_search_ranks_as_the_joined_statement_did(tmp_path: Path) -> None:
    index = indexed(tmp_path, random_corpus(240, 5))
    reference = sqlite3.connect(index.path)
    rng = random.Random(9)
    queries = [*WORDS, "muller", "Müller", "2020", "qu", "p", "journal"]
    queries += [" ".join(rng.sample(WORDS, 2)) for _ in range(20)]
    queries += [f"{rng.choice(WORDS)} {rng.choice(FAMILIES)}" for _ in range(10)]
    try:
        for query in queries:
            for limit in (1, 7, 20, 100):
                expected = [
                    row[0]
                    for row in reference.execute(JOINED_FIRST, (match_expression(query), limit))
                ]
                assert keys(index, query, limit) == expected, (query, limit)
    finally:
        reference.close()
        index.close()
