"""Text of PDF, DOCX and PPTX documents, and recognising them by their first bytes.

The readers (pypdfium2, python-docx, python-pptx) are imported on first use. A document
a reader cannot open is a ``content`` failure that names the format. A DOCX or PPTX
package is checked against the expansion caps (ooxml.py) before its reader opens it;
text is taken block by block up to :data:`EXTRACT_MAX_TEXT_CHARS` (and a PDF up to
:data:`PDF_MAX_PAGES` pages), the rest left unread and the text marked truncated.
"""

from __future__ import annotations

import datetime as dt
import io
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

from doiget.errors import DoigetError
from doiget.pdfium import PDFIUM_LOCK
from doiget.web.failure import Kind, web_error
from doiget.web.scrape.limits import EXTRACT_MAX_TEXT_CHARS, PDF_MAX_PAGES
from doiget.web.scrape.measure import clean_text
from doiget.web.scrape.ooxml import check_package

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from pptx.shapes.base import BaseShape

T = TypeVar("T")

DOCX_TYPE: Final = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX_TYPE: Final = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

_ZIP_MAGIC: Final = b"PK\x03\x04"
_PDF_MAGIC: Final = b"%PDF-"
_PDF_MAGIC_WITHIN: Final = 1024
# Offsets in a zip local file header: the name length, and where the name starts.
_ZIP_NAME_LENGTH: Final = 26
_ZIP_NAME_START: Final = 30
_PDF_DATE: Final = re.compile(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?")
_HEADING_STYLE: Final = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)


@dataclass(frozen=True)
class DocumentText:
    """The text of a document (markdown-ish) and what its metadata says.

    ``date`` is ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (creation date); ``pages`` is the
    page count of a PDF, the slide count of a presentation, None for a DOCX.
    ``truncated``: the text stops at a cap; ``note`` says which.
    """

    text: str
    title: str | None
    author: str | None
    date: str | None
    pages: int | None
    truncated: bool = False
    note: str | None = None


# -- recognising ----------------------------------------------------------------------


def _zip_entry_names(head: bytes) -> list[str]:
    """The entry names of the zip local file headers found in ``head``.

    Only the beginning of a body may be at hand, so the central directory at the end
    of the archive is not used; each local header carries its entry's name.
    """
    names = []
    start = head.find(_ZIP_MAGIC)
    while start != -1 and start + _ZIP_NAME_START <= len(head):
        length = int.from_bytes(
            head[start + _ZIP_NAME_LENGTH : start + _ZIP_NAME_LENGTH + 2], "little"
        )
        name = head[start + _ZIP_NAME_START : start + _ZIP_NAME_START + length]
        names.append(name.decode("utf-8", errors="replace"))
        start = head.find(_ZIP_MAGIC, start + _ZIP_NAME_START)
    return names


def _office_kind_claimed(content_type: str, url_path: str) -> str | None:
    """ "docx"/"pptx" when the content type or the file name says so."""
    media = content_type.split(";", 1)[0].strip().lower()
    path = url_path.lower()
    if media == DOCX_TYPE or path.endswith(".docx"):
        return "docx"
    if media == PPTX_TYPE or path.endswith(".pptx"):
        return "pptx"
    return None


def sniff_document(content_type: str, url_path: str, head: bytes) -> str | None:
    """``"pdf"``, ``"docx"``, ``"pptx"`` or None (anything else) for a body.

    ``head`` is the beginning of the body (a few KiB is enough). A PDF is known by
    ``%PDF-`` within the first KiB, whatever the content type. A DOCX or PPTX is a zip
    whose entries, as far as ``head`` shows them, confirm an Office package: its
    ``word/`` or ``ppt/`` part agreeing with the content type or file extension, or an
    ``[Content_Types].xml`` entry (then its ``word/``/``ppt/`` part, else the content
    type or extension, tells which). A zip that shows neither is not read as one.
    """
    if _PDF_MAGIC in head[:_PDF_MAGIC_WITHIN]:
        return "pdf"
    if not head.startswith(_ZIP_MAGIC):
        return None
    names = _zip_entry_names(head)
    shown = None
    if any(name.startswith("word/") for name in names):
        shown = "docx"
    elif any(name.startswith("ppt/") for name in names):
        shown = "pptx"
    claimed = _office_kind_claimed(content_type, url_path)
    if "[Content_Types].xml" in names:
        return shown or claimed
    return shown if shown is not None and shown == claimed else None


