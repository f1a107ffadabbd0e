"""The embedded passage index: one SQLite database with FTS5 (BM25) and sqlite-vec.

Layout: ``collections`` names each collection with its project, model and vector
size; ``chunks`` holds every chunk's id, document, text, payload JSON and a copy of
its vector (hybrid ranking reads its candidates' vectors by id: a lookup in the vec0
table costs about 0.1 ms a row, a row of ``chunks`` a few microseconds);
``chunk_keys`` holds the filterable payload values (one row per value, indexed).
Each collection has its own FTS5 table of analysed terms and its own vec0 table of
float32 vectors, so BM25 statistics and nearest-neighbour scans never mix projects.

The vec0 table is split into shards by a partition key (rowid modulo the shard
count): a dense query over a large collection scans the shards in parallel, one
read connection per shard, which is what brings an exact scan of 100,000 vectors
under the latency target on two cores. The database is opened through apsw because
the standard ``sqlite3`` module of some Python builds cannot load extensions.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import apsw
import numpy as np
import sqlite_vec

from doiget.diskerror import disk_failure, write_error
from doiget.errors import DoigetError, ErrorCode
from doiget.library import analyzer
from doiget.library.index.base import (
    FILTER_KEYS,
    ChunkRecord,
    CollectionInfo,
    Filters,
    Hit,
    StoredChunk,
    directed,
    filter_values,
)
from doiget.workpool import abandoned

if TYPE_CHECKING:
    from doiget.library.index.base import Vector

MAX_SHARDS: Final = 4
# Below this many chunks one scan is faster than fanning out to threads.
PARALLEL_MIN_CHUNKS: Final = 20_000
BUSY_TIMEOUT_MS: Final = 10_000
PAYLOAD_KEYS_SAMPLE: Final = 1_000
# How many SQLite steps a query runs between two checks that its caller still waits
# (a few milliseconds of work: often enough to stop soon, rarely enough to cost nothing).
CHECK_STEPS: Final = 200_000

SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS collections (
    name TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    embed_model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    shards INTEGER NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    doc_id TEXT,
    text TEXT NOT NULL,
    payload TEXT NOT NULL,
    embedding BLOB,
    UNIQUE (collection, id)
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (collection, doc_id);
CREATE TABLE IF NOT EXISTS chunk_keys (
    chunk INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_keys_by_value ON chunk_keys (key, value, chunk);
CREATE INDEX IF NOT EXISTS chunk_keys_by_chunk ON chunk_keys (chunk);
"""


def _tables(name: str) -> tuple[str, str]:
    """The FTS5 and vec0 table names of a collection (a hash: safe as an identifier)."""
    slug = hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    return f"fts_{slug}", f"vec_{slug}"


