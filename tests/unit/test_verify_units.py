"""Pieces of reference verification that need no upstream: venue aliases (a test per
entry of the data file), names, titles and the readers."""

from __future__ import annotations

import json
from importlib import resources

import anyio
import pytest

from doiget.models import Author
from doiget.verify.cited import CitedAuthor
from doiget.verify.inputs import read_item, read_text
from doiget.verify.match import title_relation
from doiget.verify.names import compare_authors
from doiget.verify.venues import identify

VENUES = json.loads(
    resources.files("doiget.verify").joinpath("data/venues.json").read_text("utf-8")
)["venues"]


@pytest.mark.parametrize("venue", VENUES, ids=[venue["id"] for venue in VENUES])
def test_every_name_of_a_venue_and_its_yearly_forms_identify_it(venue: dict[str, object]) -> None:
    names = [*venue["acronyms"], *venue["names"]]  # type: ignore[misc]
    for name in names:
        assert identify(name).id == venue["id"], name  # type: ignore[union-attr]
        assert identify(f"{name} 2021").id == venue["id"], name  # type: ignore[union-attr]
        assert identify(f"Proceedings of the 38th {name}").id == venue["id"], name  # type: ignore[union-attr]


def test_an_invented_venue_is_unknown() -> None:
    assert identify("Symposium on Neural Scaling Laws") is None
    assert identify("Journal of Neural Architecture and Optimization") is None


@pytest.mark.parametrize(
    ("cited", "real"),
    [
        ("Wei, J.", "Jason Wei"),
        ("Schuurmäns, Dale", "Dale Schuurmans"),
        ("Boix Adsera, Enric", "Enric Boix-Adserà"),
        ("van de Meent, Jan-Willem", "Jan-Willem van de Meent"),
        ("Meent, J.-W.", "Jan-Willem van de Meent"),
        ("Wei, Wang", "Wei Wang"),
    ],
)
def test_benign_name_forms_are_the_same_person(cited: str, real: str) -> None:
    family, _, given = cited.partition(",")
    parts = real.split(" ")
    author = Author(family=parts[-1] if "van" not in parts else "van de Meent", given=parts[0])
    comparison = compare_authors((CitedAuthor(family.strip(), given.strip()),), (author,))
    assert comparison.pairs, (cited, real)


def test_another_person_with_the_same_family_name_is_not_matched() -> None:
    comparison = compare_authors(
        (CitedAuthor("Wang", "Jun"),), (Author(family="Wang", given="Wei"),)
    )
    assert not comparison.pairs


@pytest.mark.parametrize(
    ("cited", "relation"),
    [
        ("deep residual learning for image {R}ecognition", "same"),
        ("Deep Residual Learning for Image Recognition.", "same"),
        ("Deep residual learning: for image recognition", "same"),
        ("Deep Residual Learning for Picture Recognition", "near"),
        ("Shallow Convolutional Nets for Speech", None),
    ],
)
def test_title_relations(cited: str, relation: str | None) -> None:
    assert title_relation(cited, "Deep Residual Learning for Image Recognition")[0] == relation


def test_a_colour_title_is_the_color_title() -> None:
    assert title_relation("Colour constancy", "Color Constancy")[0] == "same"


def test_each_input_form_is_read() -> None:
    ris = "TY  - JOUR\nTI  - Deep residual learning\nAU  - He, Kaiming\nPY  - 2016\nER  - \n"
    assert read_item(ris).title == "Deep residual learning"
    csl = {"id": "k", "title": "T", "author": [{"family": "He", "given": "K"}]}
    assert read_item(csl).key == "k"
    assert read_item('{"id": "k2", "title": "T2"}').key == "k2"
    bib = read_item("@article{he16, title={Deep}, author={He, Kaiming and others}, year={2016}}")
    assert (bib.key, bib.more_authors, bib.year) == ("he16", True, 2016)
    free = read_item("He K, Zhang X. Deep residual learning. CVPR 2016. doi:10.1109/CVPR.2016.90")
    assert (free.title, free.doi, free.venue) == (
        "Deep residual learning",
        "10.1109/cvpr.2016.90",
        "CVPR",
    )
    paragraphs = read_text("First A. One title. 2020.\n\nSecond B. Two title. 2021.\n", "refs.txt")
    assert [w.title for w in paragraphs] == ["One title", "Two title"]


