"""BibTeX export. Values are plain text with BibTeX/LaTeX specials escaped; UTF-8 is kept.
Each value is on one line (BibTeX reads a line end as a space), so no text from outside
puts an ``@`` at the start of a line, where line-based readers begin an entry.

Entries are assembled with bibtexparser's model and written by its writer, so the
output is what bibtexparser (and BibTeX) read back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library
from bibtexparser.model import Entry, Field

from doiget.cite import ACCESSED_KEY
from doiget.cite.caveats import joined_notes, unidentified_note
from doiget.cite.citekey import citekey, unique_citekeys
from doiget.controls import one_line
from doiget.integrity import describe
from doiget.models import Author, Work

# CSL item type -> BibTeX entry type.
ENTRY_TYPES: Final = {
    "article-journal": "article",
    "paper-conference": "inproceedings",
    "chapter": "incollection",
    "book": "book",
    "thesis": "phdthesis",
    "report": "techreport",
    "webpage": "misc",
}
_ESCAPES: Final = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_TABLE: Final = str.maketrans(_ESCAPES)
# Fields that BibTeX styles print verbatim (\url, \doi, eprint links): LaTeX escapes
# would corrupt them, so only the characters that could unbalance the entry change.
VERBATIM_FIELDS: Final = frozenset({"url", "doi", "eprint"})
_VERBATIM_TABLE: Final = str.maketrans({"{": "%7B", "}": "%7D", "\\": "%5C"})


def escape(value: str) -> str:
    """``value`` with every character that BibTeX or LaTeX would interpret escaped."""
    return value.translate(_TABLE)


def _name(author: Author) -> str:
    if author.family:
        family = escape(author.family)
        # A family name of several words or with " and " must stay one unit.
        if " and " in author.family.lower() or (not author.given and " " in author.family):
            family = "{" + family + "}"
        return f"{family}, {escape(author.given)}" if author.given else family
    return "{" + escape(author.literal or "") + "}"


def _entry_type(work: Work) -> str:
    if work.type in ENTRY_TYPES:
        return ENTRY_TYPES[work.type]
    return "article" if work.venue else "misc"


def bibtex_fields(
    work: Work, *, with_abstract: bool = False, max_authors: int | None = None
) -> list[tuple[str, str]]:
    """The (name, BibTeX value) pairs of one work, in the conventional order; past
    ``max_authors`` names the author list ends in BibTeX's "and others"."""
    entry_type = _entry_type(work)
    venue_field = "booktitle" if entry_type in ("inproceedings", "incollection") else "journal"
    raw: list[tuple[str, str | None]] = [
        ("title", work.title),
        (venue_field, work.venue),
        ("year", str(work.year) if work.year else None),
        ("volume", work.volume),
        ("number", work.issue),
        ("pages", work.pages.replace("--", "-").replace("-", "--") if work.pages else None),
        ("publisher", work.publisher if entry_type != "article" else None),
        ("issn", ", ".join(work.issn) if work.issn else None),
        ("doi", work.doi),
        ("url", work.url),
    ]
    if work.arxiv_id:
        raw += [("eprint", work.arxiv_id), ("archivePrefix", "arXiv")]
        raw += [("primaryClass", work.primary_category)]
    if work.pmid:
        raw.append(("pmid", work.pmid))
    raw.append(("note", joined_notes(describe(work), unidentified_note(work))))
    if work.type == "webpage":
        raw.append(("urldate", work.extra.get(ACCESSED_KEY)))
    if with_abstract:
        raw.append(("abstract", work.abstract))
    fields = []
    if work.authors:
        names = [_name(author) for author in work.authors[:max_authors]]
        if max_authors is not None and len(work.authors) > max_authors:
            names.append("others")
        fields.append(("author", " and ".join(names)))
    fields += [
        (name, value.translate(_VERBATIM_TABLE) if name in VERBATIM_FIELDS else escape(value))
        for name, value in raw
        if value
    ]
    if work.type == "webpage" and work.url:
        # Styles without a url field print howpublished; \url keeps the link verbatim.
        fields.append(("howpublished", "\\url{" + work.url.translate(_VERBATIM_TABLE) + "}"))
    return fields


def _entry(
    work: Work, key: str, *, with_abstract: bool = False, max_authors: int | None = None
) -> Entry:
    fields = [
        Field(name, one_line(value))
        for name, value in bibtex_fields(work, with_abstract=with_abstract, max_authors=max_authors)
    ]
    return Entry(_entry_type(work), key, fields)


def _library(works: Sequence[Work], keys: Sequence[str | None]) -> Library:
    library = Library()
    for work, key in zip(works, unique_citekeys(works, keys), strict=True):
        library.add(_entry(work, key))
    return library


def to_bibtex_many(works: Sequence[Work], keys: Sequence[str | None] = ()) -> str:
    """One BibTeX document for several works (keys made unique within it); ``keys``
    gives a work's own key where it has one (see :func:`unique_citekeys`)."""
    return write_string(_library(works, keys))


def to_bibtex(
    work: Work,
    *,
    key: str | None = None,
    with_abstract: bool = False,
    max_authors: int | None = None,
) -> str:
    """The BibTeX entry of one work: key ``authorYEARword`` unless ``key`` is given; an
    author list longer than ``max_authors`` is cut to them and "and others"."""
    library = Library()
    entry = _entry(work, key or citekey(work), with_abstract=with_abstract, max_authors=max_authors)
    library.add(entry)
    return write_string(library)
