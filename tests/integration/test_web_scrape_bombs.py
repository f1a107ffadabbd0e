"""scrape_page on bodies built to cost far more to read than their size.

Each is served by the replay upstream and read through the web core as scrape_page
runs it; the answer is a ``too_large`` or ``unsupported`` failure (or, for markup the
parser flattens, an ordinary bounded answer), never minutes of CPU or gigabytes of
memory. The refusals of zip bombs happen on what the package declares or on the first
bytes past it, so nothing is inflated.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from webutil import Clock, JsonCore

import bombs
from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.web.failure import Failure, Kind, failure_of
from doiget.web.scrape.limits import HTML_MAX_ELEMENTS, OOXML_MAX_MEMBERS
from doiget.web.service import WebCore

from netutil import make_network
from replay import ReplayUpstream, Reply

HOST = "docs.example.org"
HTML = {"Content-Type": "text/html; charset=utf-8"}
EXPANDED = 300_000_000


@pytest.fixture
async def core(doiget_env: dict[str, str]) -> AsyncIterator[WebCore]:
    web = WebCore(load_settings(doiget_env), make_network(doiget_env), clock=Clock())
    yield JsonCore(web)
    await web.network.aclose()
    await web.aclose()


async def _refusal(core: WebCore, upstream: ReplayUpstream, path: str, reply: Reply) -> Failure:
    upstream.route(HOST, path, reply)
    with pytest.raises(DoigetError) as caught:
        await core.scrape({"url": f"https://{HOST}{path}"})
    return failure_of(caught.value)


def _lying_docx() -> bytes:
    return bombs.lying_sizes(bombs.docx_bomb(EXPANDED), "word/document.xml", 500_000)


@pytest.mark.parametrize(
    ("path", "build", "said"),
    [
        ("/bomb.docx", lambda: bombs.docx_bomb(EXPANDED), "'word/document.xml' expands to"),
        ("/bomb.pptx", lambda: bombs.pptx_bomb(EXPANDED), "'ppt/slides/slide1.xml' expands to"),
        # The central directory says 500 KB: the count while inflating catches it.
        ("/lying.docx", _lying_docx, "expands past the 500000 bytes it declares"),
        # Served without an extension or a type: recognised by its bytes all the same.
        ("/download", lambda: bombs.docx_bomb(EXPANDED), "expands to"),
        (
            "/parts.docx",
            lambda: bombs.docx_with_parts(OOXML_MAX_MEMBERS + 1),
            f"over the cap of {OOXML_MAX_MEMBERS}",
        ),
    ],
)
async def test_office_zip_bombs_are_too_large(
    core: WebCore, upstream: ReplayUpstream, path: str, build: Callable[[], bytes], said: str
) -> None:
    failure = await _refusal(core, upstream, path, Reply(200, build()))
    assert failure.kind is Kind.TOO_LARGE
    assert said in failure.message
    assert not failure.retryable
    assert "smaller" in failure.suggested_action


async def test_a_package_compressed_other_than_with_deflate_is_unsupported(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    reply = Reply(200, bombs.docx_with_a_bzip2_part())
    failure = await _refusal(core, upstream, "/odd.docx", reply)
    assert failure.kind is Kind.UNSUPPORTED
    assert "compression method 12" in failure.message
    assert "another format" in failure.suggested_action


@pytest.mark.parametrize(
    "body",
    [
        bombs.many_elements_html(HTML_MAX_ELEMENTS + 1),
        # 5,000 columns, long enough to pass the element cap.
        bombs.wide_table_html(5_000, HTML_MAX_ELEMENTS // 5_000 + 1),
    ],
    ids=["many-elements", "wide-table"],
)
async def test_html_over_the_element_cap_is_too_large(
    core: WebCore, upstream: ReplayUpstream, body: bytes
) -> None:
    failure = await _refusal(core, upstream, "/big", Reply(200, body, HTML))
    assert failure.kind is Kind.TOO_LARGE
    assert f"more than {HTML_MAX_ELEMENTS:,} HTML elements" in failure.message


async def test_a_wide_table_under_the_cap_is_read(core: WebCore, upstream: ReplayUpstream) -> None:
    upstream.route(HOST, "/table", Reply(200, bombs.wide_table_html(5_000, 3), HTML))
    body = (await core.scrape({"url": f"https://{HOST}/table", "max_length": 100_000})).body
    assert "c4999" in body["content"] or body["truncated"]
    assert body["contentType"] == "html"


@pytest.mark.parametrize("depth", [300, 100_000])
async def test_deep_nesting_is_answered_without_running_away(
    core: WebCore, upstream: ReplayUpstream, depth: int
) -> None:
    # libxml2 stops building below 256 levels: the text down there is not reached,
    # and the page is one with no readable text.
    failure = await _refusal(core, upstream, "/deep", Reply(200, bombs.deep_html(depth), HTML))
    assert failure.kind is Kind.CONTENT
    assert "readable text" in failure.message


async def test_the_server_goes_on_after_a_refusal(core: WebCore, upstream: ReplayUpstream) -> None:
    await _refusal(core, upstream, "/bomb.docx", Reply(200, bombs.docx_bomb(EXPANDED)))
    page = b"<html><body><article><p>" + b"Readable text after a bomb. " * 20
    upstream.route(HOST, "/fine", Reply(200, page + b"</p></article></body></html>", HTML))
    body = (await core.scrape({"url": f"https://{HOST}/fine"})).body
    assert "Readable text after a bomb." in body["content"]
