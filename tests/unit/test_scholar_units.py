"""Scholar pieces that need no network: query building, ids, PubMed XML, shapes, cache."""

from __future__ import annotations

from typing import Any

import pytest

from doiget.contract import build
from doiget.envelopes import scholar_error_text
from doiget.errors import DenialContext, DenialReason, DoigetError, ErrorCode
from doiget.refs import fetchable_ref, parse_arxiv_id
from doiget.scholar import shapes
from doiget.scholar.cache import AnswerCache
from doiget.scholar.contracts import ScholarSearch
from doiget.scholar.service import check_pmid
from doiget.sources import arxiv
from doiget.sources.pubmed import parse_article_set, parse_search
from doiget.sources.semantic_scholar import api_paper_id
from doiget.sources.shape import ShapeError

from replay import FIXTURES


def _pubmed(name: str) -> dict[str, Any]:
    articles = parse_article_set((FIXTURES / "pubmed" / name).read_bytes())
    return {article.pmid: article for article in articles}


# -- arXiv query ---------------------------------------------------------------------


def test_free_text_becomes_anded_all_field_terms() -> None:
    query = arxiv.build_query('deep  learning "computer vision"', arxiv.SearchFilters(), 2026)
    assert query == 'all:deep AND all:learning AND all:"computer vision"'


def test_arxiv_syntax_passes_through_grouped() -> None:
    filters = arxiv.SearchFilters(author="Geoffrey E. Hinton")
    query = arxiv.build_query("ti:transformer AND cat:cs.CL", filters, 2026)
    assert query == "(ti:transformer AND cat:cs.CL) AND au:Geoffrey AND au:Hinton"


def test_years_become_an_inclusive_submitted_date_range() -> None:
    both = arxiv.build_query("qubit", arxiv.SearchFilters(start_year=2020, end_year=2021), 2026)
    assert both == "all:qubit AND submittedDate:[202001010000 TO 202112312359]"
    start_only = arxiv.build_query("qubit", arxiv.SearchFilters(start_year=2023), 2026)
    assert start_only.endswith("submittedDate:[202301010000 TO 202612312359]")
    end_only = arxiv.build_query("qubit", arxiv.SearchFilters(end_year=1999), 2026)
    assert end_only.endswith("submittedDate:[199101010000 TO 199912312359]")


def test_a_query_of_only_quotes_is_refused() -> None:
    with pytest.raises(DoigetError) as caught:
        arxiv.build_query('"" ""', arxiv.SearchFilters(), 2026)
    assert caught.value.code is ErrorCode.INVALID_REF


# -- identifiers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2301.12345", "2301.12345"),
        ("arXiv:2301.12345v2", "2301.12345v2"),
        ("https://arxiv.org/abs/hep-th/9901001v1", "hep-th/9901001v1"),
        ("math.GT/0309136", "math.GT/0309136"),
        ("10.48550/arXiv.2312.07559", "2312.07559"),
    ],
)
def test_arxiv_ids_normalise(given: str, expected: str) -> None:
    assert parse_arxiv_id(given).canonical == expected


@pytest.mark.parametrize("given", ["10.1038/nature12373", "abc", "", "2301.1234567"])
def test_non_arxiv_ids_are_refused(given: str) -> None:
    with pytest.raises(DoigetError) as caught:
        parse_arxiv_id(given)
    assert caught.value.code is ErrorCode.INVALID_REF and "arXiv id" in caught.value.message


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("649DEF34F8BE52C8B66281AF98AE884C09AEF38B", "649def34f8be52c8b66281af98ae884c09aef38b"),
        ("10.1073/PNAS.1414271111", "DOI:10.1073/pnas.1414271111"),
        ("https://doi.org/10.1093/mind/lix.236.433", "DOI:10.1093/mind/lix.236.433"),
        ("arXiv:2312.07559v3", "ARXIV:2312.07559"),
        ("10.48550/arXiv.2312.07559", "ARXIV:2312.07559"),
        ("corpusid:14514057", "CorpusId:14514057"),
        ("PMID:25349395", "PMID:25349395"),
    ],
)
def test_semantic_scholar_ids_take_the_api_form(given: str, expected: str) -> None:
    assert api_paper_id(given) == expected


