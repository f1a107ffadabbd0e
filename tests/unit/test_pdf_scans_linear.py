"""The scanners of a PDF's text and bytes cost one pass over what they read: a file
built to make a scan start over at every line or every opener is read as fast as any
other (the bounds below are what a linear scan meets on a loaded machine many times
over; a scan that starts over takes minutes)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from doiget.documents.bibliography import reference_entries
from doiget.documents.debris import NUMBER, is_number_run
from doiget.documents.pdftext import Line
from doiget.documents.sections import SectionedLine, sectioned
from doiget.documents.sentences import sentences, split_sentences
from doiget.papers.pdfclues import XMP_PACKET_MAX, _xmp_ids, read_clues

from pdfmaker import write_paper_pdf

# Seconds a linear pass over these inputs takes many times over; the quadratic scans
# took 12 s (reference lines) and 14 s (XMP openers) on the smallest variant.
BOUND = 3.0
DOI = "10.1073/pnas.0000001"
PACKET = (
    b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><prism:doi>' + DOI.encode() + b"</prism:doi></x:xmpmeta>"
)


def _timed(work: object) -> tuple[object, float]:
    began = time.perf_counter()
    result = work()  # type: ignore[operator]
    return result, time.perf_counter() - began


def _list_of(texts: list[str], *, x: float = 50.0) -> list[Line]:
    """A reference list: its heading, then one 10-point line per text, 60 a page."""
    lines = [Line("References", 1, 14.0, True, x, 800.0)]
    for n, text in enumerate(texts):
        lines.append(Line(text, 1 + n // 60, 10.0, False, x, 760.0 - (n % 60) * 12))
    return lines


@pytest.mark.parametrize(
    "line",
    [
        # No year anywhere: the splitter once searched the whole entry for one per line.
        "Smith, J. on the uniform lines of a list that never ends",
        # A year on every line, but no line closes an entry.
        "Smith, J. 2019 on the uniform lines of a list that never ends and",
        # Lines that close, but none opens with a name.
        "and the uniform lines of a list that never ends, 2019.",
        # A link broken at every line's end: every line is joined to the one before.
        "https://example.org/a/very/long/path/that/is/broken/at/every/line/",
    ],
    ids=["no-year", "never-closed", "no-author", "broken-links"],
)
def test_a_long_list_of_uniform_lines_is_split_in_one_pass(line: str) -> None:
    entries, took = _timed(lambda: reference_entries(_list_of([line] * 8000)))
    assert took < BOUND, f"{took:.1f} s for 8,000 lines"
    assert entries  # the lines are all there, in however many entries


def test_many_columns_on_one_page_are_found_in_one_pass() -> None:
    # Every line at its own column (a PDF may place text anywhere): each line's column
    # is looked up, never found by trying every column.
    lines = [Line("References", 1, 14.0, True, 0.0, 800.0)]
    lines += [Line(f"Smith, J. {n} 2019.", 1, 10.0, False, n * 100.0, 700.0) for n in range(20_000)]
    entries, took = _timed(lambda: reference_entries(lines))
    assert took < BOUND, f"{took:.1f} s"
    assert len(entries) == 20_000


def test_a_link_broken_over_lines_is_still_joined_without_a_space() -> None:
    lines = _list_of(
        [
            "Smith, J. 2019. A paper. https://doi.org/10.1000/",
            "abc.def. Jones, K. 2020. Another paper.",
        ]
    )
    (entry,) = reference_entries(lines)
    assert "https://doi.org/10.1000/abc.def." in entry.text


@pytest.mark.parametrize("size", [160_000, 1_000_000])
@pytest.mark.parametrize(
    "unit",
    [b"<x:xmpmeta ", b"<x:xmpmeta></x:xmpmet", b"<x:xmpmeta" + b" " * 100],
    ids=["openers", "near-closers", "spaced-openers"],
)
def test_unclosed_xmp_openers_are_passed_in_one_scan(size: int, unit: bytes) -> None:
    # No closer follows them: the packet search once ran to the end from each one.
    data = b"%PDF-1.4\n" + PACKET + unit * (size // len(unit))
    found, took = _timed(lambda: _xmp_ids(data))
    assert took < BOUND, f"{took:.1f} s for {size} bytes"
    assert found == [DOI]  # the real packet before them is still read


def test_a_packet_is_read_from_its_last_opener_and_every_packet_counts() -> None:
    other = PACKET.replace(DOI.encode(), b"10.1073/pnas.0000002")
    data = b"<x:xmpmeta " * 10 + PACKET + b" filler " + other
    assert _xmp_ids(data) == [DOI, "10.1073/pnas.0000002"]


def test_a_packet_longer_than_any_real_one_is_not_read() -> None:
    padded = PACKET.replace(b"<prism:doi>", b" " * XMP_PACKET_MAX + b"<prism:doi>")
    assert _xmp_ids(padded) == []
    assert _xmp_ids(padded + PACKET) == [DOI]


def test_a_pdf_full_of_unclosed_openers_is_identified_quickly(tmp_path: Path) -> None:
    pdf = write_paper_pdf(tmp_path / "p.pdf", "A Title Long Enough To Count", ["Ann Smith"])
    data = pdf.read_bytes() + PACKET + b"<x:xmpmeta " * 15_000
    clues, took = _timed(lambda: read_clues(data, "p.pdf"))
    assert took < BOUND * 2, f"{took:.1f} s"
    assert DOI in clues.metadata_ids  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "text",
    ["A. " * 40_000, "J. R. R. et al. " * 10_000, "Fig. Eq. vs. e.g. " * 10_000],
    ids=["initials", "names", "abbreviations"],
)
def test_a_paragraph_of_abbreviations_is_split_in_one_pass(text: str) -> None:
    spans, took = _timed(lambda: split_sentences(text + "End."))
    assert took < BOUND, f"{took:.1f} s"
    assert spans  # the text is all there


def test_abbreviations_still_do_not_end_sentences() -> None:
    text = "We use e.g. this. And Dr. Who et al. said so. Then X. Y. Z. Done."
    assert [text[a:b].strip() for a, b in split_sentences(text)] == [
        "We use e.g. this.",
        "And Dr. Who et al. said so.",
        "Then X. Y. Z. Done.",
    ]


def test_each_sentence_of_a_long_paragraph_finds_its_page_at_once() -> None:
    lines = [
        SectionedLine(
            Line(f"Line {n} says one thing. It says another", 1 + n // 50, 10.0, False), ()
        )
        for n in range(20_000)
    ]
    found, took = _timed(lambda: sentences(lines))
    assert took < BOUND, f"{took:.1f} s"
    assert found[0].first_page == 1 and found[-1].last_page == 400  # type: ignore[index]


@pytest.mark.parametrize(
    "token", ["1" * 50_000 + "x", "1." * 25_000 + "x", "(" + "9," * 25_000 + "a"]
)
def test_a_long_token_that_is_not_a_number_fails_at_once(token: str) -> None:
    matched, took = _timed(lambda: NUMBER.fullmatch(token))
    assert took < BOUND, f"{took:.1f} s"
    assert matched is None
    assert not is_number_run(f"{token} word")


@pytest.mark.parametrize(
    "number", ["12", "-3.5", ".5", "1,234.5%", "(12)", "3-4", "\u22121.2\u2020"]
)
def test_numbers_are_still_numbers(number: str) -> None:
    assert NUMBER.fullmatch(number)


def test_headings_in_thousands_of_sizes_are_sectioned_in_one_pass() -> None:
    body = [Line("Body text of the paper goes on here at length.", 1, 10.0, False)] * 20_000
    headings = [Line(f"Heading Number {n}", 1, 112.0 - n / 100, True) for n in range(10_000)]
    lines = [line for pair in zip(headings, body, strict=False) for line in pair] + body
    found, took = _timed(lambda: sectioned(lines))
    assert took < BOUND, f"{took:.1f} s"
    assert max(len(item.path) for item in found) <= 6  # type: ignore[attr-defined]
