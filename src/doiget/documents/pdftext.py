"""The text of a PDF, line by line, with the page and font cues of each line (pypdfium2).

Soft hyphens at line ends are joined back into words and lines that are only a page
number are dropped. A PDF that cannot be opened, has no pages, or has no text layer
(a scan), or holds more than a paper could (pages, characters), raises
:class:`UnusableDocument` with a reason a person can act on. PDFium reads it in a child
process under memory and CPU limits (:mod:`doiget.documents.pdfchild`).
"""

from __future__ import annotations

import ctypes
import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from doiget.documents.pdfchild import in_child
from doiget.pdfium import PDFIUM_LOCK

SOFT_HYPHENS: Final = ("\ufffe", "\u00ad", "\x02")
BOLD_WEIGHT: Final = 600
FONT_NAME_BYTES: Final = 128
# Fewer non-space characters than this in the whole document means "no text layer".
MIN_TEXT_CHARS: Final = 20
# What one PDF may hold, read before its text is taken out (a long book stays within).
PAGES_MAX: Final = 5_000
PAGE_CHARS_MAX: Final = 200_000
TEXT_CHARS_MAX: Final = 10_000_000
_PAGE_NUMBER: Final = re.compile(r"^\s*(?:page\s+)?\d{1,4}\s*$", re.IGNORECASE)


class UnusableDocument(Exception):
    """A PDF that yields no text; ``reason`` is one of unreadable, empty, no_text,
    too_large."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class Line:
    """One line of text: its 1-based page, font size and boldness at its first character,
    and where that character stands on the page (points from the left edge, and from
    the bottom edge to its top): what tells a hanging indent or a gap between entries."""

    text: str
    page: int
    size: float
    bold: bool
    x: float = 0.0
    top: float = 0.0


@dataclass(frozen=True, slots=True)
class PdfText:
    """What a PDF holds: its lines in reading order, page count and content hash."""

    lines: list[Line]
    pages: int
    sha256: str


def _is_bold(raw: object, index: int) -> bool:
    """Bold by declared weight, or by the font's name (core fonts declare no weight)."""
    import pypdfium2.raw as pdfium_c

    if int(pdfium_c.FPDFText_GetFontWeight(raw, index)) >= BOLD_WEIGHT:
        return True
    name = ctypes.create_string_buffer(FONT_NAME_BYTES)
    flags = ctypes.c_int()
    pdfium_c.FPDFText_GetFontInfo(raw, index, name, FONT_NAME_BYTES, ctypes.byref(flags))
    return b"bold" in name.value.lower() or b"black" in name.value.lower()


def _page_lines(textpage: object, page: int) -> list[Line]:
    import pypdfium2.raw as pdfium_c

    raw = textpage.raw  # type: ignore[attr-defined]
    text: str = textpage.get_text_range()  # type: ignore[attr-defined]
    lines: list[Line] = []
    position = 0
    for piece in text.split("\r\n"):
        start = position
        position += len(piece) + 2
        stripped = piece.strip()
        # A soft hyphen inside a line marks a word pdfium already joined; one at the end
        # (kept as a single marker) joins the line's last word to the next line's first.
        ends_soft = stripped.endswith(SOFT_HYPHENS)
        body = stripped[:-1] if ends_soft else stripped
        for mark in SOFT_HYPHENS:
            body = body.replace(mark, "")
        stripped = body + (SOFT_HYPHENS[0] if ends_soft else "")
        if not stripped or _PAGE_NUMBER.match(stripped):
            continue
        first = start + (len(piece) - len(piece.lstrip()))
        size = float(pdfium_c.FPDFText_GetFontSize(raw, first))
        x, top = _char_position(raw, first)
        lines.append(Line(stripped, page, round(size, 1), _is_bold(raw, first), x, top))
    return lines


def _char_position(raw: object, index: int) -> tuple[float, float]:
    """(left, top) of the character at ``index``, in points, rounded to a tenth."""
    import pypdfium2.raw as pdfium_c

    left, right, bottom, top = (ctypes.c_double() for _ in range(4))
    pdfium_c.FPDFText_GetCharBox(
        raw, index, ctypes.byref(left), ctypes.byref(right), ctypes.byref(bottom), ctypes.byref(top)
    )
    return round(left.value, 1), round(top.value, 1)


