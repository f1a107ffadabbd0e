"""The embedded index's vector files: the same top-k as an exact scan, filters, and
consistency with SQLite under overwrite, delete, compaction, reopen, a killed writer,
concurrent readers, and an index written by an earlier release."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest
import sqlite_vec

from doiget.errors import DoigetError, ErrorCode
from doiget.library.index import sqlite as sqlite_index
from doiget.library.index.base import (
    ChunkRecord,
    CollectionInfo,
    Filters,
    PassageIndex,
    filter_values,
)
from doiget.library.index.qdrant import open_qdrant
from doiget.library.index.sqlite import SqliteIndex, _tables

NAME = "proj-vectors"
DIM = 8
INFO = CollectionInfo(name=NAME, project="lab/vectors", embed_model="test/model", dimension=DIM)
TAGS = ("alpha", "beta", "gamma")
NO_FILTERS = Filters()


def vector_of(chunk: str, version: int = 0) -> list[float]:
    """A fixed, not unit-length, vector for a chunk id (and a version of it)."""
    seed = int.from_bytes(f"{chunk}/{version}".encode(), "little") % 2**32
    values: list[float] = (np.random.default_rng(seed).standard_normal(DIM) * 3.0).tolist()
    return values


def payload_of(n: int) -> dict[str, Any]:
    return {
        "project": INFO.project,
        "doc": {"doc_id": f"doc-{n // 4}"},
        "source": {"year": 2000 + n % 5},
        "zotero": {"tags": [TAGS[n % 3]] + ([TAGS[(n + 1) % 3]] if n % 7 == 0 else [])},
    }


def record(n: int, version: int = 0) -> ChunkRecord:
    chunk = f"c{n}"
    return ChunkRecord(chunk, f"passage {n} text", vector_of(chunk, version), payload_of(n))


def exact(
    chunks: Mapping[str, ChunkRecord], query: list[float], k: int, filters: Filters = NO_FILTERS
) -> list[str]:
    """The exact cosine top ``k`` of ``chunks`` that pass ``filters``, by NumPy."""
    kept = [
        chunk
        for chunk in chunks.values()
        if all(
            set(filter_values(chunk.payload).get(key, ())) & set(values)
            for key, values in filters.conditions.items()
        )
    ]
    if not kept:
        return []
    matrix = np.array([chunk.vector for chunk in kept], dtype=np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    scores = matrix @ (np.asarray(query) / np.linalg.norm(query))
    order = np.argsort(-scores, kind="stable")[:k]
    return [kept[int(i)].id for i in order]


def dense_ids(
    index: PassageIndex, query: list[float], k: int, filters: Filters = NO_FILTERS
) -> list[str]:
    return [hit.id for hit in index.dense(NAME, query, k, filters)]


def queries(count: int, seed: int = 99) -> list[list[float]]:
    rows: list[list[float]] = np.random.default_rng(seed).standard_normal((count, DIM)).tolist()
    return rows


def vector_files(path: Path) -> list[str]:
    folder = path.with_name(path.name + ".vectors")
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def state(index: SqliteIndex) -> tuple[str, int, int]:
    rows = index._conn.execute(
        "SELECT file, slots, dead FROM vector_files WHERE collection = ?", (NAME,)
    )
    file, slots, dead = next(rows)
    return str(file), int(slots), int(dead)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "passages.sqlite3"


@pytest.fixture
def index(path: Path) -> Iterator[SqliteIndex]:
    opened = SqliteIndex(path)
    opened.create_collection(INFO)
    yield opened
    opened.close()


FILTERS = [
    Filters(),
    Filters({"tags": ("beta",)}),
    Filters({"year": ("2003", "2001")}),
    Filters({"tags": ("alpha",), "year": ("2002",)}),
    Filters({"doc_id": ("doc-3",)}),
    Filters({"tags": ("nothing-has-this",)}),
]


@pytest.mark.parametrize("backend", ["sqlite", "sqlite, filters listed", "qdrant"])
@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: json.dumps(dict(f.conditions)))
def test_dense_gives_the_exact_top_k_on_both_backends(
    path: Path, backend: str, filters: Filters, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "sqlite, filters listed":
        # Every chunk that passes the filters listed at once (as for a narrow filter),
        # instead of the best candidates checked one by one.
        monkeypatch.setattr(sqlite_index, "FILTER_WALK_MAX", 1)
    index: PassageIndex = (
        open_qdrant(location=":memory:") if backend == "qdrant" else SqliteIndex(path)
    )
    try:
        index.create_collection(INFO)
        chunks = {r.id: r for r in (record(n) for n in range(200))}
        index.upsert(NAME, list(chunks.values()))
        for query in queries(8):
            for k in (1, 6, 10, 500):
                assert dense_ids(index, query, k, filters) == exact(chunks, query, k, filters)
        hits = index.dense(NAME, queries(1)[0], 5, filters)
        for hit in hits:
            stored, asked = np.asarray(chunks[hit.id].vector), np.asarray(queries(1)[0])
            cosine = stored @ asked / np.linalg.norm(stored) / np.linalg.norm(asked)
            assert hit.score == pytest.approx(cosine, abs=1e-5)
    finally:
        index.close()


def test_overwritten_and_replaced_chunks_are_never_returned(index: SqliteIndex) -> None:
    chunks = {r.id: r for r in (record(n) for n in range(40))}
    index.upsert(NAME, list(chunks.values()))
    # Overwrite every chunk twice (same ids, new vectors), then replace two documents.
    for version in (1, 2):
        chunks = {r.id: r for r in (record(n, version) for n in range(40))}
        index.upsert(NAME, list(chunks.values()))
    index.upsert(NAME, [record(100)], replace_docs=["doc-0", "doc-1"])
    index.upsert(NAME, [], replace_docs=["doc-2"])  # a document that no longer has chunks
    for n in range(12):
        del chunks[f"c{n}"]
    chunks["c100"] = record(100)
    _, slots, dead = state(index)
    assert (slots, dead) == (121, 92)
    # A query exactly on an old (dead) vector still gets live chunks only.
    for query in [vector_of("c5", 0), vector_of("c12", 1), *queries(5)]:
        for k in (3, 10, 41):
            assert dense_ids(index, query, k) == exact(chunks, query, k)
    assert index.count(NAME) == len(chunks)


def test_many_dead_copies_at_the_top_do_not_shorten_the_answer(index: SqliteIndex) -> None:
    """The same document re-indexed again and again leaves dead rows equal to the query's
    best match; the answer still has k live chunks."""
    others = {r.id: r for r in (record(n) for n in range(10, 60))}
    index.upsert(NAME, list(others.values()))
    near = ChunkRecord("near", "near", vector_of("near"), {"doc": {"doc_id": "near-doc"}})
    for _ in range(60):
        index.upsert(NAME, [near], replace_docs=["near-doc"])
    chunks = others | {"near": near}
    assert dense_ids(index, vector_of("near"), 6) == exact(chunks, vector_of("near"), 6)


def test_compaction_keeps_the_results_and_drops_the_old_file(
    index: SqliteIndex, path: Path
) -> None:
    chunks = {r.id: r for r in (record(n) for n in range(300))}
    index.upsert(NAME, list(chunks.values()))
    first, _, _ = state(index)
    expected = {tuple(q): exact(chunks, q, 10) for q in queries(6)}
    assert [dense_ids(index, q, 10) for q in queries(6)] == list(expected.values())
    index.upsert(NAME, list(chunks.values()))  # 300 dead of 600: not yet
    assert state(index)[0] == first
    index.upsert(NAME, list(chunks.values()))  # 600 dead of 900: compacted
    file, slots, dead = state(index)
    assert file != first and (slots, dead) == (300, 0)
    assert vector_files(path) == [file]
    assert [dense_ids(index, q, 10) for q in queries(6)] == list(expected.values())
    slots_in_use = [int(r[0]) for r in index._conn.execute("SELECT slot FROM chunks ORDER BY slot")]
    assert slots_in_use == list(range(300))
    found = index.vectors(NAME, ["c7", "c299"])
    for chunk, vector in found.items():
        unit = np.asarray(chunks[chunk].vector) / np.linalg.norm(chunks[chunk].vector)
        assert vector == pytest.approx(unit, abs=1e-6)


def test_reopening_gives_the_same_answers(path: Path) -> None:
    index = SqliteIndex(path)
    index.create_collection(INFO)
    chunks = {r.id: r for r in (record(n) for n in range(120))}
    index.upsert(NAME, list(chunks.values()))
    before = [dense_ids(index, q, 7, FILTERS[1]) for q in queries(5)]
    index.close()
    reopened = SqliteIndex(path)
    try:
        assert [dense_ids(reopened, q, 7, FILTERS[1]) for q in queries(5)] == before
        assert before == [exact(chunks, q, 7, FILTERS[1]) for q in queries(5)]
    finally:
        reopened.close()


def test_drop_and_recreate_remove_the_vector_files(index: SqliteIndex, path: Path) -> None:
    index.upsert(NAME, [record(n) for n in range(5)])
    first = vector_files(path)
    assert len(first) == 1
    index.create_collection(INFO)  # replaces the collection
    assert vector_files(path) == []
    assert index.dense(NAME, queries(1)[0], 5, Filters()) == []
    index.upsert(NAME, [record(1)])
    assert dense_ids(index, queries(1)[0], 5) == ["c1"]
    assert vector_files(path) != first
    index.drop_collection(NAME)
    assert vector_files(path) == []
    assert index.dense(NAME, queries(1)[0], 5, Filters()) == []


@pytest.mark.parametrize(
    "vector",
    [[1.0] * (DIM - 1), [0.0] * DIM, [float("nan")] + [1.0] * (DIM - 1)],
    ids=["wrong size", "zero", "not finite"],
)
def test_a_vector_the_collection_cannot_hold_is_refused_and_nothing_is_written(
    index: SqliteIndex, vector: list[float]
) -> None:
    index.upsert(NAME, [record(1)])
    with pytest.raises(DoigetError) as refused:
        index.upsert(NAME, [record(2), ChunkRecord("bad", "bad", vector, {})])
    assert refused.value.code is ErrorCode.EMBEDDING_MISMATCH
    assert index.count(NAME) == 1
    assert state(index)[1:] == (1, 0)


# -- a writer killed mid-write ------------------------------------------------------

# Runs in a child process: writes batches into the index, and kills itself with
# SIGKILL at the named point of the named write (after the vector file's bytes are
# written, before or after their fsync, or after a compaction's new file is renamed
# into place), before SQLite commits.
KILLER = """
import os, signal, sys
from doiget.library.index import vectorfile
from doiget.library.index.sqlite import SqliteIndex

