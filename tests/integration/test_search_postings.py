"""Search ranked from postings held in memory gives FTS5's own bm25() ranking.

Every comparison here is against FTS5 itself on the same real SQLite file: the same
rows in the same order, and (on a bare table) the very same score bits. Writes through
the index, writes by another connection and warming from a connection of its own
must all leave the ranking exactly as FTS5 gives it.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import sqlite3
import subprocess
import sys
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

from doiget import postingfile
from doiget.fts5rank import Phrase, PostingCache, _row_sizes, _varints, frequent_terms
from doiget.library.index.base import ChunkRecord, CollectionInfo, Filters, Hit
from doiget.library.index.sqlite import SqliteIndex, _tables, floored_out
from doiget.models import Author, Work
from doiget.papers.index import _SEARCH, PaperIndex, match_expression
from doiget.papers.store import Entry, Store
from doiget.postingfile import Mapped, read_header, table_stamp
from doiget.refs import Ref

# A skewed vocabulary: the first words are in most entries, the last in a few.
COMMON = ("quantum", "neural", "graph", "protein", "model")
RARE = ("gauge", "enzyme", "knot", "photonic", "cortex", "polymer", "soil", "naïve", "x_ray")
FAMILIES = ("Smith", "Müller", "Nakamura", "Okafor", "Chen", "Quantum")


def entry_work(rng: random.Random) -> Work:
    def words(count: int) -> str:
        return " ".join(
            rng.choice(COMMON) if rng.random() < 0.7 else rng.choice(RARE) for _ in range(count)
        )

    return Work(
        source="crossref",
        title=words(rng.randint(1, 5)),
        authors=(Author(family=rng.choice(FAMILIES), given="A."),),
        year=rng.choice((2019, 2020, 2021)),
        venue=rng.choice(("Journal of Tests", "Quantum Letters")),
        abstract=words(rng.randint(0, 30)) or None,
        type="article-journal",
    )


def write(store: Store, number: int, work: Work) -> Ref:
    ref = Ref("doi", f"10.5555/post.{number}")
    store.write_metadata(ref, replace(work, doi=ref.value), doiget_fields={"source": "crossref"})
    return ref


@pytest.fixture
def library(tmp_path: Path) -> Iterator[PaperIndex]:
    store = Store(tmp_path / "papers")
    rng = random.Random(11)
    for number in range(300):
        write(store, number, entry_work(rng))
    for number in range(300, 304):  # equal scores: the older row first
        write(store, number, replace(entry_work(random.Random(3)), title="twin quantum"))
    index = PaperIndex(store)
    index.rebuild()
    yield index
    index.close()


def queries(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    vocabulary = COMMON + RARE + FAMILIES + ("2020", "journal", "qu", "ne", "MULLER", "twin")
    made = [
        " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 3))) for _ in range(count)
    ]
    return [*made, "quantum quantum", "naive", "NAÏVE", "x_ray", "x_r", "müller quantum"]


def by_fts5(index: PaperIndex, query: str, limit: int) -> list[str]:
    """The keys FTS5's own ranking gives (the statement search falls back to)."""
    with contextlib.closing(sqlite3.connect(index.path)) as reference:
        reference.row_factory = sqlite3.Row
        rows = reference.execute(_SEARCH, (match_expression(query), limit))
        return [row["key"] for row in rows]


def by_index(index: PaperIndex, query: str, limit: int) -> list[str]:
    return [hit["key"] for hit in index.search(query, limit)]


def cache_of(index: PaperIndex) -> PostingCache:
    cache = index._cache
    assert cache is not None
    return cache


def test_search_from_postings_ranks_as_fts5(library: PaperIndex) -> None:
    for query in queries(5, 60):
        for limit in (1, 3, 20, 400):
            assert by_index(library, query, limit) == by_fts5(library, query, limit), query
    assert cache_of(library).phrases_held > 10  # the postings did the ranking


def test_writes_through_the_index_keep_the_postings_and_the_ranking(
    library: PaperIndex,
) -> None:
    asked = queries(6, 30)
    for query in asked:
        library.search(query, 20)
    held = cache_of(library).phrases_held
    rng = random.Random(8)
    store = library.store
    for number in range(500, 520):  # new entries, one at a time as fetches add them
        entry = store.entry(write(store, number, entry_work(rng)))
        assert entry is not None
        library.upsert(entry)
    for number in (3, 40, 301):  # entries rewritten and removed
        entry = store.entry(write(store, number, entry_work(rng)))
        assert entry is not None
        library.upsert(entry)
        library.remove(store.key(Ref("doi", f"10.5555/post.{number + 1}")))
        for query in asked[:8]:
            assert by_index(library, query, 20) == by_fts5(library, query, 20), query
    assert cache_of(library).phrases_held >= held  # kept and brought up to date, not dropped
    for query in asked:
        for limit in (5, 400):
            assert by_index(library, query, limit) == by_fts5(library, query, limit), query


