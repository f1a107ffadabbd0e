"""The verification tool's request and the rows it returns (one per reference)."""

from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from doiget.contract import Reply, Request
from doiget.integrity import Notice

MAX_REFERENCES = 100
MAX_REFERENCE_CHARS = 20_000
# The names a row lists of one author list (a record of a large collaboration names
# thousands: listed whole in the match, its problems and its corrected citations, a
# few such rows would outgrow what an MCP client takes in one message).
LISTED_AUTHORS = 100

__all__ = ["Notice"]  # re-exported: a row's integrity notices

Verdict = Literal["verified", "miscited", "not_found", "uncertain"]
ProblemKind = Literal[
    "title_differs",
    "authors_missing",
    "authors_extra",
    "authors_replaced",
    "authors_reordered",
    "authors_placeholder",
    "year_differs",
    "year_future",
    "venue_differs",
    "venue_unknown",
    "doi_unresolved",
    "doi_other_work",
    "preprint_as_published",
    "version_mismatch",
    "retracted",
]

Reference = Annotated[
    str | dict[str, Any],
    Field(
        description="BibTeX entry, RIS record, free text, or CSL-JSON item",
    ),
]


class VerifyReferences(Request):
    """References to check, in the order their rows come back."""

    references: Annotated[list[Reference], Field(min_length=1, max_length=MAX_REFERENCES)]


class VerifyModel(Reply):
    """A part of a verification row: rendered with only the fields that have a value."""

    sparse = True

    @model_validator(mode="after")
    def _absent_when_none(self) -> Self:
        self.__pydantic_fields_set__ -= {
            name for name in self.__pydantic_fields_set__ if getattr(self, name) is None
        }
        return self


class Problem(VerifyModel):
    """One wrong detail: what is cited and what the record says."""

    field: str
    kind: ProblemKind
    cited: str | None = None
    actual: str | None = None


class Version(VerifyModel):
    """Another version of the matched work (a proceedings paper of a cited preprint)."""

    ref: str | None = None
    venue: str | None = None
    year: int | None = None


class Match(VerifyModel):
    """The real work a reference designates; of an author list longer than
    :data:`LISTED_AUTHORS` the first are listed and ``authors_total`` counts them all."""

    ref: str | None = None
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    authors_total: int | None = None
    year: int | None = None
    venue: str | None = None
    type: str | None = None
    sources: list[str] = Field(default_factory=list)
    newer_version: Version | None = None


class Corrected(VerifyModel):
    """The matched work as citations, under the cited key."""

    bibtex: str
    csl: dict[str, Any]


class RowError(VerifyModel):
    """Why one reference was not checked (the others were), and what to do."""

    code: str
    message: str


class Row(VerifyModel):
    """The verdict on one reference."""

    key: str | None = None
    verdict: Verdict
    confidence: float
    problems: list[Problem] = Field(default_factory=list)
    match: Match | None = None
    integrity: list[Notice] | None = None
    corrected: Corrected | None = None
    note: str | None = None
    error: RowError | None = None


class Verification(Reply):
    """One row per reference, in input order."""

    sparse = True
    ok: bool = True
    results: list[Row]