def test_a_name_whose_lower_case_is_longer_does_not_shift_the_author_split() -> None:
    [work] = read_text(
        "@inproceedings{k, title={T}, author={Max Welling and \u0130smail \u0130lkan Ceylan and "
        "Luca Ambrogioni and Jan-Willem van de Meent}}",
        "refs.bib",
    )
    assert [a.family for a in work.authors] == ["Welling", "Ceylan", "Ambrogioni", "van de Meent"]


def test_initials_after_a_family_name_are_read_only_in_free_text() -> None:
    [bib] = read_text(
        "@article{k, title={T}, author={Mallikarjun B. R. and Ayush Tewari}}", "r.bib"
    )
    assert [a.family for a in bib.authors] == ["R.", "Tewari"]
    text = read_item("Vaswani A, Shazeer N. Attention is all you need. NeurIPS 2017.")
    assert [a.family for a in text.authors] == ["Vaswani", "Shazeer"]


def test_two_works_equally_close_are_a_tie_and_one_named_by_its_doi_is_not() -> None:
    from doiget.models import Work
    from doiget.verify.cited import CitedWork
    from doiget.verify.service import _Found

    cited = CitedWork(title="Deep Learning", year=2016)
    book = Work(source="crossref", title="Deep Learning", year=2016, doi="10.1/book",
                authors=(Author(family="Goodfellow", given="Ian"),))  # fmt: skip
    review = Work(source="dblp", title="Deep learning.", year=2016, doi="10.1/review",
                  authors=(Author(family="LeCun", given="Yann"),))  # fmt: skip
    found = _Found()
    anyio.run(found.add, cited, [book, review])
    rival = found.rival(cited)
    assert rival is not None and {rival.work.doi, found.best.work.doi} == {
        "10.1/book",
        "10.1/review",
    }  # type: ignore[union-attr]
    found.doi_work = book
    assert found.rival(cited) is None
    by_author = CitedWork(title="Deep Learning", year=2016, authors=(CitedAuthor("LeCun", "Y."),))
    decided = _Found()
    anyio.run(decided.add, by_author, [book, review])
    assert decided.rival(by_author) is None and decided.best.work is review  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "item",
    [
        "x" * 20_001,
        {
            "id": "x",
            "title": "T",
            "author": [
                {
                    "a": {
                        "b": {
                            "c": {
                                "d": {
                                    "e": {
                                        "f": {
                                            "g": {
                                                "h": {
                                                    "i": {
                                                        "j": {
                                                            "k": {
                                                                "l": {
                                                                    "m": {
                                                                        "n": {"o": {"p": {"q": 1}}}
                                                                    }
                                                                }
                                                            }
                                                        }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            ],
        },
        "{" + '"a": {' * 2000 + "1" + "}" * 2001,
    ],
    ids=["longer than a reference", "CSL nested too deep", "JSON text nested too deep"],
)
def test_a_tool_item_that_no_reference_can_be_is_refused_as_invalid(item: object) -> None:
    from doiget.errors import DoigetError, ErrorCode

    with pytest.raises(DoigetError) as refused:
        read_item(item)  # type: ignore[arg-type]
    assert refused.value.code is ErrorCode.INVALID_REF


@pytest.mark.parametrize(
    ("text", "families", "title", "venue"),
    [
        (
            "Eleftherios A. Makris, Donald J. Responte, Jerry C. Hu, and Kyriacos A. "
            "Athanasiou. 2014. Developing functional musculoskeletal tissues through hypoxia "
            "and lysyl oxidase-induced collagen cross-linking. PNAS, 111(45):E4832-E4841.",
            ["Makris", "Responte", "Hu", "Athanasiou"],
            "Developing functional musculoskeletal tissues through hypoxia and lysyl "
            "oxidase-induced collagen cross-linking",
            "PNAS, 111(45):E4832-E4841",
        ),
        (
            "Kalpesh Krishna and Erin Bransom. 2023. LongEval: Guidelines for human "
            "evaluation of faithfulness. In Proceedings of EACL.",
            ["Krishna", "Bransom"],
            "LongEval: Guidelines for human evaluation of faithfulness",
            "Proceedings of EACL",
        ),
        (
            "Sun J. Deep learning for the rest of us. Journal of Tests, 2019.",
            ["Sun"],
            "Deep learning for the rest of us",
            "Journal of Tests",
        ),
    ],
)
def test_a_middle_initial_and_a_year_standing_alone_do_not_end_the_names(
    text: str, families: list[str], title: str, venue: str
) -> None:
    work = read_item(text)
    assert [a.family for a in work.authors] == families
    assert (work.title, work.venue) == (title, venue)
