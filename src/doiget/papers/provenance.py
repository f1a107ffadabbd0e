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

The chain alone cannot show rows cut from its end, nor a log rebuilt from its own
rows. So each append also replaces a head file (``<log>.head``) signed with a key
kept away from the log (see :mod:`doiget.papers.anchor`): :func:`verify` reports a
log that ends before its head (a cut tail), a head the key did not sign (rebuilt from
the log, or pointed at another row), a deleted head or log, and no row is appended
to a log in any of those states, so a cut never gets written over. A row that cannot
be written whole is cut off again before LOG_ERROR is raised; bytes a killed append
left behind are cut by the next one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from filelock import FileLock, Timeout

from doiget.atomicfile import fsync_dir
from doiget.diskerror import write_error
from doiget.errors import DoigetError, ErrorCode
from doiget.papers.anchor import (
    AnchorError,
    AnchorKey,
    Head,
    head_path,
    read_head,
    read_record,
    record_path,
    write_head,
    write_record,
)

logger = logging.getLogger("doiget.papers.provenance")

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
    "sha256",
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


def _last_line(path: Path) -> bytes | None:
    """The last complete line of ``path`` (None when it has none)."""
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        window = _TAIL_CHUNK
        while size:
            start = max(0, size - window)
            handle.seek(start)
            complete = handle.read(size - start).split(b"\n")[:-1]
            usable = complete if start == 0 else complete[1:]  # the first may be cut
            lines = [line for line in usable if line.strip()]
            if lines:
                return lines[-1]
            if start == 0:
                return None
            window *= 4
    return None


