"""Exact BM25 top-k over an FTS5 table from postings kept in memory.

FTS5's ``bm25()`` scores every row a query matches, and for each phrase's IDF it walks
the phrase's whole doclist again on every query: for a word held by most of 100,000
rows that is about 100 ms whatever the limit. Here each phrase's postings (rowid and
weighted frequency) are read from FTS5 once and kept; a query intersects (every word
must match) or unites (any word may) them and scores the rows with ``bm25()``'s own
formula, in its floating-point order, so scores are bit-for-bit those of ``bm25()``
and the order of results is the same.

FTS5 does not hand out a row's weighted frequency, so it is recovered from the
one-phrase ``bm25()`` score (monotone in it, and an integer sum of column weights for
integer weights); every posting is checked by recomputing the scores it came from,
and a phrase whose check fails is not ranked here (the caller asks FTS5).

The cache follows the database: a commit by another connection (``PRAGMA
data_version``) empties it; this connection's own writes to the content table are
recorded by temporary triggers and applied row by row (a row's terms are read back
through a private probe table with the same tokenizer), so adding one paper does not
throw away what a thousand searches built.

Given a ``snapshot`` path, a cache that has warmed writes what it holds there (see
doiget.postingfile), and a cache starting empty takes the rows' lengths and the filed
postings from that file when its stamp is the table's current state: a process that
has just opened the table ranks the words a warming read before at once.
"""

# Table and column names in the SQL below are the caller's constants, never user text;
# every value binds as a parameter.
# ruff: noqa: S608

from __future__ import annotations

import itertools
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from doiget.postingfile import (
    Connection,
    Filed,
    Header,
    Mapped,
    read_header,
    table_stamp,
    write,
)

logger = logging.getLogger("doiget.fts5rank")

K1: Final = 1.2
B: Final = 0.75
# bm25()'s IDF floor for a phrase in half the rows or more.
_IDF_FLOOR: Final = 1e-6
# How many query words' tokens are remembered before the list starts again.
_WORDS_KEPT: Final = 10_000
# Applied one by one up to this many changed rows; past it the cache starts again.
_MAX_CHANGES: Final = 512
# A prefix covering at most this many words is ranked from those words' postings; one
# covering more has postings of its own, read from FTS5 for the prefix as a whole.
_PREFIX_WORDS_MAX: Final = 16
# At most this many phrases searched while the cache warms wait to be read first.
_ASKED_KEPT: Final = 64

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
# A row of a one-phrase bm25() query, as read into an array.
_SCORED_ROW: Final = np.dtype([("rowid", np.int64), ("score", np.float64)])


@dataclass(frozen=True, slots=True)
class Phrase:
    """One query word: its text, and whether it matches as a prefix (``"word"*``)."""

    word: str
    prefix: bool = False

    def expression(self) -> str:
        """The phrase as an FTS5 query."""
        return '"' + self.word.replace('"', '""') + '"' + ("*" if self.prefix else "")


@dataclass(slots=True)
class _RowValues:
    """A value for each of some rows, by ascending rowid: a phrase's postings (its
    weighted frequency per row: a sum of column weights, an integer well below 2**24,
    so float32 holds it exactly in half the memory) or every row's length."""

    rowids: IntArray
    values: npt.NDArray[Any]

    def at(self, wanted: IntArray, missing: float) -> FloatArray:
        """The value of each of ``wanted`` (as float64), ``missing`` where absent."""
        return _lookup(self.rowids, self.values, wanted, missing)

    def forget(self, rowid: int) -> bool:
        """Drop ``rowid``'s value; whether it had one."""
        at = int(np.searchsorted(self.rowids, rowid))
        if at < len(self.rowids) and self.rowids[at] == rowid:
            self.rowids = np.delete(self.rowids, at)
            self.values = np.delete(self.values, at)
            return True
        return False

    def learn(self, rowid: int, value: float) -> None:
        """Give ``rowid`` (not held) its value, in rowid order."""
        at = int(np.searchsorted(self.rowids, rowid))
        self.rowids = np.insert(self.rowids, at, rowid)
        self.values = np.insert(self.values, at, value)