def test_a_write_by_another_connection_is_seen(library: PaperIndex) -> None:
    assert by_index(library, "quantum", 5) == by_fts5(library, "quantum", 5)
    other = PaperIndex(library.store)
    try:
        new = replace(entry_work(random.Random(1)), title="quantum " * 9, abstract=None)
        entry = library.store.entry(write(library.store, 900, new))
        assert entry is not None
        other.upsert(entry)
    finally:
        other.close()
    assert entry.key in by_index(library, "quantum", 1000)
    for limit in (1, 5, 1000):
        assert by_index(library, "quantum", limit) == by_fts5(library, "quantum", limit)


def bare_table(path: Path, rows: list[str], spread: int = 1) -> sqlite3.Connection:
    """An FTS5 table of ``rows``, the nth at rowid n * ``spread``."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61')")
    conn.executemany(
        "INSERT INTO t(rowid, body) VALUES (?, ?)",
        [(number * spread, row) for number, row in enumerate(rows, start=1)],
    )
    conn.commit()
    return conn


def texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(
            rng.choice(COMMON) if rng.random() < 0.6 else rng.choice(RARE)
            for _ in range(rng.randint(1, 40))
        )
        for _ in range(count)
    ]


@pytest.mark.parametrize("spread", [1, 100_003])  # rowids dense, and far apart
def test_any_word_queries_give_bm25_scores_to_the_bit(tmp_path: Path, spread: int) -> None:
    conn = bare_table(tmp_path / "bare.sqlite3", texts(500, 2), spread)
    cache = PostingCache("t", ("body",), tokenize="unicode61")
    rng = random.Random(4)
    for _ in range(40):
        words = rng.sample((*COMMON, "gauge", "knot", "soil", "absent"), rng.randint(1, 4))
        match = " OR ".join(f'"{word}"' for word in words)
        expected = conn.execute(
            "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT 25",
            (match,),
        ).fetchall()
        found = cache.top(conn, [Phrase(word) for word in words], 25, every=False)
        assert found == [(int(rowid), float(score)) for rowid, score in expected], words
        every = conn.execute(
            "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT 25",
            (" ".join(f'"{word}"' for word in words),),
        ).fetchall()
        found = cache.top(conn, [Phrase(word) for word in words], 25, every=True)
        assert found == [(int(rowid), float(score)) for rowid, score in every], words
        for count in (3, 300):  # a few rows asked about, and most of them
            among = sorted(rng.sample(range(1, 501), count))
            asked = np.array([number * spread for number in among], dtype=np.int64)
            for every_word, joiner in ((False, " OR "), (True, " ")):
                expected = _bm25_among(conn, joiner.join(f'"{w}"' for w in words), asked)
                found = cache.top(
                    conn, [Phrase(word) for word in words], 500, every=every_word, among=asked
                )
                assert found == [(int(rowid), float(score)) for rowid, score in expected]
    conn.close()


# Words sharing beginnings, so that a prefix covers one, several, or more than a
# prefix is summed from (see fts5rank._PREFIX_WORDS_MAX), and none.
STEMS = ("graph", "graphs", "graphene", "graphite", "grape", "gr", "polymer", "polymers")
STEMS += tuple(f"grid{n}" for n in range(20))


@pytest.mark.parametrize("columns", [1, 3])
def test_prefixes_give_bm25_scores_to_the_bit(tmp_path: Path, columns: int) -> None:
    """A prefix covering a few words is ranked from their postings summed: the scores
    are FTS5's own to the bit, a word repeated in a row and across columns included."""
    rng = random.Random(9)
    names = [f"c{n}" for n in range(columns)]
    conn = sqlite3.connect(tmp_path / "stems.sqlite3")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5({', '.join(names)}, tokenize='unicode61')")
    conn.executemany(
        f"INSERT INTO t({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
        [
            [" ".join(rng.choice(STEMS + RARE) for _ in range(rng.randint(0, 12))) for _ in names]
            for _ in range(400)
        ],
    )
    conn.commit()
    weights = (4.0, 1.0, 2.0)[:columns]
    cache = PostingCache("t", names, weights=weights, tokenize="unicode61")
    ranked = f"bm25(t, {', '.join(map(str, weights))})"
    for words in (
        ["grap"],
        ["graph"],
        ["graphe"],
        ["gr"],
        ["g"],
        ["grid"],
        ["grid1"],
        ["poly"],
        ["absent"],
        ["knot", "grap"],
        ["graph", "poly"],
        ["polymer", "graph"],
        ["gauge", "gri"],
    ):
        phrases = [Phrase(word, prefix=at == len(words) - 1) for at, word in enumerate(words)]
        expected = conn.execute(
            f"SELECT rowid, {ranked} FROM t WHERE t MATCH ? ORDER BY {ranked}, rowid LIMIT 30",
            (" ".join(phrase.expression() for phrase in phrases),),
        ).fetchall()
        found = cache.top(conn, phrases, 30, every=True)
        assert found == [(int(rowid), float(score)) for rowid, score in expected], words
        assert found or words == ["absent"], words
    # A word new to the table joins the prefixes that cover it.
    assert cache.top(conn, [Phrase("graphol", prefix=True)], 5, every=True) == []
    conn.execute(f"INSERT INTO t({names[0]}) VALUES ('graphology graphology grape')")
    conn.commit()
    expected = conn.execute(
        f"SELECT rowid, {ranked} FROM t WHERE t MATCH ? ORDER BY {ranked}, rowid LIMIT 1000",
        ('"graphol"*',),
    ).fetchall()
    found = cache.top(conn, [Phrase("graphol", prefix=True)], 1000, every=True)
    assert found == [(int(rowid), float(score)) for rowid, score in expected]
    assert [rowid for rowid, _ in found] == [401]
    conn.close()


