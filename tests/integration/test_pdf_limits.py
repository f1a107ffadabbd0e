"""A PDF PDFium cannot read, or one built to cost far more to read than its size, is
that file's own refusal (UnusableDocument, then each caller's coded error), never an
exception that ends the call; PDFium reads in a child process under limits, so a bomb
costs that child only."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bombs import pdf_flate_bomb, pdf_many_pages, pdf_nested_forms, pdf_operators_bomb
from doiget.documents.document import DocumentCache
from doiget.documents.pdftext import PAGES_MAX, UnusableDocument, pdf_text, read_pdf
from doiget.errors import DoigetError, ErrorCode
from doiget.papers.pdfclues import read_clues
from doiget.verify.manuscript import reference_list

from pdfmaker import broken_pdf

BROKEN = ["kids-loop", "parent-loop", "count-lies", "page-is-pages", "truncated"]
# Seconds a bomb may take to be refused: the child is stopped at its memory limit in a
# few seconds; read in the server's own process, these took 10 s to minutes.
BOMB_SECONDS = 45.0


@pytest.mark.parametrize("kind", BROKEN)
def test_a_pdf_pdfium_cannot_read_is_refused_by_every_reader(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"{kind}.pdf"
    path.write_bytes(broken_pdf(kind))
    with pytest.raises(UnusableDocument) as read:
        read_pdf(path)
    assert read.value.reason == "unreadable" and path.name in read.value.message
    with pytest.raises(UnusableDocument):
        DocumentCache().load(path)  # read, quote, passages
    with pytest.raises(UnusableDocument):
        read_clues(path.read_bytes(), path.name)  # add
    with pytest.raises(DoigetError) as verified:
        reference_list(path.read_bytes(), path.name)  # verify x.pdf
    assert verified.value.code == ErrorCode.INVALID_REF


@pytest.mark.parametrize(
    "build",
    [
        lambda: pdf_flate_bomb(1 << 30),
        lambda: pdf_operators_bomb(3_000_000),
        lambda: pdf_operators_bomb(400_000),  # within memory, over a page's text
        lambda: pdf_nested_forms(24),
        lambda: pdf_many_pages(PAGES_MAX + 1),
    ],
    ids=["flate-1GiB", "operators-3M", "operators-400k", "nested-forms", "too-many-pages"],
)
def test_a_pdf_bomb_is_refused_as_too_large(build: object) -> None:
    data = build()  # type: ignore[operator]
    began = time.perf_counter()
    with pytest.raises(UnusableDocument) as refused:
        pdf_text(data, "bomb.pdf")
    assert time.perf_counter() - began < BOMB_SECONDS
    assert refused.value.reason == "too_large" and "bomb.pdf" in refused.value.message


def test_a_long_document_within_the_limits_is_read_whole() -> None:
    text = pdf_text(pdf_many_pages(400), "book.pdf")
    assert text.pages == 400 and len(text.lines) == 400