def _varints(blob: bytes) -> list[int]:
    """The SQLite varints in ``blob`` (FTS5's record format), in order."""
    values: list[int] = []
    position = 0
    while position < len(blob):
        value = 0
        for count in range(9):
            byte = blob[position]
            position += 1
            if count == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    return values


def _row_sizes(blobs: Sequence[bytes], columns: int) -> IntArray:
    """Each docsize record's total of its ``columns`` column sizes, decoded at once."""
    joined = np.frombuffer(b"".join(blobs), dtype=np.uint8)
    ends = np.flatnonzero((joined & 0x80) == 0)
    starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else ends
    if len(ends) != len(blobs) * columns or (len(ends) and (ends - starts).max() > 3):
        # A size past 2**28 tokens, or a record of another shape: the slow, sure way.
        return np.array([sum(_varints(blob)) for blob in blobs], dtype=np.int64)
    varint_of = np.repeat(np.arange(len(ends)), ends - starts + 1)
    shift = 7 * (ends[varint_of] - np.arange(len(joined)))
    values = np.add.reduceat((joined & 0x7F).astype(np.int64) << shift, starts)
    sizes: IntArray = values.reshape(len(blobs), columns).sum(axis=1)
    return sizes


def _averages(conn: Connection, table: str) -> tuple[int, int]:
    """The table's row count and total token count, from FTS5's averages record (absent
    or empty while the table has never held a row)."""
    found = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    counts = _varints(bytes(found[0])) if found and found[0] else []
    return (counts[0], sum(counts[1:])) if counts else (0, 0)


def _idf(rows: int, hits: int) -> float:
    idf = float(np.log((rows - hits + 0.5) / (hits + 0.5)))
    return idf if idf > 0.0 else _IDF_FLOOR


@dataclass(slots=True)
class _Table:
    """The row count, total token count and each row's length of one FTS5 table."""

    rows: int
    tokens: int
    lengths: _RowValues

    @classmethod
    def read(cls, conn: Connection, table: str, columns: int) -> _Table:
        rows, tokens = _averages(conn, table)
        # Read row by row: a list of every row's tuple (a hundred thousand of them) made
        # the garbage collector scan the whole heap as it filled; the blobs it keeps
        # are not tracked.
        ids: list[int] = []
        blobs: list[bytes] = []
        for rowid, size in conn.execute(f"SELECT id, sz FROM {table}_docsize ORDER BY id"):
            ids.append(rowid)
            blobs.append(bytes(size))
        lengths = _RowValues(
            np.array(ids, dtype=np.int64), _row_sizes(blobs, columns).astype(np.float64)
        )
        return cls(rows, tokens, lengths)

    @property
    def avgdl(self) -> float:
        return float(self.tokens) / float(self.rows) if self.rows else 0.0


def _term_weights(saturation: FloatArray, freq: FloatArray, idf: float) -> FloatArray:
    """One phrase's share of the score, exactly as bm25() computes it."""
    result: FloatArray = idf * ((freq * (K1 + 1.0)) / (freq + saturation))
    return result


