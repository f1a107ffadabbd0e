"""What a PDF says about which work it is, before any source is asked.

Read in this order of trust: identifiers in the document's metadata (the Info
dictionary and the XMP packet), identifiers on its first pages (the arXiv stamp in
the margin, ``doi:`` and ``https://doi.org/...``), and the title and authors set on
the first page (the largest type near the top, and the lines under it). Every clue
is a claim to be checked: a DOI on a page may be a cited work's, so the caller
accepts an identifier only when its record's title is the page's title.

Reading is synchronous (PDFium, in a child process under limits): callers run it in a
worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from doiget.documents.pdfchild import in_child
from doiget.documents.pdftext import Line, PdfText, UnusableDocument, extract
from doiget.pdfium import PDFIUM_LOCK
from doiget.verify.cited import CitedAuthor
from doiget.verify.readers import split_name

# The pages an identifier or a title is looked for on.
FIRST_PAGES: Final = 2
# The XMP packet is looked for in this many bytes at each end of the file.
XMP_WINDOW: Final = 4 * 1024 * 1024
# A packet longer than this is not read (real ones hold a few kilobytes).
XMP_PACKET_MAX: Final = 256 * 1024
TITLE_MAX_LINES: Final = 4
AUTHOR_MAX_LINES: Final = 4
AUTHORS_MAX: Final = 30

_DOI: Final = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}\[\]]+)", re.IGNORECASE)
# "arXiv:1706.03762v5 [cs.CL] 6 Dec 2017", or an old-style id "arXiv:hep-th/9901001v2".
_ARXIV_STAMP: Final = re.compile(
    r"arXiv:\s*(\d{4}\.\d{4,5}(?:v\d+)?|[a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)"
    r"\s*\[[A-Za-z.\-]+\]",
)
_XMP_OPEN: Final = b"<x:xmpmeta"
_XMP_CLOSE: Final = b"</x:xmpmeta>"
_TRAILING: Final = ".,;:)]'"
_NOT_NAME: Final = re.compile(
    r"@|\d{2,}|university|universit[éä]|institute|department|school|laborator|college|"
    r"abstract|google|research|inc\.|ltd|corresponding|http|www\.",
    re.IGNORECASE,
)
# Footnote symbols and affiliation numbers: they also part names set without commas.
_MARKS: Final = re.compile(r"[^\w\s.'\-]|\d+|_")
_SEPARATORS: Final = re.compile(r"\s*(?:,|;|·|•|\band\b|&)\s*")


@dataclass(frozen=True, slots=True)
class Clues:
    """What was read from one PDF: identifiers by where they were found, and guesses."""

    metadata_ids: tuple[str, ...] = ()
    stamp_ids: tuple[str, ...] = ()
    page_dois: tuple[str, ...] = ()
    title: str | None = None
    authors: tuple[CitedAuthor, ...] = ()
    info_title: str | None = None
    pages: int = 0
    problems: tuple[str, ...] = field(default_factory=tuple)


def read_clues(data: bytes, name: str) -> Clues:
    """The clues of the PDF ``data`` (called ``name``); a PDF with no text gives
    metadata clues only, and says why in ``problems``. PDFium reads it in a child
    process under limits; a PDF it cannot read, or that is too large to read, raises
    :class:`UnusableDocument`."""
    info, text = in_child(read_in_child, name, data, name)
    metadata_ids = _dois(" ".join(info.values())) + _xmp_ids(data)
    info_title = _plausible_title(info.get("Title", ""))
    if not isinstance(text, PdfText):
        return Clues(metadata_ids=_unique(metadata_ids), info_title=info_title, problems=(text[1],))
    joined = "\n".join(line.text for line in text.lines)
    title_lines, author_lines = _title_and_authors(text.lines)
    return Clues(
        metadata_ids=_unique(metadata_ids),
        stamp_ids=_unique([m.group(1) for m in _ARXIV_STAMP.finditer(_unspaced(joined))]),
        page_dois=_unique(_dois(joined)),
        title=" ".join(line.text for line in title_lines) or None,
        authors=_authors(author_lines),
        info_title=info_title,
        pages=text.pages,
    )


def read_in_child(data: bytes, name: str) -> tuple[dict[str, str], PdfText | tuple[str, str]]:
    """The Info dictionary and the first pages' text, or why there is no text (a
    scan: its reason and message); the work :func:`read_clues` runs in a child."""
    info = _info(data)
    try:
        return info, extract(data, name, FIRST_PAGES)
    except UnusableDocument as exc:
        if exc.reason != "no_text":
            raise
        return info, (exc.reason, exc.message)


def _info(data: bytes) -> dict[str, str]:
    """The Info dictionary's text entries (empty for a PDF PDFium cannot open or read)."""
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return {}
        try:
            values = dict(document.get_metadata_dict(skip_empty=True))
            for extra in ("doi", "DOI", "prism:doi"):
                value = document.get_metadata_value(extra)
                if value:
                    values[extra] = value
        except pdfium.PdfiumError:
            return {}
        finally:
            document.close()
    return {key: str(value) for key, value in values.items()}


