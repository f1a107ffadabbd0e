"""Cited works from the forms references come in: BibTeX entries, CSL-JSON items, RIS
records and free text as it stands in a bibliography."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from doiget.contract import invalid
from doiget.errors import DoigetError
from doiget.refs import arxiv_ref_for, parse_ref
from doiget.verify.bibentries import bib_entries
from doiget.verify.cited import CitedAuthor, CitedWork
from doiget.verify.contracts import MAX_REFERENCES
from doiget.verify.text import delatex

_DOI: Final = re.compile(r"\b10\.\d{4,9}/[^\s\"<>{}]+", re.IGNORECASE)
# Every repeat bounded: over untrusted text, a pattern that may scan to the end of the
# text at each place it starts takes time quadratic in the text's length.
_ARXIV: Final = re.compile(
    r"(?:arxiv[:\s./]{0,8}(?:abs/|pdf/)?|arxiv\.org/(?:abs|pdf)/)"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]{1,32}(?:\.[a-z]{2})?/\d{7}(?:v\d+)?)",
    re.IGNORECASE,
)
_YEAR: Final = re.compile(r"(?<![\d.])(1[89]\d\d|2\d\d\d)(?!\d|\.\d)")
_PMID: Final = re.compile(r"\bPMID:?\s*(\d{1,9})\b", re.IGNORECASE)
_MORE: Final = re.compile(r"^(?:others|et\.?\s*al\.?)$", re.IGNORECASE)
# "et al." or "and others" written into the last name of a list ("N. Shazeer et al.",
# "Wang, X., et al"), and DBLP's disambiguation number ("Wei Wang 0001"): not names.
_MORE_IN_NAME: Final = re.compile(
    r"[\s,;]{0,4}\b(?:et(?:\.\s?|\s)al\b\.?|and\s{1,4}others\b)", re.IGNORECASE
)
_NUMBERED: Final = re.compile(r"\s\d{4}(?=[\s,]|$)")
_RIS_START: Final = re.compile(r"^TY  - ", re.MULTILINE)
_VENUE_FIELDS: Final = ("booktitle", "journal", "journaltitle", "eventtitle", "series", "publisher")
# The separators of a file field's attachments and of an attachment's parts, where no
# backslash escapes them.
_FILE_ITEMS: Final = re.compile(r"(?<!\\);")
_FILE_PARTS: Final = re.compile(r"(?<!\\):")
_FILE_ESCAPE: Final = re.compile(r"\\([\\:;])")
# RIS tags that may repeat and that rispy reads as one value unless told otherwise.
_RIS_LISTS: Final = ("L1",)


def _clean(value: Any) -> str | None:
    if value is None:
        return None
    text = " ".join(delatex(html.unescape(str(value))).split()).strip(" .,;")
    return text or None


def _year(value: Any) -> int | None:
    found = _YEAR.search(str(value)) if value is not None else None
    return int(found.group(1)) if found else None


def _doi(value: Any) -> str | None:
    """The first DOI in ``value``, without the punctuation of the sentence around it; a
    '.' or '..' part at its end stays (the DOI is then refused, never cut short)."""
    found = _DOI.search(str(value)) if value else None
    if not found:
        return None
    doi = found.group(0).rstrip(".,;)")
    return (found.group(0).rstrip(",;)") if doi.endswith("/") else doi).lower()


def _arxiv(*values: Any) -> str | None:
    """An arXiv id from an eprint field, an arXiv DOI or URL, or 'arXiv:...' in text."""
    for value in values:
        if not value:
            continue
        text = str(value)
        found = _ARXIV.search(text)
        if found:
            return found.group(1)
        try:
            ref = arxiv_ref_for(parse_ref(text.strip()))
        except DoigetError:
            ref = None
        if ref is not None:
            return ref.value
    return None


def split_name(name: str, initials_after: bool = False) -> CitedAuthor | None:
    """'Family, Given', 'Given Family' or 'Family G.' as an author; None for 'others' and
    for a name cut off inside a LaTeX group ('R{\\'e', '{\\v{Z'): a garbled name says
    nothing about who wrote the work, so the list reads as cut short there.

    ``initials_after`` reads 'Vaswani A' as family and initials, the way free-text
    bibliographies write names; BibTeX, RIS and CSL names never are ('Mallikarjun B. R.'
    is given names, then the family name R.)."""
    if name.count("{") != name.count("}"):
        return None
    name = delatex(html.unescape(name)).replace("{", "").replace("}", "")
    name = _NUMBERED.sub("", " ".join(name.split())).strip(" ,;")
    if not name or _MORE.match(name):
        return None
    if "," in name:
        family, _, given = name.partition(",")
        return CitedAuthor(family.strip(), given.strip())
    parts = name.split(" ")
    if initials_after and len(parts) > 1 and re.fullmatch(r"(?:[A-Z]\.?-?){1,3}", parts[-1]):
        return CitedAuthor(" ".join(parts[:-1]), parts[-1])  # "Vaswani A", "Le QV"
    start = len(parts) - 1
    while start > 1 and parts[start - 1][:1].islower():
        start -= 1  # particles belong to the family name: "Ludwig van Beethoven"
    return CitedAuthor(" ".join(parts[start:]), " ".join(parts[:start]))


def _authors(names: Sequence[str]) -> tuple[tuple[CitedAuthor, ...], bool]:
    authors, more = [], False
    for written in names:
        name, cut = _MORE_IN_NAME.subn("", written)
        more = more or bool(cut)
        author = split_name(name)
        if author is None:
            more = more or bool(name.strip())
        else:
            authors.append(author)
    return tuple(authors), more


def _split_bibtex_authors(value: str) -> list[str]:
    """A BibTeX author field split on ' and ' outside braces (any white space around
    'and': exports wrap long author lists, Paperpile after 'and')."""
    value = " ".join(value.split())
    names, depth, start = [], 0, 0
    index = 0
    while index < len(value):
        char = value[index]
        depth += char == "{"
        depth -= char == "}"
        # Compared slice by slice: lower-casing the whole field would shift the indices
        # past any letter whose lower case is longer ('İ').
        if depth <= 0 and value[index : index + 5].lower() == " and ":
            names.append(value[start:index])
            index += 5
            start = index
            continue
        index += 1
    names.append(value[start:])
    return [name.strip() for name in names if name.strip()]


def _is_pdf(path: str, kind: str = "") -> bool:
    return "pdf" in kind.lower() or path.lower().endswith(".pdf")


def bib_files(value: Any) -> tuple[str, ...]:
    """The PDFs a BibTeX ``file`` field lists, as paths.

    Citation managers write the field each its own way: Better BibTeX and Paperpile a
    path (several joined by ';'), Zotero and JabRef ``description:path:type`` with ':'
    and ';' escaped by a backslash (``C\\:\\\\Users``), Mendeley ``:path:pdf`` with
    a Windows backslash written ``$\\backslash$`` and the leading '/' of a Unix path
    left out (the caller looks for both). Attachments that are not PDFs (snapshots,
    notes) are left out."""
    text = str(value or "").replace("$\\backslash$", "\\")
    paths = []
    for item in _FILE_ITEMS.split(text):
        parts = [_FILE_ESCAPE.sub(r"\1", part) for part in _FILE_PARTS.split(item.strip())]
        if len(parts) >= 3:
            path, kind = ":".join(parts[1:-1]), parts[-1]
        elif len(parts) == 2 and len(parts[0]) == 1:  # a drive letter: C:\\Users\\...
            path, kind = ":".join(parts), ""
        else:
            path, kind = parts[-1], ""
        if path.strip() and _is_pdf(path, kind):
            paths.append(path.strip())
    return tuple(paths)


def from_fields(key: str | None, kind: str | None, fields: Mapping[str, Any]) -> CitedWork:
    """A cited work from BibTeX-style fields (names lower-case, values as written)."""
    authors, more = _authors(_split_bibtex_authors(str(fields.get("author") or "")))
    venue = next((_clean(fields[name]) for name in _VENUE_FIELDS if fields.get(name)), None)
    links = (fields.get("eprint"), fields.get("doi"), fields.get("url"), fields.get("journal"))
    return CitedWork(
        key=key or None,
        title=_clean(fields.get("title")),
        authors=authors,
        more_authors=more,
        year=_year(fields.get("year") or fields.get("date")),
        venue=venue,
        doi=_doi(fields.get("doi")) or _doi(fields.get("url")),
        arxiv_id=_arxiv(*links),
        pmid=_clean(fields.get("pmid")),
        kind=kind,
        files=bib_files(fields.get("file")),
    )


def read_bibtex(text: str, limit: int = MAX_REFERENCES) -> list[CitedWork]:
    """Every entry of a BibTeX text, in order, each with the line it starts on; one that
    cannot be read whole says why (INVALID_REF past ``limit`` entries)."""
    works = []
    for entry in bib_entries(text, limit):
        work = from_fields(entry.key, entry.kind, entry.fields)
        works.append(replace(work, line=entry.line, unreadable=entry.problem))
    return works


def _csl_name(item: Any) -> str:
    if not isinstance(item, Mapping):
        return str(item)
    if item.get("family"):
        particle = item.get("non-dropping-particle") or ""
        family = f"{particle} {item['family']}".strip()
        return f"{family}, {item.get('given', '')}".strip(", ")
    return str(item.get("literal") or "")


def read_csl(item: Mapping[str, Any]) -> CitedWork:
    """A cited work from one CSL-JSON item; its key is its ``citation-key`` (Zotero and
    Better BibTeX write the user's key there) or else its ``id``."""
    authors, more = _authors([_csl_name(name) for name in item.get("author") or []])
    issued = item.get("issued") or {}
    parts = issued.get("date-parts") if isinstance(issued, Mapping) else None
    year = (
        _year(parts[0][0])
        if parts and parts[0]
        else _year(issued.get("raw") if isinstance(issued, Mapping) else None)
    )
    number = item.get("number") if str(item.get("publisher") or "").lower() == "arxiv" else None
    return CitedWork(
        key=next(
            (str(item[name]) for name in ("citation-key", "id") if item.get(name) is not None),
            None,
        ),
        title=_clean(item.get("title")),
        authors=authors,
        more_authors=more,
        year=year,
        venue=_clean(
            item.get("container-title") or item.get("event-title") or item.get("publisher")
        ),
        doi=_doi(item.get("DOI")),
        arxiv_id=_arxiv(number, item.get("DOI"), item.get("URL")),
        pmid=_clean(item.get("PMID")),
        kind=_clean(item.get("type")),
    )


def read_ris(text: str, limit: int = MAX_REFERENCES) -> list[CitedWork]:
    """Every record of an RIS text, in order (INVALID_REF past ``limit`` records, told
    before any is parsed)."""
    import rispy

    records = len(_RIS_START.findall(text))
    if records > limit:
        raise invalid(
            f"the text holds {records} RIS records; at most {limit} are checked a call: "
            f"split it into parts of {limit} or fewer."
        )
    works = []
    lists = [*rispy.LIST_TYPE_TAGS, *_RIS_LISTS]
    for record in rispy.loads(text, list_tags=lists):
        names = record.get("authors") or record.get("first_authors") or []
        authors, more = _authors(names)
        venue = (
            record.get("secondary_title") or record.get("journal_name")
            or record.get("alternate_title3") or record.get("alternate_title1")
        )  # fmt: skip
        urls = record.get("urls") or []
        works.append(
            CitedWork(
                key=_clean(record.get("id")),
                title=_clean(record.get("title") or record.get("primary_title")),
                authors=authors,
                more_authors=more,
                year=_year(
                    record.get("year") or record.get("publication_year") or record.get("date")
                ),
                venue=_clean(venue),
                doi=_doi(record.get("doi")),
                arxiv_id=_arxiv(record.get("doi"), *urls),
                kind=_clean(record.get("type_of_reference")),
                files=tuple(
                    str(link).strip()
                    for link in record.get("file_attachments1") or []
                    if _is_pdf(str(link).strip())
                ),
            )
        )
    return works