path, point, at = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, sys.argv[4])
from test_vector_file import INFO, NAME, record

calls = {"n": 0}

def dying(real):
    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if point == "before-fsync" and calls["n"] == at:
            def kill_on_fsync(fd):
                os.kill(os.getpid(), signal.SIGKILL)
            os.fsync = kill_on_fsync
        result = real(*args, **kwargs)
        if point != "before-fsync" and calls["n"] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return wrapper

if point == "after-rename":
    vectorfile.write_new = dying(vectorfile.write_new)
else:
    vectorfile.append = dying(vectorfile.append)
index = SqliteIndex(__import__("pathlib").Path(path))
for round in range(1, 6):
    index.upsert(NAME, [record(n, round) for n in range(100)], replace_docs=["doc-1"])
"""


@pytest.mark.parametrize(
    ("point", "at"),
    [("before-fsync", 2), ("after-append", 1), ("after-append", 3), ("after-rename", 1)],
)
def test_a_writer_killed_mid_write_leaves_a_consistent_index(
    index: SqliteIndex, path: Path, point: str, at: int
) -> None:
    chunks = {r.id: r for r in (record(n) for n in range(100))}
    index.upsert(NAME, list(chunks.values()))
    child = subprocess.run(
        [sys.executable, "-c", KILLER, str(path), point, str(at), str(Path(__file__).parent)],
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    # The rounds the child committed before it died: every chunk is at that version.
    rounds = 2 if point == "after-rename" else at - 1
    expected = {r.id: r for r in (record(n, rounds) for n in range(100))}
    reopened = SqliteIndex(path)
    try:
        for query in queries(6):
            assert dense_ids(reopened, query, 10) == exact(expected, query, 10)
        found = reopened.vectors(NAME, list(expected))
        for chunk, vector in found.items():
            want = np.asarray(expected[chunk].vector)
            assert vector == pytest.approx(want / np.linalg.norm(want), abs=1e-6)
        # The next write goes over whatever the dead writer left past the committed rows.
        reopened.upsert(NAME, [record(n, 9) for n in range(100)])
        expected = {r.id: r for r in (record(n, 9) for n in range(100))}
        for query in queries(6):
            assert dense_ids(reopened, query, 10) == exact(expected, query, 10)
        _, slots, dead = state(reopened)
        assert slots - dead == reopened.count(NAME) == 100
    finally:
        reopened.close()


def test_compaction_committed_with_its_old_file_left_behind_still_reads(
    index: SqliteIndex, path: Path
) -> None:
    """A crash between the commit and removing the replaced file leaves an orphan file;
    the index reads the committed one, and the next compaction sweeps the orphan."""
    chunks = {r.id: r for r in (record(n) for n in range(300))}
    index.upsert(NAME, list(chunks.values()))
    first, _, _ = state(index)
    orphan = path.with_name(path.name + ".vectors") / first
    kept = orphan.read_bytes()
    for _ in range(2):
        index.upsert(NAME, list(chunks.values()))
    orphan.write_bytes(kept)
    assert len(vector_files(path)) == 2
    assert dense_ids(index, queries(1)[0], 10) == exact(chunks, queries(1)[0], 10)
    for _ in range(2):
        index.upsert(NAME, list(chunks.values()))
    assert vector_files(path) == [state(index)[0]]


# -- concurrent readers -------------------------------------------------------------


def test_readers_see_whole_answers_while_another_connection_writes_and_compacts(
    path: Path,
) -> None:
    writer = SqliteIndex(path)
    writer.create_collection(INFO)
    writer.upsert(NAME, [record(n) for n in range(300)])
    readers = [SqliteIndex(path) for _ in range(2)]
    problems: list[str] = []
    done = threading.Event()

    def read(reader: SqliteIndex) -> None:
        while not done.is_set():
            try:
                for k, filters in ((10, Filters()), (5, FILTERS[1])):
                    hits = reader.dense(NAME, queries(1)[0], k, filters)
                    ids = [hit.id for hit in hits]
                    if len(ids) != k or len(set(ids)) != k:
                        problems.append(f"answer {ids}")
                vectors = reader.vectors(NAME, ["c1", "c2"])
                if set(vectors) != {"c1", "c2"}:
                    problems.append(f"vectors {sorted(vectors)}")
            except DoigetError as exc:
                problems.append(exc.message)

    threads = [threading.Thread(target=read, args=(reader,)) for reader in readers]
    for thread in threads:
        thread.start()
    try:
        files = {state(writer)[0]}
        for version in range(1, 7):  # overwrites: compacts every second write
            writer.upsert(NAME, [record(n, version) for n in range(300)])
            files.add(state(writer)[0])
        assert len(files) >= 3
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=60)
        for reader in readers:
            reader.close()
    expected = {r.id: r for r in (record(n, 6) for n in range(300))}
    try:
        assert problems == []
        assert dense_ids(writer, queries(1)[0], 10) == exact(expected, queries(1)[0], 10)
    finally:
        writer.close()


# -- an index written by an earlier release -------------------------------------------

LEGACY_SCHEMA = """
CREATE TABLE collections (name TEXT PRIMARY KEY, project TEXT NOT NULL,
    embed_model TEXT NOT NULL, dimension INTEGER NOT NULL, shards INTEGER NOT NULL,
    created TEXT NOT NULL);
CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, collection TEXT NOT NULL, id TEXT NOT NULL,
    doc_id TEXT, text TEXT NOT NULL, payload TEXT NOT NULL{embedding},
    UNIQUE (collection, id));
CREATE INDEX chunks_by_doc ON chunks (collection, doc_id);
CREATE TABLE chunk_keys (chunk INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL);
CREATE INDEX chunk_keys_by_value ON chunk_keys (key, value, chunk);
CREATE INDEX chunk_keys_by_chunk ON chunk_keys (chunk);
"""


def write_legacy(path: Path, chunks: list[ChunkRecord], *, copies: bool) -> None:
    """An index as earlier releases wrote it: vectors (as given, not unit length) in a
    sharded vec0 table and, with ``copies``, also in ``chunks.embedding``."""
    from doiget.library import analyzer

    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(LEGACY_SCHEMA.format(embedding=",\n    embedding BLOB" if copies else ""))
    fts, vec = _tables(NAME)
    conn.execute(
        "INSERT INTO collections VALUES (?, ?, ?, ?, 2, '2025-01-01T00:00:00+00:00')",
        (NAME, INFO.project, INFO.embed_model, DIM),
    )
    conn.execute(
        f"CREATE VIRTUAL TABLE {fts} USING fts5(terms, content='', contentless_delete=1, "
        "tokenize='unicode61 remove_diacritics 0')"
    )
    conn.execute(
        f"CREATE VIRTUAL TABLE {vec} USING vec0(shard INTEGER PARTITION KEY, "
        f"embedding float[{DIM}] distance_metric=cosine)"
    )
    for n, chunk in enumerate(chunks):
        blob = np.asarray(chunk.vector, dtype=np.float32).tobytes()
        # The oldest rows of a copying index predate the copy: NULL, read from vec0.
        copy = blob if copies and n % 3 else None
        conn.execute(
            "INSERT INTO chunks (collection, id, doc_id, text, payload"
            + (", embedding" if copies else "")
            + ") VALUES (?, ?, ?, ?, ?"
            + (", ?" if copies else "")
            + ")",
            (NAME, chunk.id, chunk.doc_id, chunk.text, json.dumps(chunk.payload))
            + ((copy,) if copies else ()),
        )
        rowid = conn.last_insert_rowid()
        for key, values in filter_values(chunk.payload).items():
            for value in values:
                conn.execute("INSERT INTO chunk_keys VALUES (?, ?, ?)", (rowid, key, value))
        conn.execute(
            f"INSERT INTO {fts} (rowid, terms) VALUES (?, ?)",
            (rowid, " ".join(analyzer.terms(chunk.text))),
        )
        conn.execute(
            f"INSERT INTO {vec} (rowid, shard, embedding) VALUES (?, ?, ?)",
            (rowid, rowid % 2, blob),
        )
    conn.close()


@pytest.mark.parametrize("copies", [False, True], ids=["vec0 only", "vec0 and copies"])
@pytest.mark.parametrize("first", ["dense", "vectors", "upsert"])
def test_an_index_of_an_earlier_release_is_migrated_on_first_use(
    path: Path, copies: bool, first: str
) -> None:
    chunks = {r.id: r for r in (record(n) for n in range(60))}
    write_legacy(path, list(chunks.values()), copies=copies)
    index = SqliteIndex(path)
    try:
        assert index.collection(NAME) == INFO
        if first == "vectors":
            assert set(index.vectors(NAME, ["c0", "c1", "gone"])) == {"c0", "c1"}
        elif first == "upsert":
            index.upsert(NAME, [record(60)])
            chunks["c60"] = record(60)
        for query in queries(5):
            for filters in FILTERS:
                assert dense_ids(index, query, 8, filters) == exact(chunks, query, 8, filters)
        found = index.vectors(NAME, list(chunks))
        assert set(found) == set(chunks)
        for chunk, vector in found.items():
            want = np.asarray(chunks[chunk].vector)
            assert vector == pytest.approx(want / np.linalg.norm(want), abs=1e-6)
        from doiget.library import analyzer

        assert len(index.sparse(NAME, analyzer.terms("passage"), 3, Filters())) == 3
        fts, vec = _tables(NAME)
        tables = {str(r[0]) for r in index._conn.execute("SELECT name FROM sqlite_master")}
        assert vec not in tables and fts in tables
        assert state(index)[1:] == (len(chunks), 0)
    finally:
        index.close()
    reopened = SqliteIndex(path)
    try:
        query = queries(1)[0]
        assert dense_ids(reopened, query, 8) == exact(chunks, query, 8)
    finally:
        reopened.close()


def test_the_dense_index_is_named_in_inspect(index: SqliteIndex) -> None:
    assert index.indexes(NAME)["dense"] == ["embedding (float32 vector file, cosine, exact)"]
    assert sqlite_index.COMPACT_MIN_DEAD <= 300  # the compaction tests rely on it


def test_a_rebuild_that_fails_before_its_commit_keeps_the_old_collection_whole(
    index: SqliteIndex, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = {r.id: r for r in (record(n) for n in range(30))}
    index.upsert(NAME, list(chunks.values()))
    real_drop = SqliteIndex._drop

    def drop_then_fail(self: SqliteIndex, conn: apsw.Connection, name: str) -> str | None:
        real_drop(self, conn, name)
        raise apsw.IOError("disk gone")

    monkeypatch.setattr(SqliteIndex, "_drop", drop_then_fail)
    with pytest.raises(DoigetError) as failed:
        index.create_collection(INFO)
    assert failed.value.code is ErrorCode.INDEX_UNAVAILABLE
    monkeypatch.undo()
    index.close()
    reopened = SqliteIndex(path)  # a fresh process's view: no map of the file kept
    try:
        query = queries(1)[0]
        assert dense_ids(reopened, query, 10) == exact(chunks, query, 10)
    finally:
        reopened.close()
