"""PDF and plain-text drafts: numbered and author-year citations matched to the
reference list the verifier's reader finds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from doiget.claims.manuscripts import read_manuscript
from doiget.claims.manuscripts.model import Manuscript
from doiget.errors import DoigetError, ErrorCode

from pdfmaker import write_lines_pdf, write_manuscript_pdf

ENTRIES = [
    "Smith, J. (2020). Lake ice thickness from radar. Journal of Ice, 3, 1-10.",
    "Lee, K. (2019). Snow on lake ice. Snow Letters, 4, 2-3.",
    "Park, M. (2018). Lakes in winter. Lake Review, 1, 5-9.",
]
NUMBERED = """A Draft

Ice thickens in winter [1]. Snow insulates it [2, 3].
Both hold [1-3]. A range with an en dash [2\u20133] and a list [1; 3].
Years in brackets are no citation [2020] when the list has no entry 2020.

References

[1] Smith, J. (2020). Lake ice thickness from radar. Journal of Ice, 3, 1-10.
[2] Lee, K. (2019). Snow on lake ice. Snow Letters, 4, 2-3.
[3] Park, M. (2018). Lakes in winter. Lake Review, 1, 5-9.
"""
AUTHOR_YEAR = """A Draft

Lakes freeze early (Smith et al., 2020; see Lee 2019a, p. 4). As Park and Ray (2018)
argued, “ice is thick”. Lee (2019b) disagrees. Van der Berg & Smith (2017) agree,
as do others (Lee, 2019a, 2019b). Ghost (2001) is not listed.

References

Smith, J., Jones, K., 2020. Lake ice thickness. Journal of Ice 3, 1-10.

Lee, K., 2019a. Snow one. Snow Letters 4, 2-3.

Lee, K., 2019b. Snow two. Snow Letters 5, 2-3.

Park, M., Ray, P., 2018. Lakes. Lake Review 1.