def test_weights_whose_frequencies_cannot_be_recovered_are_left_to_fts5(tmp_path: Path) -> None:
    conn = bare_table(tmp_path / "bare.sqlite3", texts(50, 3))
    cache = PostingCache("t", ("body",), weights=(0.37,), tokenize="unicode61")
    assert cache.top(conn, [Phrase("quantum")], 5, every=True) is None
    conn.close()


def test_warming_on_a_connection_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "bare.sqlite3"
    rows = texts(400, 5)
    conn = bare_table(path, rows)
    plain = [
        unicodedata.normalize("NFKD", row.lower()).encode("ascii", "ignore").decode()
        for row in rows
    ]
    held = Counter(token for row in plain for token in set(re.findall(r"[^\W_]+", row)))
    cache = PostingCache("t", ("body",), tokenize="unicode61")
    assert cache.claim_warming(conn, 100) is True
    assert cache.claim_warming(conn, 100) is False  # once per fresh cache
    writer = sqlite3.connect(path)
    # The rows' lengths are read first (two turns), then the first list, while which
    # the table changes.
    writes = iter([None, None, None, "quantum gauge"])

    @contextlib.contextmanager
    def holding() -> Iterator[sqlite3.Connection | None]:
        text = next(writes, None)
        if text is not None:
            writer.execute("INSERT INTO t(body) VALUES (?)", (text,))
            writer.commit()
        yield conn

    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as reader:
        terms = frequent_terms(reader, "t", 100)
        assert set(terms) == {token for token, count in held.items() if count >= 100}
        assert [held[term] for term in terms] == sorted(
            (held[term] for term in terms), reverse=True
        )
        cache.warm(reader, [Phrase(term) for term in terms], holding)
    assert cache.phrases_held == len(terms) - 1  # the one read across the write is dropped
    for word in terms:
        expected = conn.execute(
            "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT 10",
            (f'"{word}"',),
        ).fetchall()
        assert cache.top(conn, [Phrase(word)], 10, every=True) == [
            (int(rowid), float(score)) for rowid, score in expected
        ]
    writer.close()
    conn.close()


def test_row_sizes_decode_as_one_varint_at_a_time() -> None:
    rng = random.Random(7)

    def varint(value: int) -> bytes:
        groups = [value & 0x7F]
        value >>= 7
        while value:
            groups.append(0x80 | (value & 0x7F))
            value >>= 7
        return bytes(reversed(groups))

    for high in (100, 20_000, 3_000_000, 2**40):
        blobs = [b"".join(varint(rng.randint(0, high)) for _ in range(3)) for _ in range(200)]
        decoded = _row_sizes(blobs, 3)
        assert decoded.tolist() == [sum(_varints(blob)) for blob in blobs]
        assert decoded.dtype == np.int64


