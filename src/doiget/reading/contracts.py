"""The contracts of doiget_read_paper and doiget_check_quote (and their commands).

A stored paper is named by any ref form :func:`doiget.refs.parse_ref` reads or by its
store key (``doi_10.1234_abc``, the name of its PDF in the store); the core says what
is wrong with one it cannot find. Replies render only the fields that apply.
"""

# Annotations are evaluated as the classes are made (see doiget.papers.contracts).
from typing import Annotated

from pydantic import Field

from doiget.contract import NULLABLE, Hint, Request
from doiget.integrity import Notice
from doiget.papers.contracts import PapersModel, PapersReply
from doiget.papers.origin import PdfOrigin

DEFAULT_MAX_CHARS = 8000
MIN_MAX_CHARS = 500
MAX_MAX_CHARS = 40_000
MAX_QUOTE_CHARS = 2000

StoredRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        description="DOI, arXiv id ('2401.12345', 'hep-th/9901001') or store key.",
    ),
]
PageRange = Annotated[
    str,
    Field(pattern=r"^\d{1,4}(-\d{1,4})?$"),
    Hint("must be a page or a range of pages, like '3' or '3-5'"),
]


# -- requests --------------------------------------------------------------------------


class ReadPaper(Request):
    """A stored paper's outline, or a piece of one section or page range."""

    ref: str
    section: str | None = None
    pages: str | None = None
    max_chars: int = DEFAULT_MAX_CHARS
    cursor: str | None = None


class CheckQuote(Request):
    """A quotation to look for in a stored paper, or in a project's passages."""

    quote: str
    ref: str | None = None
    project: str | None = None


class ReadPaperArgs(ReadPaper):
    ref: StoredRef
    section: Annotated[str | None, Field(min_length=1, max_length=300)] = None
    pages: PageRange | None = None
    max_chars: Annotated[int, Field(ge=MIN_MAX_CHARS, le=MAX_MAX_CHARS)] = DEFAULT_MAX_CHARS
    cursor: Annotated[str | None, Field(max_length=40)] = None


class CheckQuoteArgs(CheckQuote):
    quote: Annotated[str, Field(min_length=1, max_length=MAX_QUOTE_CHARS)]
    ref: StoredRef | None = None
    project: Annotated[str | None, Field(min_length=1, max_length=200)] = None


# -- replies ---------------------------------------------------------------------------


class SectionRef(PapersModel):
    """A section by its outline number (none for a passage index's section) and title."""

    number: str | None = None
    title: str


class OutlineSection(SectionRef):
    """A section of the outline: its depth, first and last page, and size."""

    level: int
    pages: list[int]
    chars: int


class CaptionRef(PapersModel):
    """A figure's or table's caption and where it is."""

    label: str
    caption: str
    page: int
    section: str


class PaperReading(PapersReply):
    """The outline (no section or pages asked) or one piece of text."""

    ref: str
    key: str
    title: Annotated[str | None, NULLABLE] = None
    page_count: int
    # Where the PDF read came from.
    pdf_origin: PdfOrigin | None = None
    # The outline.
    sections: list[OutlineSection] | None = None
    figures: list[CaptionRef] | None = None
    tables: list[CaptionRef] | None = None
    references: int | None = None
    # A piece of text.
    scope: str | None = None
    pages: list[int] | None = None
    covers: list[SectionRef] | None = None
    text: str | None = None
    cursor: Annotated[str | None, NULLABLE] = None
    # The work's retraction, correction and concern notices; absent when none are recorded.
    integrity: list[Notice] | None = None


class QuoteCheck(PapersReply):
    """Whether the quotation is in the text, where, and the passage there (the closest
    one, with its similarity, when it is not there exactly)."""

    found: bool
    similarity: float
    passage: Annotated[str | None, NULLABLE] = None
    occurrences: int | None = None
    ref: str | None = None
    page: Annotated[int | None, NULLABLE] = None
    pages: Annotated[list[int] | None, NULLABLE] = None
    section: Annotated[SectionRef | None, NULLABLE] = None
    # Where the PDF checked came from (a stored paper's; absent for an indexed file).
    pdf_origin: PdfOrigin | None = None
    project: str | None = None
    doc_id: str | None = None
    title: str | None = None
    doi: str | None = None
    citekey: str | None = None
    # The paper's retractions, concerns, corrections (checking a ref); omitted when clean.
    integrity: list[Notice] | None = None
