"""Postings of an FTS5 table kept in a file beside its database, so a process that has
just opened the table ranks its common words from memory at once.

The file holds the table's row and token counts, every row's length, and each phrase's
postings (ascending rowids, weighted frequencies), under a stamp of the table's state:
FTS5's structure record (rewritten by every write to the table, whoever makes it),
its averages record, and a generation the writer changes on each of its writes (the
structure alone starts again when the table is rebuilt). A file whose stamp is not
the table's current one is not used; neither is one that fails any check (its size,
its header, an array's CRC-32 or order): it is a cache, rebuilt, never trusted.

Layout: ``MAGIC``, the header's length (8 bytes, little endian), the header (JSON),
then the arrays, each at an 8-byte boundary. The arrays are mapped, not read: pages
come from the page cache as they are used, and the processes serving one store share
them. This module imports numpy only to map or write arrays, so a caller can read the
header and the stamp before numpy is loaded.
"""

# The table name and the generation in the SQL below are the caller's constants.
# ruff: noqa: S608

from __future__ import annotations

import hashlib
import json
import mmap
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from doiget.atomicfile import write_atomic

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAGIC: Final = b"doiget postings 1\n"
_LENGTH_BYTES: Final = 8
_ALIGN: Final = 8
# The header is a small part of the file: a longer one is not a header.
_HEADER_MAX: Final = 64 * 1024 * 1024
_ROWIDS: Final = "<i8"
_LENGTHS: Final = "<f8"
_FREQUENCIES: Final = "<f4"


class Connection(Protocol):
    """What is used of a connection: sqlite3's and apsw's both have it."""

    def execute(self, sql: str, bindings: Sequence[Any] = ..., /) -> Any: ...


