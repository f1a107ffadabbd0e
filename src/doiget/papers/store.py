"""The paper store: ``<root>/<safekey>.pdf`` and ``<root>/.metadata/<safekey>.toml``.

The TOML file is the source of truth for an entry; the search index is a cache of
it. Writes are atomic, the PDF is in place before the metadata that points at it,
and every write to one entry happens under that entry's lock file (5 s timeout), so
two processes fetching the same ref leave one consistent entry.

A user may edit any field of a TOML file by hand. doiget records a short hash of
every value it writes (``[doiget.written]``); on a re-fetch a field whose current
value no longer matches that hash is the user's and is left alone.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import stat
import time
import tomllib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Final, Literal

import anyio
import tomli_w
from filelock import FileLock, Timeout

from doiget.atomicfile import move_into_place, write_atomic
from doiget.cite.caveats import IDENTIFIED_KEY
from doiget.confined import Refused, open_confined, read_confined
from doiget.diskerror import write_error
from doiget.errors import DoigetError, ErrorCode
from doiget.models import Author, UpdateNotice, Work
from doiget.refs import Ref, legacy_safekey, parse_ref

logger = logging.getLogger("doiget.papers")

SCHEMA_VERSION: Final = "1.0"
LOCK_TIMEOUT_S: Final = 5.0
# A temp file this old is no write in progress; stale ones are swept this often.
STALE_TEMP_SECONDS: Final = 6 * 3600
SWEEP_EVERY_SECONDS: Final = 3600
PDF_MAGIC: Final = b"%PDF-"
# A store key as the tools show it ("doi_10.1038_nature12373"): a name for an entry.
STORE_KEY: Final = re.compile(r"(?:doi|arxiv|local)_[A-Za-z0-9._-]{1,250}")
# A metadata file is a few kilobytes; one larger than this is not read at all.
METADATA_MAX_BYTES: Final = 8 * 1024 * 1024

# The bibliographic fields of the TOML file, in the order they are written.
WORK_FIELDS: Final = (
    "title",
    "authors",
    "year",
    "doi",
    "arxiv_id",
    "abstract",
    "venue",
    "volume",
    "issue",
    "pages",
    "type",
    "publisher",
    "issn",
    "url",
)


def _value_hash(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def work_to_fields(work: Work) -> dict[str, Any]:
    """The TOML bibliographic fields of ``work`` (empty ones left out: TOML has no null)."""
    values: dict[str, Any] = {
        "title": work.title,
        "authors": [author.sort_name for author in work.authors if author.sort_name],
        "year": work.year,
        "doi": work.doi,
        "arxiv_id": work.arxiv_id,
        "abstract": work.abstract,
        "venue": work.venue,
        "volume": work.volume,
        "issue": work.issue,
        "pages": work.pages,
        "type": work.type,
        "publisher": work.publisher,
        "issn": list(work.issn),
        "url": work.url,
    }
    return {name: value for name, value in values.items() if value not in (None, "", [])}


def integrity_table(work: Work) -> dict[str, Any] | None:
    """The ``[doiget.integrity]`` table of ``work``: when Crossref was asked and the
    notices it gave (none is a clean record); None when Crossref was not asked."""
    if work.integrity_checked is None:
        return None
    notices = []
    for update in work.integrity:
        fields = {
            "kind": update.kind,
            "relation": update.direction,
            "doi": update.doi,
            "date": update.date,
            "source": update.source,
            "record_id": update.record_id,
        }
        notices.append({name: value for name, value in fields.items() if value is not None})
    return {"checked_at": work.integrity_checked, "notices": notices}


def merged_integrity(old: Any, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with every notice ``old`` recorded that ``new`` lacks: a later answer that
    no longer lists a notice never erases it (a retraction is not undone by silence)."""
    notices = list(new.get("notices", []))
    seen = {(n.get("relation"), n.get("kind"), n.get("doi")) for n in notices}
    stored = old.get("notices") if isinstance(old, dict) else None
    for notice in stored if isinstance(stored, list) else []:
        if not isinstance(notice, dict):
            continue
        key = (notice.get("relation"), notice.get("kind"), notice.get("doi"))
        if key not in seen:
            seen.add(key)
            notices.append(notice)
    return {**new, "notices": notices}