# -- shared helpers --------------------------------------------------------------------


def _read(kind: str, data: bytes, reader: Callable[[bytes], T]) -> T:
    """``reader(data)``, with any failure to parse turned into a ``content`` error."""
    try:
        return reader(data)
    except DoigetError:
        raise
    except Exception as exc:
        reason = str(exc).strip() or type(exc).__name__
        raise web_error(
            Kind.CONTENT, f"The document could not be read as a {kind}: {reason[:200]}."
        ) from exc


def capped_join(blocks: Iterable[str], separator: str = "\n\n") -> tuple[str, bool]:
    """The non-empty ``blocks`` joined, up to :data:`EXTRACT_MAX_TEXT_CHARS`; whether
    the cap cut them. Blocks past the cap are never asked for."""
    taken: list[str] = []
    size = 0
    for block in blocks:
        if not block:
            continue
        room = EXTRACT_MAX_TEXT_CHARS - size
        if len(block) > room:
            taken.append(block[:room])
            return separator.join(taken), True
        taken.append(block)
        size += len(block) + len(separator)
    return separator.join(taken), False


def _cut_note(truncated: bool) -> str | None:
    if not truncated:
        return None
    return f"Only the first {EXTRACT_MAX_TEXT_CHARS:,} characters of the text were read."


def _text_or_none(value: Any) -> str | None:
    """A stripped non-empty string, or None."""
    if not isinstance(value, str):
        return None
    value = clean_text(value)
    return value or None


