"""The claim tools' requests and replies: evidence a cited work gives for a claim.

``doiget_check_claims`` answers each ``{claim, ref}`` or ``{claim, text}`` pair per cited
work; ``doiget_audit_manuscript`` answers every citation of a manuscript the same way,
with the verifier's verdict on each cited reference beside it.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from doiget.contract import Reply, Request
from doiget.verify.contracts import Row, VerifyModel

MAX_CLAIMS = 50
MAX_WORKS = 10  # works one citation cites
# Works one call checks, over all its claims: each costs up to a dozen lookups.
MAX_CALL_WORKS = 100
# Characters once compatibility characters are spelled out (NFKC: U+FDFA is 18), the
# form a tokenizer reads, so a short string of them cannot stand for a long claim.
MAX_CLAIM_CHARS = 2_000
# Inline source text: a page or a passage an agent holds, not a book.
MAX_INLINE_CHARS = 200_000
MAX_EVIDENCE = 5

Basis = Literal["full_text", "abstract", "inline", "unavailable"]
Addressed = Literal["addressed", "partly", "not_addressed", "unavailable"]
CueKind = Literal["number", "direction", "negation", "certainty", "population"]
EvidenceRole = Literal["rationale", "context"]


# A cited work: a DOI, an arXiv id, a store key, a BibTeX entry or free text, or a
# CSL-JSON item. (The tool's description says so: the schema stays small.)
CitedRef = str | dict[str, Any]


class ClaimItem(Request):
    """One claim and what it cites: one ref, several (``\\citep{a,b}``), or inline text
    (the source's text, when the caller holds it)."""

    claim: str
    ref: CitedRef | list[CitedRef] | None = None
    text: str | None = None

    # The bounds are checked here rather than stated in the schema, which would outgrow
    # what a tool's declaration may take of the model's context.
    @field_validator("claim")
    @classmethod
    def _a_sentence(cls, claim: str) -> str:
        if not claim.strip():
            raise ValueError("give the citing sentence, not an empty claim")
        too_long = claim_too_long(claim)
        if too_long is not None:
            raise ValueError(too_long)
        return claim

    @field_validator("text")
    @classmethod
    def _a_passage(cls, text: str | None) -> str | None:
        if text is not None and (length := normal_length(text, MAX_INLINE_CHARS)) is not None:
            raise ValueError(
                f"text of {length:,} characters{_SPELLED} is longer than {MAX_INLINE_CHARS:,}; "
                "pass the passage that matters"
            )
        return text

    @field_validator("ref")
    @classmethod
    def _some_works(cls, ref: CitedRef | list[CitedRef] | None) -> CitedRef | list[CitedRef] | None:
        if isinstance(ref, list) and not 1 <= len(ref) <= MAX_WORKS:
            raise ValueError(f"a citation names 1 to {MAX_WORKS} works, not {len(ref)}")
        return ref


class CheckClaims(Request):
    """Claims to check against the works they cite, answered in input order; with
    ``fetch``, an Open Access PDF is fetched into the store when a work has none."""

    items: Annotated[list[ClaimItem], Field(min_length=1, max_length=MAX_CLAIMS)]
    fetch: bool = False

    @model_validator(mode="after")
    def _works_a_call_checks(self) -> CheckClaims:
        works = sum(len(item.ref) if isinstance(item.ref, list) else 1 for item in self.items)
        if works > MAX_CALL_WORKS:
            raise ValueError(
                f"the claims cite {works} works in all; a call checks at most "
                f"{MAX_CALL_WORKS}: split the claims over several calls"
            )
        return self


_SPELLED = " once compatibility characters are spelled out"


def normal_length(text: str, limit: int) -> int | None:
    """The length of ``text`` in normal form (NFKC) when it is more than ``limit``, else
    None. Each character spells out to at most 18, so a text short enough is never
    normalised."""
    if len(text) * 18 <= limit:
        return None
    length = len(unicodedata.normalize("NFKC", text)) if len(text) <= limit else len(text)
    return length if length > limit else None


def claim_too_long(claim: str) -> str | None:
    """Why ``claim`` is refused as longer than a claim is, or None."""
    length = normal_length(claim, MAX_CLAIM_CHARS)
    if length is None:
        return None
    return (
        f"a claim of {length:,} characters{_SPELLED} is longer than {MAX_CLAIM_CHARS:,}; "
        "give the one sentence that cites"
    )


class Evidence(VerifyModel):
    """A sentence (or two adjacent ones) of the source that bears on the claim.

    Full text gives ``page`` and ``section``; an abstract or inline text gives the
    character offsets ``start``/``end`` into the text the basis names.
    """

    text: str
    score: float
    role: EvidenceRole
    page: int | None = None
    section: str | None = None
    start: int | None = None
    end: int | None = None


class Cue(VerifyModel):
    """Where the claim and the best evidence differ: information, never a verdict."""

    kind: CueKind
    claim_span: str
    source_span: str
    evidence: int = Field(description="index into evidence[] of the sentence it names")


class WorkCheck(VerifyModel):
    """What one cited work says about the claim."""

    ref: str | None = None  # the cited work as doiget names it (DOI, arXiv id, key)
    key: str | None = None  # the citation key, in a manuscript
    basis: Basis
    basis_note: str | None = None  # why the basis is what it is (why unavailable)
    addressed: Addressed
    confidence: float | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    cues: list[Cue] = Field(default_factory=list)
    verification: Row | None = None


class ClaimResult(VerifyModel):
    """One claim, answered per cited work."""

    claim: str
    works: list[WorkCheck] = Field(default_factory=list)
    error: dict[str, Any] | None = None


class ClaimChecks(Reply):
    """One result per claim, in input order."""

    sparse = True
    ok: bool = True
    results: list[ClaimResult]