def table_stamp(
    conn: Connection,
    table: str,
    config: tuple[Sequence[str], Sequence[float], str],
    generation: str,
) -> str:
    """The stamp of ``table``'s current state: its ``config`` (columns, weights,
    tokenizer), ``generation`` (an SQL expression of the writer's) and FTS5's structure
    and averages records, read in one statement, so from one snapshot."""
    found = conn.execute(
        f"SELECT ({generation}), "
        f"(SELECT block FROM {table}_data WHERE id = 10), "
        f"(SELECT block FROM {table}_data WHERE id = 1)"
    ).fetchone()
    parts = [bytes(part) if isinstance(part, bytes | memoryview) else part for part in found]
    columns, weights, tokenize = config
    described = (tuple(columns), tuple(map(float, weights)), tokenize, *parts)
    return hashlib.sha256(repr(described).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Place:
    """Where one array lies in the file: byte offset, element count, CRC-32."""

    offset: int
    count: int
    crc: int


@dataclass(frozen=True, slots=True)
class Filed:
    """One phrase's postings in the file."""

    word: str
    prefix: bool
    rowids: Place
    frequencies: Place


@dataclass(frozen=True, slots=True)
class Header:
    stamp: str
    size: int
    rows: int
    tokens: int
    lengths: tuple[Place, Place]
    phrases: tuple[Filed, ...]

    def holding(self, word: str) -> int:
        """How many rows hold ``word`` (a whole word), 0 when it is not filed."""
        for filed in self.phrases:
            if filed.word == word and not filed.prefix:
                return filed.rowids.count
        return 0


def _place(value: Any) -> Place:
    offset, count, crc = value
    if not all(isinstance(part, int) and part >= 0 for part in (offset, count, crc)):
        raise ValueError("not a place")
    if offset % _ALIGN:
        raise ValueError("not aligned")
    return Place(offset, count, crc)


def read_header(path: Path) -> Header | None:
    """The file's header, or None when there is no file or it is not one of ours."""
    try:
        with path.open("rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                return None
            length = int.from_bytes(handle.read(_LENGTH_BYTES), "little")
            if length > _HEADER_MAX:
                return None
            raw = json.loads(handle.read(length))
        phrases = tuple(
            Filed(str(word), bool(prefix), _place(rowids), _place(freqs))
            for word, prefix, rowids, freqs in raw["phrases"]
        )
        return Header(
            stamp=str(raw["stamp"]),
            size=int(raw["size"]),
            rows=int(raw["rows"]),
            tokens=int(raw["tokens"]),
            lengths=(_place(raw["lengths"][0]), _place(raw["lengths"][1])),
            phrases=phrases,
        )
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


class Mapped:
    """The arrays of a file whose header was read: each checked when first taken."""

    def __init__(self, path: Path, header: Header) -> None:
        with path.open("rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        if len(self._map) != header.size:
            raise ValueError("the file is not the size its header gives")
        self.header = header

    def array(self, place: Place, dtype: str, *, ascending: bool = False) -> npt.NDArray[Any]:
        """The array at ``place``, read-only; ValueError when it lies outside the file,
        fails its CRC-32, holds a value that is negative or not finite (frequencies,
        lengths) or, with ``ascending``, rowids out of order."""
        import numpy as np

        width = np.dtype(dtype).itemsize
        end = place.offset + place.count * width
        if end > len(self._map):
            raise ValueError("an array runs past the end of the file")
        view = memoryview(self._map)[place.offset : end]
        if zlib.crc32(view) != place.crc:
            raise ValueError("an array fails its CRC-32")
        values: npt.NDArray[Any] = np.frombuffer(view, dtype=dtype)
        if ascending:
            if len(values) > 1 and not bool(np.all(values[1:] > values[:-1])):
                raise ValueError("rowids out of order")
        elif not bool(np.all(np.isfinite(values) & (values >= 0))):
            raise ValueError("a value that is no frequency or length")
        return values

    def rowids(self, place: Place) -> npt.NDArray[np.int64]:
        return self.array(place, _ROWIDS, ascending=True)

    def lengths(self) -> npt.NDArray[np.float64]:
        return self.array(self.header.lengths[1], _LENGTHS)

    def frequencies(self, place: Place) -> npt.NDArray[np.float32]:
        return self.array(place, _FREQUENCIES)


def write(
    path: Path,
    stamp: str,
    counts: tuple[int, int],
    lengths: tuple[npt.NDArray[Any], npt.NDArray[Any]],
    phrases: Sequence[tuple[str, bool, npt.NDArray[Any], npt.NDArray[Any]]],
) -> None:
    """Replace ``path`` (temp file, fsync, rename) with the postings of a table whose
    state is ``stamp``: its (rows, tokens) ``counts``, every row's (rowids, lengths) and
    each phrase's (word, prefix, rowids, frequencies)."""
    import numpy as np

    # Written from the arrays themselves (those held are contiguous, of these types
    # already): no copy of the postings is made.
    arrays: list[npt.NDArray[Any]] = []

    def laid(values: npt.NDArray[Any], dtype: str) -> list[int]:
        arrays.append(np.ascontiguousarray(values, dtype=dtype))
        return [len(arrays) - 1, len(values), zlib.crc32(arrays[-1].data)]

    length_refs = [laid(lengths[0], _ROWIDS), laid(lengths[1], _LENGTHS)]
    phrase_refs = [
        (word, prefix, laid(rowids, _ROWIDS), laid(freqs, _FREQUENCIES))
        for word, prefix, rowids, freqs in phrases
    ]

    def header(start: int) -> bytes:
        offsets = [start]
        for values in arrays:
            offsets.append(offsets[-1] + _aligned(values.nbytes))

        def placed(ref: list[int]) -> list[int]:
            return [offsets[ref[0]], ref[1], ref[2]]

        text = json.dumps(
            {
                "stamp": stamp,
                "size": offsets[-1],
                "rows": counts[0],
                "tokens": counts[1],
                "lengths": [placed(ref) for ref in length_refs],
                "phrases": [[w, p, placed(r), placed(f)] for w, p, r, f in phrase_refs],
            }
        ).encode()
        return text + b" " * (-(len(MAGIC) + _LENGTH_BYTES + len(text)) % _ALIGN)

    # The header gives the arrays' offsets, which follow the header: lay it out until
    # its length settles (the offsets' digits can lengthen it once or twice).
    start = 0
    while True:
        text = header(start)
        if len(MAGIC) + _LENGTH_BYTES + len(text) == start:
            break
        start = len(MAGIC) + _LENGTH_BYTES + len(text)
    parts: list[bytes | memoryview] = [MAGIC, len(text).to_bytes(_LENGTH_BYTES, "little"), text]
    for values in arrays:
        parts += [values.data.cast("B"), bytes(_aligned(values.nbytes) - values.nbytes)]
    write_atomic(path, parts)


def _aligned(size: int) -> int:
    return size + -size % _ALIGN
