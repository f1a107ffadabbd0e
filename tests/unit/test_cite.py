"""BibTeX and CSL-JSON exports: valid, escaped, stable keys, and they read back."""

from __future__ import annotations

import json

import bibtexparser
import jsonschema
import pytest
from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors
from pybtex.database import parse_string as pybtex_parse
from pylatexenc.latex2text import LatexNodes2Text

from doiget.cite.bibtex import escape, to_bibtex, to_bibtex_many
from doiget.cite.citekey import citekey, unique_citekeys
from doiget.cite.csl import SCHEMA_PATH, to_csl_many
from doiget.models import Author, UpdateNotice, Work

LATEX = LatexNodes2Text()
MANY = tuple(Author(family=f"Author{n:03d}", given=f"G. {n}") for n in range(200))

TEN = [
    Work(
        "crossref",
        title="Nanometre-scale thermometry in a living cell",
        authors=(Author("Kucsko", "G."), Author("Maurer", "P. C.")),
        year=2013,
        venue="Nature",
        volume="500",
        issue="7460",
        pages="54-58",
        doi="10.1038/nature12373",
        type="article-journal",
    ),
    Work(
        "crossref",
        title="Über die Möglichkeit — eine Studie",
        authors=(Author("Müller", "Jürgen"), Author("Ødegård", "Åse"), Author("Ñúñez", "José")),
        year=2020,
        venue="Zeitschrift für Physik",
        type="article-journal",
    ),
    Work(
        "crossref",
        title="The $\\alpha$-helix & {DNA}: 50% of #1 cases_x ~ \\emph{in vivo}",
        authors=(Author("Smith", "A."),),
        year=2019,
        venue="J. Chem. & Phys.",
        type="article-journal",
    ),
    Work(
        "crossref",
        title="A study with two hundred authors",
        authors=MANY,
        year=2021,
        venue="Physical Review Letters",
        type="article-journal",
        pages="012001",
    ),
    Work(
        "crossref",
        title="Guidelines on hand hygiene",
        authors=(Author(literal="World Health Organization"), Author(literal="Smith and Sons Ltd")),
        year=2009,
        publisher="WHO Press",
        type="report",
    ),
    Work(
        "arxiv",
        title="Heat-bath random walks with Markov bases",
        authors=(Author("Stanley", "Caprice"), Author("Windisch", "Tobias")),
        year=2016,
        arxiv_id="1605.08386v1",
        primary_category="math.CO",
        type="article",
    ),
    Work(
        "crossref",
        title="Κβαντική πληροφορία και υπολογισμός",
        authors=(Author("Αθανασίου", "Κυριάκος"),),
        year=2018,
        venue="Φυσική",
        type="article-journal",
    ),
    Work(
        "crossref",
        title='Proceedings paper on {braces} and "quotes"',
        authors=(Author("van Beethoven", "Ludwig"),),
        year=2022,
        venue="Proc. of Things",
        type="paper-conference",
    ),
    Work(
        "crossref",
        title="Retracted: a flawed result",
        authors=(Author("Doe", "J."),),
        year=2015,
        venue="Journal of Errors",
        type="article-journal",
        updates=(UpdateNotice("retraction", "updated-by", "10.1000/r"),),
    ),
    Work("crossref", title=None, authors=(), year=None, doi="10.1000/untitled"),
]


def decoded_library(text: str) -> bibtexparser.Library:
    """Parsed, authors split on the top-level "and", every value LaTeX-decoded."""
    library = bibtexparser.parse_string(
        text, append_middleware=[SeparateCoAuthors(), LatexDecodingMiddleware()]
    )
    for entry in library.entries:
        if "author" in entry.fields_dict:
            field = entry.fields_dict["author"]
            field.value = [LATEX.latex_to_text(name) for name in field.value]
    return library


def expected_authors(work: Work) -> list[str]:
    return [author.sort_name for author in work.authors]


def test_ten_entries_round_trip_through_bibtexparser() -> None:
    text = to_bibtex_many(TEN)
    library = decoded_library(text)
    assert not library.failed_blocks
    assert len(library.entries) == 10
    keys = [entry.key for entry in library.entries]
    assert len(set(keys)) == 10
    for work, entry in zip(TEN, library.entries, strict=True):
        fields = entry.fields_dict
        if work.title:
            assert fields["title"].value == work.title
        else:
            assert "title" not in fields
        if work.authors:
            assert fields["author"].value == expected_authors(work)
        if work.year:
            assert fields["year"].value == str(work.year)
        if work.venue:
            venue_field = "booktitle" if work.type == "paper-conference" else "journal"
            assert fields[venue_field].value == work.venue
    assert len(library.entries[3].fields_dict["author"].value) == 200


def test_bibtex_also_parses_with_pybtex() -> None:
    data = pybtex_parse(to_bibtex_many(TEN), "bibtex")
    assert len(data.entries) == 10
    hundreds = next(entry for entry in data.entries.values() if len(entry.persons["author"]) == 200)
    assert str(hundreds.persons["author"][0]) == "Author000, G. 0"


def test_entry_types_and_arxiv_fields() -> None:
    text = to_bibtex_many(TEN)
    assert text.count("@article{") == 6
    assert (
        "@inproceedings{beethoven" not in text
        and "@inproceedings{vanbeethoven2022proceedings," in text
    )
    assert "@techreport{" in text and "@misc{stanley2016heat," in text
    assert "eprint = {1605.08386v1}" in text and "archivePrefix = {arXiv}" in text
    assert "pages = {54--58}" in text
    assert "note = {Retracted, notice https://doi.org/10.1000/r}" in text


def test_escape_covers_every_special_character() -> None:
    assert escape("\\{}&%$#_~^") == (
        r"\textbackslash{}\{\}\&\%\$\#\_\textasciitilde{}\textasciicircum{}"
    )


def test_citekeys_are_stable_ascii_and_unique() -> None:
    assert citekey(TEN[0]) == "kucsko2013nanometre"
    assert citekey(TEN[1]) == "muller2020uber"
    assert citekey(TEN[9]) == "anon" + "nd"
    twins = [TEN[0], TEN[0], TEN[0]]
    assert unique_citekeys(twins) == [
        "kucsko2013nanometrea",
        "kucsko2013nanometreb",
        "kucsko2013nanometrec",
    ]
    assert to_bibtex(TEN[0]) == to_bibtex(TEN[0])


def test_csl_json_is_valid_against_the_schema() -> None:
    items = to_csl_many(TEN)
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.validate(items, schema)
    first = items[0]
    assert first["issued"] == {"date-parts": [[2013]]}
    assert first["author"][0] == {"family": "Kucsko", "given": "G."}
    assert items[4]["author"][0] == {"literal": "World Health Organization"}
    assert items[5]["number"] == "arXiv:1605.08386v1"
    assert items[8]["note"] == "Retracted, notice https://doi.org/10.1000/r"


@pytest.mark.parametrize(
    "broken",
    [
        {"id": "x"},
        {"id": "x", "type": "novel"},
        {"id": "x", "type": "book", "author": [{"given": "A"}]},
    ],
)
def test_csl_schema_rejects_invalid_items(broken: dict) -> None:
    schema = json.loads(SCHEMA_PATH.read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([broken], schema)
