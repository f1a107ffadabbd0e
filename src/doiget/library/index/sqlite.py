"""The embedded passage index: one SQLite database with FTS5 (BM25), and vector files.

Layout: ``collections`` names each collection with its project, model and vector
size; ``chunks`` holds every chunk's id, document, text, payload JSON and the slot of
its vector; ``chunk_keys`` holds the filterable payload values (one row per value,
indexed). Each collection has its own FTS5 table of analysed terms, so BM25
statistics never mix projects, and its own vector file (:mod:`vectorfile`) in the
folder beside the database: row ``slot`` is a chunk's unit-length float32 vector,
and a dense query is an exact cosine scan of the file's memory map by NumPy.
``vector_files`` records, per collection, the file's name, how many of its rows are
committed and how many of those no chunk points to any more (rows of deleted or
re-written chunks). When those dead rows outnumber the live ones, the next write
compacts: a new file of the live rows, the slots renumbered, in one transaction.

Consistency: a write takes the database's write lock first (``BEGIN IMMEDIATE``),
appends its vectors after the committed rows and fsyncs them, then records rows,
slots and the new committed count and commits; a crash at any point leaves SQLite
naming only rows that are on disk. A reader reads the file name and count in one
snapshot, scans without holding any lock, then keeps only hits whose slot a chunk
still names in that same file.

An index written by an earlier release kept vectors in a sqlite-vec ``vec0`` table
(and, later, a copy in ``chunks.embedding``). Its collection is migrated on first use:
the vectors are written to a vector file, the slots set and the ``vec0`` table dropped,
in one transaction. The database is opened through apsw with the sqlite-vec extension
loaded (for those old tables) because the standard ``sqlite3`` module of some Python
builds cannot load extensions.
"""

from __future__ import annotations

import hashlib
import json
import math
import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import apsw
import numpy as np
import sqlite_vec

from doiget.diskerror import disk_failure, write_error
from doiget.errors import DoigetError, ErrorCode
from doiget.fts5rank import Phrase, PostingCache
from doiget.library import analyzer
from doiget.library.index import vectorfile
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
    from numpy.typing import NDArray

    from doiget.library.index.base import Vector

    Matrix = NDArray[np.float32]

BUSY_TIMEOUT_MS: Final = 10_000
PAYLOAD_KEYS_SAMPLE: Final = 1_000
# Compact a collection's vector file when its dead rows outnumber its live ones
# (and are at least this many: a small file is scanned in no time anyway).
COMPACT_MIN_DEAD: Final = 256
# Rows read, written or moved at a time when migrating or compacting.
COPY_BATCH: Final = 8_192
# Candidates checked against filters one by one before listing all that pass instead.
FILTER_WALK_MAX: Final = 20_000
# Times a reader takes a newer snapshot when the vector file of its own was replaced.
READ_ATTEMPTS: Final = 5
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
    slot INTEGER,
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
CREATE TABLE IF NOT EXISTS vector_files (
    collection TEXT PRIMARY KEY,
    file TEXT NOT NULL,
    slots INTEGER NOT NULL,
    dead INTEGER NOT NULL
);
"""
# Created after the upgrade of an older ``chunks`` table has added the column.
# The tokenizer of every collection's FTS5 table (terms arrive analysed already).
_TOKENIZE: Final = "unicode61 remove_diacritics 0"
SLOT_INDEX: Final = "CREATE INDEX IF NOT EXISTS chunks_by_slot ON chunks (collection, slot)"


def _tables(name: str) -> tuple[str, str]:
    """The FTS5 table of a collection and the stem of its vector files (and the name of
    its vec0 table in an index written by an earlier release): a hash, safe as an
    identifier and as a file name."""
    slug = hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    return f"fts_{slug}", f"vec_{slug}"


def _match(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``; a term listed twice is two phrases,
    which bm25() adds up, so it weighs twice."""
    return " OR ".join(f'"{term}"' for term in terms)


