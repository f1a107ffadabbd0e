"""Citations of a PDF or plain-text draft: numbered (``[3]``, ``[1-4, 7]``) or
author-year (``(Smith et al., 2020; Lee 2019a)``, ``Smith and Jones (2018)``), with
the reference list that ends the draft as its bibliography.

The reference list is found and split by the reader the verifier uses
(:mod:`doiget.documents.bibliography`): a PDF's lines come from PDFium in its bounded
child; a text's lines are laid out for it, one line each, a blank line showing as the
wider gap that sets entries apart. A numbered list's entries are keyed by their
number (``"3"``); the others by the first author's family name and the year, with the
letter that tells a year's works apart (``"Lee 2019a"``), read from each entry by the
verifier's free-text reader. Superscript numbers are not read.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from doiget.claims.manuscripts.bibfiles import References, for_citations
from doiget.claims.manuscripts.model import Citation, Cited, Manuscript, Place
from doiget.claims.manuscripts.sentence import sentences_around
from doiget.claims.manuscripts.source import (
    MAX_DRAFT_BYTES,
    LineIndex,
    decode,
    read_draft,
    within_bound,
)
from doiget.contract import invalid
from doiget.documents.bibliography import ReferenceEntry, reference_entries, reference_heading
from doiget.documents.pdftext import Line
from doiget.namewords import PARTICLES

# The most numbers one range cites ("[1-400]" is a typo, not 400 citations).
MAX_RANGE: Final = 100
_NUMBER: Final = r"\d{1,4}(?:\s*[-\u2013\u2014]\s*\d{1,4})?"
_NUMBERED: Final = re.compile(rf"\[\s*({_NUMBER}(?:\s*[,;]\s*{_NUMBER}){{0,50}})\s*\]")
_NAME: Final = (
    rf"(?:(?i:{'|'.join(sorted(PARTICLES))})\s+){{0,3}}"
    r"[A-Z\u00c0-\u024f][\w\u00c0-\u024f'\u2019-]{1,40}"
)
_AUTHORS: Final = rf"({_NAME})(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_NAME})?"
_YEAR: Final = r"(?:1[5-9]\d\d|20\d\d)[a-z]?"
_YEARS: Final = rf"({_YEAR}(?:\s*,\s*{_YEAR}){{0,10}})"
_PARENTHESES: Final = re.compile(r"\(([^()]{1,600})\)")
_IN_PARENTHESES: Final = re.compile(rf"{_AUTHORS},?\s+{_YEARS}(?![\w])")
_NARRATIVE: Final = re.compile(rf"{_AUTHORS}\s+\({_YEARS}(?:[,;][^()]{{0,60}})?\)")
_YEAR_OF: Final = re.compile(_YEAR)
_BLANK_LINE: Final = re.compile(r"\n[ \t]*\n")
# A text's lines laid out as a page: a line's height, and a page tall enough for all.
_LINE_STEP: Final = 12.0
_TOP: Final = 1e9


def _numbers(written: str) -> list[str]:
    """The numbers ``1-4, 7`` cites, ranges spelled out."""
    numbers: list[str] = []
    for part in re.split(r"[,;]", written):
        ends = [int(end) for end in re.split(r"[-\u2013\u2014]", part) if end.strip()]
        first, last = ends[0], ends[-1]
        if 0 <= last - first < MAX_RANGE:
            numbers.extend(str(number) for number in range(first, last + 1))
        else:
            numbers.extend(str(end) for end in ends)
    return numbers


def _family(name: str) -> str:
    """A family name as keys compare it: its last word, without accents, in lower case."""
    last = name.split()[-1] if name.split() else name
    folded = unicodedata.normalize("NFKD", last)
    return "".join(char for char in folded if not unicodedata.combining(char)).casefold()


def _author_year(text: str) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """(start, end, keys) of the author-year citations of ``text``."""
    for group in _PARENTHESES.finditer(text):
        keys = [
            f"{found.group(1)} {year.strip()}"
            for part in group.group(1).split(";")
            if (found := _IN_PARENTHESES.search(part)) is not None
            for year in found.group(2).split(",")
        ]
        if keys:
            yield group.start(), group.end(), tuple(keys)
    for found in _NARRATIVE.finditer(text):
        years = found.group(2).split(",")
        yield found.start(), found.end(), tuple(f"{found.group(1)} {y.strip()}" for y in years)


def _citations(text: str, numbered: bool) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, keys) of every citation of ``text``, in order, none overlapping."""
    if numbered:
        found = [
            (m.start(), m.end(), tuple(_numbers(m.group(1)))) for m in _NUMBERED.finditer(text)
        ]
    else:
        found = sorted(_author_year(text))
    kept: list[tuple[int, int, tuple[str, ...]]] = []
    for citation in found:
        if not kept or citation[0] >= kept[-1][1]:
            kept.append(citation)
    return kept