class PostingCache:
    """Cached postings of one FTS5 table for one connection; use under the caller's lock,
    outside any transaction of the caller's.

    ``budget`` bounds the postings held (12 bytes each: 6,000,000 is about 70 MiB);
    past it the least recently searched phrase goes.

    ``content`` names the table whose rows the FTS5 table indexes and that table's rowid
    column, when this connection writes through it (its writes are then applied row by
    row); without it every write of this connection empties the cache.

    ``snapshot`` is the file the postings are kept in between processes (``persist``
    writes it, a cache starting empty takes what it holds), and ``generation`` an SQL
    expression whose value the writer changes on each of its writes (part of the
    file's stamp).
    """

    def __init__(
        self,
        table: str,
        columns: Sequence[str],
        *,
        weights: Sequence[float] | None = None,
        tokenize: str,
        content: tuple[str, str] | None = None,
        budget: int = 6_000_000,
        snapshot: Path | None = None,
        generation: str = "''",
    ) -> None:
        self.table = table
        self.columns = tuple(columns)
        self.weights = tuple(weights) if weights is not None else (1.0,) * len(self.columns)
        self.tokenize = tokenize
        self.content = content
        self.budget = budget
        self.snapshot = snapshot
        self.generation = generation
        self._conn: Connection | None = None
        self._state: tuple[int, int] | None = None
        self._stats: _Table | None = None
        self._postings: OrderedDict[Phrase, _RowValues] = OrderedDict()
        self._held = 0
        self._terms: dict[str, str | None] = {}
        # The words each prefix covers, as the table last read has them.
        self._covering: dict[str, list[str] | None] = {}
        self._cold = True
        self._generation = 0
        # Phrases searched while the cache warmed and not held: it reads them first.
        self._asked: deque[Phrase] = deque(maxlen=_ASKED_KEPT)
        # The snapshot taken when the cache started empty, and the phrases of it not
        # taken into memory yet (each is checked as it is taken).
        self._file: Mapped | None = None
        self._filed: dict[Phrase, Filed] = {}
        # The stamp of a snapshot found damaged: written anew even though it is current.
        self._rejected: str | None = None
        self._reads = 0

    # -- public -----------------------------------------------------------------

    @property
    def phrases_held(self) -> int:
        """How many phrases' postings are cached."""
        return len(self._postings)

    @property
    def phrases_read(self) -> int:
        """How many phrases' postings were read from the table (not the snapshot)."""
        return self._reads

    def holders(self, conn: Connection, words: Iterable[str]) -> dict[str, int]:
        """How many rows hold each of ``words`` whose postings (as a whole word) are
        in memory; words not cached are left out."""
        self._follow(conn)
        counts = {}
        for word in words:
            posting = self._in_memory(Phrase(word))
            if posting is not None:
                counts[word] = len(posting.rowids)
        return counts

    def rows(self, conn: Connection) -> int:
        """How many rows the table has (from FTS5's averages record: one row read)."""
        self._follow(conn)
        return self._stats.rows if self._stats is not None else _averages(conn, self.table)[0]

    def claim_warming(self, conn: Connection, rows_at_least: int) -> bool:
        """True once after each time the cache starts empty on a table of at least
        ``rows_at_least`` rows: the caller then warms it (``warm``) off the request path."""
        rows = self.rows(conn)  # one record read: the rows' lengths are the warming's to read
        if not self._cold:
            return False
        self._cold = False
        return rows >= rows_at_least

    def top(
        self,
        conn: Connection,
        phrases: Sequence[Phrase],
        limit: int,
        *,
        every: bool,
        among: IntArray | None = None,
        held_only: bool = False,
    ) -> list[tuple[int, float]] | None:
        """The best ``limit`` rows as (rowid, bm25 score), best (lowest) first, ties by
        rowid; rows matching every phrase (``every``) or any, and only rows of ``among``
        when given. None when a phrase cannot be ranked here (not one token, or its
        postings failed their check), and with ``held_only`` when what ranking needs
        is not all in memory yet (the rows' lengths, a phrase's postings): while the
        cache warms, reading a common word's postings on the request path would cost
        more than the caller's own way of ranking."""
        self._follow(conn)
        terms = [self._term(conn, phrase.word) for phrase in phrases]
        _end_implicit_transaction(conn)
        # The probe table's writes count as this connection's changes: not a change of
        # the indexed rows.
        self._state = (self._state[0], _total_changes(conn)) if self._state else None
        if not phrases or any(term is None for term in terms):
            return None
        postings = [
            self._posting(conn, Phrase(term, phrase.prefix), build=not held_only)
            for term, phrase in zip(terms, phrases, strict=True)
            if term is not None
        ]
        if any(posting is None for posting in postings) or self._stats is None:
            return None  # the rows' lengths not read yet (held_only): the warming's first
        return self._rank([p for p in postings if p is not None], limit, every=every, among=among)

    def warm(
        self,
        reader: Connection,
        phrases: Iterable[Phrase],
        holding: Callable[[], AbstractContextManager[Connection | None]],
    ) -> None:
        """Read the rows' lengths, then cache ``phrases``' postings, read on ``reader``
        (a connection of the caller's own, so no search waits while a long list is
        read), until the cache is two thirds full (the rest is left to what is
        searched). ``holding()`` gives the searching
        connection under the caller's lock, or None once it is closed; a posting read
        while the table changed is thrown away and the table read again."""
        stats: _Table | None = None
        since = -1
        for phrase in itertools.chain((None,), self._asked_first(phrases)):
            with holding() as conn:
                if conn is None:
                    return
                self._follow(conn)
                if self._held >= self.budget * 2 // 3:
                    return
                if phrase is not None and self._in_memory(phrase) is not None:
                    continue
                now = self._generation
            if stats is None or since != now:
                stats, since = _Table.read(reader, self.table, len(self.columns)), now
            built = None if phrase is None else self._build(reader, stats, phrase)
            with holding() as conn:
                if conn is None:
                    return
                self._follow(conn)
                if since != self._generation:
                    continue
                if self._stats is None:  # the rows' lengths, read off the request path
                    self._stats = stats
                if phrase is not None and built is not None:
                    self._keep(phrase, built)

    def persist(self, holding: Callable[[], AbstractContextManager[Connection | None]]) -> None:
        """Write what the cache holds to ``snapshot``, stamped with the table's state it
        follows, unless it was taken from that file or the file already has that stamp
        (another process wrote it) and was not found damaged here (``holding()`` as for
        ``warm``). The arrays are taken under the caller's lock (a write replaces them,
        never changes them in place) and written outside it."""
        if self.snapshot is None:
            return
        with holding() as conn:
            if conn is None:
                return
            self._follow(conn)
            since = self._generation
            stamp = self._stamp(conn)
            self._follow(conn)  # a commit of another connection before the stamp: not ours
            stats = self._stats
            if since != self._generation or stats is None or self._file is not None:
                return
            on_disk = read_header(self.snapshot)
            if on_disk is not None and on_disk.stamp == stamp != self._rejected:
                return
            counts = (stats.rows, stats.tokens)
            lengths = (stats.lengths.rowids, stats.lengths.values)
            phrases = [(p.word, p.prefix, v.rowids, v.values) for p, v in self._postings.items()]
        write(self.snapshot, stamp, counts, lengths, phrases)

    def _asked_first(self, phrases: Iterable[Phrase]) -> Iterator[Phrase]:
        """``phrases``, each after the phrases searches have asked for meanwhile."""
        for phrase in itertools.chain(phrases, (None,)):
            while self._asked:
                yield self._asked.popleft()
            if phrase is not None:
                yield phrase

    # -- keeping in step --------------------------------------------------------

    def _follow(self, conn: Connection) -> None:
        """Bring the cache up to the database this connection now sees; count a
        generation each time the table changed."""
        if conn is not self._conn:
            self._conn = conn
            self._terms.clear()
            self._prepare(conn)
            self._reset()
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        state = (version, _total_changes(conn))
        if state == self._state:
            return
        if self._state is None or version != self._state[0] or self.content is None:
            self._reset()
            self._adopt(conn)
        else:
            self._apply_own_writes(conn)
        _end_implicit_transaction(conn)
        self._state = (version, _total_changes(conn))
        self._generation += 1
        self._covering.clear()

    def _reset(self) -> None:
        self._postings.clear()
        self._held = 0
        self._stats = None
        self._cold = True
        self._file = None
        self._filed = {}
        if self._conn is not None and self.content is not None:
            self._conn.execute(f"DELETE FROM temp.{self.table}_changed")

    def _prepare(self, conn: Connection) -> None:
        probe = f"temp.{self.table}_probe"
        names = ", ".join(self.columns)
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {probe} USING fts5({names}, "
            f"tokenize='{self.tokenize}')"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{self.table}_probe_terms "
            f"USING fts5vocab(temp, {self.table}_probe, 'instance')"
        )
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{self.table}_words "
            f"USING fts5vocab(main, {self.table}, 'row')"
        )
        if self.content is None:
            return
        source, key = self.content
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS temp.{self.table}_changed(rowid INTEGER PRIMARY KEY)"
        )
        for event, row in (("INSERT", "new"), ("DELETE", "old"), ("UPDATE", "old")):
            conn.execute(
                f"CREATE TEMP TRIGGER IF NOT EXISTS {self.table}_seen_{event.lower()} "
                f"AFTER {event} ON main.{source} BEGIN "
                f"INSERT OR IGNORE INTO {self.table}_changed(rowid) VALUES ({row}.{key}); END"
            )

    def _apply_own_writes(self, conn: Connection) -> None:
        changed = [
            int(row[0]) for row in conn.execute(f"SELECT rowid FROM temp.{self.table}_changed")
        ]
        conn.execute(f"DELETE FROM temp.{self.table}_changed")
        if changed:
            self._filed = {}  # filed before these rows changed
        if self._stats is None:
            return
        if len(changed) > _MAX_CHANGES:
            self._reset()
            return
        stats = self._stats
        stats.rows, stats.tokens = _averages(conn, self.table)
        for rowid in changed:
            self._forget_row(rowid)
            self._learn_row(conn, rowid)

    def _forget_row(self, rowid: int) -> None:
        assert self._stats is not None
        self._stats.lengths.forget(rowid)
        for posting in self._postings.values():
            self._held -= int(posting.forget(rowid))

    def _learn_row(self, conn: Connection, rowid: int) -> None:
        """Add a row this connection wrote to every cached posting it belongs in."""
        assert self._stats is not None and self.content is not None
        source, key = self.content
        names = ", ".join(self.columns)
        values = conn.execute(
            f"SELECT {names} FROM main.{source} WHERE {key} = ?", (rowid,)
        ).fetchone()
        size = conn.execute(
            f"SELECT sz FROM {self.table}_docsize WHERE id = ?", (rowid,)
        ).fetchone()
        if values is None or size is None:
            return
        self._stats.lengths.learn(rowid, float(sum(_varints(bytes(size[0])))))
        instances = self._instances(conn, tuple(values))
        for phrase, posting in self._postings.items():
            freq = sum(
                self.weights[column]
                for term, column in instances
                if term == phrase.word or (phrase.prefix and term.startswith(phrase.word))
            )
            if freq:
                posting.learn(rowid, freq)
                self._held += 1

    def _instances(self, conn: Connection, values: tuple[Any, ...]) -> list[tuple[str, int]]:
        """Each token of one row as (term, column number), as the FTS5 table sees it."""
        probe = f"temp.{self.table}_probe"
        conn.execute(f"DELETE FROM {probe}")
        marks = ", ".join("?" for _ in self.columns)
        conn.execute(f"INSERT INTO {probe}({', '.join(self.columns)}) VALUES ({marks})", values)
        number = {name: index for index, name in enumerate(self.columns)}
        return [
            (str(term), number[str(column)])
            for term, column in conn.execute(f"SELECT term, col FROM {probe}_terms")
        ]

    # -- the snapshot -----------------------------------------------------------

    def _stamp(self, conn: Connection) -> str:
        config = (self.columns, self.weights, self.tokenize)
        return table_stamp(conn, self.table, config, self.generation)

    def _adopt(self, conn: Connection) -> None:
        """Take the rows' lengths and the filed phrases from the snapshot (the cache
        just emptied) when its stamp is the table's current state and it passes its
        checks; it is then warm, with nothing read from the table."""
        if self.snapshot is None:
            return
        header = read_header(self.snapshot)
        if header is None or header.stamp != self._stamp(conn):
            return
        try:
            mapped = Mapped(self.snapshot, header)
            rowids = mapped.rowids(header.lengths[0])
            lengths = mapped.lengths()
            if len(rowids) != len(lengths):
                raise ValueError("as many lengths as rows")
        except (OSError, ValueError) as exc:
            self._reject(header, exc)
            return
        self._stats = _Table(header.rows, header.tokens, _RowValues(rowids, lengths))
        self._file = mapped
        self._filed = {Phrase(filed.word, filed.prefix): filed for filed in header.phrases}
        self._cold = False

    def _reject(self, header: Header, exc: Exception) -> None:
        logger.info("the search postings file %s was left unused: %s", self.snapshot, exc)
        self._rejected = header.stamp

    def _in_memory(self, phrase: Phrase) -> _RowValues | None:
        """The phrase's postings if held, or filed (taken from the snapshot now);
        a filed array that fails its checks ends the use of the snapshot, and the
        cache warms again (which writes it anew)."""
        found = self._postings.get(phrase)
        if found is not None:
            self._postings.move_to_end(phrase)
            return found
        filed = self._filed.pop(phrase, None)
        if filed is None or self._file is None:
            return None
        try:
            rowids = self._file.rowids(filed.rowids)
            frequencies = self._file.frequencies(filed.frequencies)
            if len(rowids) != len(frequencies):
                raise ValueError("as many frequencies as rowids")
        except ValueError as exc:
            self._reject(self._file.header, exc)
            self._file, self._filed, self._cold = None, {}, True
            return None
        posting = _RowValues(rowids, frequencies)
        self._keep(phrase, posting)
        return posting

    # -- postings ---------------------------------------------------------------

    def _term(self, conn: Connection, word: str) -> str | None:
        """The one token FTS5 makes of ``word``, or None when it makes none or several."""
        if word not in self._terms:
            if len(self._terms) >= _WORDS_KEPT:
                self._terms.clear()
            tokens = self._instances(conn, (word,) + (None,) * (len(self.columns) - 1))
            self._terms[word] = tokens[0][0] if len(tokens) == 1 else None
        return self._terms[word]

    def _table_stats(self, conn: Connection) -> _Table:
        if self._stats is None:
            self._stats = _Table.read(conn, self.table, len(self.columns))
        return self._stats

    def _posting(self, conn: Connection, phrase: Phrase, *, build: bool) -> _RowValues | None:
        """The phrase's postings: held or filed, summed from held words' (a prefix), or
        read from the table when ``build`` (else None)."""
        found = self._in_memory(phrase)
        if found is not None:
            return found
        if phrase.prefix:
            words = self._covered(conn, phrase.word)
            if words is not None:
                summed = self._summed(conn, words, build=build)
                if summed is not None and len(words) > 1:  # a sum of its own: keep it
                    self._keep(phrase, summed)
                return summed
        if not build:
            self._asked.append(phrase)  # the warming reads it next
            return None
        built = self._build(conn, self._table_stats(conn), phrase)
        if built is not None:
            self._keep(phrase, built)
        return built

    def _covered(self, conn: Connection, token: str) -> list[str] | None:
        """The words of the table that start with ``token``, when there are at most
        ``_PREFIX_WORDS_MAX`` of them (None past that); remembered until the table
        changes (reading them counts each word's rows: milliseconds for a common one)."""
        if token in self._covering:
            return self._covering[token]
        if not token or ord(token[-1]) >= 0x10FFFF:
            return None
        after = token[:-1] + chr(ord(token[-1]) + 1)  # the first text past the prefix
        rows = conn.execute(
            f"SELECT term FROM temp.{self.table}_words WHERE term >= ? AND term < ? LIMIT ?",
            (token, after, _PREFIX_WORDS_MAX + 1),
        ).fetchall()
        words = [str(row[0]) for row in rows] if len(rows) <= _PREFIX_WORDS_MAX else None
        if len(self._covering) >= _WORDS_KEPT:
            self._covering.clear()
        self._covering[token] = words
        return words

    def _summed(self, conn: Connection, words: list[str], *, build: bool) -> _RowValues | None:
        """A prefix's postings from those of the ``words`` it covers: FTS5 counts each
        token a prefix matches, so a row's weighted frequency for the prefix is the sum
        of the covered words' (whole numbers, so exact), and the prefix matches the rows
        holding any of them. A prefix covering one word is that word's postings, not a
        copy. None when a word's postings cannot be had."""
        if build:
            self._table_stats(conn)  # what ranking the rows needs, even when none match
        parts = [self._posting(conn, Phrase(word), build=build) for word in words]
        held = [part for part in parts if part is not None]
        if len(held) < len(parts):
            return None
        if len(held) == 1:  # the usual case: the word itself, which no other extends
            return held[0]
        rowids = _union([part.rowids for part in held])
        values = np.zeros(len(rowids), dtype=np.float64)
        for part in held:
            values[np.searchsorted(rowids, part.rowids)] += part.values
        return _RowValues(rowids, values.astype(np.float32))

    def _keep(self, phrase: Phrase, posting: _RowValues) -> None:
        """Cache ``posting``; drop the least recently used past the budget."""
        replaced = self._postings.pop(phrase, None)
        if replaced is not None:
            self._held -= len(replaced.rowids)
        self._postings[phrase] = posting
        self._held += len(posting.rowids)
        while self._held > self.budget and len(self._postings) > 1:
            _, dropped = self._postings.popitem(last=False)
            self._held -= len(dropped.rowids)

    def _build(self, conn: Connection, stats: _Table, phrase: Phrase) -> _RowValues | None:
        """The phrase's postings recovered from its one-phrase bm25() scores, or None
        when recomputing the scores from them does not give those scores exactly."""
        self._reads += 1
        weights = ", ".join(repr(float(weight)) for weight in self.weights)
        # Read row by row into arrays: a list of every row first would make the garbage
        # collector scan the whole heap, tens of milliseconds, as it filled.
        cursor = conn.execute(
            f"SELECT rowid, bm25({self.table}, {weights}) FROM {self.table} "
            f"WHERE {self.table} MATCH ? ORDER BY rowid",
            (phrase.expression(),),
        )
        rows = np.fromiter(map(tuple, cursor), dtype=_SCORED_ROW)  # any row factory
        rowids: IntArray = rows["rowid"]
        scores: FloatArray = rows["score"]
        if not len(rows):
            return _RowValues(rowids, scores.astype(np.float32))
        idf = _idf(stats.rows, len(rows))
        saturation = self._saturation(stats, rowids)
        share = -scores / idf
        with np.errstate(divide="ignore", invalid="ignore"):
            freq = np.rint(share * saturation / ((K1 + 1.0) - share))
        if not np.array_equal(-1.0 * (0.0 + _term_weights(saturation, freq, idf)), scores):
            return None
        return _RowValues(rowids, freq.astype(np.float32))

    @staticmethod
    def _saturation(stats: _Table, rowids: IntArray) -> FloatArray:
        result: FloatArray = K1 * (1 - B + B * stats.lengths.at(rowids, np.nan) / stats.avgdl)
        return result

    def _rank(
        self, postings: list[_RowValues], limit: int, *, every: bool, among: IntArray | None
    ) -> list[tuple[int, float]]:
        stats = self._stats
        assert stats is not None
        longest = max(len(posting.rowids) for posting in postings)
        if among is not None and 8 * len(among) < longest:
            # A few rows asked about: look each up in the lists rather than walk them.
            present = np.stack([posting.at(among, -1.0) >= 0 for posting in postings])
            rowids = among[present.all(axis=0) if every else present.any(axis=0)]
        elif every:
            # From the shortest list, keep the rows every other list holds too.
            rowids = min((posting.rowids for posting in postings), key=len)
            for posting in postings:
                rowids = rowids[posting.at(rowids, -1.0) >= 0]
        else:
            rowids = _union([posting.rowids for posting in postings])
        if among is not None and len(rowids) and 8 * len(among) >= longest:
            rowids = rowids[np.isin(rowids, among)]
        freqs = [posting.at(rowids, 0.0) for posting in postings]
        if not len(rowids) or limit <= 0:
            return []
        saturation = self._saturation(stats, rowids)
        score = np.zeros(len(rowids))
        for posting, freq in zip(postings, freqs, strict=True):
            score += _term_weights(saturation, freq, _idf(stats.rows, len(posting.rowids)))
        final = -1.0 * score
        if limit < len(final):
            bound = np.partition(final, limit - 1)[limit - 1]
            keep = np.flatnonzero(final <= bound)
        else:
            keep = np.arange(len(final))
        order = keep[np.lexsort((rowids[keep], final[keep]))][:limit]
        return [(int(rowids[i]), float(final[i])) for i in order]