# -- the passage index ---------------------------------------------------------

PASSAGES = CollectionInfo(name="proj-postings", project="lab/p", embed_model="m", dimension=2)


def chunk_records(start: int, count: int, seed: int) -> list[ChunkRecord]:
    rows = texts(count, seed)
    return [
        ChunkRecord(
            f"c{start + n}",
            text,
            [1.0, float(n % 7)],
            {"project": "lab/p", "zotero": {"tags": ["odd" if n % 2 else "even"]}},
        )
        for n, text in enumerate(rows)
    ]


def fts5_sparse(path: Path, terms: list[str], limit: int, tag: str | None) -> list[Hit]:
    """What FTS5 itself ranks (the statement the passage index falls back to), on the
    terms the index weighs (those at bm25()'s IDF floor left out beside others)."""
    fts, _ = _tables(PASSAGES.name)
    reference = apsw.Connection(str(path))
    try:
        reference.execute(f"CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, {fts}, 'row')")
        held = {
            str(term): int(count)
            for term, count in reference.execute("SELECT term, doc FROM temp.words")
        }
        rows = int(next(reference.execute(f"SELECT count(*) FROM {fts}_docsize"))[0])
        terms = floored_out(terms, {term: held.get(term, 0) for term in terms}, rows)
        sql = (
            f"SELECT chunks.id, -bm25({fts}) FROM {fts} JOIN chunks ON chunks.rowid = {fts}.rowid "
            f"WHERE {fts} MATCH ?"
        )
        params: list[object] = [" OR ".join(f'"{term}"' for term in terms)]
        if tag is not None:
            sql += (
                " AND EXISTS (SELECT 1 FROM json_each(chunks.payload, '$.zotero.tags') "
                "WHERE value = ?)"
            )
            params.append(tag)
        sql += f" ORDER BY bm25({fts}), {fts}.rowid LIMIT ?"
        params.append(limit)
        return [Hit(str(chunk), float(score)) for chunk, score in reference.execute(sql, params)]
    finally:
        reference.close()


def test_passage_bm25_from_postings_is_fts5s_to_the_bit(tmp_path: Path) -> None:
    path = tmp_path / "passages.sqlite3"
    index = SqliteIndex(path)
    index.create_collection(PASSAGES)
    index.upsert(PASSAGES.name, chunk_records(0, 400, 12))
    rng = random.Random(13)
    vocabulary = [*COMMON, "gauge", "knot", "soil", "cortex", "absent"]
    try:
        for round_number in range(3):
            for _ in range(15):
                terms = rng.sample(vocabulary, rng.randint(1, 4))
                for tag in (None, "odd"):
                    filters = Filters({"tags": (tag,)}) if tag else Filters()
                    expected = fts5_sparse(path, terms, 30, tag)
                    assert index.sparse(PASSAGES.name, terms, 30, filters) == expected, terms
                ids = [f"c{n}" for n in rng.sample(range(400), 40)]
                scored = {
                    hit.id: hit.score for hit in index.sparse_scores(PASSAGES.name, terms, ids)
                }
                everything = {hit.id: hit.score for hit in fts5_sparse(path, terms, 10_000, None)}
                assert scored == {chunk: everything[chunk] for chunk in ids if chunk in everything}
            # More passages, by this index and then by another connection to the file.
            index.upsert(PASSAGES.name, chunk_records(1000 * (round_number + 1), 50, round_number))
            other = SqliteIndex(path)
            other.upsert(
                PASSAGES.name, chunk_records(5000 + 100 * round_number, 20, 40 + round_number)
            )
            other.close()
    finally:
        index.close()


def test_an_empty_table_and_one_emptied_find_nothing(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "bare.sqlite3")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61')")
    cache = PostingCache("t", ("body",), tokenize="unicode61")
    for every in (True, False):
        assert cache.top(conn, [Phrase("quantum")], 5, every=every) == []
    assert cache.rows(conn) == 0
    conn.execute("INSERT INTO t(rowid, body) VALUES (1, 'quantum dots')")
    conn.commit()
    assert cache.top(conn, [Phrase("quant", prefix=True)], 5, every=True) == [
        (1, float(conn.execute("SELECT bm25(t) FROM t WHERE t MATCH 'quantum'").fetchone()[0]))
    ]
    conn.execute("DELETE FROM t")
    conn.commit()
    assert cache.top(conn, [Phrase("quantum")], 5, every=True) == []
    conn.close()