van der Berg, A., Smith, J., 2017. Rivers. River Review 2.
"""


def _text(tmp_path: Path, text: str) -> Manuscript:
    path = tmp_path / "draft.txt"
    path.write_text(text)
    return read_manuscript(path)


def test_numbered_citations_in_text(tmp_path: Path) -> None:
    path = tmp_path / "draft.txt"
    path.write_text(NUMBERED)
    manuscript = read_manuscript(path)
    assert manuscript.format == "text"
    got = [(c.keys, c.place.line) for c in manuscript.citations]
    assert got == [
        (("1",), 3),
        (("2", "3"), 3),
        (("1", "2", "3"), 4),
        (("2", "3"), 4),
        (("1", "3"), 4),
        (("2020",), 5),
    ]
    assert manuscript.citations[1].sentence == "Snow insulates it."
    assert manuscript.bibliography["2"].reference == ENTRIES[1]
    assert manuscript.bibliography["2020"].reference is None
    assert manuscript.bibliography["2020"].missing


def test_author_year_citations_in_text(tmp_path: Path) -> None:
    path = tmp_path / "draft.txt"
    path.write_text(AUTHOR_YEAR)
    manuscript = read_manuscript(path)
    got = [(c.keys, c.place.line) for c in manuscript.citations]
    assert got == [
        (("Smith 2020", "Lee 2019a"), 3),
        (("Park 2018",), 3),
        (("Lee 2019b",), 4),
        (("Van der Berg 2017",), 4),
        (("Lee 2019a", "Lee 2019b"), 5),
        (("Ghost 2001",), 5),
    ]
    sentences = [c.sentence for c in manuscript.citations]
    assert sentences[:3] == ["Lakes freeze early.", "As argued, “ice is thick”.", "disagrees."]
    assert manuscript.citations[1].quotes == ("ice is thick",)
    bibliography = manuscript.bibliography
    assert str(bibliography["Lee 2019b"].reference).startswith("Lee, K., 2019b. Snow two.")
    assert str(bibliography["Lee 2019a"].reference).startswith("Lee, K., 2019a. Snow one.")
    assert str(bibliography["Van der Berg 2017"].reference).startswith("van der Berg")
    assert bibliography["Ghost 2001"].reference is None


def test_same_author_and_year_without_letters_get_them_in_order(tmp_path: Path) -> None:
    text = (
        "Ice (Lee 2019a) and snow (Lee 2019b).\n\nReferences\n\n"
        "Lee, K., 2019. Ice. Snow Letters 4, 2-3.\n\nLee, K., 2019. Snow. Snow Letters 5, 2-3.\n"
    )
    manuscript = _text(tmp_path, text)
    assert "Ice." in str(manuscript.bibliography["Lee 2019a"].reference)
    assert "Snow." in str(manuscript.bibliography["Lee 2019b"].reference)


def test_text_without_a_reference_list_keeps_every_key_missing(tmp_path: Path) -> None:
    manuscript = _text(tmp_path, "Ice grows [1].\n")
    cited = manuscript.bibliography["1"]
    assert cited.reference is None and "no reference list" in cited.missing


def test_pdf_with_numbered_citations_and_a_reference_list(tmp_path: Path) -> None:
    path = tmp_path / "draft.pdf"
    write_manuscript_pdf(path, ENTRIES)
    manuscript = read_manuscript(path)
    assert manuscript.format == "pdf"
    assert manuscript.citations
    assert all(c.keys == ("1", "2") for c in manuscript.citations)
    assert all(c.place.page == 1 and c.place.line is None for c in manuscript.citations)
    assert manuscript.citations[0].sentence == "Body text that cites earlier work."
    assert manuscript.bibliography["1"].reference == ENTRIES[0]
    assert manuscript.bibliography["2"].reference == ENTRIES[1]


def test_pdf_author_year_over_two_pages(tmp_path: Path) -> None:
    path = write_lines_pdf(
        tmp_path / "draft.pdf",
        [
            ["Lakes freeze early in the north (Smith, 2020).", "Snow is light."],
            [
                "As Lee (2019) argued, snow insulates.",
                "References",
                "Smith, J. (2020). Lake ice thickness. Journal of Ice, 3, 1-10.",
                "Lee, K. (2019). Snow on lake ice. Snow Letters, 4, 2-3.",
            ],
        ],
    )
    manuscript = read_manuscript(path)
    got = [(c.keys, c.place.page) for c in manuscript.citations]
    assert got == [(("Smith 2020",), 1), (("Lee 2019",), 2)]
    assert str(manuscript.bibliography["Lee 2019"].reference).startswith("Lee, K. (2019)")


def test_a_pdf_that_is_not_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "draft.pdf"
    path.write_bytes(b"%PDF-1.7\nnot really")
    with pytest.raises(DoigetError) as raised:
        read_manuscript(path)
    assert raised.value.code is ErrorCode.INVALID_REF


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "draft.odt"
    path.write_bytes(b"x")
    with pytest.raises(DoigetError) as raised:
        read_manuscript(path)
    assert raised.value.code is ErrorCode.INVALID_REF
    assert read_manuscript(path, text="Ice [1].", fmt="text").citations


def test_a_bibliography_passed_with_a_draft_that_has_its_own_is_noted(tmp_path: Path) -> None:
    (tmp_path / "refs.bib").write_text("@article{a, title={T}}\n")
    (tmp_path / "draft.txt").write_text(NUMBERED)
    manuscript = read_manuscript(tmp_path / "draft.txt", bib=tmp_path / "refs.bib")
    assert manuscript.bibliography["1"].reference == ENTRIES[0]
    assert any("was not used" in note for note in manuscript.notes)


@pytest.mark.parametrize(
    ("name", "cite"),
    [("draft.md", "[@k{}]"), ("draft.tex", "\\cite{{k{}}}"), ("draft.txt", "[{}]")],
)
def test_many_citations_in_one_sentence_read_within_bounds(
    tmp_path: Path, name: str, cite: str
) -> None:
    """Every citation's sentence is read from a bounded window, once: 20,000 citations
    in one sentence (a draft of no punctuation) read in seconds, the first 10,000 of
    them, with a note; reading each citation's whole sentence took minutes."""
    path = tmp_path / name
    path.write_text(
        "Ice grows " + " and ".join(cite.format(i % 5_000) for i in range(20_000)) + ".\n"
    )
    started = time.perf_counter()
    manuscript = read_manuscript(path)
    elapsed = time.perf_counter() - started
    assert len(manuscript.citations) == 10_000
    assert any("more than 10,000" in note for note in manuscript.notes)
    assert len(manuscript.citations[-1].sentence) <= 2_000
    assert elapsed < 40, f"{elapsed:.1f} s"
