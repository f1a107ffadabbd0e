"""The PDF generators in ``pdfmaker`` write what they promise."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from pdfmaker import (
    SectionedPdf,
    write_blank_pdf,
    write_corrupt_pdf,
    write_scanned_pdf,
    write_sectioned_pdf,
)


def _texts(path: Path) -> list[str]:
    doc = pdfium.PdfDocument(path)
    try:
        return [page.get_textpage().get_text_range() for page in doc]
    finally:
        doc.close()


@pytest.fixture
def sectioned(tmp_path: Path) -> SectionedPdf:
    return write_sectioned_pdf(tmp_path / "sectioned.pdf")


def test_sectioned_pages_and_headings(sectioned: SectionedPdf) -> None:
    texts = _texts(sectioned.path)
    assert len(texts) == sectioned.pages >= 4
    assert sectioned.heading_pages["3 Method"] >= 3
    assert sectioned.heading_pages["5 Conclusion"] >= 4
    assert list(sectioned.heading_pages) == [
        "Abstract",
        "1 Introduction",
        "2 Related Work",
        "2.1 Dense Retrieval",
        "2.2 Sparse Retrieval",
        "3 Method",
        "4 Results",
        "5 Conclusion",
        "References",
    ]
    for heading, page in sectioned.heading_pages.items():
        assert heading in texts[page - 1].splitlines()


def test_sectioned_markers_sit_on_their_pages(sectioned: SectionedPdf) -> None:
    texts = _texts(sectioned.path)
    assert set(sectioned.markers) == set(sectioned.heading_pages)
    assert sectioned.markers["2.1 Dense Retrieval"][2] == ["2 Related Work", "2.1 Dense Retrieval"]
    assert sectioned.markers["3 Method"][2] == ["3 Method"]
    for marker, page, path in sectioned.markers.values():
        assert path[-1] in sectioned.heading_pages
        found = [n for n, text in enumerate(texts, 1) if marker in text]
        assert found == [page]


def test_sectioned_fonts_and_determinism(sectioned: SectionedPdf, tmp_path: Path) -> None:
    doc = pdfium.PdfDocument(sectioned.path)
    try:
        textpage = doc[0].get_textpage()
        text = textpage.get_text_range()
        size_at = {
            needle: pdfium_c.FPDFText_GetFontSize(textpage, text.index(needle))
            for needle in (sectioned.title, "1 Introduction", "Lake ice supports")
        }
    finally:
        doc.close()
    assert size_at[sectioned.title] > size_at["1 Introduction"] > size_at["Lake ice supports"]
    again = write_sectioned_pdf(tmp_path / "again.pdf")
    assert again.path.read_bytes() == sectioned.path.read_bytes()


def test_scanned_has_an_image_and_no_text(tmp_path: Path) -> None:
    path = tmp_path / "scanned.pdf"
    write_scanned_pdf(path)
    doc = pdfium.PdfDocument(path)
    try:
        assert len(doc) == 1
        page = doc[0]
        kinds = [obj.type for obj in page.get_objects()]
        assert pdfium_c.FPDF_PAGEOBJ_IMAGE in kinds
        assert pdfium_c.FPDF_PAGEOBJ_TEXT not in kinds
        assert page.get_textpage().count_chars() == 0
    finally:
        doc.close()


def test_blank_has_one_empty_page(tmp_path: Path) -> None:
    path = tmp_path / "blank.pdf"
    write_blank_pdf(path)
    doc = pdfium.PdfDocument(path)
    try:
        assert len(doc) == 1
        page = doc[0]
        assert list(page.get_objects()) == []
        assert page.get_textpage().count_chars() == 0
    finally:
        doc.close()


def test_corrupt_fails_to_open(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.pdf"
    write_corrupt_pdf(path)
    assert path.read_bytes().startswith(b"%PDF-1.7")
    with pytest.raises(pdfium.PdfiumError):
        pdfium.PdfDocument(path)