def test_an_empty_library_searches_to_nothing(tmp_path: Path) -> None:
    index = PaperIndex(Store(tmp_path / "papers"))
    try:
        assert index.search("thermometry", 5) == []
        assert index.search("thermo", 5) == []
    finally:
        index.close()


def test_opening_syncing_and_searching_an_unchanged_library_write_nothing(
    library: PaperIndex,
) -> None:
    """Another connection that only reads (a health check's sync, a second process's
    search) must not count as a change: the postings in memory would start again."""
    by_index(library, "quantum neural", 5)
    held = cache_of(library).phrases_held
    with contextlib.closing(sqlite3.connect(library.path)) as watcher:

        def version() -> int:
            return int(watcher.execute("PRAGMA data_version").fetchone()[0])

        before = version()
        other = PaperIndex(library.store)
        try:
            other.sync()
            other.ensure_fresh()
            other.search("quantum graph", 5)
        finally:
            other.close()
        assert version() == before
    by_index(library, "quantum neural", 5)
    assert cache_of(library).phrases_held == held


def test_while_warming_only_what_is_held_is_ranked_here_and_nothing_is_read_for_it(
    tmp_path: Path,
) -> None:
    """A search that comes while the cache warms is ranked from memory when all it
    needs is held, else left to FTS5 (None): neither the rows' lengths nor a word's
    postings are read on its request path, where a common word's cost more than FTS5
    takes to rank it. The warming reads the words such searches asked for first."""
    path = tmp_path / "bare.sqlite3"
    conn = bare_table(path, texts(400, 5))
    cache = PostingCache("t", ("body",), tokenize="unicode61")
    assert cache.claim_warming(conn, 100) is True

    def fts5(expression: str) -> list[tuple[int, float]]:
        return [
            (int(rowid), float(score))
            for rowid, score in conn.execute(
                "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT 10",
                (expression,),
            )
        ]

    @contextlib.contextmanager
    def holding() -> Iterator[sqlite3.Connection | None]:
        yield conn

    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as reader:
        terms = frequent_terms(reader, "t", 100)
        assert len(terms) >= 2
        word, later = terms[0], terms[-1]
        for phrases in ([Phrase(word)], [Phrase(word, prefix=True)], [Phrase("zzyzx")]):
            assert cache.top(conn, phrases, 10, every=True, held_only=True) is None
        assert cache.phrases_held == 0  # nothing was read for them
        cache.warm(reader, [], holding)  # nothing listed: what was asked for only
        assert cache.top(conn, [Phrase(word)], 10, every=True, held_only=True) == fts5(f'"{word}"')
        # A word not held, with a held one: left to FTS5 while warming, then asked for.
        both = [Phrase(word), Phrase(later)]
        assert cache.top(conn, both, 10, every=True, held_only=True) is None
        cache.warm(reader, [Phrase(word)], holding)
    assert cache.top(conn, both, 10, every=True, held_only=True) == fts5(f'"{word}" "{later}"')
    assert cache.top(conn, [Phrase(word, prefix=True)], 10, every=True, held_only=True) == (
        fts5(f'"{word}"*')
    )
    assert cache.top(conn, [Phrase("zzyzx")], 10, every=True, held_only=True) == []
    conn.close()


