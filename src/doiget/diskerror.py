"""A failed write to doiget's own files, as a coded error that names the file and the fix.

Every layer that writes to disk (the store, its search index, the passage index, the
provenance log, downloads) turns the ``OSError`` of a write into one
:class:`~doiget.errors.DoigetError` here, so a full disk, a used-up quota, a read-only
file system or a missing permission reads the same everywhere: which file, what went
wrong, what to do next. Callers remove what they had half written before raising it.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Final

from doiget.errors import DoigetError, ErrorCode

# What to do about the errors a write meets on a healthy system.
_ADVICE: Final = {
    errno.ENOSPC: "the disk is full: free space on it",
    errno.EDQUOT: "the disk quota is used up: free space or raise the quota",
    errno.EFBIG: "the file is larger than this file system or process allows",
    errno.EROFS: "the file system is read-only: remount it writable",
    errno.EACCES: "permission denied: give this user write access to it",
    errno.EPERM: "the operation is not permitted: check the owner and permissions",
}


# SQLite's result codes (sqlite3 and apsw carry them) for the same conditions.
_SQLITE_ERRNO: Final = {13: errno.ENOSPC, 8: errno.EROFS, 23: errno.EACCES}


def disk_failure(exc: BaseException) -> OSError | None:
    """The disk condition behind ``exc`` as an OSError (None when it is not one):
    an OSError with an errno, or an SQLite error whose primary result code says the
    disk is full, the database read-only or access denied."""
    if isinstance(exc, OSError):
        return exc if exc.errno else None
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        code = getattr(exc, "result", None)
    number = _SQLITE_ERRNO.get(code & 0xFF) if isinstance(code, int) else None
    return OSError(number, os.strerror(number)) if number else None


def write_error(
    code: ErrorCode,
    action: str,
    path: Path | str,
    exc: OSError,
    setting: str | None = None,
) -> DoigetError:
    """``cannot <action> <path>: <why>; <what to do>`` as a ``code`` error.

    ``setting`` names the variable that moves the file elsewhere, when there is one.
    """
    why = exc.strerror or str(exc) or type(exc).__name__
    advice = _ADVICE.get(exc.errno or 0, "check the disk and the permissions")
    elsewhere = f", or set {setting} to a place that is writable and has room" if setting else ""
    return DoigetError(code, f"cannot {action} {path}: {why}; {advice}{elsewhere}.")
