"""RIS export (EndNote, Zotero, Mendeley, reference managers), written by rispy.

Each CSL item type has its RIS type; a retracted work carries the integrity notice in
a note (N1), as BibTeX carries it in ``note``. A RIS value ends at its line's end, so
every value is folded onto one line (:func:`doiget.controls.one_line`): a line break in
a title (an unidentified PDF's file name) cannot start a tag line or a record of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from doiget.cite.caveats import unidentified_note
from doiget.cite.citekey import unique_citekeys
from doiget.cite.formatted import integrity_notice
from doiget.controls import one_line
from doiget.models import Work

# CSL item type -> RIS reference type.
RIS_TYPES: Final = {
    "article-journal": "JOUR",
    "paper-conference": "CPAPER",
    "chapter": "CHAP",
    "book": "BOOK",
    "thesis": "THES",
    "report": "RPRT",
    "dataset": "DATA",
    "webpage": "ELEC",
    "standard": "STAND",
    "entry": "ENCYC",
    "article": "UNPB",
}


def _pages(pages: str | None) -> dict[str, str]:
    if not pages:
        return {}
    first, _, last = pages.replace("--", "-").replace("\u2013", "-").partition("-")
    return {"start_page": first.strip(), **({"end_page": last.strip()} if last else {})}


def ris_record(work: Work, key: str) -> dict[str, Any]:
    """One RIS record as rispy's field names (empty fields left out)."""
    record: dict[str, Any] = {
        "type_of_reference": RIS_TYPES.get(work.type or "", "JOUR" if work.venue else "GEN"),
        "id": key,
        "title": work.title,
        "authors": [author.sort_name for author in work.authors if author.sort_name],
        "year": str(work.year) if work.year else None,
        "secondary_title": work.venue,
        "volume": work.volume,
        "number": work.issue,
        **_pages(work.pages),
        "publisher": work.publisher,
        "issn": work.issn[0] if work.issn else None,
        "doi": work.doi,
        "urls": [url for url in (work.url,) if url],
        "notes": [note for note in (integrity_notice(work), unidentified_note(work)) if note],
    }
    if work.arxiv_id:
        record["notes"] = [f"arXiv:{work.arxiv_id}", *record["notes"]]
    folded = {name: _folded(value) for name, value in record.items()}
    return {name: value for name, value in folded.items() if value not in (None, "", [])}


def _folded(value: Any) -> Any:
    """A record's value (a string or a list of them) with each string on one line."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, list):
        return [folded for folded in map(one_line, value) if folded]
    return value


def to_ris_many(works: Sequence[Work]) -> str:
    """One RIS document for several works (ids are their unique citekeys)."""
    import rispy

    class Writer(rispy.RisWriter):  # type: ignore[misc]
        """rispy's writer without its "1." counter lines, which reference managers
        do not expect."""

        def set_header(self, count: int) -> str:
            return ""

    records = [ris_record(w, k) for w, k in zip(works, unique_citekeys(works), strict=True)]
    return str(rispy.dumps(records, implementation=Writer))
