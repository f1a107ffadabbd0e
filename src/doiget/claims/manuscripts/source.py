"""A draft's bytes and text, read within bounds, and line numbers of offsets in it.

A draft is at most :data:`MAX_DRAFT_BYTES` (all of its included files together for
LaTeX): far more than a paper with its appendices, so a larger file is refused before
it is read, never read in part.

A draft read for a caller who may only name files inside a folder (``within``: a
client's root, an import folder) is opened once, below that folder without following
a link out of it, and read from that handle; so are the files it names, which must
also lie in the draft's own folder. A reason a file was not read never names a path
beyond the one the draft wrote.
"""

from __future__ import annotations

import bisect
import errno
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TypeVar

from doiget.confined import Refused, read_confined
from doiget.contract import invalid
from doiget.errors import DoigetError, ErrorCode
from doiget.verify.inputs import read_file

T = TypeVar("T")
_NEWLINE: Final = re.compile("\n")
MAX_DRAFT_BYTES: Final = 20 * 1024 * 1024
# Citations read from one draft: a long review cites a few thousand times.
MAX_CITATIONS: Final = 10_000


def read_draft(path: Path, limit: int = MAX_DRAFT_BYTES, within: Path | None = None) -> bytes:
    """The bytes of the draft at ``path`` (a regular file of at most ``limit`` bytes);
    with ``within``, opened below that folder (CAPABILITY_DENIED when it leads out)."""
    what = f"a draft of at most {limit // (1024 * 1024)} MB"
    if within is None:
        return read_file(path, limit, what)
    try:
        return read_confined(within, path, limit=limit)
    except OSError as error:
        if error.errno == errno.EXDEV:
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED,
                f"{path.name} leads out of the folders doiget may read manuscripts from; "
                "pass the draft itself, not a link to it.",
            ) from None
        raise invalid(f"{path.name} is not read: {why_unread(error)}; pass {what}.") from None


def read_beside(folder: Path, path: Path, limit: int, within: Path | None) -> bytes:
    """The bytes of ``path``, a file a draft names, read only inside the draft's
    ``folder`` (and, with ``within``, opened below that folder): Refused (EXDEV) when
    it leads out, Refused (EFBIG) past ``limit`` bytes, ``OSError`` as the system
    reports the rest."""
    real = resolved(path)
    if within is not None and not real.is_relative_to(folder):
        raise Refused(errno.EXDEV, f"{path} leads out of {folder}")
    return read_confined(folder if within is None else within, path, limit=limit)


def resolved(path: Path) -> Path:
    """``path`` with every link followed; Refused for a loop of links (which Python
    3.11 reports as RuntimeError) or a name holding a NUL byte (ValueError)."""
    try:
        return path.resolve()
    except RuntimeError:
        raise Refused(errno.ELOOP, f"{path} is a loop of links") from None
    except ValueError:
        raise Refused(errno.EINVAL, "a file name holding a NUL byte") from None


def why_unread(error: OSError) -> str:
    """Why a file was not read, in words that name no path: the system's messages
    name where a link leads, which a caller over HTTP is never told."""
    reasons = {
        errno.EXDEV: "it leads out of the draft's folder",
        errno.EFBIG: "it is larger than doiget reads",
        errno.EISDIR: "it is a directory",
        errno.EINVAL: "it is not a regular file",
        errno.ENOENT: "there is no such file",
        errno.ELOOP: "it is a link doiget does not follow",
    }
    if not error.errno:
        return "it cannot be read"
    return reasons.get(error.errno) or os.strerror(error.errno)


def decode(data: bytes, name: str) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped); INVALID_REF when it is not."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise invalid(
            f"{name} is not UTF-8 text (line {line}); save it as UTF-8 and read it again."
        ) from None


class LineIndex:
    """The 1-based line of any offset of a text, found by bisection."""

    def __init__(self, text: str) -> None:
        self._starts = [0, *(found.end() for found in _NEWLINE.finditer(text))]

    def line(self, offset: int) -> int:
        """The line holding ``offset``."""
        return bisect.bisect_right(self._starts, offset)

    def start(self, line: int) -> int:
        """The offset where the 1-based ``line`` starts."""
        return self._starts[line - 1]


def within_bound(found: list[T], held: int, notes: list[str], name: str) -> list[T]:
    """``found`` (citations of one passage) cut to what the draft still takes once it
    holds ``held``: past :data:`MAX_CITATIONS` no sentence is read, and ``notes`` says
    so once."""
    room = MAX_CITATIONS - held
    if len(found) <= room:
        return found
    note = (
        f"{name} cites more than {MAX_CITATIONS:,} times; the first {MAX_CITATIONS:,} "
        "citations are read: split the draft to read the rest."
    )
    if note not in notes:
        notes.append(note)
    return found[: max(room, 0)]


def blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with each span's characters turned to spaces (line breaks kept), so
    offsets and line numbers stay those of the original."""
    if not spans:
        return text
    parts: list[str] = []
    position = 0
    for start, end in sorted(spans):
        if end <= position:
            continue
        start = max(start, position)
        parts.append(text[position:start])
        parts.append("".join("\n" if char == "\n" else " " for char in text[start:end]))
        position = end
    parts.append(text[position:])
    return "".join(parts)
