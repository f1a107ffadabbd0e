"""academic_search against the replay upstream: order, fallback, enrichment, hints.

OpenAlex, Crossref, arXiv, PubMed and Unpaywall answers are recorded responses from
tests/fixtures. Where a test needs a list no one recorded (an OpenAlex page holding
chosen works, a Semantic Scholar search with every field), the envelope is built here
in the API's documented shape, around recorded records where they exist.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from doiget.config import load_settings
from doiget.contract import parse
from doiget.errors import DoigetError
from doiget.refs import parse_ref
from doiget.server.schema import input_schema
from doiget.web.academic import Academic, cut_abstract
from doiget.web.failure import Kind, failure_of
from doiget.web.requests import ACADEMIC_PROVIDERS as PROVIDERS
from doiget.web.requests import AcademicSearchRequest

from netutil import make_network
from replay import FIXTURES, ReplayUpstream, Reply

OPENALEX = ("api.openalex.org", "/works")
CROSSREF = ("api.crossref.org", "/works")
S2 = ("api.semanticscholar.org", "/graph/v1/paper/search")
ARXIV = ("export.arxiv.org", "/api/query")
ESEARCH = ("eutils.ncbi.nlm.nih.gov", "/entrez/eutils/esearch.fcgi")
EFETCH = ("eutils.ncbi.nlm.nih.gov", "/entrez/eutils/efetch.fcgi")
UNPAYWALL = "api.unpaywall.org"

PLOS_DOI = "10.1371/journal.pone.0033693"
PLOS_RECORD = "crossref/works-10.1371_journal.pone.0033693.json"
# The correction notice that the recorded Crossref record carries.
PLOS_CORRECTION = {
    "retracted": False,
    "kind": "correction",
    "date": "2012-05-08",
    "noticeDoi": "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda",
    "source": "publisher",
}
RETRACTION_NOTICE = {
    "DOI": "10.1371/journal.pone.0300001",
    "type": "retraction",
    "label": "Retraction",
    "source": "retraction-watch",
    "updated": {"date-parts": [[2024, 2, 1]]},
}
PLOS_RETRACTION = {
    "retracted": True,
    "kind": "retraction",
    "date": "2024-02-01",
    "noticeDoi": "10.1371/journal.pone.0300001",
    "source": "retraction-watch",
}
# Three recorded OpenAlex works that Unpaywall also recorded: closed (Adak 2001),
# bronze with a publisher PDF (Makris 2014), gold without a PDF link (Herger 2025).
ADAK = "10.1023/a:1007154515475"
MAKRIS = "10.1073/pnas.1414271111"
HERGER = "10.1016/j.xgen.2025.100814"
OPENALEX_WORKS = {
    ADAK: "openalex/works-doi-10.1023_a_1007154515475.json",
    MAKRIS: "openalex/works-doi-10.1073_pnas.1414271111.json",
    HERGER: "openalex/works-doi-10.1016_j.xgen.2025.100814.json",
}
UNPAYWALL_RECORDS = {
    ADAK: "unpaywall/v2-10.1023_a_1007154515475.json",
    MAKRIS: "unpaywall/v2-10.1073_pnas.1414271111.json",
    HERGER: "unpaywall/v2-10.1016_j.xgen.2025.100814.json",
}
MAKRIS_PDF = "https://www.pnas.org/content/pnas/111/45/E4832.full.pdf"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def openalex_page(*works: dict[str, Any]) -> dict[str, Any]:
    """A /works list response (meta + results) around ``works``."""
    return {"meta": {"count": len(works), "page": 1, "per_page": 25}, "results": list(works)}


def crossref_page(*messages: dict[str, Any]) -> dict[str, Any]:
    """A /works query response around ``messages`` (each one record's message)."""
    return {
        "status": "ok",
        "message-type": "work-list",
        "message": {"total-results": len(messages), "items": list(messages)},
    }


def plos_record(*, retracted: bool) -> dict[str, Any]:
    record = load(PLOS_RECORD)
    if retracted:
        record = copy.deepcopy(record)
        record["message"]["updated-by"].append(RETRACTION_NOTICE)
    return record


def serve_cross_api_set(upstream: ReplayUpstream) -> None:
    upstream.json(*OPENALEX, openalex_page(*(load(name) for name in OPENALEX_WORKS.values())))
    for doi, name in UNPAYWALL_RECORDS.items():
        upstream.fixture(UNPAYWALL, f"/v2/{doi}", name)


class JsonAcademic:
    """Academic called the way academic_search calls it: JSON arguments in, JSON out."""

    def __init__(self, academic: JsonAcademic) -> None:
        self.academic = academic

    async def search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        request = parse(AcademicSearchRequest, arguments)
        return (await self.academic.search(request)).wire()


@pytest.fixture
async def academic(doiget_env: dict[str, str]) -> AsyncIterator[JsonAcademic]:
    network = make_network(doiget_env)
    yield JsonAcademic(Academic(load_settings(doiget_env), network))
    await network.aclose()


def by_doi(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {paper["doi"]: paper for paper in body["papers"] if "doi" in paper}


# -- date order -------------------------------------------------------------------


async def test_date_sort_puts_openalex_papers_newest_first(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    # The recorded relevance page lists 1989, 1992, 2005, 2007, 2007, ... in that order.
    upstream.fixture(*OPENALEX, "openalex/works-search-machine_learning-per_page20.json")
    by_relevance = await academic.search({"query": "machine learning"})
    by_date = await academic.search({"query": "machine learning", "sort_by": "date"})

    assert [paper["year"] for paper in by_relevance["papers"]] == [1989, 1992, 2005, 2007, 2007]
    assert [paper["year"] for paper in by_date["papers"]] == [2007, 2007, 2005, 1992, 1989]
    assert {paper["title"] for paper in by_date["papers"]} == {
        paper["title"] for paper in by_relevance["papers"]
    }
    # Same-date papers keep the index's order.
    assert by_date["papers"][0]["title"] == by_relevance["papers"][3]["title"]
    assert by_date["source"] == "openalex" and by_date["totalResults"] == 2402292
    assert by_date["resultCount"] == 5 and by_date["trust"] == "untrusted-external-content"
    sent = [request.query for request in upstream.requests_to(OPENALEX[0])]
    assert "sort" not in sent[0]
    assert sent[1]["sort"] == "publication_date:desc"
    assert sent[1]["search"] == "machine learning" and sent[1]["per_page"] == "5"


async def test_date_sort_puts_arxiv_papers_newest_first(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    feed = upstream.fixture(*ARXIV, "arxiv/search_query-testing-start0-max10.atom")
    upstream_order = re.findall(rb"<published>(\d{4}-\d\d-\d\d)", feed)
    assert upstream_order != sorted(upstream_order, reverse=True)  # the feed is not in order

    body = await academic.search(
        {"query": "testing", "provider": "arxiv", "sort_by": "date", "num_results": 10}
    )

    sent = upstream.requests_to(ARXIV[0])[0].query
    assert sent["sortBy"] == "submittedDate" and sent["sortOrder"] == "descending"
    assert sent["search_query"] == "all:testing"
    papers = body["papers"]
    assert len(papers) == 10 and body["source"] == "arxiv"
    assert papers[0]["ref"] == "arXiv:2503.05378"
    assert papers[0]["url"] == "https://arxiv.org/abs/2503.05378v2"
    years = [paper["year"] for paper in papers]
    assert years == sorted(years, reverse=True)
    assert all(paper["openAccess"] is True for paper in papers)
    assert all(paper["pdfUrl"].startswith("https://arxiv.org/pdf/") for paper in papers)
    # arXiv papers are fetched by their arXiv id even when a journal DOI is known.
    assert all(paper["ref"].startswith("arXiv:") for paper in papers)
    assert not upstream.requests_to(UNPAYWALL)  # every arXiv paper has its PDF already


async def test_semantic_scholar_gets_a_single_year_as_the_scholar_tools_send_it(
    academic: Academic, upstream: ReplayUpstream
) -> None:
    upstream.json(*S2, {"total": 0, "offset": 0})
    await academic.search(
        {"query": "engines", "provider": "semantic_scholar", "year_from": 2020, "year_to": 2020}
    )
    await academic.search({"query": "engines", "provider": "semantic_scholar", "year_from": 2020})
    assert [request.query["year"] for request in upstream.requests_to(S2[0])] == ["2020", "2020-"]


async def test_semantic_scholar_cannot_sort_by_date_so_its_matches_are_sorted_here(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    def s2(paper_id: str, title: str, date: str | None, year: int) -> dict[str, Any]:
        return {
            "paperId": paper_id,
            "title": title,
            "year": year,
            "publicationDate": date,
            "authors": [{"authorId": "1", "name": "Ada Lovelace"}],
            "externalIds": {},
            "url": f"https://www.semanticscholar.org/paper/{paper_id}",
        }

    upstream.json(
        *S2,
        {
            "total": 3,
            "offset": 0,
            "data": [
                s2("a" * 40, "Middle", "2017-06-01", 2017),
                s2("b" * 40, "Oldest", None, 2015),
                s2("c" * 40, "Newest", "2020-01-15", 2020),
            ],
        },
    )
    body = await academic.search(
        {
            "query": "engines",
            "provider": "semantic_scholar",
            "sort_by": "date",
            "year_from": 2015,
            "year_to": 2020,
        }
    )
    assert [paper["title"] for paper in body["papers"]] == ["Newest", "Middle", "Oldest"]
    assert upstream.requests_to(S2[0])[0].query["year"] == "2015-2020"
    assert any("does not sort by date" in note for note in body["notes"])
    assert "ref" not in body["papers"][0]  # no DOI or arXiv id: nothing to fetch by


# -- which index answers --------------------------------------------------------------


async def test_a_failing_index_passes_the_search_to_the_next(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.route(*OPENALEX, Reply(500, b"upstream exploded"))
    upstream.fixture(*CROSSREF, "crossref/works-query-ecology-rows2.json")
    body = await academic.search({"query": "ecology", "num_results": 2, "year_from": 2010})

    assert body["source"] == "crossref"
    assert {paper["source"] for paper in body["papers"]} == {"crossref"}
    assert body["totalResults"] == 586628
    assert body["papers"][0]["title"] == "Communicating Ecology"
    assert body["papers"][0]["url"] == "https://doi.org/10.1093/obo/9780199830060-0238"
    assert len(body["papers"][0]["abstract"]) <= 500
    assert "openalex did not answer" in body["notes"][0]
    assert "crossref answered instead" in body["notes"][0]
    crossref_calls = upstream.requests_to(CROSSREF[0])
    # Crossref's own records carry their notices: no second lookup per paper.
    assert [call.path for call in crossref_calls] == ["/works"]
    assert crossref_calls[0].query["filter"] == "from-pub-date:2010-01-01"
    assert not upstream.requests_to(S2[0])


async def test_source_arxiv_asks_openalex_for_arxiv_papers_then_arxiv(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.route(*OPENALEX, Reply(503, b"busy"))
    upstream.fixture(*ARXIV, "arxiv/search_query-testing-start0-max10.atom")
    body = await academic.search({"query": "testing", "source": "arxiv", "num_results": 3})
    assert upstream.requests_to(OPENALEX[0])[0].query["filter"] == "indexed_in:arxiv"
    assert body["source"] == "arxiv" and body["resultCount"] == 3
    # OpenAlex could not answer for arXiv papers; Crossref cannot, so it is not asked.
    assert all(call.path != "/works" for call in upstream.requests_to(CROSSREF[0]))


async def test_a_named_provider_is_asked_alone(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.route(*OPENALEX, Reply(500, b"upstream exploded"))
    upstream.fixture(*CROSSREF, "crossref/works-query-ecology-rows2.json")
    with pytest.raises(DoigetError) as caught:
        await academic.search({"query": "ecology", "provider": "openalex"})
    failure = failure_of(caught.value)
    assert failure.provider == "openalex" and failure.retryable
    assert "openalex could not answer" in failure.message
    assert "crossref" in failure.suggested_action
    assert not upstream.requests_to(CROSSREF[0])


async def test_unknown_provider_lists_the_five(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    with pytest.raises(DoigetError) as caught:
        await academic.search({"query": "ecology", "provider": "google"})
    failure = failure_of(caught.value)
    assert failure.kind is Kind.VALIDATION
    assert all(name in failure.message for name in PROVIDERS)
    assert upstream.requests == []
    assert input_schema(AcademicSearchRequest)["properties"]["provider"]["enum"] == list(PROVIDERS)


async def test_a_source_the_named_provider_cannot_restrict_to_is_noted(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*CROSSREF, "crossref/works-query-ecology-rows2.json")
    body = await academic.search(
        {"query": "ecology", "provider": "crossref", "source": "arxiv", "num_results": 2}
    )
    assert body["resultCount"] == 2
    assert body["notes"] == [
        "crossref cannot restrict results to arxiv; these are from all of crossref."
    ]


async def test_pubmed_takes_the_year_range_natively(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    upstream.fixture(*EFETCH, "pubmed/efetch-pubmed-11748933_11700088.xml")
    body = await academic.search(
        {"query": "biopython", "provider": "pubmed", "year_from": 2000, "year_to": 2002}
    )
    sent = upstream.requests_to(ESEARCH[0])[0].query
    assert (sent["mindate"], sent["maxdate"]) == ("2000/01/01", "2002/12/31")
    assert body["source"] == "pubmed" and body["totalResults"] == 63
    first = body["papers"][0]
    assert first["doi"] == "10.1006/cryo.2001.2328" and first["year"] == 2001
    assert first["ref"] == "10.1006/cryo.2001.2328"
    assert len(first["abstract"]) <= 500 and first["abstract"].endswith("…")
    assert sent["sort"] == "relevance"


async def test_pubmed_is_asked_for_newest_first_and_answers_in_date_order(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*ESEARCH, "pubmed/esearch-pubmed-biopython.xml")
    upstream.fixture(*EFETCH, "pubmed/efetch-pubmed-11748933_11700088.xml")
    body = await academic.search({"query": "biopython", "provider": "pubmed", "sort_by": "date"})
    assert upstream.requests_to(ESEARCH[0])[0].query["sort"] == "pub_date"
    years = [paper["year"] for paper in body["papers"]]
    assert years == sorted(years, reverse=True)
    assert not any("sort" in note for note in body.get("notes", []))


# -- enrichment and filters -----------------------------------------------------------


async def test_unpaywall_fills_pdf_links_and_open_access(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    serve_cross_api_set(upstream)
    papers = by_doi(await academic.search({"query": "assorted"}))

    assert papers[MAKRIS]["pdfUrl"] == MAKRIS_PDF and papers[MAKRIS]["openAccess"] is True
    assert papers[ADAK]["openAccess"] is False and "pdfUrl" not in papers[ADAK]
    assert papers[HERGER]["openAccess"] is True and "pdfUrl" not in papers[HERGER]
    assert papers[MAKRIS]["ref"] == MAKRIS
    assert papers[HERGER]["ref"] == HERGER
    assert papers[ADAK]["ref"] == ADAK  # a ':' in the DOI: fetchable all the same
    for paper in papers.values():
        assert parse_ref(paper["ref"]).value == paper["doi"].lower()
        assert paper["url"] == f"https://doi.org/{paper['doi']}"
        assert None not in paper.values()
    looked_up = sorted(call.path for call in upstream.requests_to(UNPAYWALL))
    assert looked_up == sorted(f"/v2/{doi}" for doi in UNPAYWALL_RECORDS)
    assert upstream.requests_to(UNPAYWALL)[0].query["email"] == "tests@example.org"


async def test_open_access_and_pdf_only_filters(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    serve_cross_api_set(upstream)
    free = await academic.search({"query": "assorted", "open_access": True})
    with_pdf = await academic.search({"query": "assorted", "pdf_only": True})
    assert set(by_doi(free)) == {MAKRIS, HERGER}
    assert [paper["doi"] for paper in with_pdf["papers"]] == [MAKRIS]
    # Room for the filters to drop papers: twice the papers are asked for.
    sent = upstream.requests_to(OPENALEX[0])
    assert sent[0].query["per_page"] == "10" and sent[0].query["filter"] == "is_oa:true"


async def test_without_an_email_unpaywall_is_not_asked_and_the_filter_says_why(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    env = {key: value for key, value in doiget_env.items() if key != "DOIGET_EMAIL"}
    network = make_network(env)
    try:
        upstream.fixture(*CROSSREF, "crossref/works-query-ecology-rows2.json")
        body = await JsonAcademic(Academic(load_settings(env), network)).search(
            {"query": "ecology", "provider": "crossref", "open_access": True}
        )
    finally:
        await network.aclose()
    assert body["papers"] == [] and not upstream.requests_to(UNPAYWALL)
    assert any("DOIGET_EMAIL" in note for note in body["notes"])
    assert body["hints"]["reason"] == "filters_too_restrictive"


async def test_retraction_status_from_crossref_notices(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    # An OpenAlex work (hand-made, minimal) whose DOI Crossref holds the record of.
    upstream.json(
        *OPENALEX,
        openalex_page(
            {
                "doi": f"https://doi.org/{PLOS_DOI}",
                "title": "Methylphenidate Exposure Induces Dopamine Neuron Loss and "
                "Activation of Microglia in the Basal Ganglia of Mice",
                "publication_year": 2012,
                "publication_date": "2012-03-21",
            }
        ),
    )
    upstream.json("api.crossref.org", f"/works/{PLOS_DOI}", plos_record(retracted=False))
    corrected = await academic.search({"query": "methylphenidate"})
    assert corrected["papers"][0]["retractionStatus"] == PLOS_CORRECTION

    upstream.json("api.crossref.org", f"/works/{PLOS_DOI}", plos_record(retracted=True))
    retracted = await academic.search({"query": "methylphenidate dopamine"})
    assert retracted["papers"][0]["retractionStatus"] == PLOS_RETRACTION


async def test_a_crossref_answer_carries_its_own_retraction_notices(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.json(*CROSSREF, crossref_page(plos_record(retracted=True)["message"]))
    body = await academic.search({"query": "methylphenidate", "provider": "crossref"})
    paper = body["papers"][0]
    assert paper["retractionStatus"] == PLOS_RETRACTION
    assert paper["doi"] == PLOS_DOI and paper["ref"] == PLOS_DOI
    assert paper["journal"] == "PLoS ONE" and paper["year"] == 2012
    assert [call.path for call in upstream.requests_to(CROSSREF[0])] == ["/works"]


async def test_a_failed_crossref_lookup_leaves_the_status_out(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    serve_cross_api_set(upstream)  # no Crossref routes: every lookup is a 404
    body = await academic.search({"query": "assorted"})
    assert body["resultCount"] == 3
    assert all("retractionStatus" not in paper for paper in body["papers"])


# -- zero results and abstracts -------------------------------------------------------


async def test_zero_results_answer_with_hints_and_no_fallback(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*OPENALEX, "openalex/works-filter-abstract.search.no_stem-surgery-empty.json")
    body = await academic.search({"query": "zzqx wvvk"})
    assert body["papers"] == [] and body["resultCount"] == 0 and body["totalResults"] == 0
    assert body["source"] == "openalex"
    hints = body["hints"]
    assert hints["reason"] == "no_match" and hints["filtersApplied"] == []
    assert "try provider=crossref" in hints["suggestedActions"]
    assert "try provider=openalex" not in hints["suggestedActions"]
    assert "do not show that something does not exist" in hints["epistemicWarning"]
    assert not upstream.requests_to(CROSSREF[0])  # an empty answer is an answer


async def test_zero_results_under_filters_name_them(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*CROSSREF, "crossref/works-query.title-gibberish-zero-results.json")
    body = await academic.search(
        {
            "query": "abs12032jsdafn",
            "provider": "crossref",
            "year_from": 2020,
            "pdf_only": True,
            "source": "all",
        }
    )
    hints = body["hints"]
    assert hints["reason"] == "filters_too_restrictive"
    assert hints["filtersApplied"] == ["year_from", "pdf_only"]
    assert "remove the pdf_only filter" in hints["suggestedActions"]
    sent = upstream.requests_to(CROSSREF[0])[0].query
    assert sent["filter"] == "from-pub-date:2020-01-01,has-full-text:true"


async def test_abstracts_are_cut_at_a_word_within_500_characters(
    academic: JsonAcademic, upstream: ReplayUpstream
) -> None:
    serve_cross_api_set(upstream)
    abstract = by_doi(await academic.search({"query": "assorted"}))[MAKRIS]["abstract"]
    assert len(abstract) <= 500 and abstract.endswith("…")
    assert abstract.startswith("Significance The inadequate mechanical properties")
    # The cut falls between words of the full abstract (973 characters).
    words = set(" ".join(load(OPENALEX_WORKS[MAKRIS])["abstract_inverted_index"]).split())
    assert abstract[:-1].split()[-1] in words

    text = "word " * 200
    cut = cut_abstract(text)
    assert len(cut) <= 500 and cut.endswith("word…")
    assert cut_abstract("short  text\n") == "short text"
    assert len(cut_abstract("x" * 900)) == 500  # one long token: cut where it must be
