"""The browser tier with the real Chromium, every page served by the replay upstream.

Nothing here targets an address outside loopback; the refusal tests, which do, run
in an empty network namespace (test_browser_refusals.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from browserutil import (
    APP_SCRIPT,
    ARTICLE,
    HTML,
    JS,
    browser_or_skip,
    serve_app,
    shell_page,
)
from webutil import open_core

from doiget.errors import DoigetError
from doiget.web.failure import Kind, failure_of

from replay import ReplayUpstream, Reply

HOST = "blog.example.org"
# Every test is bounded: a hung browser fails the test instead of the run.
BOUND_S = 90


@pytest.fixture(autouse=True)
def _needs_browser() -> None:
    browser_or_skip()


@pytest.fixture
async def core(doiget_env: dict[str, str]) -> AsyncIterator[Any]:
    async with open_core({**doiget_env, "DOIGET_WEB_CACHE": "0"}) as web:
        yield web


def _tier(core: Any) -> Any:
    return core.core.scraper.browser


async def test_script_built_article_is_read_by_the_browser_tier_through_doiget(
    core: Any, upstream: ReplayUpstream
) -> None:
    url = serve_app(upstream, HOST, "/notes/glaciers")
    with anyio.fail_after(BOUND_S):
        body = (await core.scrape({"url": url})).body
    assert body["extractedBy"] == "browser"
    assert body["extractionQuality"] == "complete"
    assert ARTICLE["title"] in body["content"]
    assert "Paragraph 11: repeat photographs" in body["content"]
    assert "extractionNote" not in body
    # The script and its data request were fetched by doiget, not by the browser.
    paths = [seen.path for seen in upstream.requests_to(HOST)]
    assert paths == ["/notes/glaciers", "/static/app.js", "/api/article"]
    agents = {seen.headers.get("user-agent", "") for seen in upstream.requests_to(HOST)}
    assert all(agent.startswith("doiget/") for agent in agents), agents
    assert _tier(core).launches == 1


async def test_pages_with_text_never_start_the_browser(core: Any, upstream: ReplayUpstream) -> None:
    prose = "".join(
        f"<p>Sentence {n} of a page that the server wrote in full.</p>" for n in range(40)
    )
    page = f"<html><body><div id='root'><article>{prose}</article></div>"
    page += "<script src='/static/app.js'></script></body></html>"
    upstream.route(HOST, "/static-page", Reply(200, page.encode(), HTML))
    body = (await core.scrape({"url": f"https://{HOST}/static-page"})).body
    assert body["extractedBy"] == "html"
    assert _tier(core).launches == 0 and not _tier(core).running
    assert [seen.path for seen in upstream.requests_to(HOST)] == ["/static-page"]


async def test_without_the_tier_a_shell_says_where_extraction_stopped(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    url = serve_app(upstream, HOST, "/notes/off")
    loading = shell_page(extra_body="<p>Loading the article…</p>")
    upstream.route(HOST, "/notes/partial", Reply(200, loading, HTML))
    env = {**doiget_env, "DOIGET_BROWSER": "off", "DOIGET_WEB_CACHE": "0"}
    async with open_core(env) as web:
        with pytest.raises(DoigetError) as caught:
            await web.scrape({"url": url})
        partial = (await web.scrape({"url": f"https://{HOST}/notes/partial"})).body
    failure = failure_of(caught.value)
    assert failure.kind is Kind.CONTENT
    assert "stopped at the html tier" in caught.value.message
    assert "DOIGET_BROWSER=off" in caught.value.message
    assert partial["extractedBy"] == "html" and partial["extractionQuality"] == "partial"
    assert "Loading the article" in partial["content"]
    assert "browser tier is turned off" in partial["extractionNote"]
    # The app's script and data were never fetched: only the pages themselves.
    assert {seen.path for seen in upstream.requests_to(HOST)} == {"/notes/off", "/notes/partial"}


async def test_a_page_that_never_stops_loading_is_read_at_its_deadline(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    # The text is written at once; then the page keeps a request open forever.
    script = (
        b"document.getElementById('root').innerHTML = '<article><h1>Always loading</h1>' + "
        b"'<p>Text written before a request that never ends. '.repeat(30) + '</p></article>';"
        b"fetch('/api/stream');"
    )
    upstream.route(HOST, "/forever", Reply(200, shell_page(), HTML))
    upstream.route(HOST, "/static/app.js", Reply(200, script, JS))
    upstream.route(HOST, "/api/stream", Reply(200, b"x" * 4096 * 400, JS, trickle=1.0))
    env = {**doiget_env, "DOIGET_BROWSER_DEADLINE": "6", "DOIGET_WEB_CACHE": "0"}
    async with open_core(env) as web:
        with anyio.fail_after(BOUND_S):
            body = (await web.scrape({"url": f"https://{HOST}/forever"})).body
    assert body["extractedBy"] == "browser"
    assert "Text written before a request that never ends." in body["content"]


async def test_a_script_that_never_yields_is_a_timeout_and_the_browser_recovers(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    upstream.route(HOST, "/spin", Reply(200, shell_page(script="<script>for(;;){}</script>"), HTML))
    url = serve_app(upstream, HOST, "/after-spin")
    env = {**doiget_env, "DOIGET_BROWSER_DEADLINE": "5", "DOIGET_WEB_CACHE": "0"}
    async with open_core(env) as web:
        with anyio.fail_after(BOUND_S), pytest.raises(DoigetError) as caught:
            await web.scrape({"url": f"https://{HOST}/spin"})
        with anyio.fail_after(BOUND_S):
            after = (await web.scrape({"url": url})).body
    failure = failure_of(caught.value)
    assert failure.kind is Kind.TIMEOUT and failure.retryable
    assert "DOIGET_BROWSER_DEADLINE" in caught.value.message
    assert after["extractedBy"] == "browser" and ARTICLE["title"] in after["content"]


async def test_when_the_browser_fails_the_html_tiers_text_is_kept_with_why(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    spinning = shell_page(
        extra_body="<p>Loading the field notes…</p>", script="<script>for(;;){}</script>"
    )
    upstream.route(HOST, "/spin-with-text", Reply(200, spinning, HTML))
    env = {**doiget_env, "DOIGET_BROWSER_DEADLINE": "5", "DOIGET_WEB_CACHE": "0"}
    async with open_core(env) as web:
        with anyio.fail_after(BOUND_S):
            body = (await web.scrape({"url": f"https://{HOST}/spin-with-text"})).body
    assert body["extractedBy"] == "html" and body["extractionQuality"] == "partial"
    assert "Loading the field notes" in body["content"]
    assert "the browser tier failed" in body["extractionNote"]
    assert "did not finish rendering" in body["extractionNote"]


DOWNLOAD_TRICKS = (
    '<a id="dl" href="/files/report.zip" download>report</a>'
    '<iframe src="/files/frame.bin"></iframe>'
)
ATTACHMENT = {"Content-Type": "application/zip", "Content-Disposition": "attachment"}


def _serve_files(upstream: ReplayUpstream) -> None:
    for name in ("report.zip", "frame.bin", "moved.zip"):
        upstream.route(HOST, f"/files/{name}", Reply(200, b"PK\x03\x04" + b"0" * 2048, ATTACHMENT))


def _files_fetched(upstream: ReplayUpstream) -> list[str]:
    return [seen.path for seen in upstream.requests_to(HOST) if seen.path.startswith("/files/")]


async def test_a_download_attempt_fetches_and_saves_nothing(
    core: Any, upstream: ReplayUpstream, tmp_path: Any
) -> None:
    # Once its article is written, the page clicks a download link and moves itself
    # to an attachment; an iframe points at another.
    script = APP_SCRIPT.replace(
        b"a.paras.map(p => '<p>' + p + '</p>').join('') + '</article>';",
        b"a.paras.map(p => '<p>' + p + '</p>').join('') + '</article>';"
        b"document.getElementById('dl').click();"
        b"location.href = '/files/moved.zip';",
    )
    assert script != APP_SCRIPT
    url = serve_app(upstream, HOST, "/with-downloads", shell_page(extra_body=DOWNLOAD_TRICKS))
    upstream.route(HOST, "/static/app.js", Reply(200, script, JS))
    _serve_files(upstream)
    with anyio.fail_after(BOUND_S):
        body = (await core.scrape({"url": url})).body
    assert body["extractedBy"] == "browser", body.get("extractionNote")
    assert ARTICLE["title"] in body["content"]
    assert not _files_fetched(upstream)
    assert not list(tmp_path.rglob("*.zip")) and not list(tmp_path.rglob("*.bin"))


async def test_a_page_that_moves_itself_away_while_loading_is_read_as_it_stands(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    # The move starts before the page's own script has loaded: as in any browser,
    # that stops the page loading; the refused move leaves it as it was, and it is
    # read then, not at the deadline and not as the browser's error page.
    early_move = (
        "<p>Field notes are loading.</p>"
        "<script>setTimeout(() => { location.href = '/files/moved.zip'; }, 0);</script>"
    )
    url = serve_app(upstream, HOST, "/moves-early", shell_page(extra_body=early_move))
    # The page's own script comes late, so the move surely starts first (served at
    # once, it could run first and write the article over the page on a quick machine).
    upstream.route(HOST, "/static/app.js", Reply(200, APP_SCRIPT, JS, delay=3.0))
    _serve_files(upstream)
    env = {**doiget_env, "DOIGET_BROWSER_DEADLINE": "30", "DOIGET_WEB_CACHE": "0"}
    async with open_core(env) as web:
        with anyio.fail_after(BOUND_S):
            body = (await web.scrape({"url": url})).body
    assert "Field notes are loading." in body["content"]
    assert "did not finish rendering" not in body.get("extractionNote", "")
    assert not _files_fetched(upstream)


async def test_websockets_are_refused(core: Any, upstream: ReplayUpstream) -> None:
    script = (
        b"const s = new WebSocket('wss://blog.example.org/live');"
        b"const say = (w) => { document.getElementById('root').innerHTML = "
        b"'<article><h1>Socket</h1><p>' + ('The socket ' + w + '. ').repeat(40) + "
        b"'</p></article>'; };"
        b"s.onopen = () => say('opened'); s.onclose = () => say('was closed');"
    )
    upstream.route(HOST, "/sockets", Reply(200, shell_page(), HTML))
    upstream.route(HOST, "/static/app.js", Reply(200, script, JS))
    with anyio.fail_after(BOUND_S):
        body = (await core.scrape({"url": f"https://{HOST}/sockets"})).body
    assert "The socket was closed." in body["content"]
    assert "opened" not in body["content"]
    assert "/live" not in [seen.path for seen in upstream.requests_to(HOST)]


async def test_one_browser_serves_pages_in_turn_under_the_page_cap(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    urls = [serve_app(upstream, HOST, f"/many/{n}") for n in range(3)]
    env = {**doiget_env, "DOIGET_BROWSER_PAGES": "1", "DOIGET_WEB_CACHE": "0"}
    async with open_core(env) as web:
        with anyio.fail_after(BOUND_S):
            bodies = await asyncio.gather(*(web.scrape({"url": url}) for url in urls))
        tier = _tier(web)
        launches = tier.launches
    assert [outcome.body["extractedBy"] for outcome in bodies] == ["browser"] * 3
    assert launches == 1
    assert not tier.running  # closed with the core


async def test_an_idle_browser_is_closed_and_started_again_when_needed(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    first = serve_app(upstream, HOST, "/idle/1")
    second = serve_app(upstream, HOST, "/idle/2")
    env = {**doiget_env, "DOIGET_BROWSER_IDLE": "1", "DOIGET_WEB_CACHE": "0"}
    async with open_core(env) as web:
        tier = _tier(web)
        with anyio.fail_after(BOUND_S):
            await web.scrape({"url": first})
            assert tier.running
            while tier.running:
                await anyio.sleep(0.2)
            await web.scrape({"url": second})
        launches = tier.launches
    assert launches == 2
