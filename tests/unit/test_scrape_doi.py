"""Detecting a page's DOI and reading Crossref's retraction and correction notices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from doiget.models import UpdateNotice
from doiget.sources import crossref
from doiget.web.scrape.doi import detect_doi, retraction_status
from doiget.web.scrape.html import extract_html

FIXTURES = Path(__file__).parents[1] / "fixtures"
PLAIN = "https://example.org/page"


def test_article_fixture_doi_comes_from_its_citation_tags() -> None:
    url = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0299999"
    page = extract_html((FIXTURES / "web" / "article.html").read_text("utf-8"), url)
    assert page.structured is not None
    assert detect_doi(page.structured.citation, PLAIN, "") == "10.1371/journal.pone.0299999"
    # Without the tags, the URL's query gives the same DOI.
    assert detect_doi(None, url, page.markdown) == "10.1371/journal.pone.0299999"


def test_tags_outrank_the_url_and_the_text() -> None:
    tags = {"citation_doi": "https://doi.org/10.1000/FROM-TAG"}
    url = "https://doi.org/10.1000/from-url"
    assert detect_doi(tags, url, "doi:10.1000/from-text") == "10.1000/from-tag"
    assert detect_doi({}, url, "doi:10.1000/from-text") == "10.1000/from-url"
    assert detect_doi(None, PLAIN, "doi:10.1000/from-text") == "10.1000/from-text"


@pytest.mark.parametrize(
    "tags",
    [
        {"citation_doi": "10.5555/ABC.123"},
        {"citation_doi": "doi:10.5555/abc.123"},
        {"citation_doi": ["10.5555/abc.123", "10.5555/other"]},
        {"dc.identifier": "info:doi/10.5555/abc.123"},
        {"DC.Identifier": ["ISBN 978-3-16-148410-0", "https://doi.org/10.5555/abc.123."]},
        {"prism.doi": "10.5555/abc.123"},
    ],
)
def test_doi_tags(tags: dict[str, object]) -> None:
    assert detect_doi(tags, PLAIN, "") == "10.5555/abc.123"


def test_tags_without_a_doi_are_passed_over() -> None:
    tags = {"citation_title": "10.5555/not-a-doi-tag", "dc.identifier": "urn:isbn:123"}
    assert detect_doi(tags, PLAIN, "") is None


@pytest.mark.parametrize(
    ("url", "doi"),
    [
        ("https://doi.org/10.1038/nature12373", "10.1038/nature12373"),
        (
            "https://onlinelibrary.wiley.com/doi/full/10.1002/anie.202012345",
            "10.1002/anie.202012345",
        ),
        (
            "https://onlinelibrary.wiley.com/doi/10.1002/ANIE.202012345/full",
            "10.1002/anie.202012345",
        ),
        (
            "https://onlinelibrary.wiley.com/doi/epdf/10.1111/j.1365-2486.2009.x/abstract",
            "10.1111/j.1365-2486.2009.x",
        ),
        ("https://www.tandfonline.com/doi/pdf/10.1080/0001/pdf", "10.1080/0001"),
        (
            "https://link.springer.com/content/pdf/10.1007/s11192-020-03442-x.pdf",
            "10.1007/s11192-020-03442-x",
        ),
        (
            "https://www.biorxiv.org/content/10.1101/2020.01.01.123456v2.full.pdf",
            "10.1101/2020.01.01.123456",
        ),
        ("https://doi.org/10.1016%2FS0140-6736(20)30183-5", "10.1016/s0140-6736(20)30183-5"),
        (
            "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0033693",
            "10.1371/journal.pone.0033693",
        ),
        ("https://example.org/10.1000/pdf", "10.1000/pdf"),  # nothing left to strip to
    ],
)
def test_doi_in_the_url(url: str, doi: str) -> None:
    assert detect_doi(None, url, "") == doi


def test_doi_in_the_top_of_the_text() -> None:
    text = "# A paper\n\nPublished in 2020 (https://doi.org/10.5555/Paper.1). Abstract follows."
    assert detect_doi(None, PLAIN, text) == "10.5555/paper.1"
    assert detect_doi(None, PLAIN, "See doi:10.5555/abc(1)2, for details.") == "10.5555/abc(1)2"


def test_text_after_a_references_heading_or_past_4kb_is_ignored() -> None:
    references = "# A post\n\nNo identifier here.\n\n## References\n\n1. X. doi:10.5555/cited"
    assert detect_doi(None, PLAIN, references) is None
    late = "word " * 1000 + "doi:10.5555/late"
    assert detect_doi(None, PLAIN, late) is None


def test_no_doi_anywhere() -> None:
    assert detect_doi(None, PLAIN, "Plain words, and 10.5 percent.") is None
    assert detect_doi(None, PLAIN, "A bad one: 10.5555/./x") is None


# -- retraction status -----------------------------------------------------------------


def _notice(kind: str, **fields: str) -> UpdateNotice:
    return UpdateNotice(kind, "updated-by", **fields)  # type: ignore[arg-type]


def test_no_notice_means_no_status() -> None:
    assert retraction_status([]) is None
    assert retraction_status([_notice("new_version"), _notice("addendum")]) is None
    # A notice this work issues about another is not about this work.
    assert retraction_status([UpdateNotice("retraction", "update-to", "10.1/other")]) is None


@pytest.mark.parametrize("kind", ["retraction", "withdrawal", "removal", "Retraction"])
def test_retractions(kind: str) -> None:
    status = retraction_status(
        [_notice(kind, doi="10.1/notice", date="2020-02-03", source="retraction-watch")]
    )
    assert status == {
        "retracted": True,
        "kind": "retraction",
        "date": "2020-02-03",
        "noticeDoi": "10.1/notice",
        "source": "retraction-watch",
    }


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("expression_of_concern", "expression_of_concern"),
        ("expression-of-concern", "expression_of_concern"),
        ("correction", "correction"),
        ("erratum", "correction"),
        ("corrigendum", "correction"),
        ("partial_retraction", "correction"),
    ],
)
def test_lesser_notices_are_not_retractions(kind: str, expected: str) -> None:
    assert retraction_status([_notice(kind)]) == {"retracted": False, "kind": expected}


def test_the_most_severe_notice_wins() -> None:
    notices = [
        _notice("correction", doi="10.1/c", source="publisher"),
        _notice("retraction", doi="10.1/r", source="publisher"),
        _notice("expression_of_concern", doi="10.1/e"),
    ]
    status = retraction_status(notices)
    assert status == {
        "retracted": True,
        "kind": "retraction",
        "noticeDoi": "10.1/r",
        "source": "publisher",
    }
    assert retraction_status(notices[::2]) == {
        "retracted": False,
        "kind": "expression_of_concern",
        "noticeDoi": "10.1/e",
    }


def test_unknown_source_is_left_out() -> None:
    assert retraction_status([_notice("retraction", source="somebody")]) == {
        "retracted": True,
        "kind": "retraction",
    }


def test_recorded_crossref_correction() -> None:
    data = json.loads(
        (FIXTURES / "crossref" / "works-10.1371_journal.pone.0033693.json").read_text("utf-8")
    )
    work = crossref.parse_work(data)
    assert work.updates[0].source == "publisher"
    assert retraction_status(work.updates) == {
        "retracted": False,
        "kind": "correction",
        "date": "2012-05-08",
        "noticeDoi": "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda",
        "source": "publisher",
    }