def join_hyphenated(lines: list[Line]) -> list[Line]:
    """Lines with a soft hyphen at the end joined to the word on the next line."""
    out: list[Line] = []
    carry = ""
    for line in lines:
        text = carry + line.text
        carry = ""
        if text.endswith(SOFT_HYPHENS):
            head, _, tail = text[:-1].rpartition(" ")
            carry = tail
            text = head
        if text:
            out.append(replace(line, text=text))
    if carry and out:
        last = out[-1]
        out[-1] = replace(last, text=f"{last.text} {carry}")
    return out


def read_pdf(path: Path) -> PdfText:
    """Every line of the PDF at ``path`` (see the module docstring for the failures)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnusableDocument("unreadable", f"cannot read {path.name}: {exc.strerror}") from exc
    return pdf_text(data, path.name)


def pdf_text(data: bytes, name: str, *, max_pages: int | None = None) -> PdfText:
    """Every line of the PDF ``data`` (the file called ``name``), already read; with
    ``max_pages``, the lines of its first pages only (``pages`` still counts them all).
    Read in a child process under memory and CPU limits (:mod:`doiget.documents.pdfchild`)."""
    return in_child(extract, name, data, name, max_pages)


def extract(data: bytes, name: str, max_pages: int | None = None) -> PdfText:
    """:func:`pdf_text`'s work, in this process: for a child under limits only."""
    import pypdfium2 as pdfium

    try:
        with PDFIUM_LOCK:
            lines, pages = _lines_of(pdfium, data, name, max_pages)
    except pdfium.PdfiumError as exc:
        # Cut short, a page tree that loops, a page PDFium cannot load: the file's fault.
        raise unreadable(name, str(exc)) from exc
    if sum(len(line.text.replace(" ", "")) for line in lines) < MIN_TEXT_CHARS:
        raise UnusableDocument(
            "no_text",
            f"{name} has no text layer (a scan?); run OCR on it first, then index it",
        )
    return PdfText(join_hyphenated(lines), pages, hashlib.sha256(data).hexdigest())


def _lines_of(
    pdfium: Any, data: bytes, name: str, max_pages: int | None = None
) -> tuple[list[Line], int]:
    """Every line and the page count, within the text budget; the caller holds the
    PDFium lock and turns PDFium's errors into the file's refusal."""
    document = pdfium.PdfDocument(data)
    try:
        pages = len(document)
        if pages == 0:
            raise UnusableDocument("empty", f"{name} has no pages")
        if pages > PAGES_MAX:
            raise _over_budget(name, f"{pages} pages (doiget reads at most {PAGES_MAX})")
        lines: list[Line] = []
        budget = TEXT_CHARS_MAX
        for number in range(min(pages, max_pages or pages)):
            page = document[number]
            textpage = page.get_textpage()
            try:
                chars = textpage.count_chars()
                if chars > PAGE_CHARS_MAX:
                    raise _over_budget(
                        name,
                        f"{chars} characters on page {number + 1} (doiget reads at most "
                        f"{PAGE_CHARS_MAX} a page)",
                    )
                budget -= chars
                if budget < 0:
                    raise _over_budget(
                        name, f"more than {TEXT_CHARS_MAX} characters (doiget's most a PDF)"
                    )
                lines += _page_lines(textpage, number + 1)
            finally:
                textpage.close()
                page.close()
    finally:
        document.close()
    return lines, pages


def unreadable(name: str, why: str) -> UnusableDocument:
    """The refusal of a PDF PDFium fails to read, saying why."""
    return UnusableDocument(
        "unreadable", f"{name} is not a readable PDF ({why}); fetch it again or replace it"
    )


def _over_budget(name: str, what: str) -> UnusableDocument:
    return UnusableDocument(
        "too_large",
        f"{name} holds {what}: more text than any paper; if it is a real document, "
        "split it and add the parts",
    )