def test_a_first_search_never_waits_for_the_ranking_to_import(
    library: PaperIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ranking from postings imports numpy (a third of a second): the process's
    first searches are ranked by FTS5 while it imports beside them, then by it."""
    import threading

    from doiget.papers import index as module

    release = threading.Event()

    def slow_import() -> None:
        release.wait(30)
        module._ranking_ready.set()

    monkeypatch.setattr(module, "_ranking_ready", threading.Event())
    monkeypatch.setattr(module, "_import_ranking", slow_import)
    library.close()  # as just opened in a fresh process
    for query in ("quantum", "twin quantum", "gauge fiel"):
        assert by_index(library, query, 20) == by_fts5(library, query, 20)
    assert library._cache is None  # ranked by FTS5, nothing waited for the import
    release.set()
    warming = library._warming
    assert warming is not None
    warming.join(30)  # the import, then (a small index) no warming
    assert module._ranking_ready.is_set()
    for query in ("quantum", "twin quantum", "gauge fiel"):
        assert by_index(library, query, 20) == by_fts5(library, query, 20)
    assert cache_of(library).phrases_held  # ranked from postings now


# -- the postings file: a fresh process starts warm from it, or ignores it ------------


def filed(index: PaperIndex, asked: list[str]) -> Path:
    """The postings file of ``index`` after ``asked`` were searched (their postings
    held), written as a warming writes it when it ends."""
    from doiget.papers import index as module

    module._import_ranking()  # as once the ranking is imported: searches use postings
    for query in asked:
        index.search(query, 20)
    index._warm()  # nothing frequent enough to read here: it writes what is held
    assert index.postings_path.is_file()
    return index.postings_path


def fresh(index: PaperIndex) -> PaperIndex:
    """The same index opened as by a process just started."""
    return PaperIndex(index.store, index.path)


def same_as_fts5(index: PaperIndex, asked: list[str]) -> None:
    for query in asked:
        for limit in (1, 20, 400):
            assert by_index(index, query, limit) == by_fts5(index, query, limit), query


FILED = ["quantum", "quantum neural", "graph protein", "neural model", "twin quantum", "qu"]


def test_a_fresh_index_ranks_from_the_postings_file_and_reads_no_phrase(
    library: PaperIndex,
) -> None:
    filed(library, FILED)
    held = cache_of(library).phrases_held
    opened = fresh(library)
    try:
        # Words whole and as prefixes, alone and together, in other orders than asked.
        asked = ["model neural", "protein", "quantum graph", "twin", "neural quantum", "qu"]
        same_as_fts5(opened, asked)
        cache = cache_of(opened)
        assert cache.phrases_read == 0  # every phrase came from the file
        assert 0 < cache.phrases_held <= held
        same_as_fts5(opened, ["gauge enzyme"])  # words not filed: read from FTS5
        assert cache.phrases_read > 0
    finally:
        opened.close()


def entry_of(index: PaperIndex, number: int, title: str) -> Entry:
    work = replace(entry_work(random.Random(number)), title=title)
    entry = index.store.entry(write(index.store, number, work))
    assert entry is not None
    return entry


def change_directly(index: PaperIndex) -> None:
    """A row deleted from the index without doiget (no generation of its own)."""
    with contextlib.closing(sqlite3.connect(index.path)) as other:
        other.execute("DELETE FROM entries WHERE id = 7")
        other.commit()


def merged_directly(index: PaperIndex) -> None:
    """FTS5's segments merged: the same rows, other records."""
    with contextlib.closing(sqlite3.connect(index.path)) as other:
        other.execute("INSERT INTO entries_fts(entries_fts) VALUES ('optimize')")
        other.commit()


def through_another_index(index: PaperIndex) -> None:
    other = fresh(index)
    try:
        other.upsert(entry_of(index, 950, "quantum " * 6))
        other.remove(index.store.key(Ref("doi", "10.5555/post.12")))
    finally:
        other.close()


def in_another_process(index: PaperIndex) -> None:
    """An entry added by another process through its own index."""
    entry = entry_of(index, 970, "quantum neural " * 3)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from doiget.papers.index import PaperIndex\n"
        "from doiget.papers.store import Store\n"
        "index = PaperIndex(Store(Path(sys.argv[1])), Path(sys.argv[2]))\n"
        "index.upsert(index.store.entry_at(Path(sys.argv[3])))\n"
        "index.close()\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, index.store.root, index.path, entry.metadata_path],
        check=True,
        timeout=120,
    )


def reindexed(index: PaperIndex) -> None:
    """The index rebuilt from unchanged files: FTS5's records start again alike."""
    other = fresh(index)
    try:
        other.rebuild()
    finally:
        other.close()


@pytest.mark.parametrize(
    "change",
    [through_another_index, in_another_process, change_directly, merged_directly, reindexed],
)
def test_a_postings_file_older_than_the_index_is_ignored(library: PaperIndex, change: Any) -> None:
    filed(library, FILED)
    change(library)
    opened = fresh(library)
    try:
        same_as_fts5(opened, FILED)
        assert cache_of(opened).phrases_read > 0  # the file was not used
    finally:
        opened.close()


def test_a_rebuild_changes_the_stamp_though_fts5_starts_again_alike(library: PaperIndex) -> None:
    """Rebuilt from the same files, FTS5's own records can come out as they were: the
    generation written with each write keeps the stamps apart."""
    from doiget.papers import index as module

    def stamp() -> str:
        with contextlib.closing(sqlite3.connect(library.path)) as conn:
            config = (module._FTS_COLUMNS, module._FTS_WEIGHTS, module._TOKENIZE)
            return table_stamp(conn, "entries_fts", config, module._GENERATION)

    before = stamp()
    library.ensure_fresh()  # nothing changed: nothing written
    assert stamp() == before
    reindexed(library)
    assert stamp() != before


