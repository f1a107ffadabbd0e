"""What the read and quote tools answer for one parsed document (blocking, pure work).

The outline lists every section with its outline number and page span, the figure and
table captions, and the number of entries in the reference list. A reading is the text
of one section (subsections included) or of a page range, one piece per call.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final

from doiget.contract import invalid
from doiget.documents.document import Document, Section
from doiget.papers.origin import PdfOrigin
from doiget.reading import contracts as c
from doiget.reading.pieces import piece
from doiget.reading.quote import Normal, find, line_at, normal, widened

OUTLINE_SHOWN: Final = 30  # sections named in an unknown-section error
_PAGES: Final = re.compile(r"^\s*(\d{1,4})\s*(?:-\s*(\d{1,4})\s*)?$")


@dataclass(frozen=True, slots=True)
class Paper:
    """What a reply says of the paper besides the text: ref, store key, title, and
    where its PDF came from."""

    ref: str
    key: str
    title: str | None
    origin: PdfOrigin | None = None


def _pages(document: Document, start: int, end: int) -> list[int]:
    lines = document.lines
    return [lines[start].page, lines[max(start, end - 1)].page] if end > start else []


def _reply(paper: Paper, document: Document, **fields: Any) -> c.PaperReading:
    """A reading of ``paper`` with the fields every reply carries."""
    return c.PaperReading(
        ok=True,
        ref=paper.ref,
        key=paper.key,
        title=paper.title,
        page_count=document.pages,
        pdf_origin=paper.origin,
        **fields,
    )


def outline(paper: Paper, document: Document) -> c.PaperReading:
    """The outline of ``document``."""
    sections = [
        c.OutlineSection(
            number=section.number,
            title=section.title,
            level=section.level,
            pages=_pages(document, section.start, section.end),
            chars=len(document.text(section.start, section.end)),
        )
        for section in document.sections
    ]
    captions = [
        c.CaptionRef(
            label=caption.label,
            caption=caption.text,
            page=caption.page,
            section=document.sections[document.owners[caption.line]].number,
        )
        for caption in document.captions
    ]
    return _reply(
        paper,
        document,
        sections=sections,
        figures=[item for item in captions if item.label.startswith("Figure")],
        tables=[item for item in captions if item.label.startswith("Table")],
        references=document.references,
    )


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def find_section(document: Document, wanted: str) -> Section:
    """The section numbered ``wanted`` in the outline, else the one whose title (or
    "number title") it is, case and spacing aside; INVALID_REF listing the outline."""
    key = _fold(wanted).removeprefix("§").strip()
    for section in document.sections:
        if section.number == key:
            return section
    named = [
        section
        for section in document.sections
        if key in (_fold(section.title), _fold(f"{section.number} {section.title}"))
    ]
    if len(named) == 1:
        return named[0]
    shown = "; ".join(f"{s.number} {s.title}" for s in document.sections[:OUTLINE_SHOWN])
    more = len(document.sections) - OUTLINE_SHOWN
    tail = f"; and {more} more" if more > 0 else ""
    why = "names several sections" if named else "is not a section of this paper"
    raise invalid(
        f"section {wanted[:80]!r} {why}; give its number from the outline: {shown}{tail}."
    )


def _page_lines(document: Document, text: str) -> tuple[int, int, str]:
    """The lines on pages ``text`` ('3' or '3-5') and the range as read."""
    match = _PAGES.match(text)
    if match is None:
        raise invalid(f"pages must be a page or a range like '3-5' (got {text[:40]!r}).")
    first = int(match[1])
    last = int(match[2] or first)
    if not 1 <= first <= last <= document.pages:
        raise invalid(f"pages {first}-{last} are not within the paper's pages 1-{document.pages}.")
    indexes = [i for i, line in enumerate(document.lines) if first <= line.page <= last]
    label = f"pages {first}-{last}" if last != first else f"page {first}"
    if not indexes:
        return 0, 0, label
    return indexes[0], indexes[-1] + 1, label


def reading(paper: Paper, document: Document, request: c.ReadPaper) -> c.PaperReading:
    """The outline, or the piece of the asked section or pages the cursor points at."""
    if request.section is None and request.pages is None:
        if request.cursor is not None:
            raise invalid("cursor goes with the section or pages it was given for.")
        return outline(paper, document)
    if request.section is not None and request.pages is not None:
        raise invalid("give section or pages, not both.")
    if request.section is not None:
        section = find_section(document, request.section)
        start, end = section.start, section.end
        scope = f"section {section.number} {section.title}"
    else:
        start, end, scope = _page_lines(document, request.pages or "")
    part = piece(document, scope, start, end, request.max_chars, request.cursor)
    covered = dict.fromkeys(document.owners[part.first_line : part.last_line + 1])
    covers = [
        c.SectionRef(number=document.sections[i].number, title=document.sections[i].title)
        for i in covered
    ]
    return _reply(
        paper,
        document,
        scope=scope,
        pages=_pages(document, part.first_line, part.last_line + 1) if end > start else [],
        covers=covers if end > start else [],
        text=part.text,
        cursor=part.cursor,
    )


class Searchable:
    """A document's text in the compared form, with where each line starts."""

    def __init__(self, document: Document) -> None:
        self.document = document
        lines = [unicodedata.normalize("NFC", line.text) + "\n" for line in document.lines]
        self.source = "".join(lines)
        self.starts: list[int] = []
        offset = 0
        for line in lines:
            self.starts.append(offset)
            offset += len(line)

    @cached_property
    def normal(self) -> Normal:
        return normal(self.source)


def quote_key(quote: str) -> str:
    """``quote`` in the compared form; INVALID_REF when no text is left, or when more
    than MAX_QUOTE_CHARS is (the limit holds for this form: a compatibility character
    can stand for many, U+FDFA for 18)."""
    key = normal(quote).key
    if not key:
        raise invalid("quote has no text to look for.", "quote")
    if len(key) > c.MAX_QUOTE_CHARS:
        raise invalid(
            f"quote is {len(key)} characters once normalised (ligatures and other "
            f"compatibility characters spelled out), more than the {c.MAX_QUOTE_CHARS} "
            "a check takes; check a shorter part of it.",
            "quote",
        )
    return key


def check_quote(paper: Paper, searchable: Searchable, quote: str) -> c.QuoteCheck:
    """Whether ``quote`` is in the paper, with its page and section, or the closest passage."""
    key = quote_key(quote)
    document = searchable.document
    match = find(key, searchable.normal, len(searchable.source))
    if match is None:
        return c.QuoteCheck(
            ok=True,
            found=False,
            similarity=0.0,
            passage=None,
            ref=paper.ref,
            pdf_origin=paper.origin,
        )
    start, end = match.start, match.end
    if not match.occurrences:
        start, end = widened(searchable.source, start, end)
    first = line_at(searchable.starts, start)
    last = line_at(searchable.starts, max(start, end - 1))
    section = document.sections[document.owners[first]]
    return c.QuoteCheck(
        ok=True,
        found=match.occurrences > 0,
        similarity=match.similarity,
        passage=" ".join(searchable.source[start:end].split()),
        occurrences=match.occurrences,
        ref=paper.ref,
        page=document.lines[first].page,
        pages=[document.lines[first].page, document.lines[last].page],
        section=c.SectionRef(number=section.number, title=section.title),
        pdf_origin=paper.origin,
    )
