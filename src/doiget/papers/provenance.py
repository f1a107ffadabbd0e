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

The chain alone cannot show rows cut from its end. So each append also replaces a
small head file (``<log>.head``, written atomically) with the seq and hash of the
row just written: :func:`verify` reports a log that ends before its head (a cut
tail), an emptied or deleted log, and a head that names another row; and no row is
appended to a log that ends before its head, so a cut never gets written over.
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

from doiget.atomicfile import fsync_dir, write_atomic
from doiget.errors import DoigetError, ErrorCode

GENESIS: Final = "GENESIS"
ROTATE_BYTES: Final = 100 * 1024 * 1024
LOCK_SECONDS: Final = 5.0
DETAIL_MAX: Final = 2000
_TAIL_CHUNK: Final = 8192
_ROTATED: Final = re.compile(r"\.(\d+)\Z")

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


def head_path(path: Path) -> Path:
    """The head file of the log at ``path``."""
    return path.with_name(f"{path.name}.head")


@dataclass(frozen=True, slots=True)
class Head:
    """The newest row a log has had: its seq and its hash."""

    seq: int
    this_hash: str


def read_head(path: Path) -> Head | None:
    """The head of the log at ``path`` (None when there is no head file).

    Raises ValueError when the head file is unreadable.
    """
    try:
        data = json.loads(head_path(path).read_bytes())
        return Head(int(data["seq"]), str(data["this_hash"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"the head file {head_path(path)} is unreadable ({exc})") from exc


def _write_head(path: Path, row: dict[str, Any]) -> None:
    record = {"seq": row["seq"], "this_hash": row["this_hash"]}
    write_atomic(head_path(path), json.dumps(record).encode() + b"\n")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"the row repeats the key(s) {', '.join(repeated)}")
    return dict(pairs)


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
            f"could not write the provenance log {self.path} ({why}); the step that row "
            "records was not taken. Check the disk and permissions, or point "
            "DOIGET_LOG_PATH elsewhere.",
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

    def _check_against_head(self, seq: int, prev_hash: str) -> None:
        """Refuse to write after a cut: the log must reach the row its head names."""
        try:
            head = read_head(self.path)
        except ValueError as exc:
            raise OSError(0, f"{exc}; run audit-log --verify") from exc
        if head is None or head.seq < seq - 1:
            return  # no head yet, or the head write after the last row did not happen
        if head.seq > seq - 1 or head.this_hash != prev_hash:
            raise OSError(
                0,
                f"the log ends at row {seq - 1} but its head file records row {head.seq}: "
                "rows are missing or were replaced. Run audit-log --verify; to start a "
                "new chain, move the log and its .head file aside",
            )

    def _append_locked(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        seq, prev_hash, torn = self._head()
        self._check_against_head(seq, prev_hash)
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
        _write_head(self.path, row)
        return row

    def _rotate(self) -> None:
        numbers = [int(file.name.rsplit(".", 1)[1]) for file in log_files(self.path)[:-1]]
        target = self.path.with_name(f"{self.path.name}.{max(numbers, default=0) + 1}")
        self.path.replace(target)
        fsync_dir(self.path.parent)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of a chain check. ``first_broken`` counts rows from 0 across files;
    ``head_rows`` is how many rows the head file says the log has had."""

    ok: bool
    rows: int
    files: int
    first_broken: int | None = None
    file: str | None = None
    line: int | None = None
    reason: str | None = None
    head_rows: int | None = None


def _check_row(
    raw: bytes, expected_prev: str, expected_seq: int
) -> tuple[dict[str, Any] | None, str | None]:
    try:
        row = json.loads(raw, object_pairs_hook=_no_duplicate_keys)
    except ValueError as exc:
        if "repeats the key" in str(exc):
            return None, str(exc)
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
    """Check the whole chain (rotated files, then the live log) and that it reaches
    the row its head file records. Never raises on bad data."""
    files = log_files(path)
    try:
        head = read_head(path)
    except ValueError as exc:
        return VerifyReport(False, 0, len(files), None, str(head_path(path)), None, str(exc))
    head_rows = head.seq + 1 if head is not None else None
    expected_prev, count = GENESIS, 0
    head_hash: str | None = None
    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            return VerifyReport(
                False, count, len(files), count, str(file), None, f"unreadable: {exc}", head_rows
            )
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for number, raw in enumerate(lines, start=1):
            row, reason = _check_row(raw, expected_prev, count)
            if reason is not None:
                return VerifyReport(
                    False, count, len(files), count, str(file), number, reason, head_rows
                )
            assert row is not None
            expected_prev = str(row["this_hash"])
            if head is not None and count == head.seq:
                head_hash = expected_prev
            count += 1
    reason = _short_of_head(path, files, count, head, head_hash)
    if reason is not None:
        return VerifyReport(False, count, len(files), count, str(path), None, reason, head_rows)
    return VerifyReport(True, count, len(files), head_rows=head_rows)


def _short_of_head(
    path: Path, files: list[Path], count: int, head: Head | None, head_hash: str | None
) -> str | None:
    """Why the chain does not reach its head (None when it does)."""
    if head is None:
        if count:
            return (
                f"the head file {head_path(path)} is missing, so a cut at the end of the log "
                "cannot be ruled out (it was deleted, or the log was written before head "
                "files existed; the next row written restores it)"
            )
        return None
    if not files:
        return f"the log is missing: its head file records {head.seq + 1} rows"
    if count == 0:
        return f"the log is empty: its head file records {head.seq + 1} rows"
    if count <= head.seq:
        missing = f"row {head.seq} is" if count == head.seq else f"rows {count} to {head.seq} are"
        return f"{missing} missing from the end of the log (its head file records them)"
    if head_hash != head.this_hash:
        return f"row {head.seq} is not the row the head file records (the log was rewritten)"
    return None


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
