"""A request that runs out of time is final: one request, FETCH_TIMEOUT (the web
`timeout` kind), the same code in the provenance row and in the answer; a call has
one overall deadline across its retries and candidates; time queued at doiget's own
gates is charged to neither; a ref whose time ran out is FETCH_TIMEOUT, never
NO_OA_AVAILABLE."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from doiget.contract import parse, plain
from doiget.errors import DoigetError, ErrorCode
from doiget.net.deadline import call_deadline
from doiget.papers import contracts as c
from doiget.papers.provenance import read_rows
from doiget.web.failure import Kind, failure_of
from doiget.web.requests import ScrapePageRequest
from doiget.web.scrape.service import Scraper

from netutil import make_network
from papersutil import NATURE, PNAS, STUB_PDF, make_papers
from replay import FIXTURES, ReplayUpstream, Reply

# 64 KiB sent 4 KiB at a time, 0.4 s apart: about 6 s in all.
SLOW_BODY = b"x" * 65536


class Counted:
    """A responder that counts the requests it answers."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.count = 0

    def __call__(self, _query: dict[str, str]) -> Reply:
        self.count += 1
        return self.reply


def trickling(content_type: str, body: bytes = SLOW_BODY) -> Reply:
    return Reply(200, body, {"Content-Type": content_type}, trickle=0.4)


def short(env: dict[str, str], **limits: str) -> dict[str, str]:
    return {**env, **{f"DOIGET_{name.upper()}_TIMEOUT": value for name, value in limits.items()}}


@pytest.mark.parametrize(
    ("reply", "limit"),
    [
        (trickling("application/json"), "1"),  # a body that trickles
        (Reply(200, b"{}", {"Content-Type": "application/json"}, delay=3.0), "0.5"),  # no headers
    ],
    ids=["trickling-body", "headers-never-come"],
)
async def test_a_slow_api_answer_is_one_request_then_fetch_timeout(
    upstream: ReplayUpstream, doiget_env: dict[str, str], reply: Reply, limit: str
) -> None:
    counted = Counted(reply)
    upstream.responder("api.crossref.org", f"/works/{NATURE}", counted)
    network = make_network(short(doiget_env, api=limit))
    try:
        with pytest.raises(DoigetError) as caught:
            await network.client("crossref").get_json(f"https://api.crossref.org/works/{NATURE}")
    finally:
        await network.aclose()
    assert caught.value.code is ErrorCode.FETCH_TIMEOUT
    assert "DOIGET_API_TIMEOUT" in caught.value.message
    assert "not retried" in caught.value.message
    assert counted.count == 1


def _unpaywall_with(paths: list[str]) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(
        (FIXTURES / "unpaywall/v2-10.1038_nature12373.json").read_text()
    )
    locations = [
        {**record["best_oa_location"], "url_for_pdf": f"https://europepmc.org{path}", "url": None}
        for path in paths
    ]
    record.update(best_oa_location=locations[0], oa_locations=locations)
    return record


async def _fetch_failure(env: dict[str, str], ref: str = NATURE) -> DoigetError:
    papers = make_papers(env)
    try:
        with pytest.raises(DoigetError) as caught:
            await papers.fetch(c.PaperFetch(ref=ref))
    finally:
        await papers.aclose()
    return caught.value


