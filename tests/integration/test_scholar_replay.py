"""The scholar core against replayed arXiv, Semantic Scholar and PubMed answers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import bibtexparser
import pytest
from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors
from pybtex.database import parse_string as pybtex_parse
from pylatexenc.latex2text import LatexNodes2Text

from doiget.contract import build, plain
from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.scholar.contracts import (
    ArxivLookup,
    ArxivSearch,
    CitingPapers,
    PubmedLookup,
    ScholarSearch,
    SemanticScholarLookup,
)
from doiget.scholar.service import Scholar
from doiget.sources.semantic_scholar import FIELDS

from replay import FIXTURES, ReplayUpstream, Reply
from scholarutil import (
    ARXIV_API,
    EFETCH,
    ESEARCH,
    EUTILS,
    S2,
    S2_CITATIONS,
    S2_PNAS,
    S2_SEARCH,
    make_scholar,
    route_arxiv_search,
    route_pubmed_record,
    route_pubmed_search,
    route_s2_pnas,
)


@pytest.fixture
async def scholar(doiget_env: dict[str, str]) -> AsyncIterator[Scholar]:
    core = make_scholar(doiget_env)
    yield core
    await core.aclose()


@pytest.fixture
async def keyed_scholar(doiget_env: dict[str, str]) -> AsyncIterator[Scholar]:
    core = make_scholar(
        {**doiget_env, "SEMANTIC_SCHOLAR_API_KEY": "s2-secret-1", "PUBMED_API_KEY": "ncbi-secret-2"}
    )
    yield core
    await core.aclose()


def wire(found: Any) -> Any:
    """Results as the tools send them: by their wire names, nulls kept."""
    return plain(found)


async def async_build(model: type[ArxivSearch], **values: Any) -> ArxivSearch:
    return build(model, **values)


async def _error(call: object) -> DoigetError:
    with pytest.raises(DoigetError) as caught:
        await call  # type: ignore[misc]
    return caught.value


# -- arXiv ---------------------------------------------------------------------------


async def test_arxiv_search_sends_a_relevance_query_and_keeps_arxivs_order(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    route_arxiv_search(upstream)
    rows = wire(
        await scholar.search_arxiv(
            ArxivSearch(query="testing", start_year=2020, end_year=2024, author="Arnaud Gotlieb")
        )
    )
    sent = upstream.requests_to("export.arxiv.org")[0].query
    assert sent == {
        "search_query": "all:testing AND au:Arnaud AND au:Gotlieb "
        "AND submittedDate:[202001010000 TO 202412312359]",
        "start": "0",
        "max_results": "10",
        "sortBy": "relevance",
        "sortOrder": "descending",
    }
    assert len(rows) == 10
    first = rows[0]
    assert first == {
        "id": "2202.12139v1",
        "title": "Testing Deep Learning Models: A First Comparative Study of Multiple Testing "
        "Techniques",
        "authors": ["Mohit Kumar Ahuja", "Arnaud Gotlieb", "Helge Spieker"],
        "abstract": first["abstract"],
        "published": "2022-02-24T15:05:19Z",
        "updated": "2022-02-24T15:05:19Z",
        "url": "https://arxiv.org/abs/2202.12139v1",
        "pdfUrl": "https://arxiv.org/pdf/2202.12139v1",
        "categories": ["cs.SE", "cs.LG"],
        "primaryCategory": "cs.SE",
        "ref": "arXiv:2202.12139",
    }
    assert first["abstract"].startswith("Deep Learning (DL) has revolutionized")
    # Relevance order is arXiv's: the feed's order, which is not a date order.
    published = [row["published"] for row in rows]
    assert published != sorted(published, reverse=True)
    feed = (FIXTURES / "arxiv/search_query-testing-start0-max10.atom").read_text()
    assert [feed.index(f"abs/{row['id']}<") for row in rows] == sorted(
        feed.index(f"abs/{row['id']}<") for row in rows
    )


async def test_arxiv_date_orders_are_sent_as_asked(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    route_arxiv_search(upstream)
    await scholar.search_arxiv(ArxivSearch(query="testing", max_results=5, sort_by="submittedDate"))
    assert upstream.requests_to("export.arxiv.org")[0].query["sortBy"] == "submittedDate"
    error = await _error(async_build(ArxivSearch, query="testing", sort_by="date"))
    assert error.code is ErrorCode.INVALID_REF and "sortBy must be one of" in error.message


@pytest.mark.parametrize(
    ("given", "id_list", "fixture", "expected"),
    [
        (
            "astro-ph/0601001",
            "astro-ph/0601001",
            "id_list-astro-ph_0601001.atom",
            "arXiv:astro-ph/0601001",
        ),
        ("arXiv:2104.12255v1", "2104.12255v1", "id_list-2104.12255v1.atom", "arXiv:2104.12255"),
    ],
)
async def test_arxiv_paper_by_old_style_and_versioned_id(
    scholar: Scholar,
    upstream: ReplayUpstream,
    given: str,
    id_list: str,
    fixture: str,
    expected: str | None,
) -> None:
    upstream.fixture(*ARXIV_API, f"arxiv/{fixture}")
    paper = wire(await scholar.get_arxiv_paper(ArxivLookup(arxiv_id=given)))
    assert upstream.requests_to("export.arxiv.org")[0].query["id_list"] == id_list
    assert paper["id"].startswith(id_list) and paper["title"]
    assert paper["url"] == f"https://arxiv.org/abs/{paper['id']}"
    assert paper["ref"] == expected


@pytest.mark.usefixtures("unpaced")  # two requests to one source: the gap is not the subject
async def test_arxiv_unknown_and_malformed_ids(scholar: Scholar, upstream: ReplayUpstream) -> None:
    upstream.fixture(*ARXIV_API, "arxiv/id_list-0000.0000-empty.atom")
    assert (
        await _error(scholar.get_arxiv_paper(ArxivLookup(arxiv_id="0000.0000")))
    ).code is ErrorCode.NOT_FOUND
    upstream.fixture(*ARXIV_API, "arxiv/id_list-abc-error400.atom", status=400)
    error = await _error(scholar.get_arxiv_paper(ArxivLookup(arxiv_id="1234.5678")))
    assert error.code is ErrorCode.INVALID_REF and "arXiv refused" in error.message


async def test_arxiv_bibtex_and_get_share_one_request(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.fixture(*ARXIV_API, "arxiv/id_list-1605.08386.atom")
    paper = wire(await scholar.get_arxiv_paper(ArxivLookup(arxiv_id="1605.08386")))
    bibtex = await scholar.arxiv_to_bibtex(ArxivLookup(arxiv_id="arXiv:1605.08386"))
    assert len(upstream.requests_to("export.arxiv.org")) == 1
    assert bibtex.startswith("@misc{stanley2016heat,")
    assert "eprint = {1605.08386v1}" in bibtex and "archivePrefix = {arXiv}" in bibtex
    assert "primaryClass = {math.CO}" in bibtex and paper["primaryCategory"] == "math.CO"


# -- Semantic Scholar ----------------------------------------------------------------


async def test_s2_paper_field_by_field(scholar: Scholar, upstream: ReplayUpstream) -> None:
    route_s2_pnas(upstream)
    paper = wire(
        await scholar.get_semantic_scholar_paper(
            SemanticScholarLookup(identifier="10.1073/pnas.1414271111")
        )
    )
    recorded = json.loads(
        (FIXTURES / "semanticscholar/paper-DOI_10.1073_pnas.1414271111.json").read_text()
    )
    assert paper["paperId"] == recorded["paperId"]
    assert paper["title"] == recorded["title"]
    assert paper["year"] == 2014 and paper["publicationDate"] == "2014-10-27"
    assert paper["authors"] == recorded["authors"]
    assert paper["citationCount"] == 136 and paper["influentialCitationCount"] == 4
    assert paper["referenceCount"] == 0  # not in this recorded answer
    assert paper["abstract"] is None
    assert paper["url"] == recorded["url"] and paper["venue"] == recorded["venue"]
    assert paper["ref"] == "10.1073/pnas.1414271111"
    assert upstream.requests_to(S2)[0].query == {"fields": FIELDS}


async def test_s2_search_sends_years_and_reads_the_page(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.fixture(S2, S2_SEARCH, "semanticscholar/paper-search-turing-fields_title-offset0.json")
    rows = wire(
        await scholar.search_semantic_scholar(
            ScholarSearch(query="turing", max_results=5, start_year=2019, end_year=2021)
        )
    )
    query = upstream.requests_to(S2)[0].query
    assert query["query"] == "turing" and query["year"] == "2019-2021" and query["limit"] == "5"
    assert [row["paperId"] for row in rows][:2] == [
        "7cbc2a7843411a1768ab762930707af0a3c33a19",
        "6b0f06617d9f5256a80ed62d9398acb92a55a6bd",
    ]
    assert rows[4]["title"] == "Neural Turing Machines" and len(rows) == 5
    assert rows[0]["url"] == (
        "https://www.semanticscholar.org/paper/7cbc2a7843411a1768ab762930707af0a3c33a19"
    )


async def test_s2_search_sends_a_single_year_compactly(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.fixture(S2, S2_SEARCH, "semanticscholar/paper-search-turing-fields_title-offset0.json")
    await scholar.search_semantic_scholar(
        ScholarSearch(query="turing", max_results=5, start_year=2020, end_year=2020)
    )
    await scholar.search_semantic_scholar(
        ScholarSearch(query="turing", max_results=5, end_year=2021)
    )
    assert [request.query["year"] for request in upstream.requests_to(S2)] == ["2020", "-2021"]


async def test_s2_search_with_zero_hits_is_an_empty_list(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.fixture(S2, S2_SEARCH, "semanticscholar/paper-search-no-results.json")
    assert await scholar.search_semantic_scholar(ScholarSearch(query="n0 r3sult s3arch t3rm")) == []


async def test_s2_citations_from_the_recorded_page(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.fixture(
        S2, S2_CITATIONS, "semanticscholar/paper-CorpusID_14514057-citations-offset0.json"
    )
    rows = wire(
        await scholar.get_paper_citations(CitingPapers(paper_id="CorpusId:14514057", max_results=3))
    )
    assert [row["paperId"] for row in rows] == [
        "344e7fb2000d9063cbc9deb550e46946bafe3c90",
        "279d374ecf914ee2b9dffcb1276c0e0ed2c7cc38",
        "0d886dcfb92da76081fbf4872a74cc591be66535",
    ]
    assert (
        rows[2]["title"]
        == "Does Household Access to Financial Services Help Reduce Poverty in Indonesia?"
    )
    assert upstream.requests_to(S2)[0].query["limit"] == "3"


async def test_s2_citations_follow_pages_past_unidentified_papers(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    recorded = json.loads(
        (FIXTURES / "semanticscholar/paper-CorpusID_14514057-citations-offset0.json").read_text()
    )
    # Page one: three real rows and two citing papers S2 cannot identify (paperId null).
    first = {
        "offset": 0,
        "next": 5,
        "data": [*recorded["data"][:3], *[{"citingPaper": {"paperId": None, "title": "?"}}] * 2],
    }

    def answer(query: dict[str, str]) -> Reply:
        page = first if query["offset"] == "0" else {"offset": 5, "data": recorded["data"][3:]}
        return Reply(200, json.dumps(page).encode(), {"Content-Type": "application/json"})

    upstream.responder(S2, S2_CITATIONS, answer)
    rows = wire(
        await scholar.get_paper_citations(CitingPapers(paper_id="CorpusId:14514057", max_results=6))
    )
    offsets = [(r.query["offset"], r.query["limit"]) for r in upstream.requests_to(S2)]
    assert offsets == [("0", "6"), ("5", "3")]
    assert [row["paperId"] for row in rows] == [
        row["citingPaper"]["paperId"] for row in recorded["data"][:6]
    ]


async def test_s2_not_found_and_rejected_requests(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.fixture(
        S2, "/graph/v1/paper/CorpusId:0", "semanticscholar/paper-0-not-found-404.json", status=404
    )
    assert (
        await _error(
            scholar.get_semantic_scholar_paper(SemanticScholarLookup(identifier="CorpusId:0"))
        )
    ).code is ErrorCode.NOT_FOUND
    upstream.fixture(
        S2, "/graph/v1/paper/CorpusId:1", "semanticscholar/paper-bad-fields-400.json", status=400
    )
    error = await _error(
        scholar.get_semantic_scholar_paper(SemanticScholarLookup(identifier="CorpusId:1"))
    )
    assert error.code is ErrorCode.NETWORK_ERROR
    assert "HTTP 400" in error.message and "Unrecognized or unsupported fields" in error.message


async def test_s2_throttled_then_answered(scholar: Scholar, upstream: ReplayUpstream) -> None:
    body = (FIXTURES / "semanticscholar/paper-DOI_10.1073_pnas.1414271111.json").read_bytes()
    upstream.route(
        S2,
        S2_PNAS,
        Reply(429, b'{"message": "Too Many Requests"}', {"Retry-After": "1"}),
        Reply(200, body, {"Content-Type": "application/json"}),
    )
    paper = wire(
        await scholar.get_semantic_scholar_paper(
            SemanticScholarLookup(identifier="DOI:10.1073/pnas.1414271111")
        )
    )
    assert paper["citationCount"] == 136
    hits = upstream.requests_to(S2)
    assert [r.status for r in hits] == [429, 200] and hits[1].started - hits[0].started >= 1.0


async def test_s2_throttled_to_the_end_says_when_to_retry(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.route(S2, S2_PNAS, Reply(429, b"{}", {"Retry-After": "120"}))
    error = await _error(
        scholar.get_semantic_scholar_paper(
            SemanticScholarLookup(identifier="10.1073/pnas.1414271111")
        )
    )
    assert error.code is ErrorCode.RATE_LIMITED and "try again in 120 s" in error.message


@pytest.mark.usefixtures("unpaced")  # two requests to one source: the gap is not the subject
async def test_upstream_down_is_an_error_not_an_empty_result(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    upstream.route(S2, S2_SEARCH, Reply(503, b"down"))
    error = await _error(scholar.search_semantic_scholar(ScholarSearch(query="turing")))
    assert error.code is ErrorCode.NETWORK_ERROR and "tried 4 times" in error.message
    assert len(upstream.requests_to(S2)) == 4


@pytest.mark.parametrize(
    ("host", "path", "body", "call"),
    [
        (S2, S2_SEARCH, b'{"total": 3, "data": [{"paperId": "x"', "s2"),
        (S2, S2_SEARCH, b'{"total": 3, "data": "nope"}', "s2"),
        (EUTILS, ESEARCH, b"<eSearchResult><Count>2</Count><IdList><Id>1</Id>", "pubmed"),
        ("export.arxiv.org", "/api/query", b"<html><body>maintenance</body></html>", "arxiv"),
    ],
)
async def test_malformed_answers_are_parse_failures(
    scholar: Scholar, upstream: ReplayUpstream, host: str, path: str, body: bytes, call: str
) -> None:
    upstream.route(host, path, Reply(200, body))
    request = ArxivSearch(query="anything")
    run = {
        "s2": scholar.search_semantic_scholar(request),
        "pubmed": scholar.search_pubmed(request),
        "arxiv": scholar.search_arxiv(request),
    }
    for name, coroutine in run.items():
        if name != call:
            coroutine.close()
    error = await _error(run[call])
    assert error.denial is not None and error.denial.reason is DenialReason.SCHEMA_DRIFT


async def test_keys_are_sent_and_never_shown(
    keyed_scholar: Scholar, upstream: ReplayUpstream
) -> None:
    route_s2_pnas(upstream)
    await keyed_scholar.get_semantic_scholar_paper(
        SemanticScholarLookup(identifier="10.1073/pnas.1414271111")
    )
    assert upstream.requests_to(S2)[0].headers["x-api-key"] == "s2-secret-1"
    upstream.route(EUTILS, ESEARCH, Reply(500, b"ncbi-secret-2 oops"))
    error = await _error(keyed_scholar.search_pubmed(ScholarSearch(query="cancer")))
    sent = upstream.requests_to(EUTILS)[0].query
    assert sent["api_key"] == "ncbi-secret-2" and sent["tool"] == "doiget"
    assert "ncbi-secret-2" not in error.message and "[redacted]" in error.message


# -- PubMed --------------------------------------------------------------------------


async def test_pubmed_search_passes_mesh_syntax_and_years(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    route_pubmed_search(upstream)
    rows = wire(
        await scholar.search_pubmed(
            ScholarSearch(
                query="diabetes[MeSH] AND treatment", max_results=2, start_year=2020, end_year=2022
            )
        )
    )
    esearch, efetch = upstream.requests_to(EUTILS)
    assert esearch.path == ESEARCH and efetch.path == EFETCH
    assert esearch.query["term"] == "diabetes[MeSH] AND treatment"
    assert esearch.query["sort"] == "relevance" and esearch.query["retmax"] == "2"
    assert (esearch.query["datetype"], esearch.query["mindate"], esearch.query["maxdate"]) == (
        "pdat",
        "2020/01/01",
        "2022/12/31",
    )
    assert esearch.query["email"] == "tests@example.org" and "api_key" not in esearch.query
    assert efetch.query["id"] == "41282813,41148224" and efetch.query["retmode"] == "xml"
    assert [row["pmid"] for row in rows] == ["11748933", "11700088"]
    assert rows[0]["title"] == (
        "Is cryopreservation a homogeneous process? Ultrastructure and motility of untreated, "
        "prefreezing, and postthawed spermatozoa of Diplodus puntazzo (Cetti)."
    )
    assert rows[0]["doi"] == "10.1006/cryo.2001.2328" and rows[0]["year"] == "2001"
    assert rows[0]["journal"] == "Cryobiology" and rows[0]["ref"] == "10.1006/cryo.2001.2328"


async def test_pubmed_zero_hits_fetch_nothing(scholar: Scholar, upstream: ReplayUpstream) -> None:
    upstream.fixture(EUTILS, ESEARCH, "pubmed/esearch-protein-abcXYZ-noresults.xml")
    assert await scholar.search_pubmed(ScholarSearch(query="abcXYZ")) == []
    assert [r.path for r in upstream.requests_to(EUTILS)] == [ESEARCH]


async def test_pubmed_record_and_unknown_pmid(scholar: Scholar, upstream: ReplayUpstream) -> None:
    route_pubmed_record(upstream)
    record = wire(await scholar.get_pubmed_paper(PubmedLookup(pmid="27797938")))
    assert (
        record["meshTerms"][0] == "Adenocarcinoma" and record["doi"] == "10.1136/gutjnl-2016-312510"
    )
    upstream.route(
        EUTILS, EFETCH, Reply(200, b'<?xml version="1.0" ?><PubmedArticleSet></PubmedArticleSet>')
    )
    assert (
        await _error(scholar.get_pubmed_paper(PubmedLookup(pmid="99999999")))
    ).code is ErrorCode.NOT_FOUND


async def test_repeated_calls_are_answered_from_the_cache(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    route_pubmed_search(upstream)
    first = wire(
        await scholar.search_pubmed(ScholarSearch(query="cryopreservation", max_results=2))
    )
    again = wire(
        await scholar.search_pubmed(ScholarSearch(query="  cryopreservation ", max_results=2))
    )
    assert first == again and len(upstream.requests_to(EUTILS)) == 2
    await scholar.search_pubmed(
        ScholarSearch(query="cryopreservation", max_results=2, start_year=2001)
    )
    assert len(upstream.requests_to(EUTILS)) == 4  # another year filter is another question


# -- BibTeX round trip ---------------------------------------------------------------

TRICKY_TITLE = "Costs of {RNA} splicing: 50% & $\\alpha$-helices"
LATEX = LatexNodes2Text()


def _decoded(text: str) -> dict[str, Any]:
    """The one entry of ``text`` read back by bibtexparser (LaTeX decoded) and by pybtex."""
    library = bibtexparser.parse_string(
        text, append_middleware=[SeparateCoAuthors(), LatexDecodingMiddleware()]
    )
    assert not library.failed_blocks and len(library.entries) == 1
    entry = library.entries[0]
    fields = {field.key: field.value for field in entry.fields}
    fields["author"] = [LATEX.latex_to_text(name) for name in fields["author"]]
    fields["key"] = entry.key
    pybtex_entry = next(iter(pybtex_parse(text, "bibtex").entries.values()))
    fields["pybtex_authors"] = len(pybtex_entry.persons["author"])
    return fields


async def test_bibtex_round_trips_for_every_source(
    scholar: Scholar, upstream: ReplayUpstream
) -> None:
    # Real recorded answers with the title swapped for one full of BibTeX specials.
    feed = (FIXTURES / "arxiv/id_list-1605.08386.atom").read_text(encoding="utf-8")
    feed = feed.replace(
        "Heat-bath random walks with Markov bases", TRICKY_TITLE.replace("&", "&amp;")
    )
    feed = feed.replace("<name>Caprice Stanley</name>", "<name>Ça\u0301price Stänley-Øre</name>")
    upstream.route(*ARXIV_API, Reply(200, feed.encode(), {"Content-Type": "application/atom+xml"}))
    paper = json.loads(
        (FIXTURES / "semanticscholar/paper-DOI_10.1073_pnas.1414271111.json").read_text()
    )
    paper["title"] = TRICKY_TITLE
    upstream.json(S2, S2_PNAS, paper)
    record = (FIXTURES / "pubmed/efetch-pubmed-29106400.xml").read_text(encoding="utf-8")
    record = record.replace(
        "Leucocyte telomere length, genetic variants at the <i>TERT</i> gene region and risk "
        "of pancreatic cancer.",
        TRICKY_TITLE.replace("&", "&amp;"),
    ).replace("<LastName>Bao</LastName>", "<LastName>Bäo-Łukasz</LastName>", 1)
    upstream.route(EUTILS, EFETCH, Reply(200, record.encode(), {"Content-Type": "text/xml"}))

    arxiv_entry = _decoded(await scholar.arxiv_to_bibtex(ArxivLookup(arxiv_id="1605.08386")))
    s2_entry = _decoded(
        await scholar.semantic_scholar_to_bibtex(
            SemanticScholarLookup(identifier="10.1073/pnas.1414271111")
        )
    )
    pubmed_entry = _decoded(await scholar.pubmed_to_bibtex(PubmedLookup(pmid="27797938")))

    for entry in (arxiv_entry, s2_entry, pubmed_entry):
        assert entry["title"] == TRICKY_TITLE
        assert entry["pybtex_authors"] == len(entry["author"])
    assert arxiv_entry["key"] == "stanleyore2016costs"
    assert arxiv_entry["author"][0] == "Stänley-Øre, Ça\u0301price"
    assert (arxiv_entry["eprint"], arxiv_entry["archivePrefix"]) == ("1605.08386v1", "arXiv")
    assert arxiv_entry["primaryClass"] == "math.CO"
    assert s2_entry["key"] == "makris2014costs"
    assert s2_entry["author"][-1] == "Kyriacos, Κυριάκος, Athanasiou, Αθανασίου"
    assert (s2_entry["doi"], s2_entry["pmid"]) == ("10.1073/pnas.1414271111", "25349395")
    assert pubmed_entry["key"] == "pmid27797938"
    assert pubmed_entry["author"][0] == "Bäo-Łukasz, Ying"
    assert (pubmed_entry["doi"], pubmed_entry["pmid"]) == ("10.1136/gutjnl-2016-312510", "27797938")
    assert pubmed_entry["journal"] == "Gut" and pubmed_entry["abstract"].startswith("OBJECTIVE: ")