def _match(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``; a term listed twice is two phrases,
    which bm25() adds up, so it weighs twice."""
    return " OR ".join(f'"{term}"' for term in terms)


def _vector_bytes(vector: Sequence[float]) -> bytes:
    return np.asarray(directed(vector), dtype=np.float32).tobytes()


def _raise_if_disk(path: Path, exc: BaseException) -> None:
    """A full disk, a read-only file system or a denied write is the store's error,
    with what to do about it; anything else is left to the caller."""
    disk = disk_failure(exc)
    if disk is not None:
        raise write_error(
            ErrorCode.STORE_ERROR, "write the passage index", path, disk, "DOIGET_DATA_DIR"
        ) from exc


class SqliteIndex:
    """The embedded backend (see the module docstring). Thread-safe; blocking calls."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._connect()
            with self._conn:
                self._conn.execute(SCHEMA)
                self._add_embedding_column()
        except (apsw.Error, OSError) as exc:
            _raise_if_disk(path, exc)
            raise DoigetError(
                ErrorCode.INDEX_UNAVAILABLE,
                f"cannot open the passage index {path} ({exc}); check that DOIGET_DATA_DIR "
                "is writable and that no other program holds the file.",
            ) from exc
        self._lock = threading.RLock()
        self._readers: list[tuple[threading.Lock, apsw.Connection]] = []
        self._pool: ThreadPoolExecutor | None = None

    def _add_embedding_column(self) -> None:
        """Give an index written before chunks kept a copy of their vector the column;
        its old rows stay NULL there and are read from the vec0 table instead."""
        columns = {str(row[1]) for row in self._conn.execute("PRAGMA table_info(chunks)")}
        if "embedding" not in columns:
            self._conn.execute("ALTER TABLE chunks ADD COLUMN embedding BLOB")

    def _connect(self) -> apsw.Connection:
        # NOFOLLOW: a link planted where the index belongs is refused, never followed.
        flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_NOFOLLOW
        conn = apsw.Connection(str(self.path), flags=flags)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        # A query of a job whose caller gave up stops at the next check (InterruptError);
        # the queries of other jobs, on this connection or another, run on.
        conn.set_progress_handler(abandoned, CHECK_STEPS)
        conn.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON")
        return conn

    @contextmanager
    def _guard(self) -> Iterator[apsw.Connection]:
        with self._lock:
            try:
                yield self._conn
            except apsw.InterruptError as exc:
                raise DoigetError(
                    ErrorCode.TIMEOUT, "the index query was cancelled at its time limit"
                ) from exc
            except apsw.Error as exc:
                _raise_if_disk(self.path, exc)
                raise DoigetError(
                    ErrorCode.INDEX_UNAVAILABLE,
                    f"the passage index {self.path} failed ({type(exc).__name__}: {exc}); "
                    "retry, or rebuild the project with `doiget index --all`.",
                ) from exc

    # -- collections ------------------------------------------------------------

    def collection(self, name: str) -> CollectionInfo | None:
        with self._guard() as conn:
            row = conn.execute(
                "SELECT project, embed_model, dimension FROM collections WHERE name = ?", (name,)
            ).fetchone()
        if row is None:
            return None
        return CollectionInfo(name, str(row[0]), str(row[1]), int(row[2]))

    def _shards(self, name: str) -> int:
        row = self._conn.execute(
            "SELECT shards FROM collections WHERE name = ?", (name,)
        ).fetchone()
        return int(row[0]) if row else 1

    def create_collection(self, info: CollectionInfo) -> None:
        fts, vec = _tables(info.name)
        shards = max(1, min(MAX_SHARDS, os.cpu_count() or 1))
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._guard() as conn, conn:
            self._drop(conn, info.name)
            conn.execute(
                "INSERT INTO collections VALUES (?, ?, ?, ?, ?, ?)",
                (info.name, info.project, info.embed_model, info.dimension, shards, created),
            )
            conn.execute(
                f"CREATE VIRTUAL TABLE {fts} USING fts5(terms, content='', "
                "contentless_delete=1, tokenize='unicode61 remove_diacritics 0')"
            )
            conn.execute(
                f"CREATE VIRTUAL TABLE {vec} USING vec0(shard INTEGER PARTITION KEY, "
                f"embedding float[{int(info.dimension)}] distance_metric=cosine)"
            )

    def drop_collection(self, name: str) -> None:
        with self._guard() as conn, conn:
            self._drop(conn, name)

    @staticmethod
    def _drop(conn: apsw.Connection, name: str) -> None:
        fts, vec = _tables(name)
        conn.execute(
            "DELETE FROM chunk_keys WHERE chunk IN (SELECT rowid FROM chunks WHERE collection = ?)",
            (name,),
        )
        conn.execute("DELETE FROM chunks WHERE collection = ?", (name,))
        conn.execute("DELETE FROM collections WHERE name = ?", (name,))
        conn.execute(f"DROP TABLE IF EXISTS temp.{fts}_vocab")
        conn.execute(f"DROP TABLE IF EXISTS {fts}")
        conn.execute(f"DROP TABLE IF EXISTS {vec}")

    # -- writing ----------------------------------------------------------------

    def upsert(
        self, name: str, chunks: Sequence[ChunkRecord], *, replace_docs: Sequence[str] = ()
    ) -> int:
        fts, vec = _tables(name)
        rows = [(chunk, _vector_bytes(chunk.vector)) for chunk in chunks]
        with self._guard() as conn, conn:
            shards = self._shards(name)
            # Two indexed lookups (by document, by id): an OR would scan the collection.
            stale = [
                int(row[0])
                for row in conn.execute(
                    "SELECT rowid FROM chunks WHERE collection = ?1 AND doc_id IN "
                    "(SELECT value FROM json_each(?2)) UNION SELECT rowid FROM chunks "
                    "WHERE collection = ?1 AND id IN (SELECT value FROM json_each(?3))",
                    (name, json.dumps(list(replace_docs)), json.dumps([c.id for c in chunks])),
                )
            ]
            self._delete_rows(conn, fts, vec, stale)
            for chunk, vector in rows:
                conn.execute(
                    "INSERT INTO chunks (collection, id, doc_id, text, payload, embedding) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (name, chunk.id, chunk.doc_id, chunk.text, json.dumps(chunk.payload), vector),
                )
                rowid = conn.last_insert_rowid()
                conn.executemany(
                    "INSERT INTO chunk_keys VALUES (?, ?, ?)",
                    [
                        (rowid, key, value)
                        for key, values in filter_values(chunk.payload).items()
                        for value in values
                    ],
                )
                conn.execute(
                    f"INSERT INTO {fts} (rowid, terms) VALUES (?, ?)",
                    (rowid, " ".join(analyzer.terms(chunk.text))),
                )
                conn.execute(
                    f"INSERT INTO {vec} (rowid, shard, embedding) VALUES (?, ?, ?)",
                    (rowid, rowid % shards, vector),
                )
        return len(rows)

    @staticmethod
    def _delete_rows(conn: apsw.Connection, fts: str, vec: str, rowids: list[int]) -> None:
        for rowid in rowids:
            conn.execute(f"DELETE FROM {fts} WHERE rowid = ?", (rowid,))
            conn.execute(f"DELETE FROM {vec} WHERE rowid = ?", (rowid,))
            conn.execute("DELETE FROM chunk_keys WHERE chunk = ?", (rowid,))
            conn.execute("DELETE FROM chunks WHERE rowid = ?", (rowid,))

    # -- searching --------------------------------------------------------------

    def _allowed_rowids(self, conn: apsw.Connection, name: str, filters: Filters) -> str | None:
        """JSON list of rowids that pass ``filters`` (None when there are no filters)."""
        if not filters:
            return None
        clauses = []
        params: list[Any] = [name]
        for key, values in filters.conditions.items():
            if key not in FILTER_KEYS:
                continue
            clauses.append(
                "rowid IN (SELECT chunk FROM chunk_keys WHERE key = ? AND value IN "
                "(SELECT value FROM json_each(?)))"
            )
            params += [key, json.dumps(list(values))]
        sql = "SELECT rowid FROM chunks WHERE collection = ?" + "".join(
            f" AND {clause}" for clause in clauses
        )
        return json.dumps([int(row[0]) for row in conn.execute(sql, params)])

    def _ids(self, conn: apsw.Connection, scored: list[tuple[int, float]]) -> list[Hit]:
        if not scored:
            return []
        ids = dict(
            conn.execute(
                "SELECT rowid, id FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps([rowid for rowid, _ in scored]),),
            )
        )
        return [Hit(str(ids[rowid]), score) for rowid, score in scored if rowid in ids]

    def dense(self, name: str, vector: Sequence[float], limit: int, filters: Filters) -> list[Hit]:
        _, vec = _tables(name)
        query = np.asarray(vector, dtype=np.float32).tobytes()
        with self._guard() as conn:
            allowed = self._allowed_rowids(conn, name, filters)
            if allowed == "[]":
                return []
            where = "embedding MATCH ? AND k = ?"
            params: list[Any] = [query, limit]
            if allowed is not None:
                where += " AND rowid IN (SELECT value FROM json_each(?))"
                params.append(allowed)
            sql = f"SELECT rowid, distance FROM {vec} WHERE {where}"
            shards = self._shards(name)
            if shards > 1 and allowed is None and self._large(conn, name):
                found = self._fan_out(sql + " AND shard = ?", params, shards)
            else:
                found = [(int(r), float(d)) for r, d in conn.execute(sql, params)]
            found.sort(key=lambda item: item[1])
            return self._ids(conn, [(rowid, 1.0 - distance) for rowid, distance in found[:limit]])

    @staticmethod
    def _large(conn: apsw.Connection, name: str) -> bool:
        """Whether the collection holds enough chunks to scan its shards in parallel
        (an indexed probe at the threshold, not a count of every chunk)."""
        rows = conn.execute(
            "SELECT 1 FROM chunks WHERE collection = ? LIMIT 1 OFFSET ?",
            (name, PARALLEL_MIN_CHUNKS - 1),
        )
        return next(rows, None) is not None

    def _fan_out(self, sql: str, params: list[Any], shards: int) -> list[tuple[int, float]]:
        """Run one KNN query per shard on its own connection, in parallel."""
        while len(self._readers) < shards:
            self._readers.append((threading.Lock(), self._connect()))
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=shards, thread_name_prefix="doiget-vec")

        def scan(shard: int) -> list[tuple[int, float]]:
            lock, conn = self._readers[shard]
            with lock:
                return [(int(r), float(d)) for r, d in conn.execute(sql, [*params, shard])]

        results = self._pool.map(scan, range(shards))
        return [item for part in results for item in part]

    def sparse(self, name: str, terms: Sequence[str], limit: int, filters: Filters) -> list[Hit]:
        if not terms:
            return []
        fts, _ = _tables(name)
        with self._guard() as conn:
            match = _match(self._weighed_terms(conn, name, terms))
            allowed = self._allowed_rowids(conn, name, filters)
            if allowed == "[]":
                return []
            sql = f"SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ?"
            params: list[Any] = [match]
            if allowed is not None:
                sql += " AND rowid IN (SELECT value FROM json_each(?))"
                params.append(allowed)
            sql += " ORDER BY rank LIMIT ?"
            params.append(limit)
            found = [(int(r), float(s)) for r, s in conn.execute(sql, params)]
            return self._ids(conn, found)

    def sparse_scores(self, name: str, terms: Sequence[str], ids: Sequence[str]) -> list[Hit]:
        if not terms or not ids:
            return []
        fts, _ = _tables(name)
        with self._guard() as conn:
            # "+rowid": handed to FTS5 as a constraint, each id would restart the match,
            # and bm25() would count every term's documents again for it (56 ms for 100
            # ids at 10,000 chunks); filtered after one pass of the match, 1.6 ms.
            rows = conn.execute(
                f"SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ? AND +rowid IN "
                "(SELECT rowid FROM chunks WHERE collection = ? AND id IN "
                "(SELECT value FROM json_each(?)))",
                (_match(self._weighed_terms(conn, name, terms)), name, json.dumps(list(ids))),
            )
            return self._ids(conn, [(int(r), float(s)) for r, s in rows])

    @staticmethod
    def _weighed_terms(conn: apsw.Connection, name: str, terms: Sequence[str]) -> list[str]:
        """``terms`` less those held by half the collection's chunks or more, when a
        term held by fewer is left. bm25() gives such a term its floor IDF (1e-6), so
        it cannot change the order of the chunks that hold any other term; matching
        it means scoring nearly every chunk (at 100,000 chunks 80 ms of a 127 ms
        hybrid query). A query of such terms alone keeps them: their term frequency
        is then all BM25 can rank by."""
        fts, _ = _tables(name)
        vocabulary = f"temp.{fts}_vocab"
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary} USING fts5vocab(main, {fts}, 'row')"
        )
        held = {
            str(term): int(count)
            for term, count in conn.execute(
                f"SELECT term, doc FROM {vocabulary} WHERE term IN "
                "(SELECT value FROM json_each(?))",
                (json.dumps(list(dict.fromkeys(terms))),),
            )
        }
        if not held:
            return list(terms)
        chunks = int(next(conn.execute(f"SELECT count(*) FROM {fts}_docsize"))[0])
        floored = {term for term, count in held.items() if 2 * count >= chunks}
        if len(floored) == len(held):
            return list(terms)
        return [term for term in terms if term not in floored]

    # -- reading ----------------------------------------------------------------

    def _stored(self, rows: Iterator[Any]) -> list[StoredChunk]:
        return [StoredChunk(str(i), str(t), json.loads(p)) for i, t, p in rows]

    def fetch(self, name: str, ids: Sequence[str]) -> dict[str, StoredChunk]:
        with self._guard() as conn:
            rows = conn.execute(
                "SELECT id, text, payload FROM chunks WHERE collection = ? "
                "AND id IN (SELECT value FROM json_each(?))",
                (name, json.dumps(list(ids))),
            )
            return {chunk.id: chunk for chunk in self._stored(rows)}

    def vectors(self, name: str, ids: Sequence[str]) -> dict[str, Vector]:
        _, vec = _tables(name)
        found: dict[str, Vector] = {}
        older: dict[int, str] = {}  # rows written before chunks kept their vector
        with self._guard() as conn:
            for rowid, chunk, blob in conn.execute(
                "SELECT rowid, id, embedding FROM chunks WHERE collection = ? "
                "AND id IN (SELECT value FROM json_each(?))",
                (name, json.dumps(list(ids))),
            ):
                if blob is None:
                    older[int(rowid)] = str(chunk)
                else:
                    found[str(chunk)] = np.frombuffer(blob, dtype=np.float32)
            if older:
                rows = conn.execute(
                    f"SELECT rowid, embedding FROM {vec} WHERE rowid IN "
                    "(SELECT value FROM json_each(?))",
                    (json.dumps(list(older)),),
                )
                found |= {older[int(r)]: np.frombuffer(b, dtype=np.float32) for r, b in rows}
        return found

    def sample(self, name: str, limit: int) -> list[StoredChunk]:
        with self._guard() as conn:
            rows = conn.execute(
                "SELECT id, text, payload FROM chunks WHERE collection = ? ORDER BY rowid LIMIT ?",
                (name, limit),
            )
            return self._stored(rows)

    def count(self, name: str) -> int:
        with self._guard() as conn:
            rows = conn.execute("SELECT count(*) FROM chunks WHERE collection = ?", (name,))
            return int(next(rows)[0])

    def payload_keys(self, name: str) -> list[str]:
        with self._guard() as conn:
            rows = conn.execute(
                "SELECT DISTINCT key FROM (SELECT payload FROM chunks WHERE collection = ? "
                "LIMIT ?) AS sampled, json_each(sampled.payload) ORDER BY key",
                (name, PAYLOAD_KEYS_SAMPLE),
            )
            return [str(row[0]) for row in rows]

    def indexes(self, name: str) -> dict[str, list[str]]:
        return {
            "keyword": ["project", *(".".join(path) for path in FILTER_KEYS.values())],
            "fulltext": ["text"],
            "dense": ["embedding (sqlite-vec, cosine, exact)"],
        }

    # -- lifecycle --------------------------------------------------------------

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for _, reader in self._readers:
            reader.close()
        self._readers.clear()
        self._conn.close()
