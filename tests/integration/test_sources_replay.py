"""Sources through the real network layer: drift, unknown ids, optional sources, keys."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from doiget.contract import plain
from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.papers import contracts as c
from doiget.papers.provenance import read_rows
from doiget.sources import arxiv, crossref

from netutil import make_network
from papersutil import PNAS, make_papers, route_pnas
from replay import ReplayUpstream, Reply

S2_KEY = "s2-secret-key-0123456789"


async def test_crossref_answer_of_the_wrong_shape_is_schema_drift(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.json("api.crossref.org", f"/works/{PNAS}", {"status": "ok", "message": ["?"]})
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as drift:
            await crossref.get_work(network.client("crossref"), PNAS, None)
    finally:
        await network.aclose()
    assert drift.value.code is ErrorCode.NETWORK_ERROR
    assert drift.value.denial is not None
    assert drift.value.denial.reason is DenialReason.SCHEMA_DRIFT
    assert drift.value.denial.source == "crossref"


@pytest.mark.usefixtures("unpaced")  # two requests to one source: the gap is not the subject
async def test_arxiv_unknown_id_is_not_found_and_bad_id_is_invalid_ref(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture(
        "export.arxiv.org",
        "/api/query",
        "arxiv/id_list-0000.0000-empty.atom",
        query={"id_list": "0000.0000", "max_results": "1"},
    )
    upstream.fixture(
        "export.arxiv.org",
        "/api/query",
        "arxiv/id_list-abc-error400.atom",
        query={"id_list": "abc", "max_results": "1"},
        status=400,
    )
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as unknown:
            await arxiv.get_work(network.client("arxiv"), "0000.0000")
        with pytest.raises(DoigetError) as malformed:
            await arxiv.get_work(network.client("arxiv"), "abc")
    finally:
        await network.aclose()
    assert unknown.value.code is ErrorCode.NOT_FOUND
    assert malformed.value.code is ErrorCode.INVALID_REF


async def test_enabled_optional_sources_fill_gaps_and_the_s2_key_stays_secret(
    upstream: ReplayUpstream, doiget_env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    route_pnas(upstream)
    upstream.fixture(
        "api.openalex.org", f"/works/doi:{PNAS}", "openalex/works-doi-10.1073_pnas.1414271111.json"
    )
    upstream.fixture(
        "api.semanticscholar.org",
        f"/graph/v1/paper/DOI:{PNAS}",
        "semanticscholar/paper-DOI_10.1073_pnas.1414271111.json",
    )
    upstream.json("doaj.org", f"/api/search/articles/doi:%22{PNAS}%22", {"total": 0, "results": []})
    env = {
        **doiget_env,
        "DOIGET_ENABLE_OPENALEX": "1",
        "DOIGET_ENABLE_S2": "1",
        "DOIGET_ENABLE_DOAJ": "1",
        "SEMANTIC_SCHOLAR_API_KEY": S2_KEY,
    }
    caplog.set_level(logging.DEBUG)
    papers = make_papers(env)
    try:
        result = plain(await papers.resolve(c.PaperLookup(ref=PNAS)))
    finally:
        await papers.aclose()
    metadata = result["metadata"]
    # Crossref has no page for this DOI; OpenAlex or S2 fill it in.
    assert metadata["title"].startswith("Developing functional musculoskeletal tissues")
    assert metadata["volume"] == "111"
    (s2_request,) = upstream.requests_to("api.semanticscholar.org")
    assert s2_request.headers["x-api-key"] == S2_KEY
    assert len(upstream.requests_to("doaj.org")) == 1
    rows = list(read_rows(Path(env["DOIGET_LOG_PATH"])))
    resolve_row = next(row for row in rows if row["event"] == "resolve")
    assert resolve_row["detail"] == "crossref,unpaywall,openalex,s2,doaj"
    assert S2_KEY not in Path(env["DOIGET_LOG_PATH"]).read_text()
    assert S2_KEY not in caplog.text
    assert S2_KEY not in str(result)


async def test_disabled_optional_sources_are_never_contacted(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    papers = make_papers(doiget_env)
    try:
        await papers.resolve(c.PaperLookup(ref=PNAS))
    finally:
        await papers.aclose()
    for host in ("api.openalex.org", "api.semanticscholar.org", "doaj.org"):
        assert upstream.requests_to(host) == []


async def test_a_failing_optional_source_does_not_sink_the_resolution(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    upstream.route(
        "api.openalex.org", f"/works/doi:{PNAS}", Reply(200, b"<html>maintenance</html>")
    )
    papers = make_papers({**doiget_env, "DOIGET_ENABLE_OPENALEX": "1"})
    try:
        result = plain(await papers.resolve(c.PaperLookup(ref=PNAS)))
    finally:
        await papers.aclose()
    assert result["ok"] is True and result["source"] == "crossref"