@pytest.mark.parametrize("given", ["turing", "PMID:", "DOI:not-a-doi", "x" * 300])
def test_unusable_semantic_scholar_ids_list_the_forms(given: str) -> None:
    with pytest.raises(DoigetError) as caught:
        api_paper_id(given)
    assert "CorpusId:" in caught.value.message


@pytest.mark.parametrize("given", ["10.1234/../../x", "CorpusId:../search", "DOI:10.1234/./a"])
def test_ids_that_would_move_the_url_path_are_refused(given: str) -> None:
    with pytest.raises(DoigetError) as caught:
        api_paper_id(given)
    assert caught.value.code is ErrorCode.INVALID_REF and "path part" in caught.value.message


def test_fetchable_ref_offers_every_id_doiget_fetch_paper_reads() -> None:
    assert fetchable_ref(None, "2202.12139v1", prefer="arxiv") == "arXiv:2202.12139"
    assert fetchable_ref("10.1109/x.1", "2202.12139v1", prefer="arxiv") == "arXiv:2202.12139"
    assert fetchable_ref("10.1109/x.1", "2202.12139v1") == "10.1109/x.1"
    assert fetchable_ref("10.1023/A:1007154515475", None) == "10.1023/a:1007154515475"
    assert fetchable_ref("10.1023/a:1007154515475", "2202.12139") == "10.1023/a:1007154515475"
    assert fetchable_ref(None, "hep-th/9901001v2") == "arXiv:hep-th/9901001"
    assert fetchable_ref(None, "math.GT/0309136") == "arXiv:math.GT/0309136"
    assert fetchable_ref("10.1234/has space", "not-an-id") is None
    assert fetchable_ref("10.1234/../etc", None) is None
    assert fetchable_ref(None, None) is None
    assert fetchable_ref(None, "astro-ph/0601001v1") == "arXiv:astro-ph/0601001"


