"""The search index of the store: SQLite FTS5 over title, authors, venue, abstract, year.

It is a cache of the TOML files, never the truth. Writes through doiget keep it in
step; on open it compares the metadata directory's modification time with the one
it last synced against and, when they differ (another process wrote, a file was
added or removed by hand), re-reads just the files whose size or mtime changed. A
missing or older-format index is rebuilt from the TOML files; ``doiget reindex``
forces a rebuild.

A TOML file that cannot be read (not UTF-8, not TOML, a link out of the store, a
directory ...) never stops the rest from being indexed: it is left out, logged once
when found, and remembered with the reason (``unreadable``) until it changes, so
``doiget health`` can name it without reading every file again.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Final, ParamSpec, TypeVar

from doiget.confined import Refused, resolve_confined
from doiget.diskerror import disk_failure, write_error
from doiget.errors import DoigetError, ErrorCode, quoted
from doiget.integrity import notices
from doiget.papers.store import Entry, Store, work_from_document
from doiget.postingfile import read_header, table_stamp
from doiget.workpool import own

if TYPE_CHECKING:
    from doiget.fts5rank import PostingCache

logger = logging.getLogger("doiget.papers")

INDEX_FORMAT: Final = "3"
# SQLite's INTEGER is 64-bit: a hand-edited year beyond it is not a year.
_INT64_LIMIT: Final = 2**63
_WORD = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    ref TEXT NOT NULL,
    doi TEXT,
    arxiv_id TEXT,
    title TEXT,
    authors TEXT,
    venue TEXT,
    year INTEGER,
    abstract TEXT,
    fetched_at TEXT,
    pdf_path TEXT,
    integrity TEXT,
    mtime_ns INTEGER NOT NULL,
    file_size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS unreadable(
    key TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    file_size INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_fetched_at ON entries(fetched_at DESC, id DESC);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
    title, authors, venue, abstract, year,
    content='entries', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts(rowid, title, authors, venue, abstract, year)
    VALUES (new.id, new.title, new.authors, new.venue, new.abstract, new.year);
END;
CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts(entries_fts, rowid, title, authors, venue, abstract, year)
    VALUES ('delete', old.id, old.title, old.authors, old.venue, old.abstract, old.year);
END;
"""

# The FTS5 table's columns, their bm25() weights and its tokenizer, as _SCHEMA and
# _SEARCH spell them.
_FTS_COLUMNS: Final = ("title", "authors", "venue", "abstract", "year")
_FTS_WEIGHTS: Final = (10.0, 5.0, 3.0, 1.0, 2.0)
_TOKENIZE: Final = "unicode61 remove_diacritics 2"

# Below this many entries FTS5 ranks any query within a few milliseconds: nothing to warm.
_WARM_FROM_ROWS: Final = 20_000
# Changed by every write through doiget: part of the postings file's stamp, since FTS5's
# own records start again alike when the table is rebuilt.
_GENERATION: Final = "SELECT value FROM meta WHERE name = 'generation'"
# A word in this many entries is slow for FTS5 to rank (about 1 ms a thousand entries,
# several times that on a loaded machine): a first search of one the postings file holds
# waits for the ranking's import (at most _WAIT_FOR_RANKING_S), once, rather than have
# FTS5 rank it and every common word searched after it while numpy imports.
_SLOW_FOR_FTS5: Final = 10_000
_WAIT_FOR_RANKING_S: Final = 2.0

# Set once the ranking from postings (doiget.fts5rank, with numpy) is imported: a third
# of a second, which no first search waits for (FTS5 ranks until then). It is imported
# in the warming's thread, started by a first search, not when the server starts.
_ranking_ready = threading.Event()


def _import_ranking() -> None:
    import doiget.fts5rank  # noqa: F401

    _ranking_ready.set()


_COLUMNS: Final = ", ".join(
    f"entries.{name}"
    for name in (
        "key",
        "ref",
        "doi",
        "arxiv_id",
        "title",
        "authors",
        "venue",
        "year",
        "fetched_at",
        "pdf_path",
        "integrity",
    )
)

