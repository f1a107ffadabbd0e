"""Writes that are never seen half done: temp file, fsync, rename, fsync the directory."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make a rename or unlink in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        Path(name).replace(path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
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
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, path)
        except FileExistsError:
            return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            Path(temp).unlink()
    fsync_dir(path.parent)
    return True
