"""The claim core through the replay upstream: which text each cited work is weighed
against (stored PDF, fetched PDF, the record's abstract, inline text, none and why),
refs resolved directly or through the verifier, citations of several works, failing
sources, answers kept, validation, and where the weighing runs.

The engine is stood in for (claimsutil.weigh_by_words): these tests are about the core.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from claimsutil import (
    ATTENTION,
    JOSE_PDF,
    JOSE_SENTENCE,
    PNAS,
    WAKEFIELD,
    WEIGHED_IN,
    checking,
    store_paper,
    weigh_by_words,
)
from verifyutil import WAKEFIELD_FIXTURE, route_dblp_fixture

from doiget.claims import service
from doiget.claims.contracts import CheckClaims, ClaimChecks, WorkCheck
from doiget.claims.service import ClaimChecker
from doiget.contract import parse
from doiget.errors import DoigetError
from doiget.runtime import load_runtime
from doiget.verify.service import Verifier

from papersutil import route_nature, route_pnas
from pdfmaker import write_scanned_pdf
from replay import ReplayUpstream, Reply

# Requests spaced by no gap: the retried requests of a source that is down would
# otherwise wait out arXiv's 3 s between them (the spacing is test_net_gates' subject).
pytestmark = pytest.mark.usefixtures("unpaced")

PNAS_CLAIM = "Collagen cross-linking improves the mechanical properties of engineered tissues."
ATTENTION_CLAIM = "The Transformer is based solely on attention mechanisms, without recurrence."
NATURE = "10.1038/nature12373"
MAKRIS_BIB = (
    "@article{makris2014, title={Developing functional musculoskeletal tissues through "
    "hypoxia and lysyl oxidase-induced collagen cross-linking}, author={Makris, Eleftherios "
    f"A. and others}}, year={{2014}}, doi={{{PNAS}}}}}"
)
DOWN = Reply(503, b"Service Unavailable")
EMPTY_DBLP = json.dumps(
    {"result": {"status": {"@code": "200"}, "hits": {"@total": "0", "@sent": "0"}}}
).encode()


def _check(env: dict[str, str], arguments: dict[str, Any]) -> ClaimChecks:
    request = parse(CheckClaims, arguments)
    return anyio.run(checking, env, lambda checker: checker.check(request))


def _one(env: dict[str, str], claim: str, ref: Any, **more: Any) -> WorkCheck:
    result = _check(env, {"items": [{"claim": claim, "ref": ref}], **more})
    [claim_result] = result.results
    assert claim_result.error is None, claim_result.error
    [work] = claim_result.works
    return work


def _route_attention(upstream: ReplayUpstream) -> None:
    upstream.fixture(
        "export.arxiv.org", "/api/query", "arxiv/id_list-1706.03762-attention-2026.atom"
    )


def _route_wakefield(upstream: ReplayUpstream) -> None:
    upstream.fixture("api.crossref.org", f"/works/{WAKEFIELD}", WAKEFIELD_FIXTURE)


def _store_root(env: dict[str, str]) -> Path:
    return Path(env["DOIGET_STORE_ROOT"])


@pytest.mark.parametrize(
    "name", ["10.1234/jose", "https://doi.org/10.1234/JOSE", "doi:10.1234/jose", "doi_10.1234_jose"]
)
def test_a_stored_pdf_is_the_basis_with_pages_and_sections_and_asks_nothing_upstream(
    name: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    store_paper(_store_root(doiget_env), "10.1234/jose", JOSE_PDF, abstract="Not this text.")
    work = _one(doiget_env, JOSE_SENTENCE, name, fetch=True)
    assert (work.ref, work.basis, work.addressed) == ("10.1234/jose", "full_text", "addressed")
    best = work.evidence[0]
    assert best.page == 3 and best.section and best.start is None
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("ref", "claim", "route"),
    [
        (PNAS, PNAS_CLAIM, route_pnas),
        (f"https://doi.org/{PNAS.upper()}", PNAS_CLAIM, route_pnas),
        (ATTENTION, ATTENTION_CLAIM, _route_attention),
        (f"arXiv:{ATTENTION}v2", ATTENTION_CLAIM, _route_attention),
    ],
)
def test_without_a_stored_pdf_and_no_fetch_the_record_abstract_is_the_basis_with_offsets(
    ref: str, claim: str, route: Any, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route(upstream)
    work = _one(doiget_env, claim, ref)
    assert work.basis == "abstract" and work.addressed == "addressed", work
    assert "fetch" in (work.basis_note or "")
    best = work.evidence[0]
    assert best.page is None and best.start is not None and best.end is not None
    # No PDF was asked for: fetch is off.
    assert not upstream.requests_to("api.unpaywall.org")


def test_a_stored_abstract_is_the_basis_without_a_request(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    abstract = "Cross-linking of collagen improved the mechanical properties of engineered tissues."
    store_paper(_store_root(doiget_env), PNAS, None, abstract=abstract)
    work = _one(doiget_env, PNAS_CLAIM, PNAS)
    assert work.basis == "abstract" and work.evidence[0].text == abstract
    assert upstream.requests == []


def test_fetch_stores_the_open_access_pdf_and_reads_it_with_pages(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)  # Crossref down; Europe PMC serves the (JOSE) PDF
    work = _one(doiget_env, JOSE_SENTENCE, NATURE, fetch=True)
    assert work.basis == "full_text" and work.evidence[0].page == 3, work
    assert "fetched" in (work.basis_note or "")
    assert any(_store_root(doiget_env).glob("*.pdf"))


def test_fetch_without_an_open_access_copy_falls_back_to_the_abstract_and_says_why(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)  # the only OA PDF is on a host off the allowlist
    work = _one(doiget_env, PNAS_CLAIM, PNAS, fetch=True)
    assert work.basis == "abstract" and work.addressed == "addressed"
    assert (work.basis_note or "").startswith("no PDF fetched:"), work.basis_note


LOCAL = "local:" + "a" * 64


@pytest.mark.parametrize(
    ("ref", "abstract", "basis", "said"),
    [
        (PNAS, None, "abstract", "no text layer"),  # the record's abstract
        (PNAS, "Collagen cross-linking improves tissues.", "abstract", "no text layer"),
        (LOCAL, None, "unavailable", "never identified"),  # no record to ask
    ],
)
def test_a_stored_pdf_without_text_falls_back_to_the_abstract(
    ref: str,
    abstract: str | None,
    basis: str,
    said: str,
    tmp_path: Path,
    upstream: ReplayUpstream,
    doiget_env: dict[str, str],
) -> None:
    route_pnas(upstream)
    write_scanned_pdf(tmp_path / "scan.pdf")
    store_paper(_store_root(doiget_env), ref, tmp_path / "scan.pdf", abstract=abstract)
    work = _one(doiget_env, PNAS_CLAIM, ref)
    assert work.basis == basis and said in (work.basis_note or ""), work
    assert "no text layer" in (work.basis_note or "")
    assert work.addressed == ("addressed" if basis == "abstract" else "unavailable")
    assert len(upstream.requests) == (1 if basis == "abstract" and abstract is None else 0)


@pytest.mark.parametrize("fetch", [False, True])
def test_no_abstract_and_no_open_access_copy_is_unavailable_with_the_reason(
    fetch: bool, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    _route_wakefield(upstream)
    upstream.json("api.unpaywall.org", f"/v2/{WAKEFIELD}", {"doi": WAKEFIELD, "is_oa": False})
    work = _one(doiget_env, "The vaccine causes autism.", WAKEFIELD, fetch=fetch)
    assert (work.basis, work.addressed, work.confidence) == ("unavailable", "unavailable", None)
    note = work.basis_note or ""
    assert "no abstract in the record" in note and "Crossref" in note, note
    if fetch:
        assert "no Open Access copy" in note, note
    assert work.evidence == []


@pytest.mark.parametrize(
    ("ref", "host", "path"),
    [
        (PNAS, "api.crossref.org", f"/works/{PNAS}"),
        (ATTENTION, "export.arxiv.org", "/api/query"),
    ],
)
def test_a_source_down_gives_unavailable_never_not_addressed(
    ref: str, host: str, path: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route(host, path, DOWN)
    work = _one(doiget_env, PNAS_CLAIM, ref)
    assert (work.basis, work.addressed) == ("unavailable", "unavailable")
    assert "failed" in (work.basis_note or "") and "try again" in (work.basis_note or "")
    # A failure is not kept: asked again, the source (now up) answers.
    route_pnas(upstream)
    _route_attention(upstream)
    again = _one(doiget_env, PNAS_CLAIM, ref)
    assert again.basis == "abstract"


def test_a_bibtex_reference_is_identified_by_the_verifier_and_its_row_kept(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    work = _one(doiget_env, PNAS_CLAIM, MAKRIS_BIB)
    assert (work.ref, work.basis, work.addressed) == (PNAS, "abstract", "addressed")
    assert work.verification is not None and work.verification.key == "makris2014"


def test_a_reference_to_no_real_work_is_unavailable_with_the_verifier_saying_why(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("dblp.org", "/search/publ/api", Reply(200, EMPTY_DBLP))
    upstream.fixture(
        "api.crossref.org", "/works", "crossref/works-query.title-gibberish-zero-results.json"
    )
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-0000.0000-empty.atom")
    fabricated = "Gui P, Tokmakov T. Quantum gravity priors for sparse transformers. 2021."
    csl = {"id": "gui21", "title": "Quantum gravity priors for sparse transformers"}
    for reference in (fabricated, csl):
        work = _one(doiget_env, "Priors from quantum gravity sparsify transformers.", reference)
        assert (work.basis, work.addressed) == ("unavailable", "unavailable")
        assert work.verification is not None and work.verification.verdict == "not_found"
        assert "no real work" in (work.basis_note or "")


def test_a_citation_of_several_works_is_answered_per_work_in_order(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    _route_wakefield(upstream)
    store_paper(_store_root(doiget_env), "10.1234/jose", JOSE_PDF)
    refs = ["doi_10.1234_jose", PNAS, WAKEFIELD]
    work = _check(doiget_env, {"items": [{"claim": PNAS_CLAIM, "ref": refs}]})
    [result] = work.results
    assert [(w.ref, w.basis) for w in result.works] == [
        ("10.1234/jose", "full_text"), (PNAS, "abstract"), (WAKEFIELD, "unavailable"),
    ]  # fmt: skip
    assert result.works[1].addressed == "addressed"
    assert result.works[0].addressed == "not_addressed"  # the JOSE paper is about charts


def test_inline_text_is_the_basis_with_offsets_into_it(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    text = "We studied mice. Collagen cross-linking improved the mechanical properties."
    result = _check(
        doiget_env,
        {"items": [{"claim": PNAS_CLAIM, "text": text}, {"claim": "x y z", "ref": PNAS,
                                                          "text": text}]},
    )  # fmt: skip
    first, labelled = (r.works[0] for r in result.results)
    assert first.basis == "inline" and first.ref is None
    best = first.evidence[0]
    assert best.start is not None and text[best.start : best.end] == best.text
    assert labelled.basis == "inline" and labelled.ref == PNAS
    assert upstream.requests == []


def test_the_same_claim_and_work_twice_costs_no_request(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    _route_attention(upstream)

    async def twice(checker: ClaimChecker) -> tuple[int, int, int]:
        for ref in (PNAS, ATTENTION, MAKRIS_BIB):
            await checker.check_work(PNAS_CLAIM, ref, None, fetch=False)
        first = len(upstream.requests)
        for ref in (PNAS, f"https://doi.org/{PNAS}", ATTENTION, MAKRIS_BIB):
            again = await checker.check_work(PNAS_CLAIM, ref, None, fetch=False, key="a")
            assert again.key == "a" and again.basis == "abstract", (ref, again)
        second = len(upstream.requests)
        # Another claim on a work already read: its text is kept too.
        other = await checker.check_work("Tissues grow.", PNAS, None, fetch=False)
        assert other.basis == "abstract"
        return first, second, len(upstream.requests)

    first, second, third = anyio.run(checking, doiget_env, twice)
    assert first >= 3 and second == first and third == first


def test_each_claim_is_answered_and_a_bad_one_carries_its_coded_error(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    result = _check(
        doiget_env,
        {
            "items": [
                {"claim": PNAS_CLAIM},
                {"claim": PNAS_CLAIM, "ref": [PNAS, ATTENTION], "text": "Some text."},
                {"claim": PNAS_CLAIM, "ref": PNAS},
            ]
        },
    )
    codes = [r.error["code"] if r.error else None for r in result.results]
    assert codes == ["INVALID_REF", "INVALID_REF", None]
    assert all(r.error is None or r.error["message"] for r in result.results)
    assert result.results[2].works[0].basis == "abstract"


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"items": []},
        {"items": [{"claim": "x", "ref": PNAS}] * 51},
        {"items": [{"claim": "   ", "ref": PNAS}]},
        {"items": [{"claim": "x" * 2001, "ref": PNAS}]},
        {"items": [{"claim": "x", "ref": []}]},
        {"items": [{"claim": "x", "ref": [PNAS] * 11}]},
        {"items": [{"claim": "x", "ref": 3}]},
        {"items": [{"claim": "x", "text": "t" * 200_001}]},
        {"items": [{"claim": "x", "ref": PNAS, "page": 3}]},
        {"items": [{"claim": "x", "ref": PNAS}], "fetch": "yes"},
    ],
)
def test_bad_requests_are_refused_with_a_coded_error(arguments: dict[str, Any]) -> None:
    with pytest.raises(DoigetError) as refused:
        parse(CheckClaims, arguments)
    assert refused.value.code.value == "INVALID_REF" and refused.value.message


def test_weighing_runs_in_the_work_pool_never_on_the_event_loop(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    store_paper(_store_root(doiget_env), "10.1234/jose", JOSE_PDF)
    WEIGHED_IN.clear()

    async def run(checker: ClaimChecker) -> int:
        loop = threading.get_ident()
        await checker.check_work(JOSE_SENTENCE, "10.1234/jose", None, fetch=False)
        await checker.check_work(PNAS_CLAIM, None, "Inline text. Of two sentences.", fetch=False)
        return loop

    loop = anyio.run(checking, doiget_env, run)
    assert len(WEIGHED_IN) == 2 and loop not in WEIGHED_IN


def test_an_unknown_store_key_is_unavailable_and_says_how_to_cite(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    work = _one(doiget_env, PNAS_CLAIM, "doi_10.1234_absent")
    assert (work.basis, work.ref) == ("unavailable", "doi_10.1234_absent")
    assert "no stored paper has the key" in (work.basis_note or "")
    assert upstream.requests == []


def test_a_reference_with_a_pmid_is_weighed_against_the_pubmed_abstract(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_dblp_fixture(
        upstream,
        "search-publ-q-highly-accurate-protein-structure-prediction-with-alphafold-h5-hitlist-"
        "empty.json",
    )
    upstream.fixture(
        "eutils.ncbi.nlm.nih.gov", "/entrez/eutils/efetch.fcgi", "pubmed/efetch-pubmed-29106400.xml"
    )
    reference = (
        "Bao Y, Prescott J, Yuan C, et al. Leucocyte telomere length, genetic variants at the "
        "TERT gene region and risk of pancreatic cancer. Gut. PMID: 29106400"
    )
    claim = "Shorter leucocyte telomere length goes with a higher risk of pancreatic cancer."
    work = _one(doiget_env, claim, reference)
    assert work.basis == "abstract" and work.addressed == "addressed", work
    assert work.verification is not None and work.verification.verdict == "verified"
    assert "telomere" in work.evidence[0].text
    assert "29106400" in upstream.requests_to("eutils.ncbi.nlm.nih.gov")[-1].query.get("id", "")


SEBASTIANI = "10.1145/505282.505283"
SEBASTIANI_CLAIM = "Machine learning is the dominant approach to the categorization of texts."


def _route_sebastiani(upstream: ReplayUpstream) -> None:
    """Crossref's record of the work without an abstract; OpenAlex's search has one."""
    message = {"DOI": SEBASTIANI, "title": ["Machine learning in automated text categorization"]}
    upstream.json("api.crossref.org", f"/works/{SEBASTIANI}", {"status": "ok", "message": message})
    upstream.fixture(
        "api.openalex.org", "/works", "openalex/works-search-machine_learning-per_page20.json"
    )


def test_openalex_gives_the_abstract_only_when_the_profile_enables_it(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    _route_sebastiani(upstream)
    off = _one(doiget_env, SEBASTIANI_CLAIM, SEBASTIANI)
    assert off.basis == "unavailable" and "(Crossref asked)" in (off.basis_note or "")
    assert not upstream.requests_to("api.openalex.org")
    on = _one({**doiget_env, "DOIGET_ENABLE_OPENALEX": "1"}, SEBASTIANI_CLAIM, SEBASTIANI)
    assert on.basis == "abstract" and on.addressed == "addressed", on
    assert on.evidence[0].start is not None
    assert upstream.requests_to("api.openalex.org")


def test_a_work_whose_lookups_outlast_the_bound_is_unavailable_and_says_so(
    upstream: ReplayUpstream, doiget_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "WORK_SECONDS", 0.5)
    released = threading.Event()

    def slow(query: dict[str, str]) -> Reply:
        released.wait(10)
        return Reply(503, b"late")

    upstream.responder("api.crossref.org", f"/works/{PNAS}", slow)
    try:
        work = _one(doiget_env, PNAS_CLAIM, PNAS)
    finally:
        released.set()
    assert (work.basis, work.addressed) == ("unavailable", "unavailable")
    assert "time ran out" in (work.basis_note or "") and work.ref == PNAS


def test_claims_citing_one_work_at_once_look_it_up_once(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    claims = [PNAS_CLAIM, "Hypoxia stiffens tissues.", "Lysyl oxidase cross-links collagen."]
    items = [{"claim": claim, "ref": ref} for claim in claims for ref in (PNAS, MAKRIS_BIB)]
    result = _check(doiget_env, {"items": items})
    assert [w.basis for r in result.results for w in r.works] == ["abstract"] * 6
    # The verifier's own lookup of the cited DOI, and the core's one for the abstract.
    assert len(upstream.requests_to("api.crossref.org")) == 2


def test_a_reference_whose_sources_are_down_is_unavailable_and_names_them(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    for host, path in (
        ("dblp.org", "/search/publ/api"),
        ("api.crossref.org", "/works"),
        ("export.arxiv.org", "/api/query"),
    ):
        upstream.route(host, path, DOWN)
    work = _one(doiget_env, PNAS_CLAIM, MAKRIS_BIB.replace(f", doi={{{PNAS}}}", ""))
    assert (work.basis, work.addressed) == ("unavailable", "unavailable")
    assert work.verification is not None and work.verification.verdict == "uncertain"
    assert "could not be identified" in (work.basis_note or "")
    assert "failed" in (work.basis_note or "")


def test_the_process_checker_fetches_with_a_papers_core_of_its_own(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    record = {"DOI": NATURE, "title": ["A paper"], "type": "journal-article"}
    upstream.json("api.crossref.org", f"/works/{NATURE}", {"status": "ok", "message": record})
    upstream.fixture("api.unpaywall.org", f"/v2/{NATURE}", "unpaywall/v2-10.1038_nature12373.json")
    upstream.fixture("europepmc.org", "/articles/pmc4221854", "pdf/openquestion-jose-paper.pdf")

    async def run() -> WorkCheck:
        runtime = load_runtime(doiget_env)
        checker = ClaimChecker.of(runtime, verifier=Verifier.of(runtime))
        checker._weigh = weigh_by_words  # the engine stood in for, as everywhere here
        try:
            return await checker.check_work(JOSE_SENTENCE, NATURE, None, fetch=True)
        finally:
            await runtime.aclose()

    work = anyio.run(run)
    assert work.basis == "full_text" and work.evidence[0].page == 3, work
    assert "fetched" in (work.basis_note or "")
