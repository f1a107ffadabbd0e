"""Each source parser against real recorded responses, and against broken shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from doiget.errors import DoigetError, ErrorCode
from doiget.sources import arxiv, crossref, doaj, openalex, semantic_scholar, unpaywall
from doiget.sources.markup import plain_text
from doiget.sources.names import author_from_name
from doiget.sources.shape import ShapeError

from replay import FIXTURES


def recorded(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def test_arxiv_feed_gives_id_with_version_authors_categories_and_pdf() -> None:
    (work,) = arxiv.parse_feed((FIXTURES / "arxiv/id_list-1605.08386.atom").read_bytes())
    assert work.arxiv_id == "1605.08386v1"
    assert work.title == "Heat-bath random walks with Markov bases"
    assert [a.sort_name for a in work.authors] == ["Stanley, Caprice", "Windisch, Tobias"]
    assert (work.year, work.published) == (2016, "2016-05-26T17:59:46Z")
    assert work.categories == ("math.CO", "math.ST")
    assert work.primary_category == "math.CO"
    assert work.pdf_url == "https://arxiv.org/pdf/1605.08386v1"
    assert work.abstract and work.abstract.startswith("Graphs on lattice points")


def test_arxiv_old_style_feed_keeps_the_archive_in_the_id() -> None:
    (work,) = arxiv.parse_feed((FIXTURES / "arxiv/id_list-quant-ph_0201082v1.atom").read_bytes())
    assert work.arxiv_id == "quant-ph/0201082v1"
    assert work.pdf_url == "https://arxiv.org/pdf/quant-ph/0201082v1"


def test_arxiv_empty_feed_has_no_work_and_error_feed_is_invalid_ref() -> None:
    assert arxiv.parse_feed((FIXTURES / "arxiv/id_list-0000.0000-empty.atom").read_bytes()) == []
    with pytest.raises(DoigetError) as refused:
        arxiv.parse_feed((FIXTURES / "arxiv/id_list-abc-error400.atom").read_bytes())
    assert refused.value.code is ErrorCode.INVALID_REF
    assert "incorrect id format" in refused.value.message


@pytest.mark.parametrize("body", [b"not xml", b"<html><body>down</body></html>", b""])
def test_arxiv_non_feed_is_a_shape_error(body: bytes) -> None:
    with pytest.raises(ShapeError):
        arxiv.parse_feed(body)


def test_crossref_work_fields_and_correction_notice() -> None:
    work = crossref.parse_work(recorded("crossref/works-10.1371_journal.pone.0033693.json"))
    assert work.title and work.title.startswith("Methylphenidate Exposure Induces")
    assert work.authors[0].sort_name == "Sadasivan, Shankar"
    assert (work.year, work.issued) == (2012, "2012-03-21")
    assert (work.venue, work.volume, work.issue, work.pages) == ("PLoS ONE", "7", "3", "e33693")
    assert work.type == "article-journal" and work.issn == ("1932-6203",)
    assert work.license == "http://creativecommons.org/licenses/by/4.0/"
    (notice,) = work.updates
    assert (notice.kind, notice.direction, notice.date) == (
        "correction",
        "updated-by",
        "2012-05-08",
    )
    assert not work.retracted  # a correction is not a retraction


def test_crossref_jats_abstract_becomes_plain_text_and_tdm_licence_is_ignored() -> None:
    pnas = crossref.parse_work(recorded("crossref/works-10.1073_pnas.1414271111.json"))
    assert pnas.abstract and "<" not in pnas.abstract
    data = recorded("crossref/works-10.1023_a_1007154515475.json")
    licences = data["message"]["license"]
    assert crossref.parse_work(data).license == licences[1]["URL"]  # the "vor" entry
    data["message"]["license"] = [item for item in licences if item["content-version"] == "tdm"]
    assert crossref.parse_work(data).license is None


def test_crossref_retraction_notice_marks_the_work_retracted() -> None:
    data = recorded("crossref/works-10.1371_journal.pone.0033693.json")
    data["message"]["updated-by"][0]["type"] = "retraction"
    assert crossref.parse_work(data).retracted


@pytest.mark.parametrize("data", [[], {"message": []}, {"message": "x"}, None, 3])
def test_crossref_broken_skeleton_is_a_shape_error(data: Any) -> None:
    with pytest.raises(ShapeError):
        crossref.parse_work(data)


def test_crossref_mistyped_optional_fields_are_tolerated() -> None:
    data = {
        "message": {"title": "no list", "author": "x", "issued": {"date-parts": "?"}, "ISSN": 5}
    }
    work = crossref.parse_work(data)
    assert (work.title, work.authors, work.year) == ("no list", (), None)


def test_unpaywall_locations_best_first_and_bibliographic_fields() -> None:
    data = recorded("unpaywall/v2-10.1038_nature12373.json")
    access, work = unpaywall.parse_record(data)
    assert access.is_oa and access.oa_status == "green"
    urls = [location.url_for_pdf for location in access.pdf_candidates()]
    assert urls[0] == data["best_oa_location"]["url_for_pdf"]
    assert len(urls) == len(set(urls))
    assert work.title == "Nanometre-scale thermometry in a living cell"
    assert (work.venue, work.year, work.authors[0].family) == ("Nature", 2013, "Kucsko")
    assert work.issn == ("0028-0836", "1476-4687")


def test_unpaywall_closed_record_has_no_candidates() -> None:
    access, _ = unpaywall.parse_record(recorded("unpaywall/v2-10.1023_a_1007154515475.json"))
    assert not access.is_oa and access.pdf_candidates() == []


def test_openalex_work_with_abstract_ids_and_references() -> None:
    work = openalex.parse_work(recorded("openalex/works-doi-10.1073_pnas.1414271111.json"))
    assert (work.openalex_id, work.doi, work.pmid) == (
        "W2109415576",
        "10.1073/pnas.1414271111",
        "25349395",
    )
    assert work.abstract and work.abstract.startswith("Significance")
    assert work.authors[0].orcid == "0000-0003-4136-4620"
    assert len(work.referenced_ids) == 73 and all(
        ref.startswith("W") for ref in work.referenced_ids
    )
    assert work.venue == "Proceedings of the National Academy of Sciences"


def test_openalex_list_and_inverted_index() -> None:
    works = openalex.parse_results(
        recorded("openalex/works-filter-cites-W2741809807-page1-per50.json")
    )
    assert len(works) == 50 and all(work.openalex_id for work in works)
    assert openalex.abstract_from_index({"world": [1], "hello": [0]}) == "hello world"
    with pytest.raises(ShapeError):
        openalex.parse_results({"results": {}})


def test_semantic_scholar_paper() -> None:
    work = semantic_scholar.parse_paper(
        recorded("semanticscholar/paper-DOI_10.1073_pnas.1414271111.json")
    )
    assert (work.doi, work.pmid, work.year) == ("10.1073/pnas.1414271111", "25349395", 2014)
    assert work.pages == "E4832-E4841" and work.type == "article-journal"
    assert work.authors[3].sort_name == "Hu, Jerry C."
    # A display name that cannot be split safely stays whole.
    assert work.authors[4].literal and "Κυριάκος" in work.authors[4].literal


def test_doaj_article_and_search() -> None:
    work = doaj.parse_article(recorded("doaj/article-0005e11ec616453f854070069385e057.json"))
    assert (work.doi, work.venue, work.issued) == (
        "10.3389/neuro.11.009.2007",
        "Frontiers in Neuroinformatics",
        "2008-04",
    )
    assert work.issn == ("1662-5196",)
    found = doaj.parse_search(recorded("doaj/search-articles-license_CC-BY-page1-size2.json"))
    assert len(found) == 2 and found[0].license == "CC BY"


@pytest.mark.parametrize(
    ("name", "family", "given"),
    [("Ludwig van Beethoven", "van Beethoven", "Ludwig"), ("Jerry C. Hu", "Hu", "Jerry C.")],
)
def test_display_names_split_with_particles(name: str, family: str, given: str) -> None:
    author = author_from_name(name)
    assert (author.family, author.given) == (family, given)


def test_markup_is_reduced_to_text() -> None:
    jats = (
        "<jats:title>Abstract</jats:title><jats:p>One <jats:italic>two</jats:italic>.</jats:p>"
        "<jats:p>Three.</jats:p>"
    )
    assert plain_text(jats) == "One two. Three."
