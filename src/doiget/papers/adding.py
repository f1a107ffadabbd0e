"""Adding a local PDF to the library: read it where it lies, identify it, store a copy.

The file is read once (never moved, never changed) and its bytes are copied into the
store through a temp file, fsync and rename. Entries are content-addressed: a PDF no
source identifies is filed under ``local:<sha256>``, so the same file added twice is
one entry; one that is identified joins the entry of its work (its PDF stored when
the entry had none). Every file added is one ``add`` row in the provenance log
(``source: local-file``, its SHA-256, what identified it), written before the store.

Over MCP a path must lie inside a folder the caller may read from (the client's
roots, ``DOIGET_IMPORT_DIRS``): the path is resolved (links followed) before the
check and then opened below that folder without following links, so neither a link
nor one swapped in after the check leads outside.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from doiget.confined import Refused, open_confined, open_regular, path_text, read_capped
from doiget.errors import DoigetError, ErrorCode
from doiget.models import Author, Work
from doiget.owner import LOCAL, current_owner
from doiget.papers import added as a
from doiget.papers.contracts import ErrorBody
from doiget.papers.identify import Identification, identify
from doiget.papers.origin import LOCAL_FILE
from doiget.papers.resolver import Resolution
from doiget.papers.store import PDF_MAGIC, Entry
from doiget.refs import Ref, local_ref

if TYPE_CHECKING:
    from doiget.papers.pdfclues import Clues
    from doiget.papers.service import Papers
    from doiget.verify.service import Verifier

SOURCE: Final = LOCAL_FILE
# The largest PDF added, as for downloads.
MAX_PDF_BYTES: Final = 100 * 1024 * 1024
# The most PDFs one call adds (a folder is walked up to this many).
MAX_FILES: Final = 500
ALLOW_HINT: Final = (
    "add its folder to the MCP client's roots, or to DOIGET_IMPORT_DIRS (folders separated "
    "by the OS path separator) and restart doiget"
)

AddProgress = Callable[[int, int, a.AddResult], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class _Read:
    """A file read for adding: its bytes and their SHA-256."""

    path: Path
    data: bytes
    sha256: str


def pdfs_in(path: Path, refused: dict[Path, DoigetError]) -> list[Path]:
    """The file named, or the ``*.pdf`` files below the folder named (sorted; links to
    folders are not followed); at most :data:`MAX_FILES`. A path that cannot be looked
    at, or a folder below that cannot be listed, is listed too, with its coded error put
    in ``refused``: the others are added all the same."""
    try:
        walked = path.is_dir()
    except (OSError, ValueError) as exc:  # no search permission above it, a NUL byte
        refused[path] = unreadable(path, exc)
        return [path]
    if not walked:
        return [path]
    found: list[Path] = []

    def unlisted(exc: OSError) -> None:
        folder = Path(exc.filename) if exc.filename else path
        refused[folder] = unreadable(folder, exc)
        found.append(folder)

    for directory, folders, files in os.walk(path, onerror=unlisted):
        folders.sort()
        found += [Path(directory) / name for name in sorted(files) if name.lower().endswith(".pdf")]
        if len(found) > MAX_FILES:
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"more than {MAX_FILES} PDFs under {path}; add them in smaller folders.",
            )
    return found


def unreadable(path: Path, exc: OSError | ValueError) -> DoigetError:
    """The coded error of a path the system would not let doiget look at or read."""
    if isinstance(exc, ValueError):  # a NUL byte: no file has such a name
        return DoigetError(
            ErrorCode.INVALID_REF, f"the path {path!r} holds a NUL byte; pass the file's name."
        )
    return DoigetError(
        ErrorCode.NOT_FOUND, f"cannot read {path}: {exc.strerror}; check its permissions."
    )


def containing(
    path: Path, allowed: Sequence[Path], *, doing: str = "add files from"
) -> tuple[Path, Path]:
    """The allowed folder (resolved) holding ``path`` once every link is followed, and
    the resolved path; CAPABILITY_DENIED, saying what doiget may be ``doing`` with the
    allowed folders, when there is none."""
    try:
        real = path.resolve()
    except RuntimeError:  # a loop of links, as Python 3.11 reports it
        raise DoigetError(
            ErrorCode.INVALID_REF, f"{path} is a loop of symbolic links; pass the file itself."
        ) from None
    except ValueError as exc:
        raise unreadable(path, exc) from None
    for folder in allowed:
        root = folder.resolve()
        if real.is_relative_to(root):
            return root, real
    where = ""
    if current_owner() == LOCAL:  # the server's own paths are told to no remote caller
        via = f" (it leads to {real})" if real != path.absolute() else ""
        shown = ", ".join(str(folder) for folder in allowed) or "none declared"
        where = f"{via}: {shown}"
    raise DoigetError(
        ErrorCode.CAPABILITY_DENIED,
        f"{path} is outside the folders doiget may {doing}{where}. To allow it, {ALLOW_HINT}.",
    )


def read_local_pdf(path: Path, allowed: Sequence[Path] | None) -> _Read:
    """The bytes of the PDF at ``path``; with ``allowed``, only inside those folders. Only
    a regular file is read (a FIFO or device never is), and never past
    :data:`MAX_PDF_BYTES` whatever size it reports."""
    try:
        if allowed is None:
            descriptor = open_regular(path)
        else:
            root, real = containing(path, allowed)
            descriptor = open_confined(root, real)
        data = read_capped(descriptor, path, MAX_PDF_BYTES)
    except FileNotFoundError:
        raise DoigetError(ErrorCode.NOT_FOUND, f"{path} does not exist; check the path.") from None
    except Refused as exc:
        if exc.errno == errno.EXDEV:  # a link leading out of the allowed folder
            raise DoigetError(
                ErrorCode.CAPABILITY_DENIED, f"{exc.strerror}; to allow it, {ALLOW_HINT}."
            ) from None
        raise DoigetError(ErrorCode.INVALID_REF, f"{exc.strerror}; pass a PDF file.") from None
    except (OSError, ValueError) as exc:
        raise unreadable(path, exc) from None
    if not data.startswith(PDF_MAGIC):
        raise DoigetError(
            ErrorCode.INVALID_REF, f"{path} is not a PDF (it does not start with %PDF-)."
        )
    return _Read(path, data, hashlib.sha256(data).hexdigest())


class PdfAdder:
    """Adds local PDFs through one papers core and one verifier."""

    def __init__(self, papers: Papers, verifier: Verifier) -> None:
        self.papers = papers
        self.verifier = verifier

    async def add_many(
        self,
        paths: Sequence[str],
        *,
        allowed: Sequence[Path] | None = None,
        progress: AddProgress | None = None,
    ) -> a.PdfsAdded:
        """Every PDF the paths name (folders walked), one result each, in order. With
        ``allowed``, a path outside those folders is refused before it is looked at."""
        given = [Path(path).expanduser() for path in paths]
        refused: dict[Path, DoigetError] = {}
        if allowed is not None:
            for path in given:
                try:
                    containing(path, allowed)
                except DoigetError as error:
                    refused[path] = error
                except (OSError, ValueError) as exc:
                    refused[path] = unreadable(path, exc)
        walked = await self.papers.runtime.pool("papers").run(
            lambda: [[path] if path in refused else pdfs_in(path, refused) for path in given]
        )
        files = list(dict.fromkeys(path for group in walked for path in group))
        if len(files) > MAX_FILES:
            raise DoigetError(
                ErrorCode.INVALID_REF,
                f"{len(files)} PDFs named; one call adds at most {MAX_FILES}. Split the list.",
            )
        results: list[a.AddResult] = []
        for done, path in enumerate(files, start=1):
            try:
                if path in refused:
                    raise refused[path]
                result = await self.add_pdf(path, allowed=allowed)
            except DoigetError as error:
                body = ErrorBody(code=error.code.value, message=path_text(error.message))
                result = a.AddResult(ok=False, path=path_text(path), error=body)
            results.append(result)
            if progress is not None:
                reported = progress(done, len(files), result)
                if reported is not None:
                    await reported
            if result.error is not None and result.error.code == ErrorCode.LOG_ERROR.value:
                break  # nothing more may happen unrecorded
        identified = sum(1 for r in results if r.ok and r.identified)
        failed = sum(1 for r in results if not r.ok)
        summary = a.AddSummary(
            total=len(results),
            identified=identified,
            unidentified=len(results) - identified - failed,
            failed=failed,
        )
        return a.PdfsAdded(ok=True, results=results, summary=summary)

    async def add_pdf(
        self,
        path: Path,
        *,
        allowed: Sequence[Path] | None = None,
        known: Identification | None = None,
    ) -> a.AddResult:
        """Add one PDF: copied into the store, identified when the sources agree.

        ``allowed``: the folders the file must lie in (None: anywhere, for a person at
        the command line). ``known``: the work the file is already known to be (a
        citation manager's checked item it is attached to), asked of no source again.
        Raises DoigetError for a file that cannot be added.
        """
        pool = self.papers.runtime.pool("papers")
        read = await pool.run(lambda: read_local_pdf(path, allowed), admitted=True)
        local = self.papers.store.entry(local_ref(read.sha256))
        if local is not None:
            await self._record(read, local.ref, None, "already_present")
            return _result(read, local, "already_present", None, pdf_added=False)
        from doiget.documents.pdftext import UnusableDocument
        from doiget.papers.pdfclues import read_clues

        try:
            clues = await pool.run(lambda: read_clues(read.data, path.name), admitted=True)
        except UnusableDocument as exc:
            # Stored, it would fail every read, quote and index of it: refused now.
            raise DoigetError(ErrorCode.INVALID_REF, f"{exc.message}; nothing was added.") from None
        found = known or await identify(clues, self.verifier)
        if found.ref is None:
            return await self._unidentified(read, clues)
        return await self._identified(read, found, found.ref)

    async def _identified(self, read: _Read, found: Identification, ref: Ref) -> a.AddResult:
        papers = self.papers
        entry = papers.store.entry(ref)
        if entry is not None and entry.has_pdf:
            same = entry.document.get("doiget", {}).get("sha256") == read.sha256
            status: a.AddStatus = "already_present" if same else "joined"
            await self._record(read, ref, found, f"{status}; the entry's PDF kept")
            return _result(read, entry, status, found, pdf_added=False)
        if entry is None:
            resolution = await papers._resolve_logged(ref)
        else:
            resolution = Resolution(ref=ref, work=entry.work, source=SOURCE)
        fields = _file_fields(read, identified_by=found.method)
        if entry is None:
            fields = papers._doiget_fields(resolution, **fields)
        written = await self._store(read, ref, resolution, fields, found)
        return _result(read, written, "added" if entry is None else "joined", found, pdf_added=True)

    async def _unidentified(self, read: _Read, clues: Clues) -> a.AddResult:
        ref = local_ref(read.sha256)
        authors = tuple(Author(family=x.family, given=x.given or None) for x in clues.authors)
        title = clues.title or clues.info_title or path_text(read.path.stem)
        work = Work(source=SOURCE, title=title, authors=authors)
        guesses = {
            "identified": False,
            "title_guess": clues.title or clues.info_title,
            "authors_guess": [author.display for author in clues.authors] or None,
            "file_name": path_text(read.path.name),
        }
        fields = {"source": SOURCE, **_file_fields(read), **guesses}
        resolution = Resolution(ref=ref, work=work, source=SOURCE)
        written = await self._store(read, ref, resolution, fields, None)
        return _result(read, written, "added", None, pdf_added=True)

    async def _record(
        self,
        read: _Read,
        ref: Ref,
        found: Identification | None,
        outcome: str,
        path: Path | None = None,
    ) -> None:
        how = (
            f"identified by {found.method}: {found.evidence}"[:300]
            if found is not None and found.method
            else "unidentified"
        )
        await self.papers._log_async(
            "add",
            ref,
            source=SOURCE,
            result="ok",
            size=len(read.data),
            path=str(path) if path is not None else None,
            sha256=read.sha256,
            detail=path_text(f"{read.path.name}: {how}; {outcome}"),
        )

    async def _store(
        self,
        read: _Read,
        ref: Ref,
        resolution: Resolution,
        fields: dict[str, Any],
        found: Identification | None,
    ) -> Entry:
        """Record the add, then copy the bytes into the entry's place under its lock."""
        store = self.papers.store
        async with store.locked_async(ref):
            target = store.pdf_path(ref)
            await self._record(read, ref, found, "stored", target)
            temp = await self.papers.runtime.pool("papers").run(
                lambda: _temp_copy(store.root, read.data), admitted=True
            )
            try:
                await self.papers._write_entry(ref, resolution, fields, temp)
            finally:
                temp.unlink(missing_ok=True)
        entry = store.entry(ref)
        if entry is None:  # written a moment ago under the lock
            raise DoigetError(ErrorCode.STORE_ERROR, f"{ref} was written but cannot be read back.")
        return entry


def _temp_copy(root: Path, data: bytes) -> Path:
    """``data`` in a fsynced temp file in the store; removed again if writing it fails
    (a full disk), swept if this process dies."""
    temp = root / f".doiget-{os.getpid()}-{secrets.token_hex(6)}.part"
    try:
        root.mkdir(parents=True, exist_ok=True)
        handle = temp.open("xb")  # ours from here on
        try:
            with handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        from doiget.diskerror import write_error

        raise write_error(
            ErrorCode.STORE_ERROR, "copy the PDF into", root, exc, "DOIGET_STORE_ROOT"
        ) from exc
    return temp


def _method(found: Identification | None, document: dict[str, Any]) -> str | None:
    """How the entry was identified: by this file, else as recorded when it was stored."""
    if found is not None:
        return found.method
    recorded = document.get("identified_by")
    return recorded if isinstance(recorded, str) else None


def _file_fields(read: _Read, identified_by: str | None = None) -> dict[str, Any]:
    return {
        "pdf_source": SOURCE,
        "sha256": read.sha256,
        "size_bytes": len(read.data),
        "identified_by": identified_by,
    }


def _result(
    read: _Read,
    entry: Entry,
    status: a.AddStatus,
    found: Identification | None,
    *,
    pdf_added: bool,
) -> a.AddResult:
    from doiget.cite.citekey import citekey
    from doiget.integrity import notices

    work = entry.work
    identified = entry.ref.kind != "local"
    document = entry.document.get("doiget", {})
    read_back = None
    if not identified:
        guess_authors = document.get("authors_guess")
        read_back = a.ReadFromPdf(
            title=document.get("title_guess"),
            authors=list(guess_authors) if isinstance(guess_authors, list) else None,
        )
    fields: dict[str, Any] = {
        "path": path_text(read.path),
        "status": status,
        "ref": entry.ref.canonical,
        "key": entry.key,
        "identified": identified,
        "identified_by": _method(found, document) if identified else None,
        "evidence": found.evidence if found else None,
        "title": work.title,
        "citekey": citekey(work),
        "sha256": read.sha256,
        "pdf_added": pdf_added,
        "read": read_back,
        "integrity": notices(work),
    }
    # Sparse: a field without a value is left out, never sent as null.
    return a.AddResult(
        ok=True, **{name: value for name, value in fields.items() if value is not None}
    )