def frequent_terms(conn: Connection, table: str, least: int) -> list[str]:
    """The terms of ``table`` held by at least ``least`` rows, most held first.

    Reads the whole index: run it on a connection of its own, off the request path.
    """
    vocabulary = f"temp.{table}_frequent"
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary} USING fts5vocab(main, {table}, 'row')"
    )
    held = conn.execute(f"SELECT term, doc FROM {vocabulary} WHERE doc >= ?", (least,)).fetchall()
    return [str(term) for term, _ in sorted(held, key=lambda row: (-int(row[1]), str(row[0])))]


def _union(lists: list[IntArray]) -> IntArray:
    """The rowids of any of the ascending ``lists``, ascending, once each: marked in a
    table indexed by rowid when they are dense enough, else sorted together."""
    held = [rowids for rowids in lists if len(rowids)]
    if not held:
        return np.zeros(0, dtype=np.int64)
    high = max(int(rowids[-1]) for rowids in held)
    if min(int(rowids[0]) for rowids in held) >= 0 and high < 4 * sum(map(len, held)):
        marked = np.zeros(high + 1, dtype=bool)
        for rowids in held:
            marked[rowids] = True
        dense: IntArray = np.flatnonzero(marked).astype(np.int64)
        return dense
    merged: IntArray = np.unique(np.concatenate(held))
    return merged


