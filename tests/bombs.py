"""Documents and pages built to cost far more to read than their size: for the
extraction caps' tests and benchmarks/extraction_bombs.py.

Each builder returns bytes. Office packages start from a real python-docx /
python-pptx file and swap one XML part for a highly compressible one, streamed
through zipfile so that building a gigabyte-sized expansion never holds it in memory.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Iterator

_CENTRAL_HEADER = b"PK\x01\x02"
_LOCAL_HEADER = b"PK\x03\x04"
_CHUNK = 1024 * 1024


def _docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph("A short report.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _pptx() -> bytes:
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "A short deck"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def _paragraph_stream(head: bytes, tail: bytes, size: int, unit: bytes) -> Iterator[bytes]:
    yield head
    chunk = unit * max(1, _CHUNK // len(unit))
    written = 0
    while written < size:
        yield chunk
        written += len(chunk)
    yield tail


def _swap_part(package: bytes, part: str, body: Iterator[bytes], extra: int = 0) -> bytes:
    """``package`` with ``part`` replaced by the streamed ``body`` (deflated at level 9),
    plus ``extra`` empty members."""
    source = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as target:
        for info in source.infolist():
            if info.filename != part:
                target.writestr(info.filename, source.read(info))
                continue
            streamed = zipfile.ZipInfo(part)
            streamed.compress_type = zipfile.ZIP_DEFLATED
            with target.open(streamed, "w") as member:
                for chunk in body:
                    member.write(chunk)
        for number in range(extra):
            target.writestr(f"word/extra/part{number}.xml", b"")
    return out.getvalue()


def _text_bomb(package: bytes, part: str, head: bytes, tail: bytes, expanded: int) -> bytes:
    """``package`` with ``part`` holding one run of about ``expanded`` bytes of one
    repeated letter between ``head`` and ``tail``: the costliest text to hold, the
    cheapest to zip."""
    return _swap_part(package, part, _paragraph_stream(head, tail, expanded, b"a"))


def docx_bomb(expanded: int) -> bytes:
    """A DOCX whose ``word/document.xml`` inflates to about ``expanded`` bytes."""
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        b"<w:body><w:p><w:r><w:t>"
    )
    tail = b"</w:t></w:r></w:p></w:body></w:document>"
    return _text_bomb(_docx(), "word/document.xml", head, tail, expanded)


def pptx_bomb(expanded: int) -> bytes:
    """A PPTX whose first slide inflates to about ``expanded`` bytes of text."""
    head = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        b'<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        b'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">'
        b"<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id='1' name=''/><p:cNvGrpSpPr/><p:nvPr/>"
        b"</p:nvGrpSpPr><p:grpSpPr/><p:sp><p:nvSpPr><p:cNvPr id='2' name='t'/><p:cNvSpPr/>"
        b"<p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:t>"
    )
    tail = b"</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
    return _text_bomb(_pptx(), "ppt/slides/slide1.xml", head, tail, expanded)


def docx_with_parts(count: int) -> bytes:
    """A DOCX holding ``count`` extra (empty) parts."""
    package = _docx()
    source = zipfile.ZipFile(io.BytesIO(package))
    document = source.read("word/document.xml")
    return _swap_part(package, "word/document.xml", iter([document]), extra=count)


def docx_with_a_bzip2_part() -> bytes:
    """A DOCX whose ``word/document.xml`` is compressed with bzip2 (not deflate)."""
    source = zipfile.ZipFile(io.BytesIO(_docx()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            method = zipfile.ZIP_BZIP2 if info.filename == "word/document.xml" else None
            target.writestr(info.filename, source.read(info), compress_type=method)
    return out.getvalue()


def lying_sizes(package: bytes, part: str, declared: int) -> bytes:
    """``package`` with ``part``'s uncompressed size declared as ``declared`` in its
    local and central headers (the data, and so the real expansion, unchanged)."""
    data = bytearray(package)
    name = part.encode()
    # Central directory entry: the uncompressed size is at offset 24, the name at 46.
    at = data.find(_CENTRAL_HEADER)
    while at != -1:
        length = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46 : at + 46 + length]) == name:
            struct.pack_into("<I", data, at + 24, declared)
            local = struct.unpack_from("<I", data, at + 42)[0]
            # Local header: the uncompressed size is at offset 22.
            assert bytes(data[local : local + 4]) == _LOCAL_HEADER
            struct.pack_into("<I", data, local + 22, declared)
            return bytes(data)
        at = data.find(_CENTRAL_HEADER, at + 4)
    raise ValueError(f"{part} is not in the package")


# -- HTML ------------------------------------------------------------------------------


def deep_html(depth: int) -> bytes:
    """Text nested ``depth`` elements deep."""
    return b"<html><body>" + b"<div>" * depth + b"deep text" + b"</div>" * depth + b"</body></html>"


def wide_table_html(columns: int, rows: int) -> bytes:
    """A page whose one table is ``columns`` wide and ``rows`` long."""
    row = b"<tr>" + b"".join(b"<td>c%d</td>" % n for n in range(columns)) + b"</tr>"
    intro = b"<p>" + b"A table of measurements follows. " * 10 + b"</p>"
    return b"<html><body>" + intro + b"<table>" + row * rows + b"</table></body></html>"


def many_elements_html(count: int) -> bytes:
    """A page of ``count`` tiny paragraphs."""
    return b"<html><body>" + b"<p>word</p>" * count + b"</body></html>"


# -- PDF -------------------------------------------------------------------------------


def _deflated(chunks: Iterator[bytes]) -> bytes:
    import zlib

    packer = zlib.compressobj(9)
    return b"".join(packer.compress(chunk) for chunk in chunks) + packer.flush()


def pdf_flate_bomb(expanded: int) -> bytes:
    """One page whose FlateDecode content stream inflates to about ``expanded`` bytes
    (a line of text, then spaces)."""
    from pdfmaker import one_page_pdf

    head = b"BT /F1 12 Tf 72 700 Td (A page of text long enough to count) Tj ET\n"
    body = _deflated(_paragraph_stream(head, b"", expanded, b" "))
    return one_page_pdf(body, extra=b"/Filter /FlateDecode")


def pdf_operators_bomb(count: int) -> bytes:
    """One page drawing ``count`` one-letter text runs (deflated: a few kilobytes)."""
    from pdfmaker import one_page_pdf

    runs = _paragraph_stream(b"BT /F1 12 Tf 72 700 Td ", b"ET", count * 7, b"(a) Tj ")
    return one_page_pdf(_deflated(runs), extra=b"/Filter /FlateDecode")


def pdf_nested_forms(depth: int) -> bytes:
    """One page drawing a form that draws the next form twice, ``depth`` deep: the last
    form's text is drawn 2**depth times."""
    from pdfmaker import one_page_pdf, pdf_stream

    forms = []
    first = 6
    for level in range(depth):
        number = first + level
        if level == depth - 1:
            body = b"BT /F1 12 Tf 72 700 Td (deep text) Tj ET"
            resources = b"/Resources << /Font << /F1 4 0 R >> >>"
        else:
            body = b"/X0 Do /X0 Do"
            resources = b"/Resources << /XObject << /X0 %d 0 R >> >>" % (number + 1)
        forms.append(
            pdf_stream(
                body, extra=b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources
            )
        )
    return one_page_pdf(b"/X0 Do /X0 Do", more=forms)


def pdf_many_pages(count: int) -> bytes:
    """``count`` pages, each one line of text (all sharing one content stream)."""
    from pdfmaker import pdf_page, pdf_stream, raw_pdf

    kids = b" ".join(b"%d 0 R" % (5 + n) for n in range(count))
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            pdf_stream(b"BT /F1 12 Tf 72 700 Td (A page of text long enough to count) Tj ET"),
            *(
                pdf_page(contents=b"4 0 R").replace(b"/F1 4 0 R", b"/F1 3 0 R")
                for _ in range(count)
            ),
        ]
    )