# -- input checks --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"query": "x", "max_results": 0}, "maxResults must be from 1 to 100"),
        ({"query": "x", "max_results": 101}, "maxResults must be from 1 to 100"),
        ({"query": "x", "start_year": 2024, "end_year": 2020}, "startYear (2024) is after"),
        ({"query": "   "}, "query is empty"),
        ({"query": "x" * 1001}, "query must have at most 1000 characters"),
        ({"query": "x", "start_year": 1200}, "startYear must be at least 1900"),
    ],
)
def test_search_requests_are_checked(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(DoigetError) as caught:
        build(ScholarSearch, **kwargs)
    assert caught.value.code is ErrorCode.INVALID_REF and words in caught.value.message


@pytest.mark.parametrize("pmid", ["abc", "12a", "", "1" * 11, "-1"])
def test_pmids_must_be_digits(pmid: str) -> None:
    with pytest.raises(DoigetError):
        check_pmid(pmid)


# -- PubMed XML ----------------------------------------------------------------------


def test_structured_abstract_keeps_its_labels_and_inline_markup_is_flattened() -> None:
    article = _pubmed("efetch-pubmed-29106400.xml")["27797938"]
    assert article.title.startswith("Leucocyte telomere length, genetic variants at the TERT gene")
    sections = article.abstract.split("\n")
    assert [part.split(":", 1)[0] for part in sections] == [
        "OBJECTIVE",
        "DESIGN",
        "RESULTS",
        "CONCLUSIONS",
    ]
    assert "(TERT) gene region" in sections[0] and "ptrend=0.048" in sections[2]
    assert article.doi == "10.1136/gutjnl-2016-312510"  # not a DOI of its reference list
    assert article.journal == "Gut" and article.year == "2017"
    assert article.author_labels[:2] == ("Bao Y", "Prescott J")
    assert article.authors[0].family == "Bao" and article.authors[0].given == "Ying"
    assert "Journal Article" in article.publication_types
    assert article.mesh_terms[:2] == ("Adenocarcinoma", "Adult") and len(article.mesh_terms) == 21
    assert "Pancreatic Neoplasms" in article.mesh_terms


def test_mathml_and_html_in_an_abstract_become_readable_text() -> None:
    article = _pubmed("efetch-pubmed-30108519-html-mathml.xml")["30108519"]
    assert "</" not in article.abstract and "mml:" not in article.abstract
    assert "(P < 0.001; ES: 3.54)" in article.abstract  # a real "<" stays
    assert article.title.startswith('A "Blood Relationship" Between the Overlooked Minimum')
    assert article.doi == "10.3389/fphys.2018.01034"


def test_year_from_season_and_from_medline_date() -> None:
    records = _pubmed("efetch-pubmed-12091962_9997-abstract.xml")
    assert records["12091962"].year == "1990"  # <Year>1990</Year><Season>Spring</Season>
    assert records["12091962"].abstract == "" and records["12091962"].doi is None
    # The same real record with its PubDate written the way older MEDLINE records are.
    body = (FIXTURES / "pubmed/efetch-pubmed-11748933_11700088.xml").read_bytes()
    body = body.replace(
        b"<PubDate><Year>2001</Year><Month>Jun</Month></PubDate>",
        b"<PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate>",
        1,
    )
    dated = {article.pmid: article for article in parse_article_set(body)}
    assert dated["11748933"].year == "1998"
    assert dated["11700088"].year == "2001"


def test_search_results_and_their_failures() -> None:
    hits = parse_search((FIXTURES / "pubmed/esearch-pubmed-biopython.xml").read_bytes())
    assert hits.count == 63 and len(hits.ids) == 20 and hits.ids[0] == "41282813"
    empty = parse_search((FIXTURES / "pubmed/esearch-protein-abcXYZ-noresults.xml").read_bytes())
    assert empty.count == 0 and empty.ids == []
    with pytest.raises(ShapeError):
        parse_search((FIXTURES / "pubmed/esummary-noargs-error.xml").read_bytes())
    with pytest.raises(DoigetError) as caught:
        parse_search(b"<eSearchResult><ERROR>Search Backend failed</ERROR></eSearchResult>")
    assert "Search Backend failed" in caught.value.message


def test_pubmed_result_shape_has_the_spec_fields_and_ref() -> None:
    row = shapes.pubmed_paper(_pubmed("efetch-pubmed-38147649.xml")["38147649"]).model_dump(
        by_alias=True
    )
    assert list(row) == [
        "pmid",
        "title",
        "abstract",
        "authors",
        "journal",
        "year",
        "doi",
        "url",
        "publicationTypes",
        "meshTerms",
        "ref",
    ]
    assert row["url"] == "https://pubmed.ncbi.nlm.nih.gov/38147649/"
    assert row["doi"] == row["ref"] == "10.1073/pnas.2308706120"


# -- errors and cache ----------------------------------------------------------------


def test_errors_read_as_the_spec_says() -> None:
    assert scholar_error_text(DoigetError(ErrorCode.NOT_FOUND, "no")) == "Paper not found"
    assert scholar_error_text(DoigetError(ErrorCode.INVALID_REF, "bad")) == (
        "Invalid parameter: bad"
    )
    drift = DoigetError(
        ErrorCode.NETWORK_ERROR, "odd", DenialContext(DenialReason.SCHEMA_DRIFT, source="s2")
    )
    assert scholar_error_text(drift) == "Failed to parse response: odd"
    limited = DoigetError(ErrorCode.RATE_LIMITED, "try again in 30 s")
    assert scholar_error_text(limited) == "API error: try again in 30 s"


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_cache_keeps_answers_for_their_ttl_and_never_failures() -> None:
    clock = _Clock()
    cache = AnswerCache(600, timer=clock)
    calls: list[str] = []

    async def answer() -> str:
        calls.append("answer")
        return "hit"

    async def failure() -> str:
        calls.append("failure")
        raise DoigetError(ErrorCode.NETWORK_ERROR, "down")

    assert await cache.get_or_fetch(("a", 1), answer) == "hit"
    assert await cache.get_or_fetch(("a", 1), answer) == "hit"
    assert await cache.get_or_fetch(("a", 2), answer) == "hit"
    assert calls == ["answer", "answer"]
    clock.now = 601
    await cache.get_or_fetch(("a", 1), answer)
    assert calls == ["answer", "answer", "answer"]
    for _ in range(2):
        with pytest.raises(DoigetError):
            await cache.get_or_fetch(("b",), failure)
    assert calls.count("failure") == 2


async def test_a_zero_ttl_keeps_nothing() -> None:
    cache = AnswerCache(0)
    seen = []

    async def answer() -> int:
        seen.append(1)
        return 1

    await cache.get_or_fetch(("a",), answer)
    await cache.get_or_fetch(("a",), answer)
    assert len(seen) == 2 and len(cache) == 0