def floored_out(terms: Sequence[str], held: dict[str, int], chunks: int) -> list[str]:
    """``terms`` less those ``held`` by half of ``chunks`` or more, unless that leaves
    none of the terms any chunk holds (see ``SqliteIndex._weighed_terms``)."""
    present = {term: count for term, count in held.items() if count}
    if not present:
        return list(terms)
    floored = {term for term, count in present.items() if 2 * count >= chunks}
    if len(floored) == len(present):
        return list(terms)
    return [term for term in terms if term not in floored]


def _unit_rows(
    vectors: Sequence[Sequence[float]] | Sequence[Vector], dimension: int
) -> NDArray[np.float32]:
    """The vectors as unit-length float32 rows; EMBEDDING_MISMATCH for a wrong size or
    a vector with no direction."""
    for vector in vectors:
        if len(vector) != dimension:
            raise DoigetError(
                ErrorCode.EMBEDDING_MISMATCH,
                f"an embedding has {len(vector)} values; this collection holds vectors of "
                f"size {dimension}. Embed with the collection's model.",
                details={"collection_dimension": dimension, "given_dimension": len(vector)},
            )
    rows = np.asarray(vectors, dtype=np.float64).reshape(len(vectors), dimension)
    norms = np.linalg.norm(rows, axis=1)
    for bad in np.flatnonzero(~np.isfinite(norms) | (norms == 0.0))[:1]:
        directed([float(value) for value in rows[bad]])  # raises, with the shared message
    unit: NDArray[np.float32] = (rows / norms[:, None]).astype(np.float32)
    return unit


def _json_ints(values: Iterable[Any]) -> str:
    return json.dumps([int(value) for value in values])


class _Unmigrated(Exception):
    """The collection was written by an earlier release and has no vector file yet."""


