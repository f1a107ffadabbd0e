"""The local PDFs a bibliography's ``file`` fields name: found on disk, then handed to
the library's adder of local PDFs.

Paths are read the ways citation managers write them: absolute, relative to the
bibliography's folder (JabRef, Paperpile, Zotero exports with files), ``file:`` URLs
(Zotero RIS), or a Unix path whose leading '/' Mendeley leaves out.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from doiget.importing.contracts import PdfOutcome


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


async def add_pdf(path: Path) -> PdfOutcome:
    """Add the local PDF ``path`` to the library: the seam where import hands a file to
    the library's adder (identification, copy into the store, provenance row).

    This doiget has no such adder yet: the file is reported as found and not added, and
    an import run once it has one adds it (import is idempotent otherwise)."""
    return PdfOutcome(
        source="file",
        ok=False,
        path=str(path),
        message="found, not added: this doiget does not add local PDFs yet; "
        "import again once it does.",
    )
