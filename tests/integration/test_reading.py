"""Reading a paper through and checking quotations, on the fixture PDFs and built ones."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from doiget.config import load_settings
from doiget.documents.document import Document, DocumentCache, build
from doiget.documents.pdftext import Line
from doiget.errors import DoigetError, ErrorCode
from doiget.models import Work
from doiget.papers.store import Store
from doiget.reading import contracts as c
from doiget.reading.reader import Paper, Searchable, check_quote, reading
from doiget.reading.service import Reader
from doiget.refs import parse_ref
from quotecases import BUILT_PAGES, FIXTURES, cases, documents, tally

from pdfmaker import write_lines_pdf, write_scanned_pdf, write_sectioned_pdf

PAPER = Paper("10.1234/x", "doi_10.1234_x", None)


def _pdfs(tmp_path: Path) -> list[Path]:
    built = [
        write_sectioned_pdf(tmp_path / "sectioned.pdf").path,
        write_lines_pdf(tmp_path / "lines.pdf", BUILT_PAGES),
    ]
    return [*sorted(FIXTURES.glob("*.pdf")), *built]


def _read_all(document: Document, max_chars: int, **scope: str) -> list[c.PaperReading]:
    pieces: list[c.PaperReading] = []
    cursor = None
    while True:
        request = c.ReadPaper(ref="x", max_chars=max_chars, cursor=cursor, **scope)
        piece = reading(PAPER, document, request)
        pieces.append(piece)
        cursor = piece.cursor
        if cursor is None:
            return pieces


@pytest.mark.parametrize("max_chars", [500, 1733, 8000])
def test_reading_every_section_or_every_page_gives_back_the_whole_text(
    tmp_path: Path, max_chars: int
) -> None:
    for path in _pdfs(tmp_path):
        document = DocumentCache().load(path)
        whole = document.whole_text()
        by_section: list[str] = []
        for section in document.top:
            pieces = _read_all(document, max_chars, section=section.number)
            first, last = section.start, section.end - 1
            span = [document.lines[first].page, document.lines[last].page]
            for piece in pieces:
                assert piece.text is not None and len(piece.text) <= max_chars
                assert piece.pages and span[0] <= piece.pages[0] <= piece.pages[1] <= span[1]
                assert piece.covers and piece.covers[0].number.startswith(section.number)
            by_section += [piece.text or "" for piece in pieces]
        assert "".join(by_section) == whole, path.name
        by_page = [
            p.text or "" for p in _read_all(document, max_chars, pages=f"1-{document.pages}")
        ]
        assert "".join(by_page) == whole, path.name
        one_by_one = [
            piece.text or ""
            for page in range(1, document.pages + 1)
            for piece in _read_all(document, max_chars, pages=str(page))
        ]
        assert "".join(one_by_one) == whole, path.name


def test_a_section_reads_with_its_subsections_and_says_which_it_covers(tmp_path: Path) -> None:
    made = write_sectioned_pdf(tmp_path / "s.pdf")
    document = DocumentCache().load(made.path)
    outline = reading(PAPER, document, c.ReadPaper(ref="x"))
    titles = {s.title: s for s in outline.sections or []}
    for heading, page in made.heading_pages.items():
        assert titles[heading].pages[0] == page, heading
    related = titles["2 Related Work"]
    assert [
        s.title for s in outline.sections or [] if s.number.startswith(related.number + ".")
    ] == [
        "2.1 Dense Retrieval",
        "2.2 Sparse Retrieval",
    ]
    assert related.pages == [2, 3]
    assert outline.references == 5
    piece = reading(PAPER, document, c.ReadPaper(ref="x", section="2 related  work"))
    assert [s.title for s in piece.covers or []] == [
        "2 Related Work",
        "2.1 Dense Retrieval",
        "2.2 Sparse Retrieval",
    ]
    for heading, (marker, _, _) in made.markers.items():
        if heading.startswith("2"):
            assert marker in (piece.text or "")


def test_the_outline_lists_captions_and_the_reference_count() -> None:
    document = DocumentCache().load(FIXTURES / "acl-2023.eacl-main.121-longeval.pdf")
    outline = reading(PAPER, document, c.ReadPaper(ref="x"))
    assert outline.page_count == 20 and outline.references == 66
    figures = {f.label: f for f in outline.figures or []}
    tables = {t.label: t for t in outline.tables or []}
    assert len(figures) == 9 and len(tables) == 11
    assert figures["Figure 1"].page == 2 and figures["Figure 1"].caption.startswith("Figure 1:")
    assert "Table 4" in tables and tables["Table 4"].page == 7  # not "Table 4, we find ..."
    assert outline.integrity is None and "integrity" not in outline.model_dump(exclude_unset=True)


def test_an_unknown_section_lists_the_outline_and_a_foreign_cursor_is_refused() -> None:
    document = DocumentCache().load(FIXTURES / "openquestion-jose-paper.pdf")
    with pytest.raises(DoigetError) as unknown:
        reading(PAPER, document, c.ReadPaper(ref="x", section="Methods"))
    assert unknown.value.code is ErrorCode.INVALID_REF
    assert "2.2 Analysis of survey data" in unknown.value.message
    first = reading(PAPER, document, c.ReadPaper(ref="x", section="2", max_chars=500))
    assert first.cursor is not None
    for wrong in (
        c.ReadPaper(ref="x", section="3", max_chars=500, cursor=first.cursor),
        c.ReadPaper(ref="x", pages="1-4", max_chars=500, cursor=first.cursor),
        c.ReadPaper(ref="x", section="2", max_chars=500, cursor=first.cursor[:-1] + "9999"),
        c.ReadPaper(ref="x", section="2", max_chars=500, cursor="nonsense"),
        c.ReadPaper(ref="x", pages="5"),
        c.ReadPaper(ref="x", pages="3-2"),
        c.ReadPaper(ref="x", section="2", pages="3"),
    ):
        with pytest.raises(DoigetError) as refused:
            reading(PAPER, document, wrong)
        assert refused.value.code is ErrorCode.INVALID_REF


def test_a_line_longer_than_a_piece_is_cut_between_words() -> None:
    words = " ".join(f"word{n}" for n in range(400))
    lines = [Line("Abstract", 1, 14.0, True), Line(words, 1, 10.0, False)]
    document = build(lines, 1, "0" * 64)
    pieces = _read_all(document, 500, section="1")
    assert len(pieces) > 4
    assert "".join(p.text or "" for p in pieces) == document.whole_text()
    assert all((p.text or "").endswith((" ", "\n")) for p in pieces)


def test_quotes_are_found_on_their_page_and_near_misses_are_not(tmp_path: Path) -> None:
    docs = documents(tmp_path)
    result = tally(docs, cases(docs, every=4))
    print(
        f"{result.tried} sentences, {result.right_page} found on the right page; "
        f"{result.near_tried} near misses, {len(result.near_found)} reported found; "
        f"{result.absent_tried} absent, {len(result.absent_found)} reported found"
    )
    assert result.tried > 120 and result.missed == []
    assert result.near_tried > 120 and result.near_found == []
    assert result.near_located == result.near_tried
    assert result.absent_tried > 100 and result.absent_found == []


def test_typesetting_differences_do_not_hide_a_quote() -> None:
    lines = [
        Line("Abstract", 1, 14.0, True),
        Line("The ﬁrst ﬂow of “fresh” water\u00a0—\u00a0as we saw\u00ad", 1, 10.0, False),
        Line("ﬁeld data show\u2014rose by 10\u201320 per cent in the experi-", 1, 10.0, False),
        Line("ment that followed the thaw.", 2, 10.0, False),
    ]
    searchable = Searchable(build(lines, 2, "1" * 64))
    typed = (
        'The first flow of "fresh" water - as we saw field data show - rose by 10-20 per '
        "cent in the experiment that followed"
    )
    found = check_quote(PAPER, searchable, typed)
    assert found.found and found.page == 1 and found.pages == [1, 2]
    assert found.section == c.SectionRef(number="1", title="Abstract")
    lower = check_quote(PAPER, searchable, typed.replace("The first", "the first"))
    assert not lower.found and lower.similarity > 0.9  # case counts
    changed = check_quote(PAPER, searchable, typed.replace("rose", "fell"))
    assert not changed.found and changed.page == 1


def _store_entry(store: Store, ref_text: str, pdf: Path | None) -> None:
    ref = parse_ref(ref_text)
    target = None
    if pdf is not None:
        target = store.pdf_path(ref)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(pdf, target)
    store.write_metadata(
        ref, Work(source="crossref", title="A paper"), doiget_fields={}, pdf=target
    )


def test_the_reader_finds_stored_papers_by_ref_or_key_and_says_how_to_get_a_pdf(
    tmp_path: Path,
) -> None:
    settings = load_settings({"DOIGET_STORE_ROOT": str(tmp_path / "store")})
    reader = Reader(settings)
    _store_entry(reader.store, "10.1234/jose", FIXTURES / "openquestion-jose-paper.pdf")
    _store_entry(reader.store, "10.1234/only-metadata", None)
    write_scanned_pdf(tmp_path / "scan.pdf")
    _store_entry(reader.store, "10.1234/scan", tmp_path / "scan.pdf")

    async def main() -> None:
        by_ref = await reader.read(c.ReadPaper(ref="https://doi.org/10.1234/JOSE"))
        by_key = await reader.read(c.ReadPaper(ref="doi_10.1234_jose"))
        assert by_ref == by_key and by_ref.title == "A paper" and by_ref.references == 6
        for ref, words in (
            ("10.1234/only-metadata", "doiget_fetch_paper"),
            ("10.1234/absent", "doiget_fetch_paper"),
            ("10.1234/scan", "no text layer"),
        ):
            with pytest.raises(DoigetError) as failed:
                await reader.read(c.ReadPaper(ref=ref))
            assert failed.value.code is ErrorCode.NOT_FOUND and words in failed.value.message
        quote = "All code blocks are removed and the interactivity of the charts is maintained."
        found = await reader.check(c.CheckQuote(quote=quote, ref="10.1234/jose"))
        assert found.found and found.page == 3 and found.ref == "10.1234/jose"

    anyio.run(main)


def test_a_parsed_document_is_kept_until_its_file_changes(tmp_path: Path) -> None:
    cache = DocumentCache()
    path = tmp_path / "paper.pdf"
    shutil.copyfile(FIXTURES / "openquestion-jose-paper.pdf", path)
    first = cache.load(path)
    assert cache.load(path) is first
    write_lines_pdf(path, BUILT_PAGES)
    assert cache.load(path) is not first and cache.load(path).pages == 2


@pytest.mark.parametrize(
    ("quote", "refused"),
    [
        ("\ufdfa" * 112, True),  # one character, 18 once normalised: 2,016
        ("\ufdfa" * 600, True),
        ("\u3300" * 501, True),  # squared katakana, 4 each: 2,004
        ("\ufb03" * 667, True),  # the ffi ligature: 2,001
        ("\u2474" * 667, True),  # parenthesised digit one: 2,001
        ("\u00bd" * 700, True),  # one half: 1, the fraction slash, 2
        ("\u3300" * 500, False),  # exactly 2,000
        ("\uff21" * 2000, False),  # full-width letters: one each
        ("e\u0301" * 1000, False),  # a letter and its combining accent compose: 1,000
        ("a\u20dd" * 1000, False),  # a combining mark that composes with nothing: 2,000
    ],
)
def test_the_quote_limit_holds_for_the_normalised_text(quote: str, refused: bool) -> None:
    document = DocumentCache().load(FIXTURES / "openquestion-jose-paper.pdf")
    if not refused:
        assert not check_quote(PAPER, Searchable(document), quote).found
        return
    with pytest.raises(DoigetError) as failed:
        check_quote(PAPER, Searchable(document), quote)
    assert failed.value.code is ErrorCode.INVALID_REF
    assert "normalised" in failed.value.message and "2000" in failed.value.message


def test_a_long_quote_is_aligned_with_bounded_work_and_found_where_it_nearly_is() -> None:
    """A quotation longer than the stretch-by-stretch limit, one word changed and a
    clause dropped, is placed where it stands with the score every stretch would give;
    one like nothing in the paper costs a bounded number of comparisons."""
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Indel

    from doiget.reading import quote as q

    searchable = Searchable(DocumentCache().load(FIXTURES / "acl-2023.eacl-main.121-longeval.pdf"))
    key = searchable.normal.key
    for size, start in ((400, 1500), (1000, 30_000), (2000, key.rfind(" ", 0, 60_000) + 1)):
        near = key[start : start + size]
        near = near[:100] + near[130 : size // 2] + "lorem" + near[size // 2 + 5 :]
        score, found, _ = q.closest(near, key)
        assert abs(found - start) <= 2
        assert score == pytest.approx(fuzz.partial_ratio(near, key) / 100)
    compared = 0
    similarity = Indel.normalized_similarity

    def counted(*args: Any, **kwargs: Any) -> float:
        nonlocal compared
        compared += 1
        return similarity(*args, **kwargs)

    unlike = ("zq xv " * 400)[:2000]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Indel, "normalized_similarity", counted)
        q.closest(unlike, key)
    step = 2 * (2000 // 4) // q.COARSE_STEPS  # between coarse places; then walked
    assert 0 < compared <= q.PLACES * (q.COARSE_STEPS + 2 + 2 * step)
