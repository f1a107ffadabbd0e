"""The contracts of adding local PDFs: the request, one result per file, the summary."""

from typing import Annotated, Literal

from pydantic import Field

from doiget.contract import Request
from doiget.integrity import Notice
from doiget.papers.contracts import ErrorBody, PapersModel, PapersReply

MAX_PATHS = 100
MAX_PATH_CHARS = 4096

AddStatus = Literal["added", "joined", "already_present"]


class AddPdfs(Request):
    """Local PDF files, or folders walked for PDFs, to add to the library."""

    paths: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=MAX_PATH_CHARS)]],
        Field(min_length=1, max_length=MAX_PATHS, description="PDF files or folders."),
    ]


class ReadFromPdf(PapersModel):
    """What was read from a PDF that no source identified."""

    title: str | None = None
    authors: list[str] | None = None


class AddResult(PapersModel):
    """One file: the entry it is now part of, and how it was identified (or not)."""

    ok: bool
    path: str
    status: AddStatus | None = None
    ref: str | None = None
    key: str | None = None
    identified: bool | None = None
    identified_by: str | None = None
    evidence: str | None = None
    title: str | None = None
    citekey: str | None = None
    sha256: str | None = None
    pdf_added: bool | None = None
    read: ReadFromPdf | None = None
    # The work's retractions, concerns, corrections; omitted when clean.
    integrity: list[Notice] | None = None
    error: ErrorBody | None = None


class AddSummary(PapersModel):
    total: int
    identified: int
    unidentified: int
    failed: int


class PdfsAdded(PapersReply):
    """One result per PDF found, in order, and the counts."""

    results: list[AddResult]
    summary: AddSummary