def _whole_rows_end(descriptor: int) -> int | None:
    """Where the last whole row of an open log ends, when bytes of an interrupted write
    follow it (None when the file ends with a whole row, or is empty)."""
    size = os.lseek(descriptor, 0, os.SEEK_END)
    end = size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        chunk = os.pread(descriptor, end - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            cut = start + newline + 1
            return None if cut == size else cut
        end = start
    return 0 if size else None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    names = [name for name, _ in pairs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"the row repeats the key(s) {', '.join(repeated)}")
    return dict(pairs)


class _Refusal(Exception):
    """The log is not in a state a row may be added to; the message says why."""


class ProvenanceLog:
    """Appends rows to the log at ``path`` for one session (one process); the key at
    ``key_path`` signs its head (made there on the first row)."""

    def __init__(self, path: Path, key_path: Path, *, max_bytes: int = ROTATE_BYTES) -> None:
        self.path = path
        self.key = AnchorKey(key_path)
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
            raise self._refused(f"its lock was held for more than {LOCK_SECONDS:g} s") from exc
        except (_Refusal, AnchorError) as exc:
            raise self._refused(str(exc)) from exc
        except OSError as exc:
            raise self._disk_error(self.path, exc) from exc

    def _refused(self, why: str) -> DoigetError:
        return DoigetError(
            ErrorCode.LOG_ERROR,
            f"could not write the provenance log {self.path} ({why}); the step that row "
            "records was not taken.",
        )

    def _disk_error(self, path: Path, exc: OSError) -> DoigetError:
        error = write_error(
            ErrorCode.LOG_ERROR, "write the provenance log at", path, exc, "DOIGET_LOG_PATH"
        )
        return DoigetError(
            ErrorCode.LOG_ERROR,
            f"{error.message} The step that row records was not taken, and the log was left "
            "as it was before the row.",
        )

    def _last_row(self) -> dict[str, Any] | None:
        """The newest row on disk (the live log, else the newest rotated file)."""
        for file in reversed(log_files(self.path)):
            line = _last_line(file)
            if line is None:
                continue
            try:
                row = json.loads(line)
                int(row["seq"]), str(row["this_hash"]), str(row["prev_hash"])
            except (ValueError, KeyError, TypeError) as exc:
                raise _Refusal(f"its last row is unreadable ({exc}); run doiget audit-log") from exc
            return dict(row)
        return None

    def _check_anchor(self, key: bytes, last: dict[str, Any] | None) -> None:
        """Refuse to write after a cut or over a head or log that is not what was
        signed: the log must end at (or one row past) the row its head records."""
        head = read_head(self.path)
        if head is None or not head.signed:
            record = read_record(self.key, self.path)
            if record is not None:
                raise _Refusal(
                    f"its head file {head_path(self.path)} is "
                    f"{'missing' if head is None else 'not signed'}, but "
                    f"{record_path(self.key, self.path)} shows the log was anchored at row "
                    f"{record.seq}; run doiget audit-log"
                )
            if head is None:
                return  # a new log, or one from before heads existed: the anchor starts now
        else:
            problem = head.problem(key, self.key.path)
            if problem is not None:
                raise _Refusal(f"{problem}; run doiget audit-log")
        ends = _ends_at_head(last, head)
        if ends is not None:
            raise _Refusal(
                f"{ends}: rows are missing or were replaced. Run doiget audit-log; to start "
                "a new chain, see docs/how-it-works/security.md (Provenance log)"
            )

    def _append_locked(self, event: str, fields: dict[str, Any]) -> dict[str, Any]:
        try:
            key = self.key.read_or_create()
        except OSError as exc:
            raise self._disk_error(self.key.path, exc) from exc
        self._drop_interrupted_write()
        last = self._last_row()
        self._check_anchor(key, last)
        seq = 0 if last is None else int(last["seq"]) + 1
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
            prev_hash=GENESIS if last is None else str(last["this_hash"]),
        )
        row["this_hash"] = row_hash(row)
        line = json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        if self.path.exists() and self.path.stat().st_size + len(line) > self.max_bytes:
            self._rotate()
        created = not self.path.exists()
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            before = os.lseek(descriptor, 0, os.SEEK_END)
            try:
                self._append_line(descriptor, line)
                if created:
                    fsync_dir(self.path.parent)
                write_head(self.path, key, seq, row["this_hash"])
            except OSError as exc:
                whole = _row_complete(descriptor, before, line)
                self._roll_back(descriptor, before)
                raise self._disk_error(head_path(self.path) if whole else self.path, exc) from exc
        finally:
            os.close(descriptor)
        self._record_anchor(key, seq, row["this_hash"])
        return row

    @staticmethod
    def _append_line(descriptor: int, line: bytes) -> None:
        written = os.write(descriptor, line)
        if written != len(line):
            raise OSError(errno.ENOSPC, f"short write ({written} of {len(line)} bytes)")
        os.fsync(descriptor)

    @staticmethod
    def _roll_back(descriptor: int, size: int) -> None:
        """Cut what this append wrote, so the log ends with its last whole row again (if
        this fails too, the next append cuts it)."""
        with suppress(OSError):
            os.ftruncate(descriptor, size)
            os.fsync(descriptor)

    def _drop_interrupted_write(self) -> None:
        """Cut bytes a killed or failed append left after the last whole row (the head
        never named them, so nothing that was recorded is lost)."""
        try:
            descriptor = os.open(self.path, os.O_RDWR)
        except FileNotFoundError:
            return
        try:
            end = _whole_rows_end(descriptor)
            if end is not None:
                os.ftruncate(descriptor, end)
                os.fsync(descriptor)
        finally:
            os.close(descriptor)

    def _record_anchor(self, key: bytes, seq: int, this_hash: str) -> None:
        """Name a row this log holds beside the key, once: then a log deleted with its
        head, or replaced, is still noticed. A failure is retried on the next row."""
        try:
            if not record_path(self.key, self.path).exists():
                write_record(self.key, key, self.path, seq, this_hash)
        except OSError as exc:
            logger.warning("cannot write the provenance anchor record yet: %s", exc)

    def _rotate(self) -> None:
        numbers = [int(file.name.rsplit(".", 1)[1]) for file in log_files(self.path)[:-1]]
        target = self.path.with_name(f"{self.path.name}.{max(numbers, default=0) + 1}")
        self.path.replace(target)
        fsync_dir(self.path.parent)


