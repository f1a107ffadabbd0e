"""A collection's dense vectors in a flat file beside the SQLite database, read by NumPy.

Row ``slot`` of a vector file is one unit-length float32 vector (``dimension`` floats,
no header), so an exact cosine scan is one matrix-vector product over a memory map:
no copy, no decoding, memory bandwidth as the limit. What the rows mean lives in
SQLite (each chunk row names its slot; the collection's row names its file and how
many slots are committed); this module only moves bytes:

* :func:`append` writes rows after the committed ones and fsyncs them. The caller does
  it inside the SQLite write transaction that records them, before the commit, so a
  crash leaves at most unreferenced bytes past the committed count, which the next
  append overwrites. Committed rows are never written again.
* :func:`write_new` writes a whole new file (temp, fsync, rename) for compaction and
  for migrating an index written by an earlier release; the caller records its name
  in the same transaction and removes the old file after the commit. A reader that
  still maps the old file keeps reading it until it notices the new name.
* :class:`Maps` keeps one read-only map per file, grown when the committed count
  passes what is mapped. Files grow by half again at a time, so a map usually covers
  the next appends too.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

from doiget.atomicfile import fsync_dir, move_into_place

if TYPE_CHECKING:
    from numpy.typing import NDArray

SUFFIX: Final = ".f32"
GROWTH: Final = 1.5
MIN_ROWS: Final = 1024


def file_name(slug: str) -> str:
    """A new, never reused, file name for a collection's vectors."""
    return f"{slug}-{os.urandom(8).hex()}{SUFFIX}"


def _row_bytes(dimension: int) -> int:
    return 4 * dimension


def append(path: Path, start: int, rows: NDArray[np.float32]) -> None:
    """Write ``rows`` at slot ``start`` onwards, durably (file and its directory entry)."""
    data = np.ascontiguousarray(rows, dtype=np.float32)
    size = _row_bytes(data.shape[1])
    created = not path.exists()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        needed = (start + len(data)) * size
        current = os.fstat(fd).st_size
        if current < needed:
            # Room for the appends after these too, so readers' maps stay large enough.
            os.ftruncate(fd, max(needed, int(current * GROWTH), MIN_ROWS * size))
        view = memoryview(data.tobytes())
        written = 0
        while written < len(view):
            written += os.pwrite(fd, view[written:], start * size + written)
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)


def write_new(folder: Path, name: str, batches: Iterable[NDArray[np.float32]]) -> None:
    """Write a whole vector file ``folder / name`` from ``batches`` of rows, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            for batch in batches:
                handle.write(np.ascontiguousarray(batch, dtype=np.float32).tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        move_into_place(Path(temp), folder / name)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def remove(folder: Path, slug: str, *, keep: str | None = None) -> None:
    """Delete the collection's vector files (and abandoned temp files) but ``keep``.

    Only called by the one writer that holds the database's write lock, or for a file
    that no committed state names any more.
    """
    for path in folder.glob(f"*{slug}-*"):
        if path.name != keep:
            path.unlink(missing_ok=True)


class Maps:
    """Read-only maps of vector files, one per file, shared by the index's threads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._maps: dict[str, NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    def rows(self, name: str, slots: int, dimension: int) -> NDArray[np.float32]:
        """The first ``slots`` rows of file ``name`` (FileNotFoundError once it is replaced)."""
        with self._lock:
            matrix = self._maps.get(name)
            if matrix is None or len(matrix) < slots:
                matrix = self._map(name, dimension)
                slug = name.rsplit("-", 1)[0]
                for other in [key for key in self._maps if key.rsplit("-", 1)[0] == slug]:
                    del self._maps[other]
                self._maps[name] = matrix
        if len(matrix) < slots:
            raise ValueError(f"vector file {name} holds {len(matrix)} rows, {slots} committed")
        return matrix[:slots]

    def _map(self, name: str, dimension: int) -> NDArray[np.float32]:
        with (self.folder / name).open("rb") as handle:
            rows = os.fstat(handle.fileno()).st_size // _row_bytes(dimension)
            if rows == 0:
                return np.empty((0, dimension), dtype=np.float32)
            mapped = mmap.mmap(
                handle.fileno(),
                rows * _row_bytes(dimension),
                flags=mmap.MAP_SHARED,
                prot=mmap.PROT_READ,
            )
        return np.frombuffer(mapped, dtype=np.float32).reshape(rows, dimension)

    def clear(self) -> None:
        """Forget every map (each is unmapped once no array refers to it)."""
        with self._lock:
            self._maps.clear()
