"""PDF, DOCX and PPTX text, and recognising documents by their first bytes."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

import docx
import pptx
import pytest
from pptx.util import Inches

from doiget.errors import DoigetError
from doiget.web.failure import Kind, kind_of
from doiget.web.scrape.documents import (
    DOCX_TYPE,
    PPTX_TYPE,
    extract_docx,
    extract_pdf,
    extract_pptx,
    pipe_table,
    sniff_document,
)

from pdfmaker import write_corrupt_pdf

PDF = Path(__file__).parents[1] / "fixtures" / "pdf" / "openquestion-jose-paper.pdf"
CREATED = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.UTC)


def _docx_bytes() -> bytes:
    document = docx.Document()
    document.add_heading("Field Report", level=0)
    document.add_paragraph("An opening paragraph about the survey.")
    document.add_heading("Methods", level=1)
    document.add_heading("Sampling", level=2)
    document.add_paragraph("Water was sampled at dawn.")
    document.add_paragraph("first point", style="List Bullet")
    document.add_paragraph("first step", style="List Number")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Site", "pH"
    table.cell(1, 0).text, table.cell(1, 1).text = "North|East", "7.2"
    document.add_paragraph("After the table.")
    properties = document.core_properties
    properties.title, properties.author, properties.created = "Field Report", "Ada Lee", CREATED
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _pptx_bytes() -> bytes:
    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "Quarterly results"
    first.placeholders[1].text = "Revenue grew\nCosts fell"
    second = presentation.slides.add_slide(presentation.slide_layouts[5])
    second.shapes.title.text = "By region"
    frame = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1))
    cells = frame.table
    cells.cell(0, 0).text, cells.cell(0, 1).text = "Region", "Sales"
    cells.cell(1, 0).text, cells.cell(1, 1).text = "North", "12"
    group = second.shapes.add_group_shape()
    box = group.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(1))
    box.text_frame.text = "Grouped note"
    presentation.slides.add_slide(presentation.slide_layouts[6])  # blank
    properties = presentation.core_properties
    properties.title, properties.author, properties.created = "Q3", "Bo Chen", CREATED
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def _zip_bytes(names: list[str]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in names:
            archive.writestr(name, "x")
    return out.getvalue()


def _content_error(error: pytest.ExceptionInfo[DoigetError], kind: str) -> None:
    assert kind_of(error.value) is Kind.CONTENT
    assert f"could not be read as a {kind}" in error.value.message


# -- recognising ----------------------------------------------------------------------


def test_sniff_pdf_by_magic_whatever_the_content_type() -> None:
    assert sniff_document("text/html", "/page", b"%PDF-1.7\n...") == "pdf"
    assert sniff_document("", "", b"\n" * 500 + b"%PDF-1.4") == "pdf"
    assert sniff_document("application/pdf", "/x.pdf", b"\n" * 1100 + b"%PDF-1.4") is None
    assert sniff_document("application/pdf", "/x.pdf", b"<html>") is None


def test_sniff_office_documents_from_their_entries() -> None:
    docx_head, pptx_head = _docx_bytes()[:4096], _pptx_bytes()[:4096]
    assert sniff_document(DOCX_TYPE, "/report", docx_head) == "docx"
    assert sniff_document("application/octet-stream", "/download?id=3", docx_head) == "docx"
    assert sniff_document(f"{PPTX_TYPE}; charset=binary", "/deck", pptx_head) == "pptx"
    assert sniff_document("application/octet-stream", "/file", pptx_head) == "pptx"
    # The entries outrank a wrong claim.
    assert sniff_document(PPTX_TYPE, "/x.pptx", docx_head) == "docx"


def test_sniff_office_needs_the_zip_to_confirm_it() -> None:
    plain = _zip_bytes(["notes.txt", "data/values.csv"])
    assert sniff_document(DOCX_TYPE, "/x.docx", plain) is None
    assert sniff_document("application/zip", "/x.zip", plain) is None
    # A package manifest but no part seen yet: the claim decides.
    manifest_only = _zip_bytes(["[Content_Types].xml", "_rels/.rels"])
    assert sniff_document("application/octet-stream", "/slides.pptx", manifest_only) == "pptx"
    assert sniff_document("application/octet-stream", "/file", manifest_only) is None
    # word/ parts without a manifest count only when the claim agrees.
    parts = _zip_bytes(["word/document.xml"])
    assert sniff_document(DOCX_TYPE, "/x", parts) == "docx"
    assert sniff_document("application/zip", "/x", parts) is None


def test_sniff_other_bodies() -> None:
    assert sniff_document("text/html", "/", b"<!doctype html><html>") is None
    assert sniff_document(DOCX_TYPE, "/x.docx", b"") is None
    assert sniff_document(DOCX_TYPE, "/x.docx", b"PK\x03\x04") is None  # header cut short


# -- PDF -------------------------------------------------------------------------------


def test_pdf_text_and_metadata() -> None:
    document = extract_pdf(PDF.read_bytes())
    assert document.pages == 4
    assert document.title == (
        "OpenQuestion: A survey building and reporting platform written in Python"
    )
    assert document.author is None  # the metadata field is empty
    assert document.date == "2021-03-29"
    assert document.text.startswith("OpenQuestion: A survey building and reporting platform")
    assert "\r" not in document.text
    assert document.text.count("\n\n") >= 3  # pages are separated by blank lines


def test_corrupt_pdf_is_a_content_failure(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.pdf"
    write_corrupt_pdf(path)
    with pytest.raises(DoigetError) as failed:
        extract_pdf(path.read_bytes())
    _content_error(failed, "PDF")


# -- DOCX ------------------------------------------------------------------------------


def test_docx_markdown_and_properties() -> None:
    document = extract_docx(_docx_bytes())
    assert document.text.split("\n\n") == [
        "# Field Report",
        "An opening paragraph about the survey.",
        "# Methods",
        "## Sampling",
        "Water was sampled at dawn.",
        "- first point",
        "1. first step",
        "| Site | pH |\n|---|---|\n| North\\|East | 7.2 |",
        "After the table.",
    ]
    assert (document.title, document.author, document.date) == (
        "Field Report",
        "Ada Lee",
        "2024-05-06",
    )
    assert document.pages is None


def test_corrupt_docx_is_a_content_failure() -> None:
    with pytest.raises(DoigetError) as failed:
        extract_docx(b"PK\x03\x04 this is not really a zip")
    _content_error(failed, "DOCX")
    with pytest.raises(DoigetError) as failed:
        extract_docx(_zip_bytes(["notes.txt"]))
    _content_error(failed, "DOCX")


# -- PPTX ------------------------------------------------------------------------------


def test_pptx_one_section_per_slide() -> None:
    document = extract_pptx(_pptx_bytes())
    assert document.text == (
        "## Slide 1\n\nQuarterly results\n\nRevenue grew\nCosts fell\n\n"
        "## Slide 2\n\nBy region\n\n| Region | Sales |\n|---|---|\n| North | 12 |\n\n"
        "Grouped note\n\n"
        "## Slide 3"
    )
    assert (document.title, document.author, document.date, document.pages) == (
        "Q3",
        "Bo Chen",
        "2024-05-06",
        3,
    )


def test_corrupt_pptx_is_a_content_failure() -> None:
    with pytest.raises(DoigetError) as failed:
        extract_pptx(b"\x00\x01\x02 garbage")
    _content_error(failed, "PPTX")


def test_pipe_table_pads_short_rows() -> None:
    assert pipe_table([]) == ""
    assert pipe_table([["a", "b"], ["1"]]) == "| a | b |\n|---|---|\n| 1 |  |"
    assert pipe_table([["multi\nline  cell"]]) == "| multi line cell |\n|---|"