def _row_complete(descriptor: int, before: int, line: bytes) -> bool:
    """Whether the row was written whole (so the head write is what failed)."""
    with suppress(OSError):
        return os.lseek(descriptor, 0, os.SEEK_END) == before + len(line)
    return False


def _ends_at_head(last: dict[str, Any] | None, head: Head) -> str | None:
    """Why a log whose newest row is ``last`` does not end where ``head`` says (None
    when it ends at the head's row, or one row past it: a crash between the row and
    its head)."""
    if last is None:
        return f"the log has no rows but its head file records row {head.seq}"
    seq = int(last["seq"])
    if seq == head.seq and last["this_hash"] == head.this_hash:
        return None
    if seq == head.seq + 1 and last["prev_hash"] == head.this_hash:
        return None
    return f"the log ends at row {seq} but its head file records row {head.seq}"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of a chain check. ``first_broken`` counts rows from 0 across files;
    ``head_rows`` is how many rows the head file says the log has had; ``anchored``
    whether a signed head vouches for the end of the log; ``notes`` what was found
    that is not a fault (an interrupted write, a log from before heads were signed)."""

    ok: bool
    rows: int
    files: int
    first_broken: int | None = None
    file: str | None = None
    line: int | None = None
    reason: str | None = None
    head_rows: int | None = None
    anchored: bool = False
    notes: tuple[str, ...] = ()


_NOT_JSON: Final = "the row is not valid JSON"


def _check_row(
    raw: bytes, expected_prev: str, expected_seq: int
) -> tuple[dict[str, Any] | None, str | None]:
    try:
        row = json.loads(raw, object_pairs_hook=_no_duplicate_keys)
    except ValueError as exc:
        if "repeats the key" in str(exc):
            return None, str(exc)
        return None, _NOT_JSON
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


@dataclass(slots=True)
class _Walk:
    """The chain as read: rows counted, hashes of the rows asked for, where it broke
    (file, line, reason) and what was passed over."""

    files: int = 0
    count: int = 0
    hashes: dict[int, str] = field(default_factory=dict)
    broken: tuple[str, int, str] | None = None
    notes: list[str] = field(default_factory=list)


def _walk(files: list[Path], wanted: set[int]) -> _Walk:
    """Check every row's links. A line that is not JSON is the remains of an
    interrupted write when the row after it continues the chain, or when it is the
    unfinished end of the live log; anything else breaks the chain there."""
    walk = _Walk(files=len(files))
    expected_prev = GENESIS
    torn: tuple[str, int] | None = None
    unfinished: tuple[str, int] | None = None
    for file in files:
        try:
            data = file.read_bytes()
        except OSError as exc:
            walk.broken = (str(file), 0, f"unreadable: {exc}")
            return walk
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        elif file is files[-1]:
            unfinished = (str(file), len(lines))
        for number, raw in enumerate(lines, start=1):
            row, reason = _check_row(raw, expected_prev, walk.count)
            if reason is not None and (str(file), number) == unfinished:
                # The unfinished end: whatever its bytes parse as, the next append cuts them.
                reason = _NOT_JSON
            if reason == _NOT_JSON and torn is None:
                torn = (str(file), number)
                continue
            if reason is not None:
                walk.broken = (*torn, _NOT_JSON) if torn else (str(file), number, reason)
                return walk
            assert row is not None
            if torn is not None:
                walk.notes.append(
                    f"line {torn[1]} of {torn[0]} is the remains of an interrupted write, "
                    "not a row; the chain goes on past it"
                )
                torn = None
            expected_prev = str(row["this_hash"])
            if walk.count in wanted:
                walk.hashes[walk.count] = expected_prev
            walk.count += 1
    if torn is not None and torn == unfinished:
        walk.notes.append(
            f"{torn[0]} ends with the bytes of an interrupted write after its last row; "
            "the next row written removes them"
        )
    elif torn is not None:
        walk.broken = (*torn, _NOT_JSON)
    return walk


def _read_anchor(path: Path, key: AnchorKey) -> tuple[bytes | None, Head | None, Head | None]:
    """The key, the head and the anchor record of the log at ``path``."""
    try:
        secret = key.read()
        record = read_record(key, path)
    except OSError as exc:
        raise AnchorError(f"the provenance key {key.path} is unreadable ({exc})") from exc
    return secret, read_head(path), record


def verify(path: Path, key_path: Path) -> VerifyReport:
    """Check the whole chain (rotated files, then the live log), that the head is
    signed by the key at ``key_path``, and that the log holds the rows its head and its
    anchor record name. Never raises on bad data."""
    files = log_files(path)
    key = AnchorKey(key_path)
    try:
        secret, head, record = _read_anchor(path, key)
    except AnchorError as exc:
        return VerifyReport(False, 0, len(files), None, str(head_path(path)), None, str(exc))
    head_rows = head.seq + 1 if head is not None else None
    wanted = {mark.seq for mark in (head, record) if mark is not None}
    walk = _walk(files, wanted)
    notes = tuple(walk.notes)

    def failed(reason: str, file: str, line: int | None = None) -> VerifyReport:
        return VerifyReport(
            False, walk.count, len(files), walk.count, file, line, reason, head_rows, notes=notes
        )

    if walk.broken is not None:
        file, line, reason = walk.broken
        return failed(reason, file, line or None)
    problem = _anchor_problem(path, key, secret, head, record, walk)
    if problem is not None:
        return failed(problem, str(path))
    signed_head = head is not None and head.signed
    if not signed_head and walk.count:
        notes += (
            "the log has no signed head yet (it was written by an earlier release): its "
            "chain is intact, but rows cut from its end before now could not be noticed; "
            "the next row written signs its head, and anchors the log from then on",
        )
    return VerifyReport(
        True, walk.count, len(files), head_rows=head_rows, anchored=signed_head, notes=notes
    )


def _anchor_problem(
    path: Path,
    key: AnchorKey,
    secret: bytes | None,
    head: Head | None,
    record: Head | None,
    walk: _Walk,
) -> str | None:
    """Why the log does not reach what its head and its anchor record vouch for."""
    if record is not None:
        problem = record.problem(secret, key.path, record=True)
        if problem is not None:
            return problem
        if head is None or not head.signed:
            state = "missing" if head is None else "not signed"
            return (
                f"the head file {head_path(path)} is {state}, but the anchor record "
                f"{record_path(key, path)} shows this log was anchored at row {record.seq}: "
                "the head was deleted or replaced, so a cut at the end of the log cannot "
                "be ruled out"
            )
    if head is None:
        return None
    if head.signed:
        problem = head.problem(secret, key.path)
        if problem is not None:
            return problem
    gone = _missing(walk, head, "its head file")
    if gone is None and record is not None:
        gone = _missing(walk, record, f"the anchor record {record_path(key, path)}")
    if gone is None and walk.count > head.seq + 2:
        gone = (
            f"the log goes on to row {walk.count - 1}, past row {head.seq} that its head "
            "file records: the head was put back to an earlier row"
        )
    return gone


def _missing(walk: _Walk, mark: Head, named_by: str) -> str | None:
    """Why the log does not hold row ``mark.seq`` as ``named_by`` records it."""
    if walk.count == 0:
        state = "empty" if walk.files else "missing"
        return f"the log is {state}, but {named_by} records {mark.seq + 1} rows"
    if walk.count <= mark.seq:
        if walk.count == mark.seq:
            span = f"row {mark.seq} is"
        else:
            span = f"rows {walk.count} to {mark.seq} are"
        return f"{span} missing from the end of the log ({named_by} records them)"
    if walk.hashes.get(mark.seq) != mark.this_hash:
        return f"row {mark.seq} is not the row {named_by} records (the log was rewritten)"
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
