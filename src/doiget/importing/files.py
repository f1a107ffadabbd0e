"""The local PDFs a bibliography's ``file`` fields name: found on disk, then handed to
the library's adder of local PDFs.

Paths are read the ways citation managers write them: absolute, relative to the
bibliography's folder (JabRef, Paperpile, Zotero exports with files), ``file:`` URLs
(Zotero RIS), or a Unix path whose leading '/' Mendeley leaves out.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from doiget.errors import DoigetError, ErrorCode
from doiget.importing.contracts import MAX_FILES_PER_ENTRY, PdfOutcome

if TYPE_CHECKING:
    from doiget.papers.adding import PdfAdder


def locate(written: str, base: Path) -> Path | None:
    """The file ``written`` names, read from ``base`` when relative; None when absent."""
    text = written.strip()
    if text.lower().startswith("file:"):
        text = unquote(urlparse(text).path)
    path = Path(text).expanduser()
    candidates = [path] if path.is_absolute() else [base / path, Path("/") / path]
    return next((candidate for candidate in candidates if candidate.is_file()), None)


def missing(written: str) -> PdfOutcome:
    """The outcome of a file field that names no file on this machine."""
    return PdfOutcome(
        source="file",
        ok=False,
        code="NOT_FOUND",
        message=f"no file at {written} (a relative path is read from the bibliography's "
        "folder); fix the path in the citation manager and import again.",
    )


def too_many(left: int) -> PdfOutcome:
    """The outcome of the PDFs an entry lists past :data:`MAX_FILES_PER_ENTRY`."""
    return PdfOutcome(
        source="file",
        ok=False,
        code="INVALID_REF",
        message=f"{left} more PDF{'s' if left > 1 else ''} listed, not added: an entry adds "
        f"at most its first {MAX_FILES_PER_ENTRY}; add the others with `doiget add`.",
    )


async def add_pdf(adder: PdfAdder, path: Path) -> PdfOutcome:
    """Add the local PDF ``path`` through the library's adder of local PDFs
    (identification, copy into the store, provenance row)."""
    try:
        added = await adder.add_pdf(path)
    except DoigetError as error:
        if error.code is ErrorCode.LOG_ERROR:
            raise  # nothing more may happen unrecorded
        return PdfOutcome(
            source="file", ok=False, path=str(path), code=error.code.value, message=error.message
        )
    state = "identified as " + added.ref if added.identified and added.ref else "unidentified"
    return PdfOutcome(source="file", ok=True, path=str(path), message=f"{added.status}: {state}")
