"""A request that runs out of time is final: one request, FETCH_TIMEOUT (the web
`timeout` kind), the same code in the provenance row and in the answer; and a call
has one overall deadline across its retries and candidates."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from doiget.contract import parse
from doiget.errors import DoigetError, ErrorCode
from doiget.net.deadline import call_deadline
from doiget.papers import contracts as c
from doiget.papers.provenance import read_rows
from doiget.web.failure import Kind, failure_of
from doiget.web.requests import ScrapePageRequest
from doiget.web.scrape.service import Scraper

from netutil import make_network
from papersutil import NATURE, make_papers
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


async def _fetch_failure(env: dict[str, str]) -> DoigetError:
    papers = make_papers(env)
    try:
        with pytest.raises(DoigetError) as caught:
            await papers.fetch(c.PaperFetch(ref=NATURE))
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
