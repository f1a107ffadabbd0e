"""The contract of doiget_import_bibliography (and ``doiget import``).

Each entry of the bibliography gets one row, in the file's order, whose ``status``
says what happened to it; ``counts`` sums the rows by status.
"""

# Annotations are evaluated as the classes are made (see doiget.papers.contracts).
from typing import Annotated, Literal, get_args

from pydantic import Field

from doiget.contract import Request
from doiget.papers.contracts import PapersModel, PapersReply
from doiget.verify.contracts import MAX_REFERENCE_CHARS, MAX_REFERENCES, Problem, VerifyModel

# As doiget.verify.inputs.MAX_TEXT_CHARS: as much text as the entries a call takes fill.
MAX_TEXT_CHARS = MAX_REFERENCES * MAX_REFERENCE_CHARS

# The most PDFs an entry's file field adds: the first ones listed (an attachment is a
# file read and a provenance row on every import).
MAX_FILES_PER_ENTRY = 10

Format = Literal["auto", "bibtex", "csl-json", "ris"]
# The name a text of each format would have: how the readers tell formats apart.
FORMAT_NAMES = {"auto": "", "bibtex": "import.bib", "csl-json": "import.json", "ris": "import.ris"}

Status = Literal[
    "imported",
    "already_present",
    "corrected",
    "not_found",
    "uncertain",
    "no_identifier",
    "unreadable",
]
STATUSES: tuple[Status, ...] = get_args(Status)


class ImportBibliography(Request):
    """A bibliography's text to check and store; ``fetch`` also fetches Open Access PDFs."""

    text: str
    format: Format = "auto"
    fetch: bool = False


class ImportBibliographyArgs(ImportBibliography):
    text: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_TEXT_CHARS,
            description="The export, as text.",
        ),
    ]


class PdfOutcome(VerifyModel):
    """What became of the entry's PDF: in the library already (``store``), fetched
    (``open_access``), added from its file field (``file``), or why not."""

    source: Literal["store", "open_access", "file"]
    ok: bool
    path: str | None = None
    code: str | None = None
    message: str | None = None


class ImportRow(VerifyModel):
    """One entry of the bibliography and what happened to it (as a verification row,
    only the fields that have a value)."""

    key: str | None = None
    status: Status
    ref: str | None = None
    title: str | None = None
    alias: str | None = None
    problems: list[Problem] | None = None
    note: str | None = None
    pdf: list[PdfOutcome] | None = None


class ImportCounts(PapersModel):
    """Rows by status."""

    imported: int = 0
    already_present: int = 0
    corrected: int = 0
    not_found: int = 0
    uncertain: int = 0
    no_identifier: int = 0
    unreadable: int = 0


class ImportReport(PapersReply):
    """Every entry's row, in the file's order, and the counts by status."""

    total: int
    counts: ImportCounts
    results: list[ImportRow]
