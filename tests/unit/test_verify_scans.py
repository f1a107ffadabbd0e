"""Readers of untrusted references, and the matching of their author lists, take time
linear in their input: a reference of 20,000 characters built to make a scanner start
over at every place (unclosed brackets, dotted initials, a run of blanks inside a
field, a word repeated without a break) is read in a fraction of a second, where a
quadratic scan took seconds to minutes; 1,200 cited names against a record's 3,000
are matched in milliseconds, where each against each took seconds."""

from __future__ import annotations

import random
import string
import time
from collections.abc import Callable

import pytest

from doiget.models import Author, Work
from doiget.verify.cited import CitedAuthor, CitedWork
from doiget.verify.freetext import read_free_text, sentences
from doiget.verify.inputs import read_items, read_text
from doiget.verify.match import author_problems
from doiget.verify.names import MAX_COMPARED, compare_authors
from doiget.verify.readers import read_bibtex

# The longest a reference may be, and the most reading one may take on a loaded
# machine (these take 1-70 ms on a quiet one; the quadratic scanners took 0.5-40 s).
CHARS = 20_000
BOUND_SECONDS = 0.4


def _repeated(unit: str) -> str:
    return unit * (CHARS // len(unit))


def _broken_bib(value: str) -> str:
    # One field a line, its braces unbalanced: read as far as it can be.
    return "@article{key,\n  title = {A title},\n  note = {" + value + "\n"


SCANS: dict[str, Callable[[], object]] = {
    "dotted initials": lambda: read_free_text(_repeated("A. ")),
    "initials after commas": lambda: read_free_text(_repeated("B, C. ")),
    "sentences of initials": lambda: sentences(_repeated("Q. R. ")),
    "APA years never closed": lambda: read_free_text(_repeated("Smith J. (2017, ")),
    "arXiv run together": lambda: read_free_text(_repeated("arxiv")),
    "arXiv with separators": lambda: read_free_text(_repeated("arXiv:./ ")),
    # 2,000 blanks: the backtracking pattern took 40 s on them, and 500 s on 5,000.
    "blanks inside a field line": lambda: read_bibtex(_broken_bib("x" + " " * 2_000 + "x")),
    "entry heads never closed": lambda: read_bibtex(_repeated("@x{a") + "\n title = {x}"),
}


@pytest.mark.parametrize("scan", SCANS.values(), ids=SCANS.keys())
def test_reading_a_crafted_reference_takes_linear_time(scan: Callable[[], object]) -> None:
    scan()  # imports and caches warmed
    began = time.perf_counter()
    scan()
    assert time.perf_counter() - began < BOUND_SECONDS


def test_a_free_text_reference_longer_than_the_limit_is_its_own_rows_error() -> None:
    text = "Wei J. A short title. NeurIPS 2022.\n\n" + "word " * 5_000 + "\n\nArXiv:2201.11903"
    first, long, last = read_text(text)
    assert first.title == "A short title" and first.unread is None
    assert long.unread is not None and long.unread.code == "INVALID_REF"
    assert "20,000" in long.unread.message
    assert last.arxiv_id == "2201.11903"


@pytest.mark.parametrize(
    ("item", "doi", "arxiv_id", "pmid"),
    [
        ("10.1038/nature12373", "10.1038/nature12373", None, None),
        ("10.1038/NATURE12373.", "10.1038/nature12373", None, None),
        ("https://doi.org/10.1038/nature12373", "10.1038/nature12373", None, None),
        ("http://dx.doi.org/10.1038/nature12373", "10.1038/nature12373", None, None),
        ("doi.org/10.1038/nature12373", "10.1038/nature12373", None, None),
        ("doi:10.1038/nature12373", "10.1038/nature12373", None, None),
        ("DOI: 10.1038/nature12373", "10.1038/nature12373", None, None),
        ("arXiv:1706.03762", None, "1706.03762", None),
        ("arXiv:1706.03762v5", None, "1706.03762v5", None),
        ("https://arxiv.org/abs/1706.03762", None, "1706.03762", None),
        ("arxiv.org/pdf/1706.03762", None, "1706.03762", None),
        ("arXiv:hep-th/9901001", None, "hep-th/9901001", None),
        ("PMID: 23903748", None, None, "23903748"),
        ("23903748", None, None, "23903748"),
    ],
)
def test_a_bare_identifier_is_read_as_that_identifier_and_nothing_else(
    item: str, doi: str | None, arxiv_id: str | None, pmid: str | None
) -> None:
    [cited] = read_items([item])
    assert (cited.doi, cited.arxiv_id, cited.pmid) == (doi, arxiv_id, pmid)
    assert cited.title is None and not cited.authors and cited.unread is None


@pytest.mark.parametrize("item", ["", "   ", "\n\t", "https://example.com/paper", "www.x.org/a"])
def test_an_item_without_anything_to_look_up_reads_as_empty(item: str) -> None:
    [cited] = read_items([item])
    assert cited.empty and cited.unread is None


def test_an_item_a_reader_fails_on_costs_only_its_own_row(monkeypatch: pytest.MonkeyPatch) -> None:
    import doiget.verify.inputs as inputs

    def broken(text: str) -> object:
        if "boom" in text:
            raise IndexError("a reader's fault")
        return read_free_text(text)

    monkeypatch.setattr(inputs, "read_free_text", broken)
    good, bad, long = read_items(["Wei J. A short title. NeurIPS 2022.", "boom", "x" * 20_001])
    assert good.title == "A short title" and good.unread is None
    assert bad.unread is not None and bad.unread.code == "INTERNAL_ERROR"
    assert long.unread is not None and long.unread.code == "INVALID_REF"


def _people(count: int, seed: int) -> list[tuple[str, str]]:
    chosen = random.Random(seed)

    def word() -> str:
        return "".join(chosen.choices(string.ascii_lowercase, k=7)).title()

    return [(word(), word()) for _ in range(count)]


REAL = tuple(Author(family=family, given=given) for given, family in _people(3_000, 1))
# The record's family names with given names that contradict them ("Q." for "Anna").
OTHER_INITIALS = tuple(
    CitedAuthor(author.family or "", "Q.") for author in REAL if author.given[0] != "Q"
)[:1_200]
MADE_UP = tuple(CitedAuthor(family, given[0]) for given, family in _people(1_200, 3))


@pytest.mark.parametrize(
    "cited", [MADE_UP, OTHER_INITIALS], ids=["made-up names", "other initials"]
)
def test_author_lists_are_matched_in_time_linear_in_their_lengths(
    cited: tuple[CitedAuthor, ...],
) -> None:
    compare_authors(cited[:10], REAL)  # names of the record read once
    began = time.perf_counter()
    comparison = compare_authors(cited, REAL)
    # 0.05 s here; each cited name against the whole list took 1.8-3 s.
    assert time.perf_counter() - began < 0.5
    assert not comparison.pairs


def test_a_cited_list_longer_than_the_bound_is_compared_at_its_ends() -> None:
    cited = tuple(CitedAuthor(a.family or "", a.given or "") for a in REAL[: MAX_COMPARED + 100])
    cited = (*cited[:-1], CitedAuthor("Invented", "Q."))
    comparison = compare_authors(cited, REAL)
    assert comparison.partial and len(comparison.pairs) == MAX_COMPARED - 1
    assert comparison.unmatched == (len(cited) - 1,)  # the last name is still checked
    work = Work(source="crossref", title="T", authors=REAL)
    kinds = [p.kind for p in author_problems(CitedWork(title="T", authors=cited), work, comparison)]
    assert kinds == ["authors_replaced"]  # never "missing": the middle was not compared