def test_a_write_by_another_connection_drops_what_the_file_gave(library: PaperIndex) -> None:
    filed(library, FILED)
    opened = fresh(library)
    try:
        same_as_fts5(opened, FILED[:2])  # from the file
        assert cache_of(opened).phrases_read == 0
        through_another_index(library)  # a commit of another connection, while it is open
        same_as_fts5(opened, FILED)
        assert cache_of(opened).phrases_read > 0
    finally:
        opened.close()


def test_writes_of_its_own_keep_what_the_file_gave_in_step(library: PaperIndex) -> None:
    filed(library, FILED)
    opened = fresh(library)
    try:
        same_as_fts5(opened, ["quantum"])  # taken from the file; the rest still filed
        opened.upsert(entry_of(library, 960, "quantum neural graph"))
        opened.remove(library.store.key(Ref("doi", "10.5555/post.20")))
        same_as_fts5(opened, FILED)  # those not taken yet are read again, not trusted
    finally:
        opened.close()


def damaged_array(path: Path) -> None:
    """One byte of the last phrase's frequencies changed: its CRC-32 fails."""
    header = read_header(path)
    assert header is not None
    at = header.phrases[-1].frequencies.offset
    data = bytearray(path.read_bytes())
    data[at] ^= 0x40
    path.write_bytes(bytes(data))


def damaged_lengths(path: Path) -> None:
    header = read_header(path)
    assert header is not None
    data = bytearray(path.read_bytes())
    data[header.lengths[1].offset + 3] ^= 0x01
    path.write_bytes(bytes(data))


def truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 8])


