"""The tool reference's examples of the web toolset give, against the replay upstream,
the results the reference shows."""

from __future__ import annotations

from pathlib import Path

from docsexamples import check_group

from replay import ReplayUpstream, Reply

ARTICLE = ("journals.plos.org", "/plosone/article")


def _page(title: str, text: str) -> bytes:
    return (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        f"<p>{text}</p></article></body></html>"
    ).encode()


# The first two results of the recorded DuckDuckGo answer, as short pages.
PAGES = {
    ("docs.python.org", "/3/library/asyncio-task.html"): _page(
        "Coroutines and Tasks",
        "This section outlines high-level asyncio APIs to work with coroutines and tasks. "
        "Tasks are used to schedule coroutines concurrently; asyncio.gather() runs "
        "awaitable objects in the sequence concurrently and returns their results.",
    ),
    ("realpython.com", "/async-io-python/"): _page(
        "Async IO in Python: A Complete Walkthrough",
        "Async IO is a concurrent programming design that has received dedicated support "
        "in Python. This tutorial walks through the async and await keywords, event loops "
        "and coroutines, with examples you can run.",
    ),
}


def route_web(upstream: ReplayUpstream) -> None:
    html = {"Content-Type": "text/html; charset=utf-8"}
    upstream.fixture(
        "html.duckduckgo.com",
        "/html/",
        "web/duckduckgo-html-results.html",
        content_type=html["Content-Type"],
    )
    upstream.fixture(*ARTICLE, "web/article.html", content_type=html["Content-Type"])
    for (host, path), body in PAGES.items():
        upstream.route(host, path, Reply(200, body, html))
    upstream.fixture(
        "api.openalex.org", "/works", "openalex/works-search-machine_learning-per_page20.json"
    )
    upstream.fixture("api.lens.org", "/patent/search", "web/lens-patent-search.json")


async def test_web_examples_give_their_documented_results(
    upstream: ReplayUpstream, doiget_env: dict[str, str], tmp_path: Path
) -> None:
    route_web(upstream)
    env = {**doiget_env, "LENS_API_TOKEN": "lens-docs-token"}
    await check_group("web", env, tmp_path)
