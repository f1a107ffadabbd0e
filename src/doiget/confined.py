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

A file a person names (a bibliography, a manuscript, a PDF to add) has no root: it is
opened with :func:`open_regular`, the same way but following links, and read with
:func:`read_capped`, which stops at its cap whatever size the file reports (a device
reports 0, a file may grow while it is read).

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
    if limit is None:
        with os.fdopen(descriptor, "rb") as handle:
            return handle.read()
    return read_capped(descriptor, path, limit)


def open_regular(path: Path) -> int:
    """A read-only descriptor of the regular file ``path`` (links followed): Refused for
    a directory, FIFO, socket or device, which is opened non-blocking so it never hangs
    the caller. ``ValueError`` for a path holding a NUL byte, ``OSError`` as the system
    reports the rest."""
    return _regular(_open_file(path, os.O_RDONLY | _NONBLOCK | _BINARY), path)


def path_text(text: str | Path) -> str:
    """``text`` (a path, or a message holding one) as text any JSON document or terminal
    can carry: the bytes of a file name that are not UTF-8, which Python keeps as lone
    surrogates, are written ``\\xNN`` (any other lone surrogate as its UTF-8 bytes)."""
    try:
        data = str(text).encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        data = str(text).encode("utf-8", "surrogatepass")
    return data.decode("utf-8", "backslashreplace")


def read_capped(descriptor: int, path: Path, limit: int) -> bytes:
    """The bytes of the open file ``descriptor`` (closed after), Refused when there are
    more than ``limit``: the reported size is checked first and the read stops one byte
    past the cap whatever it said."""
    with os.fdopen(descriptor, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = b"" if size > limit else handle.read(limit + 1)
    if size > limit or len(data) > limit:
        held = f"{size:,} bytes, more than" if size > limit else "more than"
        raise Refused(errno.EFBIG, f"{path} holds {held} the {limit:,} bytes doiget reads")
    return data


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
        flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _BINARY
        descriptor = _open_file(parts[-1], flags, directory, shown)
    finally:
        os.close(directory)
    return _regular(descriptor, shown)


def _open_checked(path: Path, parts: tuple[str, ...], real_root: Path) -> int:
    """The fallback without ``dir_fd``: open the resolved, contained path."""
    descriptor = _open_file(real_root.joinpath(*parts), os.O_RDONLY | _NONBLOCK | _BINARY)
    return _regular(descriptor, path)


def _open_file(
    name: str | Path, flags: int, directory: int | None = None, shown: Path | None = None
) -> int:
    """``os.open``, with the error a socket gives (no such device) told as Refused."""
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
    raise Refused(errno.EINVAL, f"{shown or name} is a FIFO, socket or device")


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