def _entry_keys(entries: Sequence[ReferenceEntry], numbered: bool) -> dict[str, str]:
    """Each entry's key → its text: the number it is listed under, or family name and
    year (the letter a year's works are told apart by added when the list has it or
    when one author has several works a year)."""
    from doiget.verify.freetext import read_free_text

    if numbered:
        return {
            (re.sub(r"\D", "", entry.label or "") or str(index)): entry.text
            for index, entry in enumerate(entries, start=1)
        }
    read: list[tuple[str, str, str]] = []
    for entry in entries:
        work = read_free_text(entry.text)
        family = work.authors[0].family if work.authors else entry.text.split(",")[0]
        year = str(work.year or "")
        lettered = re.search(rf"\b{year}([a-z])\b", entry.text) if year else None
        read.append((_family(family), year, lettered.group(1) if lettered else ""))
    twice = Counter((family, year) for family, year, letter in read if not letter)
    seen: Counter[tuple[str, str]] = Counter()
    keyed: dict[str, str] = {}
    for (family, year, letter), entry in zip(read, entries, strict=True):
        if not letter and twice[(family, year)] > 1:
            letter = "abcdefghijklmnopqrstuvwxyz"[min(seen[(family, year)], 25)]
            seen[(family, year)] += 1
        keyed.setdefault(f"{family} {year}{letter}", entry.text)
    return keyed


def _bibliography(
    citations: Sequence[Citation], entries: Sequence[ReferenceEntry], numbered: bool, name: str
) -> References:
    """The entry each cited key names, or why none does."""
    keyed = _entry_keys(entries, numbered)
    found: References = {}
    for citation in citations:
        for key in citation.keys:
            if numbered:
                text = keyed.get(key)
            else:
                written, _, year = key.rpartition(" ")
                text = keyed.get(f"{_family(written)} {year}") or keyed.get(
                    f"{_family(written)} {year.rstrip('abcdefghijklmnopqrstuvwxyz')}"
                )
            if text is not None:
                found.setdefault(key, Cited(key, text))
    missing = (
        f"no entry for this citation in {name}'s reference list"
        if entries
        else f"{name} has no reference list under a References or Bibliography heading"
    )
    return for_citations(citations, found, missing)


def _text_lines(lines: Sequence[str]) -> list[Line]:
    """A text's non-blank lines laid out as a page: a blank line is a wider gap."""
    return [
        Line(text, 1, 10.0, False, 0.0, _TOP - index * _LINE_STEP)
        for index, text in enumerate(lines)
        if text.strip()
    ]


def read_plain_text(
    path: Path, *, text: str | None = None, within: Path | None = None
) -> Manuscript:
    """The citations and reference list of the plain-text draft at ``path`` (or of
    ``text``, which ``path`` names)."""
    if text is None:
        text = decode(read_draft(path, within=within), path.name)
    elif len(text.encode()) > MAX_DRAFT_BYTES:
        raise invalid(f"{path.name} is longer than {MAX_DRAFT_BYTES:,} bytes.")
    source_lines = text.split("\n")
    laid_out = _text_lines(source_lines)
    heading = reference_heading(laid_out)
    entries = reference_entries(laid_out)
    body_end = len(source_lines)
    if heading is not None:
        heading_line = laid_out[heading]
        body_end = round((_TOP - heading_line.top) / _LINE_STEP)
    body = "\n".join(source_lines[:body_end])
    numbered = _is_numbered(entries, body)
    lines = LineIndex(body)
    citations: list[Citation] = []
    notes: list[str] = []
    starts = [0, *(match.end() for match in _BLANK_LINE.finditer(body))]
    ends = [*(match.start() for match in _BLANK_LINE.finditer(body)), len(body)]
    for start, end in zip(starts, ends, strict=True):
        paragraph = body[start:end]
        found = within_bound(_citations(paragraph, numbered), len(citations), notes, path.name)
        said = sentences_around(paragraph, [(a, b) for a, b, _ in found])
        for (at, _, keys), (sentence, quotes) in zip(found, said, strict=True):
            place = Place(path.name, lines.line(start + at))
            citations.append(Citation(place, sentence, keys, quotes))
    bibliography = _bibliography(citations, entries, numbered, path.name)
    return Manuscript(path.name, "text", citations, bibliography, notes)


def _is_numbered(entries: Sequence[ReferenceEntry], body: str) -> bool:
    """Whether the draft cites by number: its reference list is numbered, or (a list
    not read as numbered, or none) its body holds more numbered citations than
    author-year ones."""
    if entries and all(entry.label for entry in entries):
        return True
    numbered = sum(1 for _ in _NUMBERED.finditer(body))
    return numbered > sum(1 for _ in _author_year(body))


def read_pdf(path: Path, within: Path | None = None) -> Manuscript:
    """The citations and reference list of the PDF draft at ``path`` (its text read
    by PDFium in the bounded child)."""
    from doiget.documents.pdftext import UnusableDocument, pdf_text
    from doiget.documents.sections import sectioned
    from doiget.documents.sentences import sentences
    from doiget.papers.adding import MAX_PDF_BYTES

    data = read_draft(path, MAX_PDF_BYTES, within)
    try:
        lines = pdf_text(data, path.name).lines
    except UnusableDocument as error:
        raise invalid(f"{error.message}.") from None
    heading = reference_heading(lines)
    entries = reference_entries(lines)
    body = lines if heading is None else lines[:heading]
    numbered = _is_numbered(entries, "\n".join(line.text for line in body))
    citations: list[Citation] = []
    notes: list[str] = []
    for sentence in sentences(sectioned(body)):
        found = within_bound(_citations(sentence.text, numbered), len(citations), notes, path.name)
        said = sentences_around(sentence.text, [(a, b) for a, b, _ in found])
        for (_, _, keys), (text, quotes) in zip(found, said, strict=True):
            citations.append(
                Citation(Place(path.name, page=sentence.first_page), text, keys, quotes)
            )
    bibliography = _bibliography(citations, entries, numbered, path.name)
    return Manuscript(path.name, "pdf", citations, bibliography, notes)
