"""The audit's report for people and programs: JSON (the MCP tool's document), Markdown,
and one self-contained HTML page. Each draws the same things from an
:class:`doiget.claims.audit_contracts.AuditReport`; what they share is here."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from doiget.claims.audit_contracts import (
    STATUSES,
    AuditReport,
    CitationCheck,
    KeyCheck,
    QuoteResult,
    Status,
    Summary,
)
from doiget.claims.contracts import Evidence, WorkCheck

# The statuses a draft's author must look at, before the rest.
PROBLEMS: Final[frozenset[Status]] = frozenset(
    ("not_real", "missing", "retracted", "not_addressed", "quote_differs", "cues", "miscited")
)
LABELS: Final[dict[Status, str]] = {
    "not_real": "not real",
    "missing": "not in the bibliography",
    "retracted": "retracted",
    "not_addressed": "not addressed",
    "quote_differs": "quotation differs",
    "cues": "differs in detail",
    "miscited": "miscited",
    "partly": "partly addressed",
    "unchecked": "not checked",
    "ok": "addressed",
}
_ARXIV: Final = re.compile(r"arXiv:(?P<id>[A-Za-z.-]*/?\d{4,7}(?:\.\d{4,5})?)")
# Any printable suffix (a DOI may hold spaces and quotes): percent-encoded in the link.
_DOI: Final = re.compile(r"10\.\d{4,9}/[^\x00-\x1f\x7f]+")


def worst_first(report: AuditReport) -> list[CitationCheck]:
    """The citations, problems first and worst first, in reading order within a status."""
    rank = {status: position for position, status in enumerate(STATUSES)}
    return sorted(report.citations, key=lambda citation: (rank[citation.status], citation.index))


def is_problem(citation: CitationCheck) -> bool:
    """Whether the citation needs its author's attention."""
    return citation.status in PROBLEMS


def located(evidence: Evidence) -> str:
    """Where a piece of evidence stands: 'p. 3, Methods', or its characters."""
    parts = []
    if evidence.page is not None:
        parts.append(f"p. {evidence.page}")
    if evidence.section:
        parts.append(evidence.section)
    if not parts and evidence.start is not None:
        parts.append(f"characters {evidence.start}-{evidence.end}")
    return ", ".join(parts)


def counts(summary: Summary) -> list[tuple[str, int, bool]]:
    """The summary's counts as (label, number, whether a number above 0 is a problem),
    in the order a reader wants them."""
    return [
        ("citations", summary.citations, False),
        ("cited works", summary.cited_works, False),
        ("not real", summary.not_real, True),
        ("not in the bibliography", summary.missing, True),
        ("retracted", summary.retracted, True),
        ("miscited", summary.miscited, True),
        ("not addressed", summary.not_addressed, True),
        ("partly addressed", summary.partly, False),
        ("with cues", summary.with_cues, True),
        ("quotations not found", summary.quotes_not_found, True),
        ("not checked", summary.unchecked, False),
    ]


def link(ref: str | None) -> str | None:
    """The public page of a DOI or arXiv id, or None for anything else."""
    if not ref:
        return None
    arxiv = _ARXIV.fullmatch(ref)
    if arxiv is not None:
        return f"https://arxiv.org/abs/{quote(arxiv['id'], safe='/.')}"
    if _DOI.fullmatch(ref):
        return f"https://doi.org/{quote(ref, safe='/()._-;:')}"
    return None


@dataclass(frozen=True, slots=True)
class Fact:
    """One line of what a cited work gives a citation: ``label`` names what it is
    (verdict, problem, integrity, claim, evidence, cue, quotation, note), ``text`` says
    it; ``quoted`` is text quoted from the work and ``at`` where it stands there."""

    label: str
    text: str
    quoted: str | None = None
    at: str | None = None


def facts(check: KeyCheck) -> list[Fact]:
    """What the cited work ``check`` gives its citation, line by line."""
    found: list[Fact] = []
    if check.missing is not None:
        found.append(Fact("verdict", f"not checked: {check.missing}"))
    elif check.verdict is not None:
        found.append(Fact("verdict", check.verdict.replace("_", " ")))
    for problem in check.problems:
        found.append(
            Fact(
                "problem",
                f"{problem.kind.replace('_', ' ')}: cited {problem.cited or '-'}, "
                f"record {problem.actual or '-'}",
            )
        )
    for notice in check.integrity or []:
        found.append(
            Fact(
                "integrity",
                " ".join(
                    filter(None, (notice.kind.replace("_", " "), notice.notice_doi, notice.date))
                ),
            )
        )
    if check.work is not None:
        found += _claim(check.work)
    found += [_quotation(quote) for quote in check.quotes]
    if check.note:
        found.append(Fact("note", check.note))
    return found


def _claim(work: WorkCheck) -> list[Fact]:
    confidence = f", confidence {work.confidence:.2f}" if work.confidence is not None else ""
    basis = work.basis.replace("_", " ") + (f" ({work.basis_note})" if work.basis_note else "")
    lines = [Fact("claim", f"{work.addressed.replace('_', ' ')}{confidence}; basis: {basis}")]
    for evidence in work.evidence:
        what = f"{evidence.role}, score {evidence.score:.2f}"
        lines.append(Fact("evidence", what, evidence.text, located(evidence) or None))
    for cue in work.cues:
        lines.append(
            Fact(
                "cue",
                f"{cue.kind}: the claim says \u201c{cue.claim_span}\u201d, the source "
                f"\u201c{cue.source_span}\u201d",
            )
        )
    return lines


def _quotation(quote: QuoteResult) -> Fact:
    at = ", ".join(filter(None, (f"p. {quote.page}" if quote.page else None, quote.section)))
    if quote.found is None:
        return Fact("quotation", quote.note or "not checked", quote.quote)
    if quote.found:
        return Fact("quotation", "found word for word", quote.quote, at or None)
    similarity = f" (similarity {quote.similarity:.2f})" if quote.similarity is not None else ""
    closest = f"; the closest passage: \u201c{quote.passage}\u201d" if quote.passage else ""
    return Fact("quotation", f"not found{similarity}{closest}", quote.quote, at or None)
