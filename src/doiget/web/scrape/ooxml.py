"""Checks a DOCX or PPTX package (a zip) before any reader inflates it.

The central directory declares each member's compressed and uncompressed size: a
package with too many members, a member over its cap, a total over its cap or a member
that expands by more than the ratio cap is refused before anything is inflated. The
declared sizes may lie, so every member is then inflated once in bounded chunks, its
bytes counted against the same caps and discarded; a member that yields more than it
declared is refused too. Only then does python-docx or python-pptx read the package
(zipfile stops each member at its declared size, which has just been checked).

The caps (limits.py) are far above what real documents need: a 1,000-page report's
``word/document.xml`` is some 20 MiB and its text compresses about 5 to 20 times.
"""

from __future__ import annotations

import copy
import io
import zipfile
from typing import Final

from doiget.errors import DoigetError
from doiget.web.failure import Kind, web_error
from doiget.web.scrape.limits import (
    OOXML_MAX_MEMBER_BYTES,
    OOXML_MAX_MEMBERS,
    OOXML_MAX_RATIO,
    OOXML_MAX_TOTAL_BYTES,
    OOXML_RATIO_GRACE_BYTES,
)

_READABLE_METHODS: Final = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
_CHUNK: Final = 1024 * 1024
_MIB: Final = 1024 * 1024
_ENCRYPTED_FLAG: Final = 0x1


def _too_large(kind: str, what: str) -> DoigetError:
    return web_error(
        Kind.TOO_LARGE,
        f"The {kind} was not read: {what}. doiget refuses packages that expand this much "
        "(a zip bomb reads the same way).",
    )


def _unsupported(kind: str, what: str) -> DoigetError:
    return web_error(Kind.UNSUPPORTED, f"The {kind} was not read: {what}.")


def _check_declared(kind: str, members: list[zipfile.ZipInfo]) -> None:
    """Refuse on what the central directory declares, before inflating anything."""
    if len(members) > OOXML_MAX_MEMBERS:
        raise _too_large(
            kind, f"it holds {len(members)} parts, over the cap of {OOXML_MAX_MEMBERS}"
        )
    total = 0
    for info in members:
        name = info.filename[:80]
        if info.flag_bits & _ENCRYPTED_FLAG:
            raise _unsupported(kind, f"its part {name!r} is encrypted")
        if info.compress_type not in _READABLE_METHODS:
            raise _unsupported(
                kind, f"its part {name!r} uses zip compression method {info.compress_type}"
            )
        if info.file_size > OOXML_MAX_MEMBER_BYTES:
            raise _too_large(
                kind,
                f"its part {name!r} expands to {info.file_size // _MIB} MiB, over the cap "
                f"of {OOXML_MAX_MEMBER_BYTES // _MIB} MiB",
            )
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > OOXML_RATIO_GRACE_BYTES and ratio > OOXML_MAX_RATIO:
            raise _too_large(
                kind,
                f"its part {name!r} expands {ratio:.0f} times ({info.compress_size} bytes to "
                f"{info.file_size}), over the cap of {OOXML_MAX_RATIO} times",
            )
        total += info.file_size
        if total > OOXML_MAX_TOTAL_BYTES:
            raise _too_large(
                kind,
                f"its parts expand to more than {OOXML_MAX_TOTAL_BYTES // _MIB} MiB in all",
            )


def _check_inflated(kind: str, archive: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> None:
    """Inflate every member in chunks, counting what it really yields.

    zipfile would stop a member at its declared size (and call the rest a CRC error),
    so each member is opened as if it declared one byte more and no CRC: a member that
    yields that byte expands past what it declared and is refused as the bomb it is.
    (The readers check the CRCs when they read the package.)
    """
    total = 0
    for info in members:
        probe = copy.copy(info)
        probe.file_size = info.file_size + 1
        del probe.CRC
        yielded = 0
        with archive.open(probe) as member:
            while chunk := member.read(_CHUNK):
                yielded += len(chunk)
                total += len(chunk)
                if yielded > info.file_size:
                    raise _too_large(
                        kind,
                        f"its part {info.filename[:80]!r} expands past the {info.file_size} "
                        "bytes it declares",
                    )
                if total > OOXML_MAX_TOTAL_BYTES:
                    raise _too_large(
                        kind,
                        f"its parts expand to more than {OOXML_MAX_TOTAL_BYTES // _MIB} MiB in all",
                    )


def check_package(kind: str, data: bytes) -> None:
    """Refuse ``data`` (a ``kind`` package) when it is over a cap; see the module doc.

    Raises a ``too_large`` or ``unsupported`` web error; a zip that cannot be read at
    all raises what zipfile or zlib raise (the caller reports it as unreadable).
    """
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = archive.infolist()
        _check_declared(kind, members)
        _check_inflated(kind, archive, members)
