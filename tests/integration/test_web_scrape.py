"""scrape_page through the core against the replay upstream: every content route."""

from __future__ import annotations

import copy
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from webutil import Clock, JsonCore

from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.web.failure import Kind, failure_of
from doiget.web.service import WebCore

from netutil import make_network
from replay import FIXTURES, ReplayUpstream, Reply

ARTICLE_URL = "https://journals.plos.org/plosone/article?id=10.1371/journal.pone.0299999"
CROSSREF_PATH = "/works/10.1371/journal.pone.0299999"
CROSSREF_RECORD = "crossref/works-10.1371_journal.pone.0033693.json"


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def core(doiget_env: dict[str, str], clock: Clock) -> AsyncIterator[WebCore]:
    web = WebCore(load_settings(doiget_env), make_network(doiget_env), clock=clock)
    yield JsonCore(web)
    await web.network.aclose()
    await web.aclose()


def _serve_article(upstream: ReplayUpstream) -> None:
    upstream.fixture(
        "journals.plos.org",
        "/plosone/article",
        "web/article.html",
        content_type="text/html; charset=utf-8",
    )


async def test_article_page_becomes_markdown_with_structure_citation_and_integrity(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _serve_article(upstream)
    upstream.fixture("api.crossref.org", CROSSREF_PATH, CROSSREF_RECORD)
    outcome = await core.scrape({"url": ARTICLE_URL})
    body = outcome.body
    assert body["contentType"] == "html"
    assert body["extractedBy"] == "html"
    assert body["extractionQuality"] == "complete"
    assert "lake ice" in body["content"].lower()
    assert "| " in body["content"]  # the results table as a pipe table
    assert body["metadata"]["title"].startswith("Seasonal variation of lake ice thickness")
    structured = body["structuredData"]
    assert structured["citation"]["citation_doi"] == "10.1371/journal.pone.0299999"
    assert len(structured["citation"]["citation_author"]) == 2
    assert any(key == "og:title" for key in structured["openGraph"])
    assert structured["jsonLd"]
    assert body["sourceType"] == "peer_reviewed"
    assert body["authorityTier"] == "high"
    assert body["domainCategory"] == "academic"
    assert body["detectedDoi"] == "10.1371/journal.pone.0299999"
    # The recorded Crossref record has one updated-by notice: a correction.
    assert body["retractionStatus"] == {
        "retracted": False,
        "kind": "correction",
        "date": "2012-05-08",
        "noticeDoi": "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda",
        "source": "publisher",
    }
    citation = body["citation"]
    assert citation["url"] == ARTICLE_URL
    assert citation["metadata"]["title"] == body["metadata"]["title"]
    assert "Seasonal variation" in citation["formatted"]["apa"]
    assert ARTICLE_URL in citation["formatted"]["mla"]
    assert body["trust"] == "untrusted-external-content"
    assert body["estimatedTokens"] > 0 and body["sizeCategory"] == "small"
    assert outcome.meta is None  # fresh scrapes carry no cache provenance

    sid = (
        await core.research_step({"searchStep": "start", "stepNumber": 1, "nextStepNeeded": True})
    ).body["sessionId"]
    again = await core.scrape({"url": ARTICLE_URL, "sessionId": sid})
    assert again.body == body
    assert again.meta is not None and again.meta["cached"] is True
    assert again.meta["maxAgeSeconds"] == 3600
    assert len(upstream.requests_to("journals.plos.org")) == 1


async def test_retraction_notice_marks_the_page_retracted(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    record = json.loads((FIXTURES / CROSSREF_RECORD).read_text())
    retracted = copy.deepcopy(record)
    retracted["message"]["updated-by"].append(
        {
            "DOI": "10.1371/journal.pone.0300001",
            "type": "retraction",
            "label": "Retraction",
            "source": "retraction-watch",
            "updated": {"date-parts": [[2024, 2, 1]]},
        }
    )
    _serve_article(upstream)
    upstream.json("api.crossref.org", CROSSREF_PATH, retracted)
    body = (await core.scrape({"url": ARTICLE_URL})).body
    assert body["retractionStatus"] == {
        "retracted": True,
        "kind": "retraction",
        "date": "2024-02-01",
        "noticeDoi": "10.1371/journal.pone.0300001",
        "source": "retraction-watch",
    }


async def test_unknown_integrity_status_is_omitted_not_guessed(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _serve_article(upstream)
    upstream.route("api.crossref.org", CROSSREF_PATH, Reply(404, b"Resource not found."))
    body = (await core.scrape({"url": ARTICLE_URL})).body
    assert body["detectedDoi"] == "10.1371/journal.pone.0299999"
    assert "retractionStatus" not in body


async def test_pdf_is_recognised_by_its_bytes(core: WebCore, upstream: ReplayUpstream) -> None:
    upstream.fixture(
        "www.nature.com",
        "/articles/paper",
        "pdf/openquestion-jose-paper.pdf",
        content_type="application/octet-stream",
    )
    body = (await core.scrape({"url": "https://www.nature.com/articles/paper"})).body
    assert body["contentType"] == "pdf"
    assert "OpenQuestion" in body["content"]
    assert "structuredData" not in body


async def test_docx_and_pptx_are_read(
    core: WebCore, upstream: ReplayUpstream, tmp_path: Path
) -> None:
    import docx
    import pptx

    document = docx.Document()
    document.core_properties.title = "Quarterly report"
    document.core_properties.author = "Ada Lovelace"
    document.add_heading("Findings", level=1)
    document.add_paragraph("Engines compute Bernoulli numbers.")
    word = io.BytesIO()
    document.save(word)
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Roadmap"
    slide.placeholders[1].text = "Ship the analytical engine"
    slides = io.BytesIO()
    deck.save(slides)
    upstream.route("docs.example.org", "/report.docx", Reply(200, word.getvalue()))
    upstream.route("docs.example.org", "/deck.pptx", Reply(200, slides.getvalue()))

    report = (await core.scrape({"url": "https://docs.example.org/report.docx"})).body
    assert report["contentType"] == "docx"
    assert "# Findings" in report["content"]
    assert "Bernoulli" in report["content"]
    assert report["citation"]["metadata"]["author"] == "Ada Lovelace"
    presentation = (await core.scrape({"url": "https://docs.example.org/deck.pptx"})).body
    assert presentation["contentType"] == "pptx"
    assert "Ship the analytical engine" in presentation["content"]


async def test_hacker_news_item_is_read_from_the_api(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    api = "hacker-news.firebaseio.com"
    upstream.json(
        api,
        "/v0/item/8863.json",
        {
            "by": "dhouston",
            "id": 8863,
            "kids": [9224, 9999],
            "descendants": 2,
            "score": 104,
            "time": 1175714200,
            "title": "My YC app: Dropbox - Throw away your USB drive",
            "type": "story",
            "url": "http://www.getdropbox.com/u/2/screencast.html",
        },
    )
    upstream.json(api, "/v0/item/9224.json", {"by": "BrandonM", "text": "<p>Neat &amp; tidy."})
    upstream.json(api, "/v0/item/9999.json", {"deleted": True})
    body = (await core.scrape({"url": "https://news.ycombinator.com/item?id=8863"})).body
    assert body["contentType"] == "hn"
    assert body["content"].startswith("# My YC app: Dropbox")
    assert "**BrandonM**: Neat & tidy." in body["content"]
    assert body["citation"]["metadata"]["author"] == "dhouston"
    assert body["citation"]["metadata"]["date"] == "2007-04-04"
    assert upstream.requests_to("news.ycombinator.com") == []


async def test_preview_is_capped_at_5000_bytes_whatever_max_length_says(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    text = "A sentence of plain text that goes on. " * 1000
    upstream.route(
        "docs.example.org", "/notes.txt", Reply(200, text.encode(), {"Content-Type": "text/plain"})
    )
    body = (
        await core.scrape(
            {"url": "https://docs.example.org/notes.txt", "mode": "preview", "max_length": 90000}
        )
    ).body
    assert body["truncated"] is True
    assert body["contentLength"] <= 5000
    assert body["contentType"] == "markdown"


async def test_raw_mode_returns_the_bytes_as_sent_up_to_the_cap(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    page = b"<html><script>alert(1)</script><body>" + b"x" * 5000 + b"</body></html>"
    upstream.route(
        "docs.example.org", "/raw", Reply(200, page, {"Content-Type": "text/html; charset=utf-8"})
    )
    body = (
        await core.scrape(
            {"url": "https://docs.example.org/raw", "mode": "raw", "max_length": 1000}
        )
    ).body
    assert body["raw"] is True
    assert body["content"].encode() == page[:1000]
    assert body["contentLength"] == 1000 and body["truncated"] is True
    assert body["contentType"] == "text/html; charset=utf-8"
    assert "metadata" not in body and "extractionQuality" not in body


async def test_six_megabyte_body_is_cut_at_the_five_megabyte_cap(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    block = b"0123456789" * 100_000  # 1,000,000 bytes
    upstream.route(
        "docs.example.org",
        "/big.bin",
        Reply(200, block, {"Content-Type": "application/octet-stream"}, repeat=6),
    )
    outcome = await core.scrape(
        {"url": "https://docs.example.org/big.bin", "mode": "raw", "max_length": 5_000_000}
    )
    assert outcome.link is not None  # far over 24 KiB: linked, not inline
    assert outcome.body["contentSizeBytes"] == 5_000_000
    stored = await core.read_artifact(outcome.link.uri)
    assert stored is not None
    full = json.loads(stored[0])
    assert full["contentLength"] == 5_000_000 and full["truncated"] is True


async def test_artifact_expires_after_30_minutes(
    core: WebCore, upstream: ReplayUpstream, clock: Clock
) -> None:
    text = "Lines of a long plain text document. " * 2000
    upstream.route(
        "docs.example.org", "/long.txt", Reply(200, text.encode(), {"Content-Type": "text/plain"})
    )
    outcome = await core.scrape({"url": "https://docs.example.org/long.txt", "mode": "raw"})
    assert outcome.link is not None
    summary = outcome.body
    assert summary["linked"] is True and summary["resource"] == outcome.link.uri
    assert summary["trust"] == "untrusted-external-content"
    assert await core.read_artifact(outcome.link.uri) is not None
    clock.now += 29 * 60
    assert await core.read_artifact(outcome.link.uri) is not None
    clock.now += 2 * 60
    assert await core.read_artifact(outcome.link.uri) is None


async def test_results_inline_when_the_cache_is_off(
    doiget_env: dict[str, str], upstream: ReplayUpstream
) -> None:
    env = {**doiget_env, "DOIGET_WEB_CACHE": "0"}
    web = JsonCore(WebCore(load_settings(env), make_network(env)))
    text = "Lines of a long plain text document. " * 2000
    upstream.route(
        "docs.example.org", "/long.txt", Reply(200, text.encode(), {"Content-Type": "text/plain"})
    )
    try:
        outcome = await web.scrape({"url": "https://docs.example.org/long.txt", "mode": "raw"})
    finally:
        await web.network.aclose()
        await web.aclose()
    assert outcome.link is None
    assert outcome.body["contentLength"] > 24 * 1024


@pytest.mark.parametrize(
    ("status", "kind"),
    [(404, Kind.NOT_FOUND), (410, Kind.NOT_FOUND), (403, Kind.BLOCKED), (401, Kind.AUTH)],
)
async def test_http_failures_have_their_kind(
    core: WebCore, upstream: ReplayUpstream, status: int, kind: Kind
) -> None:
    upstream.route("docs.example.org", "/gone", Reply(status, b"no"))
    with pytest.raises(DoigetError) as caught:
        await core.scrape({"url": "https://docs.example.org/gone"})
    assert failure_of(caught.value).kind is kind


async def test_page_with_no_readable_text_is_a_content_failure(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    upstream.route(
        "docs.example.org",
        "/app",
        Reply(
            200,
            b"<html><body><div id='root'></div><script>x()</script></body></html>",
            {"Content-Type": "text/html"},
        ),
    )
    with pytest.raises(DoigetError) as caught:
        await core.scrape({"url": "https://docs.example.org/app"})
    failure = failure_of(caught.value)
    assert failure.kind is Kind.CONTENT and failure.retryable


VIDEO = "dQw4w9WgXcQ"
WATCH_PAGE = (
    b"<html><head><title>A talk</title></head><body><script>var ytcfg = "
    b'{"INNERTUBE_API_KEY": "AIzaTestKey_123"};</script></body></html>'
)


def _route_youtube(upstream: ReplayUpstream, caption_url: str) -> None:
    upstream.route(
        "www.youtube.com", "/watch", Reply(200, WATCH_PAGE, {"Content-Type": "text/html"})
    )
    upstream.json(
        "www.youtube.com",
        "/youtubei/v1/player",
        {
            "playabilityStatus": {"status": "OK"},
            "captions": {
                "playerCaptionsTracklistRenderer": {
                    "captionTracks": [
                        {
                            "baseUrl": caption_url,
                            "name": {"runs": [{"text": "English"}]},
                            "languageCode": "en",
                        }
                    ],
                    "translationLanguages": [],
                }
            },
        },
    )


async def test_youtube_transcript_travels_through_the_guarded_network(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _route_youtube(upstream, f"https://www.youtube.com/api/timedtext?v={VIDEO}&lang=en")
    upstream.route(
        "www.youtube.com",
        "/api/timedtext",
        Reply(
            200,
            b'<?xml version="1.0"?><transcript><text start="0.5" dur="2">Hello and welcome'
            b'</text><text start="65.2" dur="3">Today: measuring things</text></transcript>',
            {"Content-Type": "text/xml"},
        ),
    )
    body = (await core.scrape({"url": f"https://www.youtube.com/watch?v={VIDEO}"})).body
    assert body["contentType"] == "youtube"
    assert "[0:00] Hello and welcome" in body["content"]
    assert "[1:05] Today: measuring things" in body["content"]
    paths = [record.path for record in upstream.requests_to("www.youtube.com")]
    assert paths == ["/watch", "/youtubei/v1/player", "/api/timedtext"]


async def test_youtube_caption_link_off_youtube_is_refused(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _route_youtube(upstream, "https://evil.example/steal?v=1")
    with pytest.raises(DoigetError) as caught:
        await core.scrape({"url": f"https://youtu.be/{VIDEO}"})
    assert "evil.example" in caught.value.message
    assert upstream.requests_to("evil.example") == []


async def test_json_ld_with_a_broken_escape_does_not_break_the_scrape(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    page = (
        b'<html><head><title>Half an emoji</title><script type="application/ld+json">'
        b'{"@type": "BlogPosting", "headline": "broken \\ud83d emoji"}</script></head>'
        b"<body><article><p>"
        + b"Readable prose about a broken emoji escape. " * 20
        + b"</p></article></body></html>"
    )
    upstream.route("blog.example.org", "/emoji", Reply(200, page, {"Content-Type": "text/html"}))
    body = (await core.scrape({"url": "https://blog.example.org/emoji"})).body
    json.dumps(body, ensure_ascii=False).encode("utf-8")  # encodable: no lone surrogates
    assert body["structuredData"]["jsonLd"][0]["headline"].startswith("broken ")


async def test_an_unusable_cache_slows_calls_down_but_never_fails_them(
    doiget_env: dict[str, str], upstream: ReplayUpstream, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the data folder should be")
    env = {**doiget_env, "DOIGET_DATA_DIR": str(blocker)}
    web = JsonCore(WebCore(load_settings(env), make_network(env)))
    upstream.route(
        "docs.example.org", "/n.txt", Reply(200, b"plain words", {"Content-Type": "text/plain"})
    )
    try:
        body = (await web.scrape({"url": "https://docs.example.org/n.txt"})).body
    finally:
        await web.network.aclose()
        await web.aclose()
    assert body["content"] == "plain words"
    assert web.artifacts is None


async def test_hacker_news_url_with_a_non_ascii_digit_is_not_an_internal_error(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    with pytest.raises(DoigetError) as caught:
        await core.scrape({"url": "https://news.ycombinator.com/item?id=%C2%B2"})
    assert failure_of(caught.value).kind is Kind.NOT_FOUND


async def test_reddit_post_carries_forum_signals_from_its_json_ld(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    path = "/r/askscience/comments/1c0ffee/does_intermittent_fasting_actually_improve/"
    upstream.fixture(
        "www.reddit.com", path, "web/reddit-post.html", content_type="text/html; charset=utf-8"
    )
    outcome = await core.scrape({"url": f"https://www.reddit.com{path}"})
    body = outcome.body
    assert body["forumSignals"] == {
        "platform": "reddit",
        "upvotes": 7,
        "comments": 3,
        "datePublished": "2025-03-14T09:26:53.589Z",
        "authorName": "u/glucose_curious",
        "credibilityNote": body["forumSignals"]["credibilityNote"],
    }
    assert "20 upvotes" in body["forumSignals"]["credibilityNote"]
    assert "randomised trial" in body["content"]
    assert body["sourceType"] == "forum"


async def test_pages_other_than_reddit_posts_have_no_forum_signals(
    core: WebCore, upstream: ReplayUpstream
) -> None:
    _serve_article(upstream)
    outcome = await core.scrape({"url": ARTICLE_URL})
    assert "forumSignals" not in outcome.body
