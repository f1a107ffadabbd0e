"""Reading a file that must stay inside its directory (the store, an index, the data directory).

Every read of a file doiget keeps goes through :func:`open_confined`. The name below
the root is opened one component at a time, relative to the directory above it and
never following a symbolic link (``O_NOFOLLOW``), so a link planted in the store (or
swapped in between a check and the read) cannot make doiget read or serve a file
elsewhere. A link whose target, resolved, lies inside the root is read at that
target, opened the same way; a link (or chain of links) that leaves the root is
refused. The root itself may be a link: it is resolved once. The file opened must be
a regular file: it is opened non-blocking (a FIFO never hangs the caller) and
checked with ``fstat``, so a directory, FIFO or device is refused too.

Where the platform has no ``dir_fd`` support (Windows), the path is resolved and its
containment checked before a plain open.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Final

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
_WALKS: Final = os.open in os.supports_dir_fd and bool(_NOFOLLOW)


class Refused(OSError):
    """A file doiget will not read: it leads out of its root or is not a regular file.

    ``strerror`` says what was found, in words a person can act on.
    """


def open_confined(root: Path, path: Path) -> int:
    """A read-only descriptor of the regular file ``path``, which must lie inside ``root``.

    Raises :class:`Refused` for a path that leaves ``root`` (by ``..`` or by a link)
    or names something other than a regular file, ``FileNotFoundError`` when it is
    absent, and other ``OSError`` as the system reports them.
    """
    real_root = root.resolve()
    parts = _parts_below(root, real_root, path)
    if not _WALKS:
        return _open_checked(path, _resolved_parts(real_root, path, parts), real_root)
    try:
        return _open_beneath(real_root, parts, path)
    except OSError as exc:
        lexical = real_root.joinpath(*parts)
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise
        if lexical == lexical.resolve():
            raise  # no link on the way: the error is about something else
    return _open_beneath(real_root, _resolved_parts(real_root, path, parts), path)


def read_confined(root: Path, path: Path, *, limit: int | None = None) -> bytes:
    """The bytes of ``path`` read through :func:`open_confined`.

    With ``limit``, a file larger than ``limit`` bytes is refused before it is read.
    """
    descriptor = open_confined(root, path)
    with os.fdopen(descriptor, "rb") as handle:
        if limit is not None:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise Refused(
                    errno.EFBIG,
                    f"{path} holds {size:,} bytes, more than the {limit:,} doiget reads "
                    "from such a file",
                )
        return handle.read()


def resolve_confined(root: Path, path: Path) -> Path:
    """``path`` resolved, for a library that opens files by name (SQLite): Refused when
    it leads out of ``root`` or names something other than a regular file.

    The check and the later open are two steps, so this guards against links left in
    place, not against one swapped in between; reads doiget makes itself use
    :func:`open_confined`.
    """
    real_root = root.resolve()
    resolved = real_root.joinpath(
        *_resolved_parts(real_root, path, _parts_below(root, real_root, path))
    )
    try:
        mode = resolved.lstat().st_mode
    except FileNotFoundError:
        return resolved
    if not stat.S_ISREG(mode):
        raise Refused(errno.EINVAL, f"{path} is not a regular file")
    return resolved


def _parts_below(root: Path, real_root: Path, path: Path) -> tuple[str, ...]:
    """The components of ``path`` below ``root`` (given as is, or resolved)."""
    for base in (root, real_root):
        try:
            parts = path.relative_to(base).parts
        except ValueError:
            continue
        if parts and ".." not in parts:
            return parts
    raise Refused(errno.EXDEV, f"{path} is not inside {root}")


def _resolved_parts(real_root: Path, path: Path, parts: tuple[str, ...]) -> tuple[str, ...]:
    """The components below the root of what ``path`` resolves to; Refused outside it."""
    target = real_root.joinpath(*parts).resolve()
    try:
        inside = target.relative_to(real_root).parts
    except ValueError:
        inside = ()
    if not inside:
        raise Refused(
            errno.EXDEV,
            f"{path} is a symbolic link that leads to {target}, outside {real_root}",
        )
    return inside


def _open_beneath(real_root: Path, parts: tuple[str, ...], shown: Path) -> int:
    """Open ``parts`` below ``real_root`` without following any link on the way."""
    directory = os.open(real_root, os.O_RDONLY | _DIRECTORY)
    try:
        for part in parts[:-1]:
            below = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=directory)
            os.close(directory)
            directory = below
        descriptor = os.open(
            parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY, dir_fd=directory
        )
    finally:
        os.close(directory)
    return _regular(descriptor, shown)


def _open_checked(path: Path, parts: tuple[str, ...], real_root: Path) -> int:
    """The fallback without ``dir_fd``: open the resolved, contained path."""
    descriptor = os.open(real_root.joinpath(*parts), os.O_RDONLY | _NONBLOCK | _BINARY)
    return _regular(descriptor, path)


def _regular(descriptor: int, shown: Path) -> int:
    """``descriptor`` when it is a regular file (made blocking again), else Refused."""
    mode = os.fstat(descriptor).st_mode
    if stat.S_ISREG(mode):
        if _NONBLOCK:
            os.set_blocking(descriptor, True)
        return descriptor
    os.close(descriptor)
    kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, socket or device"
    raise Refused(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL, f"{shown} is {kind}")
