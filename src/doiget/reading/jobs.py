"""The read and quote tools' work on one stored PDF: module-level functions whose
arguments and results pickle, so a work pool runs them in a worker thread or, where it
runs searches apart, in a worker process (a quotation's alignment is Python-bound and
holds the interpreter lock while it runs). Each process keeps its own parsed documents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from doiget.documents.document import Document, DocumentCache
from doiget.errors import DoigetError, ErrorCode
from doiget.reading import contracts as c
from doiget.reading.reader import Paper, Searchable, check_quote, reading

# Parsed documents of this process, shared by its jobs.
DOCUMENTS: Final = DocumentCache()


def load(path: Path, ref: str) -> Document:
    """The parsed document of the stored PDF of ``ref``; NOT_FOUND when it has no text."""
    from doiget.documents.pdftext import UnusableDocument

    try:
        return DOCUMENTS.load(path)
    except UnusableDocument as problem:
        raise DoigetError(
            ErrorCode.NOT_FOUND, f"the stored PDF of {ref}: {problem.message}."
        ) from None


def read(path: Path, paper: Paper, request: c.ReadPaper) -> c.PaperReading:
    """The outline or piece ``request`` asks of the PDF at ``path``."""
    return reading(paper, load(path, paper.ref), request)


def check(path: Path, paper: Paper, quote: str) -> c.QuoteCheck:
    """Whether ``quote`` is in the PDF at ``path``."""
    return check_quote(paper, Searchable(load(path, paper.ref)), quote)
