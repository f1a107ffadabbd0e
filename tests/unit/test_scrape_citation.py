"""Citations of web pages: author parsing, APA 7 and MLA 9."""

from __future__ import annotations

import datetime as dt

import pytest

from doiget.web.scrape.citation import Name, build_citation, parse_authors, parse_date

ACCESSED = dt.date(2025, 6, 5)
URL = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0299999"


def _cite(**overrides: object) -> dict[str, object]:
    facts: dict[str, object] = {
        "url": URL,
        "title": "Seasonal variation of lake ice thickness",
        "author": "Lindqvist, Maja; Okafor, Daniel E.",
        "site": "PLOS ONE",
        "date": "2024-03-14",
        "accessed": ACCESSED,
    }
    facts.update(overrides)
    return build_citation(**facts)  # type: ignore[arg-type]


def _formatted(**overrides: object) -> tuple[str, str]:
    formatted = _cite(**overrides)["formatted"]
    assert isinstance(formatted, dict)
    return formatted["apa"], formatted["mla"]


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ("Smith, John", [Name("Smith", "John")]),
        ("Smith, J. R.", [Name("Smith", "J. R.")]),
        ("Garcia Lopez, Maria", [Name("Garcia Lopez", "Maria")]),
        ("John Smith", [Name("Smith", "John")]),
        ("By Priya Raman", [Name("Raman", "Priya")]),
        ("Ludwig van Beethoven", [Name("van Beethoven", "Ludwig")]),
        ("Martin Luther King Jr.", [Name("King", "Martin Luther", "Jr.")]),
        (
            "Lindqvist, Maja; Okafor, Daniel E.",
            [Name("Lindqvist", "Maja"), Name("Okafor", "Daniel E.")],
        ),
        (
            "Maja Lindqvist; Daniel E Okafor",
            [Name("Lindqvist", "Maja"), Name("Okafor", "Daniel E")],
        ),
        ("John Smith, Jane Doe", [Name("Smith", "John"), Name("Doe", "Jane")]),
        (
            "John Smith, Jane Doe, and Ann Lee",
            [Name("Smith", "John"), Name("Doe", "Jane"), Name("Lee", "Ann")],
        ),
        ("Smith, John & Doe, Jane", [Name("Smith", "John"), Name("Doe", "Jane")]),
        ("World Health Organization", [Name(literal="World Health Organization")]),
        (
            "Centers for Disease Control and Prevention",
            [Name(literal="Centers for Disease Control and Prevention")],
        ),
        ("NASA", [Name(literal="NASA")]),
        ("The Guardian", [Name(literal="The Guardian")]),
        ("Reuters", [Name(literal="Reuters")]),
        ("", []),
        (None, []),
    ],
)
def test_parse_authors(raw: str | None, names: list[Name]) -> None:
    assert parse_authors(raw) == names


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("2024-03-14", "2024-03-14"),
        ("2024-03-14T14:00:00Z", "2024-03-14"),
        ("2024/3/4", "2024-03-04"),
        ("2024-03", "2024-03"),
        ("2024", "2024"),
        ("2024-02-30", "2024-02"),
        ("2024-13-01", "2024"),
    ],
)
def test_parse_date(raw: str, iso: str) -> None:
    date = parse_date(raw)
    assert date is not None and date.iso == iso


@pytest.mark.parametrize("raw", [None, "", "March 2024", "n.d."])
def test_unreadable_dates(raw: str | None) -> None:
    assert parse_date(raw) is None


def test_citation_block_shape() -> None:
    citation = _cite()
    assert citation == {
        "url": URL,
        "accessedDate": "2025-06-05",
        "metadata": {
            "title": "Seasonal variation of lake ice thickness",
            "author": "Lindqvist, Maja; Okafor, Daniel E.",
            "site": "PLOS ONE",
            "date": "2024-03-14",
        },
        "formatted": {
            "apa": "Lindqvist, M., & Okafor, D. E. (2024, March 14). "
            f"*Seasonal variation of lake ice thickness*. PLOS ONE. {URL}",
            "mla": 'Lindqvist, Maja, and Daniel E. Okafor. "Seasonal variation of lake ice '
            f'thickness." *PLOS ONE*, 14 Mar. 2024, {URL}. Accessed 5 June 2025.',
        },
    }


def test_unknown_facts_are_empty_strings_and_site_defaults_to_the_host() -> None:
    citation = build_citation(
        url="https://www.example.org/page",
        title=None,
        author=None,
        site=None,
        date=None,
        accessed=dt.date(2025, 9, 1),
    )
    assert citation["metadata"] == {"title": "", "author": "", "site": "example.org", "date": ""}
    assert citation["formatted"] == {
        "apa": "[Untitled page]. (n.d.). example.org. https://www.example.org/page",
        "mla": "[Untitled page]. *example.org*, https://www.example.org/page. "
        "Accessed 1 Sept. 2025.",
    }


def test_no_author_puts_the_title_first() -> None:
    apa, mla = _formatted(author=None, date="2023-11")
    assert apa == (f"*Seasonal variation of lake ice thickness*. (2023, November). PLOS ONE. {URL}")
    assert mla == (
        f'"Seasonal variation of lake ice thickness." *PLOS ONE*, Nov. 2023, {URL}. '
        "Accessed 5 June 2025."
    )


def test_one_author_and_a_title_ending_in_a_question_mark() -> None:
    apa, mla = _formatted(author="Jean-Paul Sartre", title="What is writing?", date="1948")
    assert apa == f"Sartre, J.-P. (1948). *What is writing?* PLOS ONE. {URL}"
    assert mla == (
        f'Sartre, Jean-Paul. "What is writing?" *PLOS ONE*, 1948, {URL}. Accessed 5 June 2025.'
    )


def test_three_authors_in_mla_are_et_al() -> None:
    apa, mla = _formatted(author="Ann Lee; Bo Chen; Cy Diaz")
    assert apa.startswith("Lee, A., Chen, B., & Diaz, C. (2024, March 14).")
    assert mla.startswith('Lee, Ann, et al. "Seasonal')


def test_over_twenty_authors_in_apa_are_elided() -> None:
    authors = "; ".join(f"Author{n}, A." for n in range(1, 24))
    apa, _ = _formatted(author=authors)
    assert apa.startswith("Author1, A., Author2, A.,")
    assert "Author19, A., . . . Author23, A. (2024" in apa
    assert "Author20" not in apa


def test_institutional_author_that_is_also_the_site_is_not_repeated() -> None:
    apa, mla = _formatted(
        author="World Health Organization", site="World Health Organization", date="2024-12-09"
    )
    assert apa == (
        "World Health Organization. (2024, December 9). "
        f"*Seasonal variation of lake ice thickness*. {URL}"
    )
    assert mla.startswith('"Seasonal variation of lake ice thickness." *World Health Organization*')


def test_suffix_is_kept() -> None:
    apa, mla = _formatted(author="Martin Luther King Jr.")
    assert apa.startswith("King, M. L., Jr. (2024, March 14).")
    assert mla.startswith("King, Martin Luther, Jr. ")


def test_same_input_same_citation() -> None:
    assert _cite() == _cite()