@dataclass(frozen=True, slots=True)
class _Vectors:
    """A collection's vector file as one snapshot of the database describes it."""

    file: str
    slots: int
    dead: int
    dimension: int


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
        self.folder = path.with_name(path.name + ".vectors")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = self._connect()
            with self._conn:
                self._conn.execute(SCHEMA)
                self._upgrade_chunks()
        except (apsw.Error, OSError) as exc:
            _raise_if_disk(path, exc)
            raise DoigetError(
                ErrorCode.INDEX_UNAVAILABLE,
                f"cannot open the passage index {path} ({exc}); check that DOIGET_DATA_DIR "
                "is writable and that no other program holds the file.",
            ) from exc
        self._lock = threading.RLock()
        self._rankers: dict[str, PostingCache] = {}
        self._maps = vectorfile.Maps(self.folder)
        # Idle reader connections; a reading thread takes one or opens another.
        self._readers: queue.Queue[apsw.Connection] = queue.Queue()
        self._reader_conns: list[apsw.Connection] = []

    def _upgrade_chunks(self) -> None:
        """Give a ``chunks`` table of an earlier release the columns it lacks (their old
        rows stay NULL there until the collection is migrated)."""
        columns = {str(row[1]) for row in self._conn.execute("PRAGMA table_info(chunks)")}
        for column in ("embedding", "slot"):
            if column not in columns:
                kind = "BLOB" if column == "embedding" else "INTEGER"
                self._conn.execute(f"ALTER TABLE chunks ADD COLUMN {column} {kind}")
        self._conn.execute(SLOT_INDEX)

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
    def _errors(self) -> Iterator[None]:
        """SQLite and file failures as coded errors."""
        try:
            yield
        except apsw.InterruptError as exc:
            raise DoigetError(
                ErrorCode.TIMEOUT, "the index query was cancelled at its time limit"
            ) from exc
        except (apsw.Error, OSError, ValueError) as exc:
            _raise_if_disk(self.path, exc)
            raise DoigetError(
                ErrorCode.INDEX_UNAVAILABLE,
                f"the passage index {self.path} failed ({type(exc).__name__}: {exc}); "
                "retry, or rebuild the project with `doiget index --all`.",
            ) from exc

    @contextmanager
    def _guard(self) -> Iterator[apsw.Connection]:
        with self._lock, self._errors():
            yield self._conn

    @contextmanager
    def _writing(self) -> Iterator[apsw.Connection]:
        """One write transaction, begun with the write lock held, so the vector file's
        committed count cannot move between reading it and appending after it."""
        with self._guard() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- collections ------------------------------------------------------------

    def collection(self, name: str) -> CollectionInfo | None:
        with self._guard() as conn:
            row = conn.execute(
                "SELECT project, embed_model, dimension FROM collections WHERE name = ?", (name,)
            ).fetchone()
        if row is None:
            return None
        return CollectionInfo(name, str(row[0]), str(row[1]), int(row[2]))

    def create_collection(self, info: CollectionInfo) -> None:
        fts, stem = _tables(info.name)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._writing() as conn:
            replaced = self._drop(conn, info.name)
            conn.execute(
                "INSERT INTO collections VALUES (?, ?, ?, ?, 1, ?)",
                (info.name, info.project, info.embed_model, info.dimension, created),
            )
            conn.execute(
                f"CREATE VIRTUAL TABLE {fts} USING fts5(terms, content='', "
                f"contentless_delete=1, tokenize='{_TOKENIZE}')"
            )
            conn.execute(
                "INSERT INTO vector_files VALUES (?, ?, 0, 0)",
                (info.name, vectorfile.file_name(stem)),
            )
        self._retire(replaced)

    def drop_collection(self, name: str) -> None:
        with self._writing() as conn:
            replaced = self._drop(conn, name)
        self._retire(replaced)

    def _drop(self, conn: apsw.Connection, name: str) -> str | None:
        """Delete the collection's rows and tables (inside a write transaction); the
        name of its vector file, to remove once this commits (files no committed state
        names, left by a writer that died, go now)."""
        fts, stem = _tables(name)
        row = conn.execute("SELECT file FROM vector_files WHERE collection = ?", (name,)).fetchone()
        replaced = str(row[0]) if row else None
        vectorfile.remove(self.folder, stem, keep=replaced)
        conn.execute(
            "DELETE FROM chunk_keys WHERE chunk IN (SELECT rowid FROM chunks WHERE collection = ?)",
            (name,),
        )
        for table in ("chunks", "vector_files"):
            conn.execute(f"DELETE FROM {table} WHERE collection = ?", (name,))
        conn.execute("DELETE FROM collections WHERE name = ?", (name,))
        conn.execute(f"DROP TABLE IF EXISTS temp.{fts}_vocab")
        conn.execute(f"DROP TABLE IF EXISTS {fts}")
        self._rankers.pop(fts, None)
        conn.execute(f"DROP TABLE IF EXISTS {stem}")
        return replaced

    def _retire(self, file: str | None) -> None:
        """Remove a vector file that a committed write no longer names (a reader still
        mapping it keeps reading it until it takes a newer snapshot)."""
        if file is not None:
            (self.folder / file).unlink(missing_ok=True)

    # -- vector files -----------------------------------------------------------

    def _vectors_state(
        self, conn: apsw.Connection, name: str, *, migrate: bool = False
    ) -> _Vectors | None:
        """The collection's vector file in this snapshot; None when the collection does
        not exist. A collection of an earlier release is migrated when ``migrate`` (the
        caller holds the write lock), else :class:`_Unmigrated` is raised."""
        row = conn.execute(
            "SELECT v.file, v.slots, v.dead, c.dimension FROM collections AS c "
            "LEFT JOIN vector_files AS v ON v.collection = c.name WHERE c.name = ?",
            (name,),
        ).fetchone()
        if row is None:
            return None
        if row[0] is None:
            if not migrate:
                raise _Unmigrated
            self._write_migrated(conn, name, int(row[3]))
            return self._vectors_state(conn, name)
        return _Vectors(str(row[0]), int(row[1]), int(row[2]), int(row[3]))

    @contextmanager
    def _reading(self, name: str) -> Iterator[tuple[apsw.Connection, _Vectors | None, Matrix]]:
        """A read transaction on a reader connection of its own, with the collection's
        vector state and committed rows in that snapshot (no rows, and a None state,
        when the collection does not exist). Scans run without holding the index's
        lock, and everything read inside agrees with the rows scanned."""
        try:
            conn = self._readers.get_nowait()
        except queue.Empty:
            conn = self._new_reader()
        try:
            with self._errors():
                yield self._open_snapshot(conn, name)
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._readers.put(conn)

    def _new_reader(self) -> apsw.Connection:
        with self._errors():
            conn = self._connect()
        with self._lock:
            self._reader_conns.append(conn)
        return conn

    def _open_snapshot(
        self, conn: apsw.Connection, name: str
    ) -> tuple[apsw.Connection, _Vectors | None, Matrix]:
        for _ in range(READ_ATTEMPTS):
            conn.execute("BEGIN")
            try:
                state = self._vectors_state(conn, name)
            except _Unmigrated:
                conn.execute("ROLLBACK")
                with self._writing() as writer:
                    self._vectors_state(writer, name, migrate=True)
                continue
            if state is None or state.slots == 0:
                dimension = state.dimension if state else 0
                return conn, state, np.empty((0, dimension), dtype=np.float32)
            try:
                return conn, state, self._maps.rows(state.file, state.slots, state.dimension)
            except FileNotFoundError:
                conn.execute("ROLLBACK")  # replaced since this snapshot: take a newer one
        raise DoigetError(
            ErrorCode.INDEX_UNAVAILABLE,
            f"the vectors of collection {name!r} kept changing while being read; retry.",
        )

    def _write_migrated(self, conn: apsw.Connection, name: str, dimension: int) -> None:
        """Move the vectors of a collection written by an earlier release into a vector
        file (inside a write transaction): in chunk order, from the chunk's copy when it
        has one, else from vec0."""
        _, stem = _tables(name)
        has_vec0 = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (stem,)
        ).fetchone()
        rowids = [
            int(row[0])
            for row in conn.execute(
                "SELECT rowid FROM chunks WHERE collection = ? ORDER BY rowid", (name,)
            )
        ]

        def batches() -> Iterator[NDArray[np.float32]]:
            for start in range(0, len(rowids), COPY_BATCH):
                part = rowids[start : start + COPY_BATCH]
                found = {
                    int(r): blob
                    for r, blob in conn.execute(
                        "SELECT rowid, embedding FROM chunks WHERE rowid IN "
                        "(SELECT value FROM json_each(?)) AND embedding IS NOT NULL",
                        (_json_ints(part),),
                    )
                }
                if has_vec0 and len(found) < len(part):
                    found = {
                        int(r): blob
                        for r, blob in conn.execute(
                            f"SELECT rowid, embedding FROM {stem} WHERE rowid IN "
                            "(SELECT value FROM json_each(?))",
                            (_json_ints(part),),
                        )
                    } | found
                missing = [rowid for rowid in part if rowid not in found]
                if missing:
                    raise ValueError(f"chunk rows {missing[:5]} of {name!r} have no vector")
                yield _unit_rows(
                    [np.frombuffer(found[rowid], dtype=np.float32) for rowid in part], dimension
                )

        vectorfile.remove(self.folder, stem)
        file = vectorfile.file_name(stem)
        vectorfile.write_new(self.folder, file, batches())
        conn.execute(
            "WITH ordered AS (SELECT rowid AS r, row_number() OVER (ORDER BY rowid) - 1 AS s "
            "FROM chunks WHERE collection = ?) "
            "UPDATE chunks SET slot = ordered.s, embedding = NULL FROM ordered "
            "WHERE chunks.rowid = ordered.r",
            (name,),
        )
        conn.execute("INSERT INTO vector_files VALUES (?, ?, ?, 0)", (name, file, len(rowids)))
        conn.execute(f"DROP TABLE IF EXISTS {stem}")

    def _compact(self, conn: apsw.Connection, name: str, state: _Vectors) -> str:
        """Rewrite the live rows into a new file, renumbering the slots (inside a write
        transaction); the old file's name, to remove once this commits."""
        _, stem = _tables(name)
        live = np.fromiter(
            (
                int(row[0])
                for row in conn.execute(
                    "SELECT slot FROM chunks WHERE collection = ? ORDER BY slot", (name,)
                )
            ),
            dtype=np.int64,
        )
        matrix = self._maps.rows(state.file, state.slots, state.dimension)
        vectorfile.remove(self.folder, stem, keep=state.file)
        file = vectorfile.file_name(stem)
        vectorfile.write_new(
            self.folder,
            file,
            (matrix[live[start : start + COPY_BATCH]] for start in range(0, len(live), COPY_BATCH)),
        )
        conn.execute(
            "WITH ordered AS (SELECT rowid AS r, row_number() OVER (ORDER BY slot) - 1 AS s "
            "FROM chunks WHERE collection = ?) "
            "UPDATE chunks SET slot = ordered.s FROM ordered WHERE chunks.rowid = ordered.r",
            (name,),
        )
        conn.execute(
            "UPDATE vector_files SET file = ?, slots = ?, dead = 0 WHERE collection = ?",
            (file, len(live), name),
        )
        return state.file

    # -- writing ----------------------------------------------------------------

    def upsert(
        self, name: str, chunks: Sequence[ChunkRecord], *, replace_docs: Sequence[str] = ()
    ) -> int:
        fts, _ = _tables(name)
        replaced: str | None = None
        with self._writing() as conn:
            state = self._vectors_state(conn, name, migrate=True)
            if state is None:
                raise DoigetError(
                    ErrorCode.INDEX_UNAVAILABLE,
                    f"collection {name!r} does not exist; create it before writing to it.",
                )
            vectors = _unit_rows([chunk.vector for chunk in chunks], state.dimension)
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
            self._delete_rows(conn, fts, stale)
            if len(chunks):
                vectorfile.append(self.folder / state.file, state.slots, vectors)
            for slot, chunk in enumerate(chunks, start=state.slots):
                conn.execute(
                    "INSERT INTO chunks (collection, id, doc_id, text, payload, slot) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (name, chunk.id, chunk.doc_id, chunk.text, json.dumps(chunk.payload), slot),
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
            slots, dead = state.slots + len(chunks), state.dead + len(stale)
            conn.execute(
                "UPDATE vector_files SET slots = ?, dead = ? WHERE collection = ?",
                (slots, dead, name),
            )
            if dead >= COMPACT_MIN_DEAD and dead > slots - dead:
                replaced = self._compact(
                    conn, name, _Vectors(state.file, slots, dead, state.dimension)
                )
        self._retire(replaced)
        return len(chunks)

    @staticmethod
    def _delete_rows(conn: apsw.Connection, fts: str, rowids: list[int]) -> None:
        for rowid in rowids:
            conn.execute(f"DELETE FROM {fts} WHERE rowid = ?", (rowid,))
            conn.execute("DELETE FROM chunk_keys WHERE chunk = ?", (rowid,))
            conn.execute("DELETE FROM chunks WHERE rowid = ?", (rowid,))

    # -- searching --------------------------------------------------------------

    @staticmethod
    def _filter_sql(filters: Filters, *, per_row: bool) -> tuple[str, list[Any]]:
        """SQL conditions on a ``chunks`` row for ``filters``, and their parameters.

        ``per_row`` looks each row's values up by its rowid (for checking a few
        candidates); otherwise each key's matching chunks are listed once (for
        listing every chunk that passes)."""
        test = (
            "EXISTS (SELECT 1 FROM chunk_keys WHERE chunk = chunks.rowid AND key = ? AND "
            if per_row
            else "rowid IN (SELECT chunk FROM chunk_keys WHERE key = ? AND "
        )
        clauses, params = "", []
        for key, values in filters.conditions.items():
            if key in FILTER_KEYS:
                clauses += f" AND {test}value IN (SELECT value FROM json_each(?)))"
                params += [key, json.dumps(list(values))]
        return clauses, params

    def _allowed(self, conn: apsw.Connection, name: str, filters: Filters, column: str) -> str:
        """``column`` (rowid or slot) of every chunk that passes ``filters``, as
        comma-separated text (empty when none does)."""
        where, params = self._filter_sql(filters, per_row=False)
        rows = conn.execute(
            f"SELECT group_concat({column}) FROM chunks WHERE collection = ?{where}",
            [name, *params],
        )
        return str(next(rows)[0] or "")

    def _ids(self, conn: apsw.Connection, scored: list[tuple[int, float]]) -> list[Hit]:
        if not scored:
            return []
        ids = dict(
            conn.execute(
                "SELECT rowid, id FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
                (_json_ints(rowid for rowid, _ in scored),),
            )
        )
        return [Hit(str(ids[rowid]), score) for rowid, score in scored if rowid in ids]

    def dense(self, name: str, vector: Sequence[float], limit: int, filters: Filters) -> list[Hit]:
        query = np.asarray(vector, dtype=np.float32)
        query /= np.float32(np.linalg.norm(query) or 1.0)
        with self._reading(name) as (conn, state, matrix):
            if state is None or state.slots == 0 or limit < 1:
                return []
            scores = matrix @ query
            return self._best(conn, name, state, scores, limit, filters)

    def _best(
        self,
        conn: apsw.Connection,
        name: str,
        state: _Vectors,
        scores: NDArray[np.float32],
        limit: int,
        filters: Filters,
    ) -> list[Hit]:
        """The ``limit`` best slots that a chunk names and that pass ``filters``, as
        hits, best first (equal scores in slot order).

        Dead rows (of deleted or re-written chunks) are scored too, so the best are
        checked in SQL with a margin for them (and for the filters), and more when too
        few pass. When that reaches ``FILTER_WALK_MAX`` candidates, the filter is
        narrow: every chunk that passes it is listed once and the rest scored out."""
        dead_share = state.dead / max(1, state.slots - state.dead)
        wanted = limit + math.ceil(limit * dead_share) + 8
        wanted *= 4 if filters else 1
        pool = state.slots
        while True:
            if filters and wanted > FILTER_WALK_MAX:
                allowed = np.fromstring(  # C-speed parse of the comma-separated slots
                    self._allowed(conn, name, filters, "slot"), dtype=np.int64, sep=","
                )
                mask = np.full(state.slots, -np.inf, dtype=np.float32)
                mask[allowed] = 0.0
                scores = scores + mask
                filters, pool = Filters(), len(allowed)
                wanted = limit + math.ceil(limit * dead_share) + 8
            wanted = min(wanted, pool)
            if wanted < len(scores):
                top = np.argpartition(-scores, wanted - 1)[:wanted]
            else:
                top = np.arange(len(scores))
            top = top[np.lexsort((top, -scores[top]))]
            top = top[np.isfinite(scores[top])]
            where, params = self._filter_sql(filters, per_row=True)
            live = dict(
                conn.execute(
                    "SELECT slot, id FROM chunks WHERE collection = ? AND slot IN "
                    f"(SELECT value FROM json_each(?)){where}",
                    [name, _json_ints(top), *params],
                )
            )
            hits = [Hit(str(live[int(s)]), float(scores[s])) for s in top if int(s) in live]
            if len(hits) >= limit or wanted >= pool or len(top) < wanted:
                return hits[:limit]
            wanted *= 4

    def sparse(self, name: str, terms: Sequence[str], limit: int, filters: Filters) -> list[Hit]:
        if not terms:
            return []
        fts, _ = _tables(name)
        with self._guard() as conn:
            weighed = self._weighed_terms(conn, name, terms)
            among = None
            if filters:
                allowed = self._allowed(conn, name, filters, "rowid")
                if not allowed:
                    return []
                among = np.unique(np.array(allowed.split(","), dtype=np.int64))
            ranked = self._ranker(name).top(
                conn, [Phrase(term) for term in weighed], limit, every=False, among=among
            )
            if ranked is not None:
                return self._ids(conn, [(rowid, -score) for rowid, score in ranked])
            sql = f"SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ?"
            params: list[Any] = [_match(weighed)]
            if among is not None:
                sql += " AND rowid IN (SELECT value FROM json_each(?))"
                params.append(_json_ints(among.tolist()))
            sql += " ORDER BY rank LIMIT ?"
            params.append(limit)
            found = [(int(r), float(s)) for r, s in conn.execute(sql, params)]
            return self._ids(conn, found)

    def sparse_scores(self, name: str, terms: Sequence[str], ids: Sequence[str]) -> list[Hit]:
        if not terms or not ids:
            return []
        fts, _ = _tables(name)
        with self._guard() as conn:
            weighed = self._weighed_terms(conn, name, terms)
            rowids = [
                int(row[0])
                for row in conn.execute(
                    "SELECT rowid FROM chunks WHERE collection = ? AND id IN "
                    "(SELECT value FROM json_each(?))",
                    (name, json.dumps(list(ids))),
                )
            ]
            among = np.unique(np.array(rowids, dtype=np.int64))
            ranked = self._ranker(name).top(
                conn, [Phrase(term) for term in weighed], len(among), every=False, among=among
            )
            if ranked is not None:
                return self._ids(conn, [(rowid, -score) for rowid, score in ranked])
            # "+rowid": handed to FTS5 as a constraint, each id would restart the match,
            # and bm25() would count every term's documents again for it (56 ms for 100
            # ids at 10,000 chunks); filtered after one pass of the match, 1.6 ms.
            rows = conn.execute(
                f"SELECT rowid, -bm25({fts}) FROM {fts} WHERE {fts} MATCH ? AND +rowid IN "
                "(SELECT value FROM json_each(?))",
                (_match(weighed), _json_ints(among.tolist())),
            )
            return self._ids(conn, [(int(r), float(s)) for r, s in rows])

    def _ranker(self, name: str) -> PostingCache:
        """The postings cache of a collection's FTS5 table (on the writing connection)."""
        fts, _ = _tables(name)
        ranker = self._rankers.get(fts)
        if ranker is None:
            ranker = self._rankers[fts] = PostingCache(fts, ("terms",), tokenize=_TOKENIZE)
        return ranker

    def _weighed_terms(self, conn: apsw.Connection, name: str, terms: Sequence[str]) -> list[str]:
        """``terms`` less those held by half the collection's chunks or more, when a
        term held by fewer is left. bm25() gives such a term its floor IDF (1e-6), so
        it cannot change the order of the chunks that hold any other term; matching
        it means scoring nearly every chunk (at 100,000 chunks 80 ms of a 127 ms
        hybrid query). A query of such terms alone keeps them: their term frequency
        is then all BM25 can rank by. How many chunks hold a term comes from its
        postings when they are in memory, else from the FTS5 vocabulary (which walks
        the term's list)."""
        fts, _ = _tables(name)
        ranker = self._ranker(name)
        held = ranker.holders(conn, terms)
        missing = [term for term in dict.fromkeys(terms) if term not in held]
        if missing:
            vocabulary = f"temp.{fts}_vocab"
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary} "
                f"USING fts5vocab(main, {fts}, 'row')"
            )
            held |= {
                str(term): int(count)
                for term, count in conn.execute(
                    f"SELECT term, doc FROM {vocabulary} WHERE term IN "
                    "(SELECT value FROM json_each(?))",
                    (json.dumps(missing),),
                )
            }
        return floored_out(terms, held, ranker.rows(conn))

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
        with self._reading(name) as (conn, _, matrix):
            rows = [
                (str(chunk), int(slot))
                for chunk, slot in conn.execute(
                    "SELECT id, slot FROM chunks WHERE collection = ? "
                    "AND id IN (SELECT value FROM json_each(?))",
                    (name, json.dumps(list(ids))),
                )
            ]
            gathered = matrix[np.asarray([slot for _, slot in rows], dtype=np.int64)]
        return {chunk: gathered[n] for n, (chunk, _) in enumerate(rows)}

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
            "dense": ["embedding (float32 vector file, cosine, exact)"],
        }

    # -- lifecycle --------------------------------------------------------------

    def close(self) -> None:
        self._maps.clear()
        for conn in self._reader_conns:
            conn.close()
        self._reader_conns.clear()
        self._conn.close()