# Ranked inside FTS5 first, and only the best ``limit`` rows are read from ``entries``:
# joining before ranking read every matching row (their abstracts included) just to
# throw all but ``limit`` of them away. Ties go to the older row, as they always did.
# _COLUMNS is a constant; the user's text only ever binds as a parameter.
_SEARCH: Final = (
    f"SELECT {_COLUMNS} FROM ("  # noqa: S608
    f"SELECT rowid, bm25(entries_fts, {', '.join(map(str, _FTS_WEIGHTS))}) AS score"
    " FROM entries_fts"
    " WHERE entries_fts MATCH ? ORDER BY score, rowid LIMIT ?"
    ") AS best JOIN entries ON entries.id = best.rowid ORDER BY best.score, best.rowid"
)


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What a sync or rebuild changed."""

    indexed: int
    removed: int
    total: int


def _row_values(entry: Entry, mtime_ns: int, size: int) -> tuple[Any, ...]:
    """The row of ``entry``: every value as the type its column holds, whatever a hand
    edit put in the TOML (a table where a string belongs binds as its text)."""
    doc = entry.document
    meta = doc.get("doiget", {}) if isinstance(doc.get("doiget"), dict) else {}
    work = work_from_document(doc)
    authors = doc.get("authors", [])
    found = notices(work)
    return (
        entry.key,
        entry.ref.canonical,
        work.doi,
        work.arxiv_id,
        work.title,
        "; ".join(str(a) for a in authors) if isinstance(authors, list) else None,
        work.venue,
        work.year if work.year is not None and abs(work.year) < _INT64_LIMIT else None,
        work.abstract,
        str(meta.get("fetched_at", "")),
        str(entry.pdf_path) if entry.has_pdf else None,
        json.dumps([notice.model_dump(exclude_unset=True) for notice in found]) if found else None,
        mtime_ns,
        size,
    )


def _result(row: sqlite3.Row) -> dict[str, Any]:
    authors = row["authors"]
    integrity = {"integrity": json.loads(row["integrity"])} if row["integrity"] else {}
    return {
        "ref": row["ref"],
        "key": row["key"],
        "title": row["title"],
        "authors": authors.split("; ") if authors else [],
        "year": row["year"],
        "venue": row["venue"],
        "doi": row["doi"],
        "arxiv_id": row["arxiv_id"],
        "fetched_at": row["fetched_at"] or None,
        "has_pdf": row["pdf_path"] is not None,
        "path": row["pdf_path"],
        **integrity,
    }


def match_expression(query: str) -> str:
    """An FTS5 query for free text: every word must match, the last one as a prefix.

    Words are quoted, so FTS5 operators and punctuation in user input mean nothing.
    """
    words = _WORD.findall(query)
    if not words:
        raise DoigetError(
            ErrorCode.INVALID_REF,
            f"the query {quoted(query)} has no words to search for; give a title word, "
            "author name, venue or year.",
        )
    terms = [f'"{word}"' for word in words]
    terms[-1] += "*"
    return " ".join(terms)


P = ParamSpec("P")
R = TypeVar("R")


def _one_at_a_time(
    method: Callable[Concatenate[PaperIndex, P], R],
) -> Callable[Concatenate[PaperIndex, P], R]:
    """Hold the index's turn for the whole call: writes come from worker threads, and
    two transactions on one connection must not interleave."""

    @functools.wraps(method)
    def held(self: PaperIndex, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._turn:
            return method(self, *args, **kwargs)

    return held


class PaperIndex:
    """The FTS5 index of one store's metadata; safe to use from several threads."""

    def __init__(self, store: Store, path: Path | None = None) -> None:
        self.store = store
        # Outside .metadata, so the index's own files never look like a change there.
        self.path = path or store.index_dir / "library.sqlite3"
        # Beside the index: the postings a warming read, for the next process to start
        # warm (see doiget.postingfile).
        self.postings_path = self.path.with_suffix(".postings")
        self._db: sqlite3.Connection | None = None
        self._cache: PostingCache | None = None
        self._warming: threading.Thread | None = None
        self._turn = threading.RLock()

    # -- connection -------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        try:
            target = resolve_confined(self.store.root, self.path)
        except Refused as exc:
            raise DoigetError(
                ErrorCode.STORE_ERROR,
                f"{exc.strerror}; the search index must be a file inside the store. Delete "
                f"it ({self.path}): doiget rebuilds it from the metadata files.",
            ) from exc
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(target, timeout=5.0, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            fmt = self._format(db)
            if fmt != INDEX_FORMAT:
                db.executescript(
                    "DROP TABLE IF EXISTS entries_fts; DROP TABLE IF EXISTS entries;"
                    "DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS unreadable;"
                )
            db.executescript(_SCHEMA)
            if fmt != INDEX_FORMAT:
                # Written only when the index was made: a write on every open would count
                # as a change to every other connection (their search caches start again).
                db.execute(
                    "INSERT OR REPLACE INTO meta(name, value) VALUES ('format', ?)",
                    (INDEX_FORMAT,),
                )
                db.commit()
        except (sqlite3.Error, OSError) as exc:
            raise self._error("open", exc) from exc
        self._db = db
        return db

    @staticmethod
    def _format(db: sqlite3.Connection) -> str | None:
        try:
            row = db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        except sqlite3.OperationalError:
            return None
        return str(row[0]) if row else None

    def _error(self, action: str, exc: sqlite3.Error | OSError) -> DoigetError:
        disk = disk_failure(exc)
        if disk is not None:
            return write_error(
                ErrorCode.STORE_ERROR,
                f"{action} the search index",
                self.path,
                disk,
                "DOIGET_STORE_ROOT",
            )
        return DoigetError(
            ErrorCode.STORE_ERROR,
            f"cannot {action} the search index {self.path}: {exc}; run `doiget reindex` "
            "to rebuild it from the metadata files.",
        )

    @_one_at_a_time
    def close(self) -> None:
        """Close the database connection."""
        if self._db is not None:
            self._db.close()
            self._db = None
            self._cache = None

    # -- keeping in step --------------------------------------------------------

    def _dir_stamp(self) -> str:
        try:
            stat = self.store.metadata_dir.stat()
        except FileNotFoundError:
            return "absent"
        return str(stat.st_mtime_ns)

    @_one_at_a_time
    def ensure_fresh(self) -> SyncReport | None:
        """Sync with the TOML files if the metadata directory changed since the last sync."""
        if self._stored_stamp(self._connect()) == self._dir_stamp():
            return None
        return self.sync()

    @staticmethod
    def _stored_stamp(db: sqlite3.Connection) -> str | None:
        """The metadata directory's stamp at the last sync."""
        row = db.execute("SELECT value FROM meta WHERE name = 'dir_stamp'").fetchone()
        return str(row[0]) if row is not None else None

    @_one_at_a_time
    def sync(self) -> SyncReport:
        """Re-read the TOML files whose size or mtime changed; drop rows of removed files."""
        db = self._connect()
        stamp = self._dir_stamp()  # taken first: changes during the scan show next time
        known = {
            row["key"]: (row["mtime_ns"], row["file_size"])
            for row in db.execute(
                "SELECT key, mtime_ns, file_size FROM entries UNION ALL "
                "SELECT key, mtime_ns, file_size FROM unreadable"
            )
        }
        indexed = 0
        seen: set[str] = set()
        changes = db.total_changes
        try:
            with db:
                for path in self.store.metadata_files():
                    try:
                        stat = path.lstat()
                    except FileNotFoundError:
                        continue
                    seen.add(path.stem)
                    if known.get(path.stem) == (stat.st_mtime_ns, stat.st_size):
                        continue
                    indexed += self._sync_file(db, path, stat.st_mtime_ns, stat.st_size)
                gone = [(key,) for key in known if key not in seen]
                db.executemany("DELETE FROM entries WHERE key = ?", gone)
                db.executemany("DELETE FROM unreadable WHERE key = ?", gone)
                if db.total_changes != changes:
                    _new_generation(db)
                if self._stored_stamp(db) != stamp:  # nothing written when nothing changed
                    db.execute(
                        "INSERT OR REPLACE INTO meta(name, value) VALUES ('dir_stamp', ?)",
                        (stamp,),
                    )
        except sqlite3.Error as exc:
            raise self._error("update", exc) from exc
        total = db.execute("SELECT count(*) FROM entries").fetchone()[0]
        return SyncReport(indexed=indexed, removed=len(gone), total=int(total))

    def _sync_file(self, db: sqlite3.Connection, path: Path, mtime_ns: int, size: int) -> int:
        """Index one changed TOML file (1), or record why it cannot be read (0).

        A file a user broke by hand must not stop the rest of the library from being
        searchable; it is left out until fixed, and its old row goes with it.
        """
        db.execute("DELETE FROM unreadable WHERE key = ?", (path.stem,))
        try:
            entry = self.store.entry_at(path)
        except DoigetError as error:
            logger.warning("left out of the library: %s", error.message)
            db.execute("DELETE FROM entries WHERE key = ?", (path.stem,))
            db.execute(
                "INSERT INTO unreadable(key, reason, mtime_ns, file_size) VALUES (?,?,?,?)",
                (path.stem, error.message, mtime_ns, size),
            )
            return 0
        if entry is None:
            return 0
        self._upsert_row(db, entry, mtime_ns, size)
        return 1

    @_one_at_a_time
    def rebuild(self) -> SyncReport:
        """Drop every row and index all TOML files again."""
        db = self._connect()
        try:
            with db:
                db.execute("DELETE FROM entries")
                db.execute("DELETE FROM unreadable")
                db.execute("INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')")
                db.execute("DELETE FROM meta WHERE name = 'dir_stamp'")
                _new_generation(db)
        except sqlite3.Error as exc:
            raise self._error("rebuild", exc) from exc
        return self.sync()

    def _upsert_row(self, db: sqlite3.Connection, entry: Entry, mtime_ns: int, size: int) -> None:
        db.execute("DELETE FROM entries WHERE key = ?", (entry.key,))
        db.execute(
            "INSERT INTO entries(key, ref, doi, arxiv_id, title, authors, venue, year, abstract,"
            " fetched_at, pdf_path, integrity, mtime_ns, file_size)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            _row_values(entry, mtime_ns, size),
        )

    @_one_at_a_time
    def upsert(self, entry: Entry) -> None:
        """Index (or re-index) one entry right after it was written."""
        db = self._connect()
        try:
            stat = entry.metadata_path.stat()
            with db:
                db.execute("DELETE FROM unreadable WHERE key = ?", (entry.key,))
                self._upsert_row(db, entry, stat.st_mtime_ns, stat.st_size)
                _new_generation(db)
        except (OSError, sqlite3.Error) as exc:
            raise self._error(f"add {entry.key} to", exc) from exc

    @_one_at_a_time
    def remove(self, key: str) -> None:
        """Drop one entry's row."""
        db = self._connect()
        try:
            with db:
                db.execute("DELETE FROM entries WHERE key = ?", (key,))
                db.execute("DELETE FROM unreadable WHERE key = ?", (key,))
                _new_generation(db)
        except sqlite3.Error as exc:
            raise self._error("update", exc) from exc

    # -- queries ----------------------------------------------------------------

    @_one_at_a_time
    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """Entries matching every word of ``query`` (last word as a prefix), best first.

        Ranked from the postings kept in memory (the same bm25() scores, see
        doiget.fts5rank) when every word is one token; by FTS5 itself otherwise.
        """
        expression = match_expression(query)
        db = self._connect()
        try:
            ranked = self._ranked(db, _WORD.findall(query), limit)
            if ranked is None:
                rows = db.execute(_SEARCH, (expression, limit)).fetchall()
            else:
                rows = self._rows_by_id([rowid for rowid, _ in ranked])
        except sqlite3.Error as exc:
            raise self._error("search", exc) from exc
        return [_result(row) for row in rows]

    def _warm(self) -> None:
        """Cache the postings of the library's most frequent words so the first search
        of a common word, whole or as a prefix, is as fast as the rest; read on a
        connection of this thread's own, taking the index's turn only to file each."""
        from doiget.fts5rank import Phrase, frequent_terms

        cache = self._cache
        if cache is None:
            return

        @contextlib.contextmanager
        def holding() -> Iterator[sqlite3.Connection | None]:
            with self._turn:
                yield self._db if self._cache is cache else None

        def frequent(reader: sqlite3.Connection) -> Iterator[Phrase]:
            # Listed only once the warming has read the rows' lengths, which every
            # search it serves needs first. A word's postings serve it as a prefix too
            # (see PostingCache._summed).
            rows = int(reader.execute("SELECT count(*) FROM entries").fetchone()[0])
            for term in frequent_terms(reader, "entries_fts", max(1_000, rows // 50)):
                yield Phrase(term)

        try:
            with contextlib.closing(
                sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, timeout=5.0)
            ) as reader:
                cache.warm(reader, frequent(reader), holding)
            cache.persist(holding)
        except (sqlite3.Error, OSError) as exc:
            logger.info("the search cache was left to warm as searched: %s", exc)

    def _ranked(
        self, db: sqlite3.Connection, words: list[str], limit: int
    ) -> list[tuple[int, float]] | None:
        warming = self._warming is not None and self._warming.is_alive()
        if not _ranking_ready.is_set():
            if not warming:
                self._start_warming(self._warm_first)
            if not self._filed_common(db, words) or not _ranking_ready.wait(_WAIT_FOR_RANKING_S):
                return None
            warming = self._warming is not None and self._warming.is_alive()
        from doiget.fts5rank import phrases_of

        cache = self._posting_cache()
        if not warming and cache.claim_warming(db, _WARM_FROM_ROWS):
            self._start_warming(self._warm)
            warming = True
        # While the cache warms, what it does not hold yet is ranked by FTS5 (a common
        # word's postings cost more to read than FTS5 takes to rank it), never read on
        # the request path: the warming reads the rows' lengths and the frequent words.
        phrases = phrases_of(words, last_as_prefix=True)
        return cache.top(db, phrases, limit, every=True, held_only=warming)

    def _filed_common(self, db: sqlite3.Connection, words: list[str]) -> bool:
        """Whether the postings file is in step with the index and holds a word of
        ``words`` that FTS5 is slow to rank (as lower case: a word the tokenizer
        changes more is left to FTS5). Read before numpy is imported: the file's header
        and the index's stamp only."""
        header = read_header(self.postings_path)
        if header is None:
            return False
        if all(header.holding(word.lower()) < _SLOW_FOR_FTS5 for word in words):
            return False
        config = (_FTS_COLUMNS, _FTS_WEIGHTS, _TOKENIZE)
        return header.stamp == table_stamp(db, "entries_fts", config, _GENERATION)

    def _posting_cache(self) -> PostingCache:
        from doiget.fts5rank import PostingCache

        if self._cache is None:
            self._cache = PostingCache(
                "entries_fts",
                _FTS_COLUMNS,
                weights=_FTS_WEIGHTS,
                tokenize=_TOKENIZE,
                content=("entries", "id"),
                snapshot=self.postings_path,
                generation=_GENERATION,
            )
        return self._cache

    def _start_warming(self, target: Callable[[], None]) -> None:
        self._warming = threading.Thread(target=target, name="doiget-search-warm", daemon=True)
        self._warming.start()

    def _warm_first(self) -> None:
        """The ranking's import, then the warming, off the path of the first search."""
        _import_ranking()
        try:
            with self._turn:
                if self._db is None:  # closed meanwhile
                    return
                claimed = self._posting_cache().claim_warming(self._db, _WARM_FROM_ROWS)
        except sqlite3.Error as exc:
            logger.info("the search cache was left to warm as searched: %s", exc)
            return
        if claimed:
            self._warm()

    def _rows_by_id(self, ids: list[int]) -> list[sqlite3.Row]:
        """The rows of ``ids``, in that order."""
        found = {
            row["id"]: row
            for row in self._connect().execute(
                f"SELECT entries.id, {_COLUMNS} FROM entries "  # noqa: S608
                "WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids),),
            )
        }
        return [found[rowid] for rowid in ids if rowid in found]

    @_one_at_a_time
    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        """The ``limit`` most recently fetched entries, newest first."""
        db = self._connect()
        try:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM entries ORDER BY fetched_at DESC, id DESC LIMIT ?",  # noqa: S608
                (limit,),
            ).fetchall()
        except sqlite3.Error as exc:
            raise self._error("list", exc) from exc
        return [_result(row) for row in rows]

    @_one_at_a_time
    def unreadable(self) -> list[tuple[str, str]]:
        """The metadata files left out at the last sync: (file name, why), by name."""
        try:
            rows = self._connect().execute("SELECT key, reason FROM unreadable ORDER BY key")
            return [(f"{row['key']}.toml", row["reason"]) for row in rows]
        except sqlite3.Error as exc:
            raise self._error("list", exc) from exc

    @_one_at_a_time
    def count(self) -> int:
        """How many entries are indexed."""
        return int(self._connect().execute("SELECT count(*) FROM entries").fetchone()[0])


def _new_generation(db: sqlite3.Connection) -> None:
    """Mark a write to the index (in its transaction): no postings file written before
    it matches the index again."""
    db.execute(
        "INSERT OR REPLACE INTO meta(name, value) VALUES ('generation', ?)",
        (secrets.token_hex(16),),
    )


def search_apart(store_root: Path, query: str, limit: int) -> list[dict[str, Any]]:
    """:meth:`PaperIndex.search` in a worker process (see :mod:`doiget.workpool`), on
    the store's index opened once per process; the index is kept up to date by the
    process that serves the store."""
    return own(_store_index, store_root).search(query, limit)


def _store_index(store_root: Path) -> PaperIndex:
    return PaperIndex(Store(store_root))
