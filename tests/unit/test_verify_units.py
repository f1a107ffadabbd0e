"""Pieces of reference verification that need no upstream: venue aliases (a test per
entry of the data file), names, titles and the readers."""

from __future__ import annotations

import json
from importlib import resources

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
