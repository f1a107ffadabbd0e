"""Writes that are never seen half done: temp file, fsync, rename, fsync the directory."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsynced_temp(directory: Path, name: str, data: bytes | Sequence[bytes | memoryview]) -> Path:
    """A private temp file (mkstemp: O_EXCL, mode 0600) in ``directory`` holding
    ``data`` (or its parts one after another), fsynced; removed again if writing it
    fails."""
    fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            for part in [data] if isinstance(data, bytes) else data:
                handle.write(part)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return Path(temp)


def write_atomic(path: Path, data: bytes | Sequence[bytes | memoryview]) -> None:
    """Replace ``path`` with ``data`` (or its parts, written one after another, so a
    large file need not be joined in memory first) so readers see the old or the new
    file, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _fsynced_temp(path.parent, path.name, data)
    try:
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def move_into_place(temp: Path, path: Path) -> None:
    """Rename an already-fsynced temp file onto ``path`` (same directory) durably."""
    temp.replace(path)
    fsync_dir(path.parent)


def create_once(path: Path, data: bytes) -> bool:
    """Create ``path`` (mode 0600) holding ``data`` unless it exists; True when this call
    made it.

    ``data`` goes to a private temp file (mkstemp: O_EXCL, mode 0600), is fsynced, then
    hard-linked to ``path``. ``link`` refuses an existing name just as O_EXCL does, and
    the name appears with all of ``data`` in it, so of two processes racing exactly one
    wins and the other reads the winner's file.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temp = _fsynced_temp(path.parent, path.name, data)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        temp.unlink(missing_ok=True)
    fsync_dir(path.parent)
    return True