async def test_a_trickling_pdf_ends_fetch_timeout_in_the_answer_and_the_row(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.json("api.unpaywall.org", f"/v2/{NATURE}", _unpaywall_with(["/slow.pdf"]))
    counted = Counted(trickling("application/pdf", b"%PDF-1.4\n" + SLOW_BODY))
    upstream.responder("europepmc.org", "/slow.pdf", counted)
    upstream.route("api.crossref.org", f"/works/{NATURE}", Reply(503, b""))
    env = short(doiget_env, pdf="1", api="2")
    assert (await _fetch_failure(env)).code is ErrorCode.FETCH_TIMEOUT
    assert counted.count == 1
    rows = [row for row in read_rows(Path(env["DOIGET_LOG_PATH"])) if row["event"] == "fetch"]
    assert [row["error_code"] for row in rows] == ["FETCH_TIMEOUT"]
    assert not list(Path(env["DOIGET_STORE_ROOT"]).glob(".doiget-*.part"))


async def test_the_call_deadline_spans_candidates(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    upstream.route("api.crossref.org", f"/works/{NATURE}", Reply(400, b""))
    paths = ["/one.pdf", "/two.pdf", "/three.pdf"]
    upstream.json("api.unpaywall.org", f"/v2/{NATURE}", _unpaywall_with(paths))
    counters = {}
    for path in paths:
        counters[path] = Counted(trickling("application/pdf", b"%PDF-1.4\n" + SLOW_BODY))
        upstream.responder("europepmc.org", path, counters[path])
    # The call gets 2 x 0.25 s + 1 s: the first candidate uses 1 s of it, the second
    # what is left, the third nothing.
    env = short(doiget_env, pdf="1", api="0.25")
    assert (await _fetch_failure(env)).code is ErrorCode.FETCH_TIMEOUT
    assert counters["/one.pdf"].count == 1
    assert counters["/three.pdf"].count == 0


async def test_retries_stop_at_the_call_deadline(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    counted = Counted(Reply(503, b"busy", delay=0.4))
    upstream.responder("api.crossref.org", f"/works/{NATURE}", counted)
    network = make_network(doiget_env)
    try:
        with pytest.raises(DoigetError) as caught, call_deadline(0.7):
            await network.client("crossref").get_json(f"https://api.crossref.org/works/{NATURE}")
    finally:
        await network.aclose()
    assert caught.value.code in (ErrorCode.FETCH_TIMEOUT, ErrorCode.NETWORK_ERROR)
    assert counted.count == 2  # not the four a request gets without a deadline


@pytest.mark.parametrize(
    "make_reply",
    [
        lambda: trickling("text/html", b"<html><body>" + SLOW_BODY),
        lambda: Reply(200, b"<html></html>", {"Content-Type": "text/html"}, delay=3.0),
    ],
)
async def test_scrape_page_on_a_slow_host_is_one_request_then_timeout(
    upstream: ReplayUpstream, doiget_env: dict[str, str], make_reply: Callable[[], Reply]
) -> None:
    counted = Counted(make_reply())
    upstream.responder("blog.example.org", "/page", counted)
    network = make_network(short(doiget_env, page="1"))
    try:
        with pytest.raises(DoigetError) as caught:
            await Scraper(network).scrape(
                parse(ScrapePageRequest, {"url": "https://blog.example.org/page"})
            )
    finally:
        await network.aclose()
    failure = failure_of(caught.value)
    assert failure.kind is Kind.TIMEOUT
    assert "DOIGET_PAGE_TIMEOUT" in failure.message
    assert counted.count == 1


@pytest.mark.parametrize("value", ["0", "-3", "soon", "1e9"])
def test_a_bad_timeout_setting_is_a_configuration_error(
    doiget_env: dict[str, str], value: str
) -> None:
    from doiget.config import load_settings

    for name in ("API", "PDF", "PAGE"):
        with pytest.raises(DoigetError) as caught:
            load_settings({**doiget_env, f"DOIGET_{name}_TIMEOUT": value})
        assert caught.value.code is ErrorCode.INVALID_CONFIG
        assert f"DOIGET_{name}_TIMEOUT" in caught.value.message


# -- time queued at doiget's own gates is not the upstream being slow ---------------

# Five sources: the per-source gaps allow 25 requests a second, so the 5/s budget is
# the gate these requests queue at (20 requests: the last waits about 4 s).
GATED_URLS = [
    f"https://{host}/gated/{number}"
    for number in range(4)
    for host in (
        "api.crossref.org",
        "api.unpaywall.org",
        "api.openalex.org",
        "doaj.org",
        "europepmc.org",
    )
]
_CLIENT_OF = {
    "api.crossref.org": "crossref",
    "api.unpaywall.org": "unpaywall",
    "api.openalex.org": "openalex",
    "doaj.org": "doaj",
    "europepmc.org": "oa-publisher",
}


@pytest.mark.parametrize("limit", ["request", "call"])
async def test_time_queued_at_the_rate_gate_is_charged_to_no_deadline(
    upstream: ReplayUpstream, doiget_env: dict[str, str], limit: str
) -> None:
    """20 requests that each may take 1 s (their own limit, or their call's) but
    queue up to 4 s behind the 5/s budget: every one is answered. The second is
    enough for a TLS handshake on a loaded machine, and a quarter of the queue."""
    for url in GATED_URLS:
        upstream.route(url.split("/")[2], "/" + url.split("/", 3)[3], Reply(200, b"{}"))
    env = short(doiget_env, api="1") if limit == "request" else doiget_env
    network = make_network(env)
    answered: list[object] = []

    async def one(url: str) -> None:
        client = network.client(_CLIENT_OF[url.split("/")[2]])
        if limit == "call":
            with call_deadline(1.0):
                answered.append(await client.get_json(url))
        else:
            answered.append(await client.get_json(url))

    try:
        async with anyio.create_task_group() as tasks:
            for url in GATED_URLS:
                tasks.start_soon(one, url)
    finally:
        await network.aclose()
    assert answered == [{}] * len(GATED_URLS)
    assert len(upstream.requests) == len(GATED_URLS)


async def test_a_calls_later_request_queued_behind_the_source_gap_still_runs(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    """arXiv's 3 s gap: a call given 1 s makes its second and third requests after
    waiting 3 s each at the gate."""
    upstream.route("export.arxiv.org", "/api/query", Reply(200, b"<feed/>"))
    network = make_network(doiget_env)
    client = network.client("arxiv")
    try:
        with call_deadline(1.0):
            for _ in range(3):
                await client.get("https://export.arxiv.org/api/query")
    finally:
        await network.aclose()
    assert len(upstream.requests) == 3


async def test_the_deadline_still_runs_while_the_upstream_is_slow_after_a_queue(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    """Queuing is free; the upstream's own slowness is not: behind a 3 s gate wait, a
    call given 1 s still ends FETCH_TIMEOUT on an answer that takes 2 s."""
    counted = Counted(Reply(200, b"<feed/>", delay=2.0))
    upstream.route("export.arxiv.org", "/first", Reply(200, b"<feed/>"))
    upstream.responder("export.arxiv.org", "/slow", counted)
    network = make_network(doiget_env)
    client = network.client("arxiv")
    try:
        with pytest.raises(DoigetError) as caught, call_deadline(1.0):
            await client.get("https://export.arxiv.org/first")
            await client.get("https://export.arxiv.org/slow")
    finally:
        await network.aclose()
    assert caught.value.code is ErrorCode.FETCH_TIMEOUT
    assert "overall time limit" in caught.value.message
    assert counted.count == 1


def _route_batch(upstream: ReplayUpstream, count: int) -> list[str]:
    """``count`` DOIs, each with Crossref metadata, one Unpaywall location and a PDF."""
    work = json.loads((FIXTURES / "crossref/works-10.1073_pnas.1414271111.json").read_text())
    pdf = (FIXTURES / STUB_PDF).read_bytes()
    dois = []
    for number in range(count):
        doi = f"10.5555/queued.{number}"
        dois.append(doi)
        work["message"]["DOI"] = doi
        upstream.json("api.crossref.org", f"/works/{doi}", work)
        upstream.json("api.unpaywall.org", f"/v2/{doi}", _unpaywall_with([f"/q/{number}.pdf"]))
        upstream.route(
            "europepmc.org",
            f"/q/{number}.pdf",
            Reply(200, pdf, {"Content-Type": "application/pdf"}),
        )
    return dois


async def test_a_batch_queued_behind_the_rate_gate_loses_no_ref_to_its_deadline(
    upstream: ReplayUpstream, doiget_env: dict[str, str]
) -> None:
    """8 refs, 24 requests: about 5 s at 5/s, while each ref's own deadline is 1.6 s."""
    dois = _route_batch(upstream, 8)
    papers = make_papers(short(doiget_env, api="0.3", pdf="1"))
    try:
        result = await papers.batch(c.BatchFetch(refs=dois))
    finally:
        await papers.aclose()
    rows = plain(result)["results"]
    assert [row.get("error") for row in rows] == [None] * len(dois)
    assert len(upstream.requests) == 3 * len(dois)


# -- a ref whose time ran out says so, whatever step ran out ------------------------


def _no_oa_unpaywall() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(
        (FIXTURES / "unpaywall/v2-10.1073_pnas.1414271111.json").read_text()
    )
    record.update(is_oa=False, best_oa_location=None, oa_locations=[])
    return record


def _slow_unpaywall(upstream: ReplayUpstream) -> None:
    upstream.fixture(
        "api.crossref.org", f"/works/{PNAS}", "crossref/works-10.1073_pnas.1414271111.json"
    )
    upstream.json("api.unpaywall.org", f"/v2/{PNAS}", _no_oa_unpaywall(), delay=1.5)


def _slow_crossref(upstream: ReplayUpstream) -> None:
    upstream.fixture(
        "api.crossref.org",
        f"/works/{PNAS}",
        "crossref/works-10.1073_pnas.1414271111.json",
        delay=1.5,
    )
    upstream.json("api.unpaywall.org", f"/v2/{PNAS}", _no_oa_unpaywall())


def _second_candidate_slow(upstream: ReplayUpstream) -> None:
    upstream.fixture(
        "api.crossref.org", f"/works/{PNAS}", "crossref/works-10.1073_pnas.1414271111.json"
    )
    record = _unpaywall_with(["/gone.pdf", "/slow.pdf"])
    record["doi"] = PNAS
    upstream.json("api.unpaywall.org", f"/v2/{PNAS}", record)
    upstream.route("europepmc.org", "/gone.pdf", Reply(404, b"gone"))
    upstream.route(
        "europepmc.org", "/slow.pdf", trickling("application/pdf", b"%PDF-1.4\n" + SLOW_BODY)
    )


@pytest.mark.parametrize(
    "route",
    [_slow_unpaywall, _slow_crossref, _second_candidate_slow],
    ids=["unpaywall-ran-out", "crossref-ran-out", "second-candidate-ran-out"],
)
async def test_a_ref_whose_time_ran_out_is_fetch_timeout_never_no_oa(
    upstream: ReplayUpstream, doiget_env: dict[str, str], route: Callable[[ReplayUpstream], None]
) -> None:
    route(upstream)
    env = short(doiget_env, api="0.5", pdf="1")
    error = await _fetch_failure(env, PNAS)
    assert error.code is ErrorCode.FETCH_TIMEOUT, error.message
    codes = [row.get("error_code") for row in read_rows(Path(env["DOIGET_LOG_PATH"]))]
    assert "FETCH_TIMEOUT" in codes