def _xmp_ids(data: bytes) -> list[str]:
    """DOIs in the XMP packet (``prism:doi``, ``dc:identifier``, ``pdfx:doi`` ...). The
    packet is stored uncompressed, as the XMP specification asks, so it is found in the
    file's bytes; a compressed one is not read."""
    windows = [data] if len(data) <= 2 * XMP_WINDOW else [data[:XMP_WINDOW], data[-XMP_WINDOW:]]
    found: list[str] = []
    for window in windows:
        for packet in _xmp_packets(window):
            found += _dois(packet.decode("utf-8", "replace"))
    return found


def _xmp_packets(data: bytes) -> list[bytes]:
    """Every packet in ``data``, each from the last opener before a closer to that
    closer. Every search moves forward from where the last one ended, so the cost is
    one pass over ``data`` however many openers go unclosed."""
    packets: list[bytes] = []
    position = 0
    while (start := data.find(_XMP_OPEN, position)) != -1:
        close = data.find(_XMP_CLOSE, start)
        if close == -1:
            break
        start = data.rfind(_XMP_OPEN, start, close)
        end = close + len(_XMP_CLOSE)
        if end - start <= XMP_PACKET_MAX:
            packets.append(data[start:end])
        position = end
    return packets


def _dois(text: str) -> list[str]:
    return [match.group(1).rstrip(_TRAILING) for match in _DOI.finditer(text)]


def _unspaced(text: str) -> str:
    """``text`` with the spaces a rotated margin stamp gets between its letters
    removed from around ``arXiv:`` ids (``a r X i v : 1 7 0 6 ...``)."""
    return re.sub(r"(?<=\S) (?=\S)", "", text) + "\n" + text


def _unique(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(value for value in values if value))


def _plausible_title(text: str) -> str | None:
    """A metadata title that may be the work's (not a file name or a tool's default)."""
    text = " ".join(text.split())
    if len(text.split()) < 3 or re.search(r"\.(?:docx?|tex|dvi|pdf)$|^microsoft", text, re.I):
        return None
    return text


def _title_and_authors(lines: list[Line]) -> tuple[list[Line], list[Line]]:
    """The title (the largest type on page 1, consecutive lines) and the lines right
    under it that may name the authors."""
    first = [
        line
        for line in lines
        if line.page == 1 and sum(ch.isalpha() for ch in line.text) >= 3
        and not _ARXIV_STAMP.search(_unspaced(line.text))
    ]  # fmt: skip
    if not first:
        return [], []
    largest = max(line.size for line in first)
    start = next(i for i, line in enumerate(first) if line.size >= largest - 0.5)
    end = start
    while (
        end + 1 < len(first)
        and end - start + 1 < TITLE_MAX_LINES
        and abs(first[end + 1].size - largest) <= 0.5
    ):
        end += 1
    title = first[start : end + 1]
    authors = first[end + 1 : end + 1 + AUTHOR_MAX_LINES]
    return title, authors


def _authors(lines: list[Line]) -> tuple[CitedAuthor, ...]:
    """Names read from the lines under the title: split on commas and "and", marks
    (footnote symbols, affiliation numbers) dropped; a line that reads as an
    affiliation, an address or the abstract ends the list."""
    authors: list[CitedAuthor] = []
    for line in lines:
        if _NOT_NAME.search(line.text):
            break
        for piece in _SEPARATORS.split(_MARKS.sub(",", line.text)):
            piece = " ".join(piece.split())
            words = piece.split(" ")
            if not 2 <= len(words) <= 4 or not all(word[:1].isupper() for word in words):
                continue
            author = split_name(piece)
            if author is not None:
                authors.append(author)
    return tuple(authors[:AUTHORS_MAX])