def _lookup(
    keys: IntArray, values: npt.NDArray[Any], wanted: IntArray, missing: float
) -> FloatArray:
    """``values`` (as float64) at each of ``wanted`` in the ascending ``keys``, ``missing``
    where a key is absent. Rowids a few times fewer than the span they cover go through
    a table indexed by rowid (one pass each way) when many are wanted; sparse ones, or
    a few wanted, through a binary search."""
    if not len(keys) or not len(wanted):
        return np.full(len(wanted), missing)
    low = min(int(keys[0]), int(wanted.min()))
    high = max(int(keys[-1]), int(wanted.max()))
    if low >= 0 and high < 4 * (len(keys) + len(wanted)) and 32 * len(wanted) >= high:
        table = np.full(high + 1, missing)
        table[keys] = values
        dense: FloatArray = table[wanted]
        return dense
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    sparse: FloatArray = np.where(keys[at] == wanted, values[at].astype(np.float64), missing)
    return sparse


def _end_implicit_transaction(conn: Connection) -> None:
    """Commit the transaction Python's sqlite3 opens by itself before the probe table's
    writes: left open, it would hold this connection to the snapshot it began in, blind
    to every later commit of another connection. (apsw opens none.)"""
    commit = getattr(conn, "commit", None)
    if commit is not None and getattr(conn, "in_transaction", False) is True:
        commit()


def _total_changes(conn: Connection) -> int:
    """Rows this connection has changed since it opened (sqlite3: attribute; apsw: method)."""
    counted = conn.total_changes  # type: ignore[attr-defined]
    return int(counted() if callable(counted) else counted)


def phrases_of(words: Iterable[str], *, last_as_prefix: bool) -> list[Phrase]:
    """One phrase per word; the last a prefix when ``last_as_prefix``."""
    listed = list(words)
    return [
        Phrase(word, prefix=last_as_prefix and at == len(listed) - 1)
        for at, word in enumerate(listed)
    ]
