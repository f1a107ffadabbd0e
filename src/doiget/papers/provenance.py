"""The provenance log: hash-chained JSON Lines, one fsynced row per event.

Each row carries ``prev_hash`` (the previous row's ``this_hash``, ``"GENESIS"`` on the
very first row) and ``this_hash``, the SHA-256 of the row's canonical JSON without
``this_hash``. Editing, removing or reordering any row breaks the chain, and
:func:`verify` names the first row where it breaks.

Appends are serialised across processes by a lock file beside the log; each row is
one ``write`` on an ``O_APPEND`` descriptor followed by ``fsync``. When the log would
pass ``max_bytes`` it is renamed to ``<log>.<n>`` (n = 1, 2, ... oldest first) and
the chain continues in a fresh file. A row that cannot be written raises LOG_ERROR:
callers log before they act, so nothing happens unrecorded. One log may be written
from several threads: its appends take turns.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from filelock import FileLock, Timeout

from doiget.atomicfile import fsync_dir
from doiget.errors import DoigetError, ErrorCode

GENESIS: Final = "GENESIS"
ROTATE_BYTES: Final = 100 * 1024 * 1024
LOCK_SECONDS: Final = 5.0
DETAIL_MAX: Final = 2000
_TAIL_CHUNK: Final = 8192
_ROTATED: Final = re.compile(r"\.(\d+)$")

ROW_FIELDS: Final = (
    "seq",
    "ts",
    "session_id",
    "event",
    "ref",
    "source",
    "result",
    "license",
    "size",
    "path",
    "capability",
    "error_code",
    "detail",
    "prev_hash",
)


def canonical_bytes(row: dict[str, Any]) -> bytes:
    """The bytes a row's hash covers: sorted keys, no spaces, UTF-8, without this_hash."""
    body = {key: value for key, value in row.items() if key != "this_hash"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def row_hash(row: dict[str, Any]) -> str:
    """SHA-256 (hex) of the row's canonical form."""
    return hashlib.sha256(canonical_bytes(row)).hexdigest()


def log_files(path: Path) -> list[Path]:
    """The rotated files (oldest first) and then the live log, those that exist."""
    rotated: list[tuple[int, Path]] = []
    if path.parent.is_dir():
        for candidate in path.parent.glob(f"{path.name}.*"):
            match = _ROTATED.search(candidate.name[len(path.name) :])
            if match and candidate.name == f"{path.name}.{match.group(1)}":
                rotated.append((int(match.group(1)), candidate))
    files = [file for _, file in sorted(rotated)]
    if path.exists():
        files.append(path)
    return files


def _last_line(path: Path) -> tuple[bytes | None, bool]:
    """The last complete line of ``path`` and whether the file ends in a torn line."""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return None, False
        handle.seek(size - 1)
        torn = handle.read(1) != b"\n"
        window = _TAIL_CHUNK
        while True:
            start = max(0, size - window)
            handle.seek(start)
            complete = handle.read(size - start).split(b"\n")[:-1]
            usable = complete if start == 0 else complete[1:]  # the first may be cut
            lines = [line for line in usable if line.strip()]
            if lines:
                return lines[-1], torn
            if start == 0:
                return None, torn
            window *= 4


class ProvenanceLog:
    """Appends rows to the log at ``path`` for one session (one process)."""

    def __init__(self, path: Path, *, max_bytes: int = ROTATE_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.session_id = uuid.uuid4().hex
        self._lock = FileLock(str(path) + ".lock", timeout=LOCK_SECONDS, thread_local=False)
        self._started = False
        # The file lock is not thread-local (so it counts re-entries from any thread);
        # this one makes threads of this process take turns.
        self._turn = threading.Lock()

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        """Write one row (opening the session with a session_start row first)."""
        with self._turn:
            if not self._started:
                self._write("session_start", {"result": "ok"})
                self._started = True
            return self._write(event, fields)

    def close(self) -> None:
        """Write session_end if this session wrote anything; best effort."""
        with self._turn:
            if not self._started:
                return
            self._started = False
            with suppress(DoigetError):
                self._write("session_end", {"result": "ok"})

    def _write(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        unknown = set(fields) - set(ROW_FIELDS)
        if unknown:
            raise ValueError(f"unknown provenance fields: {sorted(unknown)}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock:
                return self._append_locked(event, fields)
        except Timeout as exc:
            raise self._error(f"its lock was held for more than {LOCK_SECONDS:g} s") from exc
        except OSError as exc:
            raise self._error(exc.strerror or type(exc).__name__) from exc

    def _error(self, why: str) -> DoigetError:
        return DoigetError(
            ErrorCode.LOG_ERROR,
            f"could not write the provenance log {self.path} ({why}); nothing was done. "
            "Check the disk and permissions, or point DOIGET_LOG_PATH elsewhere.",
        )

    def _head(self) -> tuple[int, str, bool]:
        """(next seq, prev_hash, live file ends torn) from the newest row on disk."""
        torn = False
        for position, file in enumerate(reversed(log_files(self.path))):
            line, ends_torn = _last_line(file)
            if position == 0 and file == self.path:
                torn = ends_torn
            if line is None:
                continue
            try:
                last = json.loads(line)
                return int(last["seq"]) + 1, str(last["this_hash"]), torn
            except (ValueError, KeyError, TypeError) as exc:
                raise OSError(
                    0, f"its last row is unreadable ({exc}); run audit-log --verify"
                ) from exc
        return 0, GENESIS, torn

    def _append_locked(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        seq, prev_hash, torn = self._head()
        row: dict[str, Any] = {name: None for name in ROW_FIELDS}
        row.update(fields)
        detail = row.get("detail")
        if isinstance(detail, str) and len(detail) > DETAIL_MAX:
            row["detail"] = detail[:DETAIL_MAX] + "…"
        row.update(
            seq=seq,
            ts=datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z"),
            session_id=self.session_id,
            event=event,
            prev_hash=prev_hash,
        )
        row["this_hash"] = row_hash(row)
        line = json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        if torn:
            line = b"\n" + line  # close a torn row so verify reports it, not this one
        if self.path.exists() and self.path.stat().st_size + len(line) > self.max_bytes:
            self._rotate()
        created = not self.path.exists()
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            written = os.write(descriptor, line)
            if written != len(line):
                raise OSError(0, f"short write ({written} of {len(line)} bytes)")
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        if created:
            fsync_dir(self.path.parent)
        return row

    def _rotate(self) -> None:
        numbers = [int(file.name.rsplit(".", 1)[1]) for file in log_files(self.path)[:-1]]
        target = self.path.with_name(f"{self.path.name}.{max(numbers, default=0) + 1}")
        self.path.replace(target)
        fsync_dir(self.path.parent)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of a chain check. ``first_broken`` counts rows from 0 across files."""

    ok: bool
    rows: int
    files: int
    first_broken: int | None = None
    file: str | None = None
    line: int | None = None
    reason: str | None = None


def _check_row(
    raw: bytes, expected_prev: str, expected_seq: int
) -> tuple[dict[str, Any] | None, str | None]:
    try:
        row = json.loads(raw)
    except ValueError:
        return None, "the row is not valid JSON"
    if not isinstance(row, dict):
        return None, "the row is not a JSON object"
    if row.get("prev_hash") != expected_prev:
        return (
            row,
            "prev_hash does not match the previous row's hash (a row was removed or reordered)",
        )
    if row.get("this_hash") != row_hash(row):
        return row, "this_hash does not match the row's content (the row was edited)"
    if row.get("seq") != expected_seq:
        return row, f"seq is {row.get('seq')!r}, expected {expected_seq}"
    return row, None


def verify(path: Path) -> VerifyReport:
    """Check the whole chain (rotated files, then the live log). Never raises on bad data."""
    files = log_files(path)
    expected_prev, count = GENESIS, 0
    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            return VerifyReport(
                False, count, len(files), count, str(file), None, f"unreadable: {exc}"
            )
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for number, raw in enumerate(lines, start=1):
            row, reason = _check_row(raw, expected_prev, count)
            if reason is not None:
                return VerifyReport(False, count, len(files), count, str(file), number, reason)
            assert row is not None
            expected_prev = str(row["this_hash"])
            count += 1
    return VerifyReport(True, count, len(files))


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """Every parseable row, oldest first (rotated files too); broken lines are skipped."""
    for file in log_files(path):
        with file.open("rb") as handle:
            for raw in handle:
                try:
                    row = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(row, dict):
                    yield row
