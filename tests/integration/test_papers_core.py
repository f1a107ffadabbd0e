"""The papers core end to end against recorded upstream answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from doiget.contract import plain
from doiget.errors import DenialReason, DoigetError, ErrorCode
from doiget.net.client import SourceClient
from doiget.papers import contracts as c
from doiget.papers.provenance import read_rows
from doiget.papers.store import Store
from doiget.refs import parse_ref
from logcheck import verify_env

from papersutil import (
    CLOSED,
    JNS,
    MEDIA_PDF,
    NATURE,
    PHYSREVE,
    PNAS,
    STUB_PDF,
    make_papers,
    read_toml,
    route_closed,
    route_jns,
    route_nature,
    route_physreve,
    route_pnas,
)
from replay import FIXTURES, ReplayUpstream, Reply


def unpaywall_fixture(name: str) -> dict:
    return json.loads((FIXTURES / "unpaywall" / name).read_text())


async def test_arxiv_new_style_is_fetched_end_to_end(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-1605.08386.atom")
    served = upstream.fixture("arxiv.org", "/pdf/1605.08386v1", STUB_PDF)
    papers = make_papers(doiget_env)
    try:
        result = plain(await papers.fetch(c.PaperFetch(ref="arXiv:1605.08386")))
    finally:
        await papers.aclose()
    assert result["ok"] is True
    assert (result["source"], result["resolver_profile"]) == ("arxiv", "arxiv")
    assert result["size_bytes"] == len(served)
    assert Path(result["path"]).read_bytes() == served
    assert Path(result["path"]).name == "arxiv_1605.08386.pdf"
    document = read_toml(papers.store.metadata_path(parse_ref("1605.08386")))
    assert document["title"] == "Heat-bath random walks with Markov bases"
    assert document["authors"][0].startswith("Stanley")
    assert document["year"] == 2016
    assert document["arxiv_id"] == "1605.08386v1"
    assert document["pdf_path"] == result["path"]
    assert document["doiget"]["sha256"]
    report = verify_env(doiget_env)
    assert report.ok and report.rows >= 3


async def test_arxiv_old_style_is_fetched_end_to_end(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.fixture("export.arxiv.org", "/api/query", "arxiv/id_list-quant-ph_0201082v1.atom")
    served = upstream.fixture("arxiv.org", "/pdf/quant-ph/0201082v1", MEDIA_PDF)
    papers = make_papers(doiget_env)
    try:
        result = plain(await papers.fetch(c.PaperFetch(ref="quant-ph/0201082v1")))
    finally:
        await papers.aclose()
    assert result["ok"] is True
    assert Path(result["path"]).read_bytes() == served
    assert Path(result["path"]).name == "arxiv_quant-ph_0201082v1.pdf"
    document = read_toml(
        Path(doiget_env["DOIGET_STORE_ROOT"]) / ".metadata" / "arxiv_quant-ph_0201082v1.toml"
    )
    assert document["title"].startswith("Quantum Computers and Quantum Computer Languages")
    assert verify_env(doiget_env).ok


@pytest.mark.parametrize(
    ("doi", "route", "fixture"),
    [
        (NATURE, route_nature, "v2-10.1038_nature12373.json"),
        (PHYSREVE, route_physreve, "v2-10.1103_physreve.88.012814.json"),
        (JNS, route_jns, "v2-10.1016_j.jns.2020.116832.json"),
    ],
    ids=["best-location-off-allowlist", "publisher-html-then-arxiv", "doi-org-redirect"],
)
async def test_real_dois_are_fetched_end_to_end(
    doi: str, route, fixture: str, upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    served = route(upstream)
    papers = make_papers(doiget_env)
    try:
        result = plain(await papers.fetch(c.PaperFetch(ref=doi)))
    finally:
        await papers.aclose()
    assert result["ok"] is True, result
    assert Path(result["path"]).read_bytes() == served
    recorded = unpaywall_fixture(fixture)
    document = read_toml(
        Path(doiget_env["DOIGET_STORE_ROOT"]) / ".metadata" / f"{Path(result['path']).stem}.toml"
    )
    assert document["title"] == recorded["title"]
    assert document["authors"][0].split(",")[0] == recorded["z_authors"][0]["family"]
    assert document["year"] == recorded["year"]
    assert document["venue"] == recorded["journal_name"]
    assert document["doi"] == doi
    rows = list(read_rows(Path(doiget_env["DOIGET_LOG_PATH"])))
    assert [row["event"] for row in rows if row["event"] in ("resolve", "store_write")] == [
        "resolve",
        "store_write",
    ]
    assert verify_env(doiget_env).ok


async def test_off_allowlist_best_location_is_skipped_and_never_contacted(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    papers = make_papers(doiget_env)
    try:
        result = plain(await papers.fetch(c.PaperFetch(ref=NATURE)))
    finally:
        await papers.aclose()
    assert result["source"] == "oa-publisher"
    hosts = [request.host for request in upstream.requests]
    assert "dash.harvard.edu" not in hosts
    rows = list(read_rows(Path(doiget_env["DOIGET_LOG_PATH"])))
    denied = [row for row in rows if row["event"] == "fetch" and row["result"] == "denied"]
    assert len(denied) == 1 and denied[0]["error_code"] == "CAPABILITY_DENIED"


async def test_all_candidates_blocked_fails_with_the_denial_and_keeps_metadata(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    papers = make_papers(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            await papers.fetch(c.PaperFetch(ref=PNAS))
    finally:
        await papers.aclose()
    error = caught.value
    assert error.code in (ErrorCode.NO_OA_AVAILABLE, ErrorCode.CAPABILITY_DENIED)
    assert error.denial is not None
    assert error.denial.reason is DenialReason.REDIRECT_NOT_IN_ALLOWLIST
    assert error.denial.attempted == "www.pnas.org"
    document = read_toml(
        Path(doiget_env["DOIGET_STORE_ROOT"]) / ".metadata" / "doi_10.1073_pnas.1414271111.toml"
    )
    assert document["title"].startswith("Developing functional musculoskeletal tissues")
    assert document["venue"] == "Proceedings of the National Academy of Sciences"
    assert "pdf_path" not in document
    assert not list(Path(doiget_env["DOIGET_STORE_ROOT"]).glob("*.pdf"))


async def test_closed_access_is_no_oa_available_with_metadata_stored(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_closed(upstream)
    papers = make_papers(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            await papers.fetch(c.PaperFetch(ref=CLOSED))
    finally:
        await papers.aclose()
    assert caught.value.code is ErrorCode.NO_OA_AVAILABLE
    document = read_toml(
        Store(Path(doiget_env["DOIGET_STORE_ROOT"])).metadata_path(parse_ref(CLOSED))
    )
    assert document["authors"][0] == "Adak, Subrata"
    assert document["year"] == 2001


async def test_crossref_404_is_not_found_and_nothing_is_stored(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    body = (FIXTURES / "crossref" / "works-10.1371_notarealdoi-404.txt").read_bytes()
    upstream.route("api.crossref.org", "/works/10.1371/notarealdoi", Reply(404, body))
    papers = make_papers(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            await papers.fetch(c.PaperFetch(ref="10.1371/notarealdoi"))
    finally:
        await papers.aclose()
    assert caught.value.code is ErrorCode.NOT_FOUND
    assert not (
        Path(doiget_env["DOIGET_STORE_ROOT"]) / ".metadata" / "doi_10.1371_notarealdoi.toml"
    ).exists()
    assert upstream.requests_to("api.unpaywall.org") == []


async def test_refetch_keeps_a_hand_edited_title(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    papers = make_papers(doiget_env)
    try:
        await papers.fetch(c.PaperFetch(ref=NATURE))
        path = papers.store.metadata_path(parse_ref(NATURE))
        edited = path.read_text().replace(
            'title = "Nanometre-scale thermometry in a living cell"', 'title = "My own title"'
        )
        assert "My own title" in edited
        path.write_text(edited)
        again = plain(await papers.fetch(c.PaperFetch(ref=NATURE)))
    finally:
        await papers.aclose()
    assert again["ok"] is True
    document = read_toml(path)
    assert document["title"] == "My own title"
    assert document["venue"] == "Nature"


async def test_metadata_only_and_dry_runs_never_reach_the_pdf_download(
    upstream: ReplayUpstream, doiget_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("a PDF download was attempted")

    monkeypatch.setattr(SourceClient, "download_pdf", forbidden)
    route_nature(upstream)
    papers = make_papers(doiget_env)
    try:
        plan = plain(await papers.fetch(c.PaperFetch(ref=NATURE, dry_run=True)))
        assert upstream.requests == []
        assert not Path(doiget_env["DOIGET_LOG_PATH"]).exists()
        assert not Path(doiget_env["DOIGET_STORE_ROOT"]).exists()
        result = plain(await papers.metadata_only(c.PaperFetch(ref=NATURE)))
    finally:
        await papers.aclose()
    assert plan["dry_run"] is True and plan["plan"]["candidate_hosts_are_upper_bound"] is True
    assert plan["ref"] == {"doi": NATURE}
    assert plan["rate_limit_budget"] == {"global_per_sec": 5.0, "per_source_min_gap_ms": 200}
    assert result["ok"] is True
    assert (
        result["oa_url"]
        == "https://dash.harvard.edu/bitstream/1/12285462/1/Nanometer-Scale%20Thermometry.pdf"
    )
    assert result["metadata"]["title"] == "Nanometre-scale thermometry in a living cell"
    assert "europepmc.org" not in [request.host for request in upstream.requests]
    assert not list(Path(doiget_env["DOIGET_STORE_ROOT"]).glob("*.pdf"))
    rows = list(read_rows(Path(doiget_env["DOIGET_LOG_PATH"])))
    assert "metadata_only" in [row["event"] for row in rows]


async def test_a_batch_plan_names_every_bad_ref_before_any_work(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    papers = make_papers(doiget_env)
    refs = [NATURE, "not a ref", "2104.12255", "also bad"]
    try:
        with pytest.raises(DoigetError) as caught:
            await papers.batch(c.BatchFetch(refs=refs, dry_run=True))
    finally:
        await papers.aclose()
    assert caught.value.code is ErrorCode.INVALID_REF
    assert "'not a ref'" in caught.value.message and "'also bad'" in caught.value.message
    assert upstream.requests == []


async def test_batch_reports_each_ref_with_progress(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_nature(upstream)
    route_jns(upstream)
    route_closed(upstream)
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int, row: c.BatchRow) -> None:
        seen.append((done, total))

    papers = make_papers(doiget_env)
    try:
        result = plain(
            await papers.batch(c.BatchFetch(refs=[NATURE, CLOSED, JNS]), progress=progress)
        )
        listing = plain(papers.search(c.LocalSearch(query="thermometry living", limit=10)))
        recent = plain(papers.recent(c.RecentPapers(limit=10)))
    finally:
        await papers.aclose()
    rows = result["results"]
    assert [row["ref"] for row in rows] == [NATURE, CLOSED, JNS]
    assert [row["ok"] for row in rows] == [True, False, True]
    assert rows[1]["error"]["code"] == "NO_OA_AVAILABLE"
    assert rows[1]["error"]["denial_context"] is None
    assert result["summary"] == {"total": 3, "ok": 2, "failed": 1}
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]
    assert [hit["ref"] for hit in listing["results"]] == [NATURE]
    assert {hit["ref"] for hit in recent["results"]} == {NATURE, CLOSED, JNS}


async def test_library_calls_info_pdf_path_delete_and_reindex(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_jns(upstream)
    papers = make_papers(doiget_env)
    try:
        fetched = plain(await papers.fetch(c.PaperFetch(ref=JNS)))
        info = plain(papers.info(c.PaperLookup(ref=JNS)))
        located = plain(papers.pdf_path(c.PaperLookup(ref=f"https://doi.org/{JNS.upper()}")))
        (papers.index.path).unlink()
        papers.index.close()
        rebuilt = plain(papers.reindex())
        found = plain(papers.search(c.LocalSearch(query="COVID-19 nervous", limit=5)))
        deleted = plain(papers.delete(c.StoredRef(ref=JNS)))
        with pytest.raises(DoigetError) as missing:
            papers.info(c.PaperLookup(ref=JNS))
        after = plain(papers.search(c.LocalSearch(query="COVID-19 nervous", limit=5)))
    finally:
        await papers.aclose()
    assert info["metadata"]["title"].startswith("Central nervous system manifestations")
    assert located["path"] == fetched["path"]
    assert rebuilt["total"] == 1
    assert found["count"] == 1
    assert len(deleted["removed"]) == 2 and not Path(fetched["path"]).exists()
    assert missing.value.code is ErrorCode.NOT_FOUND
    assert after["count"] == 0
    events = [row["event"] for row in read_rows(Path(doiget_env["DOIGET_LOG_PATH"]))]
    assert events[-2:] == ["delete", "session_end"]


async def test_crossref_metadata_wins_over_unpaywall_when_both_answer(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    route_pnas(upstream)
    papers = make_papers(doiget_env)
    try:
        result = plain(await papers.resolve(c.PaperLookup(ref=PNAS)))
    finally:
        await papers.aclose()
    assert result["source"] == "crossref"
    assert result["metadata"]["authors"][0] == "Makris, Eleftherios A."
    assert result["metadata"]["year"] == 2014
    assert not Path(doiget_env["DOIGET_STORE_ROOT"]).exists()


async def test_unwritable_provenance_log_stops_the_fetch_before_any_pdf_request(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_nature(upstream)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    papers = make_papers({**doiget_env, "DOIGET_LOG_PATH": str(blocker / "provenance.jsonl")})
    try:
        with pytest.raises(DoigetError) as failed:
            await papers.fetch(c.PaperFetch(ref=NATURE))
    finally:
        await papers.aclose()
    assert failed.value.code is ErrorCode.LOG_ERROR
    assert upstream.requests_to("europepmc.org") == []
    assert not list(Path(doiget_env["DOIGET_STORE_ROOT"]).glob("*.pdf"))


async def test_a_plan_without_a_contact_address_does_not_list_unpaywall(
    doiget_env: dict[str, str],
) -> None:
    env = {k: v for k, v in doiget_env.items() if k != "DOIGET_EMAIL"}
    for environment, expected in ((doiget_env, ["crossref", "unpaywall"]), (env, ["crossref"])):
        papers = make_papers(environment)
        try:
            plan = plain(await papers.fetch(c.PaperFetch(ref=NATURE, dry_run=True)))
        finally:
            await papers.aclose()
        assert plan["plan"]["metadata_sources"] == expected


async def test_a_drifted_crossref_answer_keeps_its_denial_when_nothing_else_answers(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.json("api.crossref.org", f"/works/{NATURE}", {"status": "ok"})  # no message
    upstream.route("api.unpaywall.org", f"/v2/{NATURE}", Reply(503, b"down"))
    papers = make_papers(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught:
            await papers.resolve(c.PaperLookup(ref=NATURE))
    finally:
        await papers.aclose()
    assert caught.value.code is ErrorCode.NETWORK_ERROR
    assert caught.value.denial is not None
    assert caught.value.denial.reason is DenialReason.SCHEMA_DRIFT
    assert caught.value.denial.source == "crossref"
