"""The manuscript audit's request and report: every citation of a draft, in reading order,
with what each cited work is (the verifier's verdict) and what it says (the claim check).

The report is the ``doiget_audit_manuscript`` tool's document and ``doiget audit
--json``'s output; the Markdown and HTML reports are drawn from it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from doiget.claims.contracts import WorkCheck
from doiget.contract import Request
from doiget.integrity import Notice
from doiget.verify.contracts import Problem, Row, Verdict, VerifyModel

# A manuscript's text inline: a long thesis chapter, not a book.
MAX_MANUSCRIPT_CHARS = 2_000_000
MAX_BIBLIOGRAPHY_CHARS = 2_000_000

DraftFormat = Literal["latex", "markdown", "docx", "pdf", "text"]
InlineFormat = Literal["latex", "markdown", "text"]

# What a citation needs from its reader, worst first: the order problems are listed in.
Status = Literal[
    "not_real",  # a cited work no record holds (verdict not_found)
    "missing",  # a key the bibliography does not define
    "retracted",  # a cited work retracted or withdrawn
    "not_addressed",  # a cited work that does not discuss the claim
    "quote_differs",  # a quotation not found word for word in the cited work
    "cues",  # the evidence and the claim differ in a number, direction, negation, ...
    "miscited",  # a real work cited with wrong details
    "partly",  # a cited work that addresses the claim in part
    "unchecked",  # not (fully) checked: interrupted, a source down, no text to weigh
    "ok",
]
STATUSES: tuple[Status, ...] = (
    "not_real",
    "missing",
    "retracted",
    "not_addressed",
    "quote_differs",
    "cues",
    "miscited",
    "partly",
    "unchecked",
    "ok",
)


class AuditManuscript(Request):
    """A manuscript to audit: a file (``path``) or its text inline with its bibliography."""

    path: Annotated[str | None, Field(max_length=4096)] = None
    text: Annotated[str | None, Field(max_length=MAX_MANUSCRIPT_CHARS)] = None
    format: InlineFormat | None = None
    bibliography: Annotated[str | None, Field(max_length=MAX_BIBLIOGRAPHY_CHARS)] = None
    fetch: bool = False


class Where(VerifyModel):
    """Where a citation stands: a file and 1-based line, or a page of a PDF."""

    file: str
    line: int | None = None
    page: int | None = None

    def shown(self) -> str:
        """'draft.tex:12', 'paper.pdf p. 3', or the file alone."""
        if self.line is not None:
            return f"{self.file}:{self.line}"
        if self.page is not None:
            return f"{self.file} p. {self.page}"
        return self.file


class QuoteResult(VerifyModel):
    """A quotation of the citing sentence, looked for word for word in the cited work.

    ``found`` is absent when it was not looked for, and ``note`` says why (the work is
    not stored with a PDF, or was not identified)."""

    quote: str
    found: bool | None = None
    similarity: float | None = None
    passage: str | None = None
    page: int | None = None
    section: str | None = None
    note: str | None = None


class KeyCheck(VerifyModel):
    """One cited work of a citation: its verdict, problems and integrity notices (the
    whole verification row is in the report's ``works``), what it says about the claim,
    and the sentence's quotations looked for in it. ``note`` says what was not checked
    and why; ``missing`` why the key has no reference to check (not in the
    bibliography, or its entry unreadable)."""

    key: str
    missing: str | None = None
    verdict: Verdict | None = None
    problems: list[Problem] = Field(default_factory=list)
    integrity: list[Notice] | None = None
    work: WorkCheck | None = None
    quotes: list[QuoteResult] = Field(default_factory=list)
    note: str | None = None


class CitationCheck(VerifyModel):
    """One citation, in reading order (``index`` from 1: the HTML report's ``#c<index>``)."""

    index: int
    place: Where
    sentence: str
    status: Status
    checked: bool
    keys: list[KeyCheck] = Field(default_factory=list)
    note: str | None = None  # why it was not (fully) checked


class Summary(VerifyModel):
    """What the audit found. Counts of cited works are of distinct keys; the others are
    of citations (a citation of two works counts once, under its worst answer)."""

    citations: int
    cited_works: int
    not_real: int = Field(description="cited works no record holds")
    missing: int = Field(description="keys the bibliography does not define")
    miscited: int = Field(description="real works cited with wrong details")
    retracted: int = Field(description="cited works retracted or withdrawn")
    not_addressed: int = Field(description="citations a cited work does not address")
    partly: int = Field(description="citations a cited work addresses in part")
    with_cues: int = Field(description="citations whose evidence differs from the claim")
    quotes_not_found: int = Field(description="quotations not in the cited work")
    unchecked: int = Field(description="citations not (fully) checked")


class AuditReport(VerifyModel):
    """The audit of one manuscript: the summary, then every citation in reading order,
    then the verification row of every distinct cited key. ``partial`` is true when
    citations were left unchecked; ``stopped`` says why the audit ended early (absent
    when it did not: the tool's outputSchema lists it as a string)."""

    ok: bool = True
    name: str
    format: str
    partial: bool
    stopped: str | None = None
    summary: Summary
    citations: list[CitationCheck]
    works: list[Row] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