def cut_in_header(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


def emptied(path: Path) -> None:
    path.write_bytes(b"")


def foreign(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\0" + bytes(4096))


def restamped(path: Path) -> None:
    """The stamp of another state of the table, the rest intact."""
    header = read_header(path)
    assert header is not None
    path.write_bytes(path.read_bytes().replace(header.stamp.encode(), b"0" * 64, 1))


def rowids_out_of_order(path: Path) -> None:
    """Two rowids of a phrase swapped, in a file written with right CRC-32s."""
    header = read_header(path)
    assert header is not None
    mapped = Mapped(path, header)
    phrases = []
    for at, filed in enumerate(header.phrases):
        rowids = mapped.rowids(filed.rowids).copy()
        if at == 0:
            rowids[[0, 1]] = rowids[[1, 0]]
        phrases.append((filed.word, filed.prefix, rowids, mapped.frequencies(filed.frequencies)))
    lengths = (mapped.rowids(header.lengths[0]), mapped.lengths())
    postingfile.write(path, header.stamp, (header.rows, header.tokens), lengths, phrases)


@pytest.mark.parametrize(
    "damage",
    [
        damaged_array,
        damaged_lengths,
        truncated,
        cut_in_header,
        emptied,
        foreign,
        restamped,
        rowids_out_of_order,
    ],
)
def test_a_damaged_or_restamped_postings_file_is_never_trusted(
    library: PaperIndex, damage: Any
) -> None:
    path = filed(library, FILED)
    damage(path)
    opened = fresh(library)
    try:
        same_as_fts5(opened, FILED)
        assert cache_of(opened).phrases_read > 0  # what failed its checks was read again
    finally:
        opened.close()


@pytest.mark.parametrize("damage", [damaged_array, damaged_lengths, truncated])
def test_a_damaged_postings_file_is_written_anew_by_the_next_warming(
    library: PaperIndex, damage: Any
) -> None:
    path = filed(library, FILED)
    damage(path)
    opened = fresh(library)
    try:
        same_as_fts5(opened, FILED)
        opened._warm()
    finally:
        opened.close()
    again = fresh(library)
    try:
        same_as_fts5(again, FILED)
        assert cache_of(again).phrases_read == 0
    finally:
        again.close()


def test_a_warming_leaves_a_current_postings_file_another_process_wrote(
    library: PaperIndex,
) -> None:
    opened = fresh(library)
    try:
        same_as_fts5(opened, FILED[:2])  # warm without a file to take
        path = filed(library, FILED)  # meanwhile another process wrote one
        written = path.stat().st_ino
        opened._warm()
        assert path.stat().st_ino == written  # not written again
        change_directly(library)
        same_as_fts5(opened, FILED[:2])
        opened._warm()  # the file is stale now: written anew
        assert path.stat().st_ino != written
    finally:
        opened.close()
    again = fresh(library)
    try:
        same_as_fts5(again, FILED[:2])
        assert cache_of(again).phrases_read == 0
    finally:
        again.close()


class CountedEvent(threading.Event):
    """An event that counts the waits on it, and tells when one began."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0
        self.waited = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waits += 1
        self.waited.set()
        return super().wait(timeout)


@pytest.mark.parametrize("stale", [False, True])
def test_a_first_search_of_a_filed_common_word_waits_for_the_ranking(
    library: PaperIndex, monkeypatch: pytest.MonkeyPatch, stale: bool
) -> None:
    """Before numpy is imported, a search of a word the postings file holds in many
    entries waits for the import (FTS5 ranks such a word slower) and is ranked from
    the file; a rare word, or a file out of step with the index, does not wait."""
    from doiget.papers import index as module

    filed(library, FILED)
    if stale:
        change_directly(library)
    ready = CountedEvent()

    def slow_import() -> None:
        ready.waited.wait(30)  # done once a search waits for it (or the test lets it)
        ready.set()

    monkeypatch.setattr(module, "_ranking_ready", ready)
    monkeypatch.setattr(module, "_import_ranking", slow_import)
    monkeypatch.setattr(module, "_SLOW_FOR_FTS5", 50)  # "quantum" is in most entries
    monkeypatch.setattr(module, "_WAIT_FOR_RANKING_S", 30.0)
    opened = fresh(library)
    try:
        assert by_index(opened, "gauge", 20) == by_fts5(opened, "gauge", 20)
        assert ready.waits == 0  # a rare word: ranked by FTS5 meanwhile
        assert by_index(opened, "quantum neural", 20) == by_fts5(opened, "quantum neural", 20)
        assert ready.waits == (0 if stale else 1)
        assert (opened._cache is None) == stale  # FTS5 ranked it, or the file did
        if not stale:
            assert cache_of(opened).phrases_read == 0
            assert cache_of(opened).phrases_held > 0
        ready.waited.set()
        warming = opened._warming
        assert warming is not None
        warming.join(30)
        same_as_fts5(opened, FILED)
    finally:
        opened.close()


@pytest.mark.parametrize("spread", [1, 100_003])  # rowids dense, and far apart
def test_postings_taken_from_the_file_give_bm25_scores_to_the_bit(
    tmp_path: Path, spread: int
) -> None:
    """A cache that takes its postings from the file another cache wrote ranks with the
    very same score bits as bm25(), every word or any, and over a few rows asked
    about, reading nothing from the table."""
    path = tmp_path / "bare.sqlite3"
    writer = bare_table(path, texts(500, 2), spread)
    snapshot = tmp_path / "bare.postings"

    def cache() -> PostingCache:
        return PostingCache("t", ("body",), tokenize="unicode61", snapshot=snapshot)

    first = cache()

    @contextlib.contextmanager
    def holding() -> Iterator[sqlite3.Connection | None]:
        yield writer

    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as reader:
        first.warm(reader, [Phrase(term) for term in frequent_terms(reader, "t", 1)], holding)
    first.persist(holding)
    conn = sqlite3.connect(path)
    second = cache()
    rng = random.Random(4)
    for _ in range(30):
        words = rng.sample((*COMMON, "gauge", "knot", "soil", "absent"), rng.randint(1, 4))
        for every, joiner in ((False, " OR "), (True, " ")):
            expected = conn.execute(
                "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT 25",
                (joiner.join(f'"{word}"' for word in words),),
            ).fetchall()
            found = second.top(conn, [Phrase(word) for word in words], 25, every=every)
            assert found == [(int(rowid), float(score)) for rowid, score in expected], words
            asked = np.array([n * spread for n in sorted(rng.sample(range(1, 501), 5))])
            expected = _bm25_among(conn, joiner.join(f'"{w}"' for w in words), asked)
            found = second.top(
                conn, [Phrase(word) for word in words], 500, every=every, among=asked
            )
            assert found == [(int(rowid), float(score)) for rowid, score in expected]
    assert second.phrases_read == 1  # "absent", in no row, so not filed
    conn.close()
    writer.close()


def _bm25_among(conn: sqlite3.Connection, match: str, asked: Any) -> list[Any]:
    """FTS5's own ranking of the rows ``asked`` that ``match`` finds."""
    return list(
        conn.execute(
            "SELECT rowid, bm25(t) FROM t WHERE t MATCH ? AND rowid IN "
            "(SELECT value FROM json_each(?)) ORDER BY bm25(t), rowid",
            (match, json.dumps(asked.tolist())),
        ).fetchall()
    )
