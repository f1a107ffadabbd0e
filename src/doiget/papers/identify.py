"""Which work a PDF is: its clues (:mod:`doiget.papers.pdfclues`) checked against the
sources through the verification core.

In order: an identifier in the document's metadata, the arXiv stamp in its margin,
a DOI printed on its first pages, and last its title and authors looked up like a
citation. An identifier counts only when its record's title is the PDF's title (a
DOI on a page may be one the paper cites); a title counts only when the lookup
verifies it with the authors read under it. Anything short of that leaves the PDF
unidentified: a wrong identification is worse than none.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from doiget.errors import DoigetError
from doiget.refs import Ref, arxiv_ref_for, parse_ref
from doiget.verify.cited import CitedWork

if TYPE_CHECKING:
    from doiget.papers.pdfclues import Clues
    from doiget.verify.service import Verifier

# "zotero": the Zotero item the PDF is attached to, whose record the verifier checked.
Method = Literal["pdf-metadata", "arxiv-stamp", "page-doi", "title-authors", "zotero"]

# Identifiers checked at most, over all places (each costs a lookup).
MAX_IDENTIFIERS: Final = 6
# Problems a verified-by-title match may still carry: the record lists authors the page
# did not yield, or the work was retracted. Anything else is doubt.
ACCEPTED_PROBLEMS: Final = frozenset({"authors_missing", "retracted"})


@dataclass(frozen=True, slots=True)
class Identification:
    """The work a PDF is (``ref`` None when it stays unidentified) and what said so."""

    ref: Ref | None
    method: Method | None = None
    evidence: str | None = None


async def identify(clues: Clues, verifier: Verifier) -> Identification:
    """The work ``clues`` point to, checked; unidentified when in doubt."""
    places: list[tuple[Method, str]] = [
        *(("pdf-metadata", value) for value in clues.metadata_ids),
        *(("arxiv-stamp", value) for value in clues.stamp_ids),
        *(("page-doi", value) for value in clues.page_dois),
    ]
    titles = [title for title in (clues.title, clues.info_title) if title]
    seen: set[Ref] = set()
    for method, text in places:
        ref = _ref(text)
        if ref is None or ref in seen:
            continue
        seen.add(ref)
        if len(seen) > MAX_IDENTIFIERS:
            break
        for title in titles:
            if await verifier.record_of(_cited(ref, title, clues)) is not None:
                return Identification(ref, method, text)
    if clues.title and clues.authors:
        row = await verifier.verify(CitedWork(title=clues.title, authors=clues.authors))
        kinds = {problem.kind for problem in row.problems}
        accepted = row.verdict == "verified" or (
            row.verdict == "miscited" and kinds <= ACCEPTED_PROBLEMS
        )
        match = row.match.ref if row.match is not None else None
        ref = _ref(match) if accepted and match else None
        if ref is not None:
            return Identification(ref, "title-authors", clues.title)
    return Identification(None)


def _ref(text: str) -> Ref | None:
    """The ref ``text`` names; an arXiv version is dropped, so a file joins the entry of
    its work whichever version it is."""
    with contextlib.suppress(DoigetError):
        ref = parse_ref(text)
        if ref.kind == "arxiv":
            return Ref("arxiv", ref.value)
        return ref if ref.kind == "doi" else None
    return None


def _cited(ref: Ref, title: str, clues: Clues) -> CitedWork:
    arxiv = arxiv_ref_for(ref)
    if arxiv is not None:
        return CitedWork(title=title, authors=clues.authors, arxiv_id=arxiv.canonical)
    return CitedWork(title=title, authors=clues.authors, doi=ref.value)