def _iso_date(value: dt.date | None) -> str | None:
    """``YYYY-MM-DD`` of a date or datetime (Office core properties), or None."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    return value.isoformat() if isinstance(value, dt.date) else None


def _cell(text: str) -> str:
    """One table cell on one line, with its pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def pipe_table(rows: Sequence[Sequence[str]]) -> str:
    """A markdown pipe table; the first row is the header. Empty for no rows."""
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    lines = []
    for number, row in enumerate(rows):
        cells = [_cell(text) for text in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if number == 0:
            lines.append("|" + "---|" * width)
    return "\n".join(lines)


# -- PDF -------------------------------------------------------------------------------


def _pdf_date(value: str | None) -> str | None:
    """``D:YYYYMMDDHHmmSS...`` (a PDF date string) as ``YYYY[-MM[-DD]]``."""
    match = _PDF_DATE.match(value or "")
    if not match:
        return None
    year, month, day = match.groups()
    if month is None or not 1 <= int(month) <= 12:
        return year
    if day is None or not 1 <= int(day) <= 31:
        return f"{year}-{month}"
    return f"{year}-{month}-{day}"


def _pdf(data: bytes) -> DocumentText:
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        return _pdf_text(pdfium, data)


def _pdf_text(pdfium: Any, data: bytes) -> DocumentText:
    """The document's text and metadata; the caller holds the PDFium lock."""
    document = pdfium.PdfDocument(data)
    try:
        count = len(document)
        with closing(_pdf_pages(document, min(count, PDF_MAX_PAGES))) as pages:
            text, truncated = capped_join(pages)
        note = _cut_note(truncated)
        if count > PDF_MAX_PAGES and not truncated:
            truncated = True
            note = f"Only the first {PDF_MAX_PAGES:,} of its {count:,} pages were read."
        metadata = document.get_metadata_dict(skip_empty=True)
        return DocumentText(
            text=text,
            title=_text_or_none(metadata.get("Title")),
            author=_text_or_none(metadata.get("Author")),
            date=_pdf_date(metadata.get("CreationDate")),
            pages=count,
            truncated=truncated,
            note=note,
        )
    finally:
        document.close()


def _pdf_pages(document: Any, count: int) -> Generator[str, None, None]:
    """The text of the first ``count`` pages, one page at a time."""
    for index in range(count):
        page = document[index]
        textpage = page.get_textpage()
        try:
            yield clean_text(textpage.get_text_range())
        finally:
            textpage.close()
            page.close()


def extract_pdf(data: bytes) -> DocumentText:
    """The text of a PDF, page by page with a blank line between pages."""
    return _read("PDF", data, _pdf)


# -- DOCX ------------------------------------------------------------------------------


def _paragraph_styles(document: DocxDocument) -> Callable[[str | None], str]:
    """The name of a paragraph style by its id (the default style for None or an
    unknown id), looked up in a table made once: python-docx's own lookup scans every
    style per paragraph, which takes seconds on a long document."""
    from docx.enum.style import WD_STYLE_TYPE

    styles = document.styles
    names = {
        style.style_id: style.name or ""
        for style in styles
        if style.type == WD_STYLE_TYPE.PARAGRAPH
    }
    default = styles.default(WD_STYLE_TYPE.PARAGRAPH)
    fallback = (default.name if default is not None else None) or ""

    def name(style_id: str | None) -> str:
        return names.get(style_id, fallback) if style_id is not None else fallback

    return name


def _docx_blocks(document: DocxDocument) -> Iterator[str]:
    """Each paragraph (headings and list items in markdown) and table, in order."""
    from docx.table import Table

    style_name = _paragraph_styles(document)
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            rows = [[cell.text for cell in row.cells] for row in block.rows]
            table = pipe_table(rows)
            if table:
                yield table
            continue
        text = clean_text(block.text)
        if not text:
            continue
        style = style_name(block._p.style)
        heading = _HEADING_STYLE.match(style)
        if style.lower() == "title":
            yield f"# {text}"
        elif heading:
            yield f"{'#' * min(int(heading.group(1)), 6)} {text}"
        elif style.lower().startswith("list number"):
            yield f"1. {text}"
        elif style.lower().startswith("list"):
            yield f"- {text}"
        else:
            yield text


def _office_text(text: str, truncated: bool, properties: Any, pages: int | None) -> DocumentText:
    """DOCX and PPTX share their core properties (title, author, created)."""
    return DocumentText(
        text=text,
        title=_text_or_none(properties.title),
        author=_text_or_none(properties.author),
        date=_iso_date(properties.created),
        pages=pages,
        truncated=truncated,
        note=_cut_note(truncated),
    )


def _docx(data: bytes) -> DocumentText:
    import docx

    check_package("DOCX", data)
    document = docx.Document(io.BytesIO(data))
    text, truncated = capped_join(_docx_blocks(document))
    return _office_text(text, truncated, document.core_properties, None)


def extract_docx(data: bytes) -> DocumentText:
    """The text of a DOCX as markdown: headings by level, list items, pipe tables."""
    return _read("DOCX", data, _docx)


# -- PPTX ------------------------------------------------------------------------------


def _shape_texts(shape: BaseShape) -> Iterator[str]:
    """The text of a shape: its paragraphs, its table, or those of a group's members."""
    from pptx.shapes.autoshape import Shape
    from pptx.shapes.graphfrm import GraphicFrame
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        for member in shape.shapes:
            yield from _shape_texts(member)
    elif isinstance(shape, Shape) and shape.has_text_frame:
        text = clean_text(shape.text_frame.text)
        if text:
            yield text
    elif isinstance(shape, GraphicFrame) and shape.has_table:
        table = pipe_table([[cell.text for cell in row.cells] for row in shape.table.rows])
        if table:
            yield table


def _pptx(data: bytes) -> DocumentText:
    import pptx

    check_package("PPTX", data)
    presentation = pptx.Presentation(io.BytesIO(data))
    slides = presentation.slides
    text, truncated = capped_join(_slide_sections(slides))
    return _office_text(text, truncated, presentation.core_properties, len(slides))


def _slide_sections(slides: Iterable[Any]) -> Iterator[str]:
    """One ``## Slide N`` section per slide, with its shapes' text."""
    for number, slide in enumerate(slides, start=1):
        texts = (text for shape in slide.shapes for text in _shape_texts(shape))
        yield capped_join([f"## Slide {number}", *texts])[0]


def extract_pptx(data: bytes) -> DocumentText:
    """The text of a PPTX: one ``## Slide N`` section per slide with its shapes' text."""
    return _read("PPTX", data, _pptx)