def _integrity_from_table(table: Any) -> tuple[tuple[UpdateNotice, ...], str | None]:
    """(notices, checked_at) of a stored ``[doiget.integrity]`` table; a hand edit that
    broke a notice leaves that notice out, an entry without the table has none."""
    if not isinstance(table, dict):
        return (), None
    updates = []
    for item in table.get("notices", []) if isinstance(table.get("notices"), list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            continue
        direction: Literal["update-to", "updated-by"] = (
            "update-to" if item.get("relation") == "update-to" else "updated-by"
        )
        updates.append(
            UpdateNotice(
                kind=item["kind"],
                direction=direction,
                doi=_text(item.get("doi")),
                date=_text(item.get("date")),
                source=_text(item.get("source")),
                record_id=_text(item.get("record_id")),
            )
        )
    return tuple(updates), _text(table.get("checked_at"))


def _author_from_text(text: str) -> Author:
    family, comma, given = text.partition(",")
    if comma:
        return Author(family=family.strip(), given=given.strip() or None)
    return Author(literal=text.strip())


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def work_from_document(document: dict[str, Any]) -> Work:
    """A Work built from a stored TOML document (for exports and listings)."""
    meta = document.get("doiget", {}) if isinstance(document.get("doiget"), dict) else {}
    authors = document.get("authors", [])
    year = document.get("year")
    issn = document.get("issn", [])
    updates, checked = _integrity_from_table(meta.get("integrity"))
    return Work(
        source=str(meta.get("source", "store")),
        title=_text(document.get("title")),
        authors=tuple(_author_from_text(str(a)) for a in authors if isinstance(a, str)),
        year=year if isinstance(year, int) else None,
        doi=_text(document.get("doi")),
        arxiv_id=_text(document.get("arxiv_id")),
        abstract=_text(document.get("abstract")),
        venue=_text(document.get("venue")),
        volume=_text(document.get("volume")),
        issue=_text(document.get("issue")),
        pages=_text(document.get("pages")),
        type=_text(document.get("type")),
        publisher=_text(document.get("publisher")),
        issn=tuple(str(i) for i in issn) if isinstance(issn, list) else (),
        url=_text(document.get("url")),
        license=_text(meta.get("license")),
        # An entry no source identified says so wherever it is cited.
        extra={IDENTIFIED_KEY: False} if meta.get(IDENTIFIED_KEY) is False else {},
        updates=updates,
        integrity_checked=checked,
    )


def aliases(document: dict[str, Any], kind: str) -> list[str]:
    """The keys of ``kind`` (``bib``: citation keys) an entry is also known by, first
    kept first: ``[doiget.aliases]``, written when a bibliography is imported. A citation
    key BibTeX cannot cite (a file edited by hand, an older import) is passed over."""
    from doiget.cite.citekey import citable_key

    meta = document.get("doiget")
    table = meta.get("aliases") if isinstance(meta, dict) else None
    keys = table.get(kind) if isinstance(table, dict) else None
    if not isinstance(keys, list):
        return []
    kept = [key for key in keys if isinstance(key, str) and key]
    return [key for key in kept if citable_key(key)] if kind == "bib" else kept


@dataclass(frozen=True, slots=True)
class Entry:
    """One stored paper: its ref, key, paths and parsed TOML document."""

    ref: Ref
    key: str
    metadata_path: Path
    pdf_path: Path
    document: dict[str, Any]

    @property
    def has_pdf(self) -> bool:
        """Whether the TOML records a PDF and a PDF doiget serves is there (see
        :meth:`pdf_size`)."""
        try:
            self.pdf_size()
        except DoigetError:
            return False
        return True

    @property
    def work(self) -> Work:
        """The entry's metadata as a Work."""
        return work_from_document(self.document)

    @property
    def bib_key(self) -> str | None:
        """The citation key the user's own bibliography gave the entry (the first one
        imported), or None: BibTeX export and the entry's passages cite it by this key."""
        keys = aliases(self.document, "bib")
        return keys[0] if keys else None

    def pdf_size(self) -> int:
        """The size of the entry's PDF; raises as :func:`open_stored_pdf` does."""
        with self._open_pdf() as handle:
            return os.fstat(handle.fileno()).st_size

    def read_pdf(self) -> bytes:
        """The bytes of the entry's PDF; raises as :func:`open_stored_pdf` does."""
        with self._open_pdf() as handle:
            return handle.read()

    def _open_pdf(self) -> contextlib.AbstractContextManager[BinaryIO]:
        if "pdf_path" not in self.document:
            raise DoigetError(
                ErrorCode.NOT_FOUND,
                f"{self.ref} is stored without a PDF (metadata only); fetch it to get one.",
            )
        return open_stored_pdf(self.pdf_path.parent, self.pdf_path, self.ref)


@contextmanager
def open_stored_pdf(root: Path, path: Path, ref: Ref | str) -> Iterator[BinaryIO]:
    """The stored PDF ``path`` of ``ref``, opened inside ``root`` and checked to be a PDF.

    NOT_FOUND when the file is absent; STORE_ERROR when it is a link out of the
    store, not a regular file, unreadable, or does not start with ``%PDF-``: such a
    file is never served, indexed or reported as the paper's PDF.
    """
    try:
        descriptor = open_confined(root, path)
    except FileNotFoundError:
        raise DoigetError(
            ErrorCode.NOT_FOUND,
            f"{ref}'s PDF is missing from the store ({path}); fetch it again to restore it.",
        ) from None
    except OSError as exc:
        raise unreadable_file(path, exc, f"delete it and fetch {ref} again") from exc
    with os.fdopen(descriptor, "rb") as handle:
        head = handle.read(len(PDF_MAGIC))
        if head != PDF_MAGIC:
            raise DoigetError(
                ErrorCode.STORE_ERROR,
                f"{path} is not a PDF (it does not start with %PDF-); doiget neither serves "
                f"nor indexes it. Delete it and fetch {ref} again.",
            )
        handle.seek(0)
        yield handle


def unreadable_file(path: Path, exc: OSError, remedy: str) -> DoigetError:
    """The STORE_ERROR for a stored file that cannot (or must not) be read."""
    if isinstance(exc, Refused):
        if exc.errno == errno.EXDEV:
            remedy = f"replace the link with a copy of the file, or {remedy}"
        return DoigetError(
            ErrorCode.STORE_ERROR,
            f"{exc.strerror}; doiget reads only regular files inside its store and refuses "
            f"this one: {remedy}.",
        )
    return DoigetError(
        ErrorCode.STORE_ERROR,
        f"cannot read {path}: {exc.strerror or exc}; check its permissions, or {remedy}.",
    )


def utc_now() -> str:
    """Now, in UTC, to the second: the form of every time the store records."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Store:
    """Files of one library root. Cheap to build; touches the disk only when used."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.metadata_dir = root / ".metadata"
        # The search index and what is kept beside it: caches, outside .metadata.
        self.index_dir = root / ".index"
        self._next_sweep = 0.0  # monotonic time of the next sweep of stale temp files

    # -- paths ------------------------------------------------------------------

    def key(self, ref: Ref) -> str:
        """The key the files of ``ref`` live under: its safekey, or, for an entry
        stored when the plain mapping was the key, that plain key while the TOML
        there names this very ref."""
        key = ref.safekey
        plain = legacy_safekey(ref)
        if plain != key and not self._metadata_file(key).exists():
            document = self.read_document_at(self._metadata_file(plain))
            if document is not None and stored_ref(document) == ref:
                return plain
        return key

    def pdf_path(self, ref: Ref) -> Path:
        """Where the PDF of ``ref`` lives (whether or not it exists)."""
        return self._pdf_file(self.key(ref))

    def metadata_path(self, ref: Ref) -> Path:
        """Where the TOML of ``ref`` lives."""
        return self._metadata_file(self.key(ref))

    def _pdf_file(self, key: str) -> Path:
        return self.root / f"{key}.pdf"

    def _metadata_file(self, key: str) -> Path:
        return self.metadata_dir / f"{key}.toml"

    def _lock_path(self, ref: Ref) -> Path:
        return self.metadata_dir / f"{self.key(ref)}.toml.lock"

    # -- locking ----------------------------------------------------------------

    def _file_lock(self, ref: Ref) -> FileLock:
        try:
            self.metadata_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._io_error("create the store directory", self.metadata_dir, exc) from exc
        return FileLock(str(self._lock_path(ref)), timeout=LOCK_TIMEOUT_S, thread_local=False)

    def _lock_timeout(self, ref: Ref) -> DoigetError:
        return DoigetError(
            ErrorCode.LOCK_TIMEOUT,
            f"{ref} is being written by another doiget process (waited {LOCK_TIMEOUT_S:g} s); "
            "try again in a moment.",
        )

    @contextmanager
    def locked(self, ref: Ref) -> Iterator[None]:
        """Hold the entry's lock (blocking, for the CLI's synchronous paths)."""
        lock = self._file_lock(ref)
        try:
            lock.acquire()
        except Timeout:
            raise self._lock_timeout(ref) from None
        try:
            yield
        finally:
            lock.release()

    @asynccontextmanager
    async def locked_async(self, ref: Ref) -> AsyncIterator[None]:
        """Hold the entry's lock without blocking the event loop while waiting."""
        lock = self._file_lock(ref)
        try:
            await anyio.to_thread.run_sync(lock.acquire)
        except Timeout:
            raise self._lock_timeout(ref) from None
        try:
            yield
        finally:
            lock.release()

    # -- reading ----------------------------------------------------------------

    def read_document(self, ref: Ref) -> dict[str, Any] | None:
        """The parsed TOML of ``ref``, or None when it is not stored.

        A TOML whose ``[doiget] ref`` names another ref is never taken for this
        one (nor overwritten by it): that is a STORE_ERROR.
        """
        path = self.metadata_path(ref)
        document = self.read_document_at(path)
        owner = stored_ref(document) if document is not None else None
        if owner is not None and owner != ref:
            raise DoigetError(
                ErrorCode.STORE_ERROR,
                f"{path} holds {owner}, not {ref}; doiget will not read or replace another "
                "paper's entry. Move that file aside if it was copied there by hand.",
            )
        return document

    def read_document_at(self, path: Path) -> dict[str, Any] | None:
        """Parse one TOML file, read inside the store, checking its schema version.

        A file that is not a regular file in the store, is not UTF-8, is not TOML
        or has a schema_version that is not a version string is a STORE_ERROR that
        names the file and what to do.
        """
        remedy = "delete it and fetch the paper again"
        try:
            data = read_confined(self.root, path, limit=METADATA_MAX_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise unreadable_file(path, exc, remedy) from exc
        try:
            document = tomllib.loads(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise DoigetError(
                ErrorCode.STORE_ERROR,
                f"{path} is not UTF-8 text (byte {exc.start} is "
                f"{data[exc.start : exc.start + 1]!r}); re-save it as UTF-8, or {remedy}.",
            ) from exc
        except tomllib.TOMLDecodeError as exc:
            raise DoigetError(
                ErrorCode.STORE_ERROR,
                f"{path} is not valid TOML ({exc}); fix the hand edit, or {remedy}.",
            ) from exc
        version = document.get("schema_version", SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, str | int | float):
            raise DoigetError(
                ErrorCode.STORE_ERROR,
                f"{path} has schema_version {str(version)[:80]!r}, not a version such as "
                f'"{SCHEMA_VERSION}"; fix the hand edit, or {remedy}.',
            )
        version = str(version)
        major = version.split(".", 1)[0]
        if not major.isdigit() or int(major) > int(SCHEMA_VERSION.split(".")[0]):
            raise DoigetError(
                ErrorCode.SCHEMA_TOO_NEW,
                f"{path} has schema_version {version[:80]!r}; this doiget reads {SCHEMA_VERSION}. "
                "Upgrade doiget to read it.",
            )
        return document

    def entry(self, ref: Ref) -> Entry | None:
        """The stored entry of ``ref``, or None."""
        document = self.read_document(ref)
        if document is None:
            return None
        return Entry(ref, self.key(ref), self.metadata_path(ref), self.pdf_path(ref), document)

    def entry_at(self, path: Path) -> Entry | None:
        """The entry whose TOML is ``path`` (None when its ids no longer parse)."""
        document = self.read_document_at(path)
        if document is None:
            return None
        ref = ref_of_document(document)
        if ref is None:
            return None
        return Entry(ref, path.stem, path, self._pdf_file(path.stem), document)

    def entry_by_key(self, key: str) -> Entry | None:
        """The entry stored under the safe key ``key`` (a checked key, never a path)."""
        return self.entry_at(self._metadata_file(key))

    def entry_named(self, text: str) -> tuple[str, Entry | None]:
        """The entry a ref or a store key names, and that name as the tools show it
        (the canonical ref, or the key); INVALID_REF when it is neither."""
        text = text.strip()
        if STORE_KEY.fullmatch(text):
            return text, self.entry_by_key(text)
        ref = parse_ref(text)
        return ref.canonical, self.entry(ref)

    def entries(self) -> Iterator[Entry]:
        """Every readable entry, in key order (unreadable files are skipped and logged)."""
        for path in self.metadata_files():
            try:
                entry = self.entry_at(path)
            except DoigetError as error:
                logger.warning("skipping %s: %s", path.name, error.message)
                continue
            if entry is not None:
                yield entry

    def metadata_files(self) -> list[Path]:
        """Every entry's TOML file."""
        if not self.metadata_dir.is_dir():
            return []
        return sorted(self.metadata_dir.glob("*.toml"))

    # -- writing ----------------------------------------------------------------

    def write_metadata(
        self,
        ref: Ref,
        work: Work,
        *,
        doiget_fields: dict[str, Any],
        pdf: Path | None = None,
    ) -> dict[str, Any]:
        """Merge ``work`` into the entry's TOML and write it atomically. Hold the lock.

        Fields the user edited by hand stay as they are; ``doiget_fields`` go to the
        ``[doiget]`` table. Returns the document written.
        """
        existing = self.read_document(ref) or {}
        meta_old = existing.get("doiget", {}) if isinstance(existing.get("doiget"), dict) else {}
        written_old = (
            meta_old.get("written", {}) if isinstance(meta_old.get("written"), dict) else {}
        )
        document: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        written: dict[str, str] = {}
        fresh = work_to_fields(work)
        for name in WORK_FIELDS:
            current = existing.get(name)
            user_owned = current is not None and written_old.get(name) != _value_hash(current)
            if user_owned:
                document[name] = current
            elif name in fresh:
                document[name] = fresh[name]
                written[name] = _value_hash(fresh[name])
            elif current is not None:
                document[name] = current
                written[name] = _value_hash(current)
        for name, value in existing.items():
            if name not in document and name != "doiget":
                document[name] = value  # fields a user added: keep them
        if pdf is not None:
            document["pdf_path"] = str(pdf)
        elif "pdf_path" in existing and Path(str(existing["pdf_path"])).is_file():
            document["pdf_path"] = existing["pdf_path"]
        else:
            document.pop("pdf_path", None)
        meta = {k: v for k, v in meta_old.items() if k != "written"}
        meta.update({k: v for k, v in doiget_fields.items() if v is not None})
        if "integrity" in meta:
            meta["integrity"] = merged_integrity(meta_old.get("integrity"), meta["integrity"])
        meta["fetched_at"] = utc_now()
        meta["ref"] = ref.canonical
        meta["written"] = written
        document["doiget"] = meta
        self._write_document(ref, document)
        return document

    def record_integrity(self, ref: Ref, work: Work) -> Entry:
        """Record what Crossref now says of the entry's integrity (``work``'s notices,
        checked just now), leaving every other field as it is. Hold the lock."""
        document = self.read_document(ref)
        table = integrity_table(work)
        if document is None or table is None:
            raise DoigetError(ErrorCode.NOT_FOUND, f"{ref} is not in the library.")
        old: dict[str, Any] = document["doiget"] if isinstance(document.get("doiget"), dict) else {}
        meta = {**old, "integrity": merged_integrity(old.get("integrity"), table)}
        document = {**document, "doiget": meta}
        if work_from_document(document).retracted:
            meta["retracted"] = True
        self._write_document(ref, document)
        return Entry(ref, self.key(ref), self.metadata_path(ref), self.pdf_path(ref), document)

    def _write_document(self, ref: Ref, document: dict[str, Any]) -> None:
        path = self.metadata_path(ref)
        try:
            write_atomic(path, tomli_w.dumps(document).encode("utf-8"))
        except OSError as exc:
            raise self._io_error("write", path, exc) from exc

    def add_alias(self, ref: Ref, kind: str, key: str) -> bool:
        """Add ``key`` to the entry's ``[doiget.aliases] kind`` list; False when it is
        there already (nothing written). Every other value, ``fetched_at`` included, is
        left as it is. Hold the lock."""
        return self._set_aliases(
            ref, kind, lambda known: [*known, key] if key not in known else known
        )

    def remove_alias(self, ref: Ref, kind: str, key: str) -> bool:
        """Take ``key`` out of the entry's ``[doiget.aliases] kind`` list; False when it
        is not there (nothing written). Hold the lock."""
        return self._set_aliases(ref, kind, lambda known: [k for k in known if k != key])

    def _set_aliases(self, ref: Ref, kind: str, change: Callable[[list[str]], list[str]]) -> bool:
        document = self.read_document(ref)
        if document is None:
            raise DoigetError(ErrorCode.NOT_FOUND, f"{ref} is not in the library.")
        known = aliases(document, kind)
        changed = change(known)
        if changed == known:
            return False
        meta = document.get("doiget")
        meta = meta if isinstance(meta, dict) else {}
        table = meta.get("aliases")
        table = table if isinstance(table, dict) else {}
        document["doiget"] = {**meta, "aliases": {**table, kind: changed}}
        self._write_document(ref, document)
        return True

    def set_meta(self, ref: Ref, name: str, value: Any) -> bool:
        """Set ``[doiget] name`` (None removes it); False when it holds ``value`` already
        (nothing written). Hold the lock."""
        document = self.read_document(ref)
        if document is None:
            raise DoigetError(ErrorCode.NOT_FOUND, f"{ref} is not in the library.")
        meta = document.get("doiget")
        meta = meta if isinstance(meta, dict) else {}
        if meta.get(name) == value:
            return False
        kept = {field: held for field, held in meta.items() if field != name}
        document["doiget"] = kept if value is None else {**kept, name: value}
        self._write_document(ref, document)
        return True

    def place_pdf(self, ref: Ref, temp: Path) -> Path:
        """Move a checked, fsynced temp PDF into the entry's place. Hold the lock."""
        self.read_document(ref)  # refuses a place that belongs to another ref
        target = self.pdf_path(ref)
        try:
            move_into_place(temp, target)
        except OSError as exc:
            raise self._io_error("store the PDF at", target, exc) from exc
        return target

    def delete(self, ref: Ref) -> list[Path]:
        """Remove the entry's PDF and TOML (metadata first). Hold the lock."""
        self.read_document(ref)  # refuses to remove another ref's entry
        removed: list[Path] = []
        for path in (self.metadata_path(ref), self.pdf_path(ref)):
            try:
                path.unlink()
                removed.append(path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise self._io_error("delete", path, exc) from exc
        return removed

    def sweep_partials(self) -> list[Path]:
        """Remove the temp files no write will finish.

        A download or a copied PDF is written to ``.doiget-<pid>-*.part`` in the store,
        a TOML (or the search postings file, in the index's folder) to
        ``.<name>.*.tmp`` beside it, each renamed into place only when complete. A
        write that fails removes its own; a process killed mid-write leaves it behind.
        A ``.part`` of a process that no longer runs goes at once; any of these older
        than :data:`STALE_TEMP_SECONDS` (no write takes that long, and the pid may have
        been reused) goes too. Only regular files are removed: never a link
        or what it points to, a folder or a FIFO.
        """
        now = time.time()
        removed: list[Path] = []
        for folder, pattern in (
            (self.root, ".doiget-*-*.part"),
            (self.metadata_dir, ".*.tmp"),
            (self.index_dir, ".*.tmp"),
        ):
            for path in folder.glob(pattern) if folder.is_dir() else ():
                if _stale_temp(path, now):
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                        removed.append(path)
        self._next_sweep = time.monotonic() + SWEEP_EVERY_SECONDS
        return removed

    def sweep_if_due(self) -> None:
        """:meth:`sweep_partials`, if it has not run in this process for an hour: a
        long-running server sweeps as it goes. Blocks: call it from a worker thread."""
        if time.monotonic() >= self._next_sweep:
            with contextlib.suppress(OSError):  # a store it cannot list is reported elsewhere
                self.sweep_partials()

    @staticmethod
    def _io_error(action: str, path: Path, exc: OSError) -> DoigetError:
        return write_error(ErrorCode.STORE_ERROR, action, path, exc, "DOIGET_STORE_ROOT")


def _stale_temp(path: Path, now: float) -> bool:
    """Whether the temp file at ``path`` is one no write will finish (see
    :meth:`Store.sweep_partials`)."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    if now - info.st_mtime > STALE_TEMP_SECONDS:
        return True
    pid = path.name.split("-")[1] if path.suffix == ".part" else ""
    return pid.isdigit() and not _process_alive(int(pid))


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stored_ref(document: dict[str, Any]) -> Ref | None:
    """The ref a document's ``[doiget] ref`` names (None when absent or unreadable)."""
    meta = document.get("doiget")
    value = meta.get("ref") if isinstance(meta, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return parse_ref(value)
    except DoigetError:
        return None


def ref_of_document(document: dict[str, Any]) -> Ref | None:
    """The ref a stored document is filed under: ``[doiget] ref``, else its DOI or arXiv id."""
    meta = document.get("doiget")
    candidates = [meta.get("ref")] if isinstance(meta, dict) else []
    candidates += [document.get("doi"), document.get("arxiv_id")]
    for value in candidates:
        if isinstance(value, str) and value:
            try:
                return parse_ref(value)
            except DoigetError:
                continue
    return None
