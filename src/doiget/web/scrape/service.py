"""scrape_page: fetch one URL safely and turn it into the tool's result.

Every request goes through the ``web`` client of net/, which takes http and https to
any public host and applies the SSRF guard on the first URL and every redirect hop.
Hacker News items and YouTube videos are read through their APIs; PDF, DOCX and PPTX
are recognised by their bytes; everything else is HTML turned into markdown.

HTML is read in tiers: the page as fetched (``extractedBy: html``), then, only when
that found no text or the page is a shell that script fills in, the page rendered by
the browser tier (``browser``), whose every request goes through the same client.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import anyio

from doiget.errors import DoigetError, quoted
from doiget.net.client import Fetched
from doiget.net.network import Network
from doiget.net.urlform import ParsedUrl, parse_url
from doiget.sources import crossref
from doiget.web.failure import Kind, web_error
from doiget.web.outcome import TRUST
from doiget.web.requests import PREVIEW_BYTES, ScrapePageRequest
from doiget.web.results import ScrapePageResult

if TYPE_CHECKING:
    from doiget.net.client import SourceClient
    from doiget.web.browser.tier import BrowserTier
    from doiget.web.scrape.documents import DocumentText
    from doiget.web.scrape.extraction import HtmlReading
    from doiget.web.scrape.html import HtmlExtraction

logger = logging.getLogger("doiget.web")

# What a full/preview scrape reads at most before extraction (documents included).
FETCH_CAP_BYTES: Final = 50 * 1024 * 1024
ACCEPT: Final = (
    "text/html,application/xhtml+xml,application/pdf,"
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document,"
    "application/vnd.openxmlformats-officedocument.presentationml.presentation,"
    "text/markdown;q=0.9,text/plain;q=0.8,*/*;q=0.5"
)
_TEXT_TYPES: Final = ("text/markdown", "text/x-markdown", "text/plain")
# What a page rendered by the browser tier is handed to extraction as.
_RENDERED_TYPE: Final = "text/html; charset=utf-8"
# Bodies larger than this are decoded in a worker thread, off the event loop.
_INLINE_DECODE_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Extracted:
    """Content and citation facts of a page, whatever produced them."""

    content: str
    content_type: str
    title: str | None = None
    author: str | None = None
    date: str | None = None
    site: str | None = None
    structured: Any = None  # StructuredData from the HTML extractor
    extracted_by: str | None = None
    quality: str | None = None
    note: str | None = None
    # The text stops at an extraction cap (whatever max_length the caller gave).
    truncated: bool = False


async def decoded_text(fetched: Fetched) -> str:
    """The body decoded with its declared charset (else UTF-8, invalid bytes replaced);
    megabytes of it are decoded in a worker thread so other calls keep running."""
    if len(fetched.content) <= _INLINE_DECODE_BYTES:
        return fetched.text

    def decode() -> str:
        return fetched.text

    return await anyio.to_thread.run_sync(decode)


def checked_url(raw: str) -> ParsedUrl:
    """``raw`` as an http(s) URL with a host, or a validation error."""
    try:
        url = parse_url(raw.strip())
    except ValueError as exc:  # UnicodeError (a bad IDNA label) is a ValueError
        raise web_error(Kind.VALIDATION, f"{quoted(raw)} is not a valid URL: {exc}.") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise web_error(
            Kind.VALIDATION,
            f"URL rejected for {raw[:200]}: only http(s) URLs with a host can be read. "
            "Provide a valid public http(s) URL.",
        )
    return url


class Scraper:
    """Reads pages for scrape_page and search_and_scrape."""

    def __init__(
        self,
        network: Network,
        clock: Callable[[], dt.date] = dt.date.today,
        browser: BrowserTier | None = None,
    ) -> None:
        """``browser``: the process's browser tier (None: pages are read as fetched)."""
        self._network = network
        self._today = clock
        self.browser = browser

    @property
    def browser_usable(self) -> bool:
        """Whether a page that needs script can be rendered here."""
        return self.browser is not None and self.browser.state.usable

    async def aclose(self) -> None:
        """Close the browser, if one was started."""
        if self.browser is not None:
            await self.browser.aclose()

    async def scrape(self, request: ScrapePageRequest) -> ScrapePageResult:
        """The scrape_page result for ``request``."""
        url = checked_url(request.url).text
        limit = PREVIEW_BYTES if request.mode == "preview" else request.max_length
        if request.mode == "raw":
            return ScrapePageResult.model_validate(await self._raw(url, limit))
        extracted = await self._extract(url)
        return ScrapePageResult.model_validate(await self._render(url, extracted, limit))

    # -- fetching -----------------------------------------------------------------

    async def _raw(self, url: str, limit: int) -> dict[str, Any]:
        client = self._network.client("web", any_public_host=True)
        fetched = await client.get(
            url,
            max_bytes=limit,
            truncate=True,
            headers={"Accept": ACCEPT},
            timeouts=client.timeouts.page,
        )
        out = self._output(
            url,
            Extracted(await decoded_text(fetched), str(fetched.headers.get("content-type", ""))),
            len(fetched.content),
            fetched.truncated,
        )
        out["raw"] = True
        return out

    async def _extract(self, url: str) -> Extracted:
        from doiget.web.scrape import hn, youtube

        number = hn.item_id(url)
        if number is not None:
            client = self._network.client("hackernews")
            item = await hn.read_item(client, number)
            return Extracted(item.markdown, "hn", item.title, item.author, item.date, "Hacker News")
        video = youtube.video_id(url)
        if video is not None:
            client = self._network.client("youtube")
            transcript = await youtube.read_transcript(client, video, f"YouTube video {video}")
            return Extracted(
                transcript.markdown, "youtube", f"YouTube video {video}", None, None, "YouTube"
            )
        client = self._network.client("web", any_public_host=True)
        fetched = await client.get(
            url,
            max_bytes=FETCH_CAP_BYTES,
            headers={"Accept": ACCEPT},
            timeouts=client.timeouts.page,
        )
        return await self._from_body(url, fetched)

    async def _from_body(self, url: str, fetched: Fetched) -> Extracted:
        from doiget.web.scrape.documents import sniff_document
        from doiget.web.scrape.worker import extract_isolated

        content_type, body = fetched.content_type, fetched.content
        declared = str(fetched.headers.get("content-type", ""))
        kind = sniff_document(content_type, parse_url(url).path, body[:4096])
        if kind is not None:
            doc: DocumentText = await extract_isolated("document", body, kind, what=kind.upper())
            return Extracted(
                doc.text,
                kind,
                doc.title,
                doc.author,
                doc.date,
                truncated=doc.truncated,
                note=doc.note,
            )
        if content_type in _TEXT_TYPES:
            text = await extract_isolated("text", body, declared, what="text")
            return Extracted(text, "markdown", extracted_by="markdown", quality="complete")
        reading: HtmlReading = await extract_isolated("html", body, declared, url, what="page")
        if reading.shell is None:
            return _from_html(reading.page)
        return await self._escalated(url, fetched, reading.page, reading.shell)

    async def _escalated(
        self, url: str, fetched: Fetched, page: HtmlExtraction, shell: str
    ) -> Extracted:
        """The browser tier's reading of a page the html tier could not read fully;
        without the tier, the html tier's reading (or, with no text, why none)."""
        from doiget.web.scrape.worker import extract_isolated

        text = page.markdown.strip()
        if self.browser is None or not self.browser.state.usable:
            why = self.browser.state.reason if self.browser is not None else "not set up"
            stopped = f"stopped at the html tier: {shell}, and the browser tier is {why}"
            if not text:
                raise web_error(
                    Kind.CONTENT,
                    f"No content extracted from {url}: {stopped}.",
                    suggested_action="Install the browser tier (see doiget capabilities), "
                    "try mode 'raw' to see what the page sends, or use another source.",
                )
            return replace(_from_html(page), quality="partial", note=f"Extraction {stopped}.")
        logger.info("scrape %s: browser tier, as %s", url, shell)
        client: SourceClient = self._network.client("web", any_public_host=True)
        try:
            rendered = await self.browser.render(fetched, client)
        except DoigetError as error:
            if not text:
                raise
            # What the html tier found is still the caller's, with why it is all.
            note = f"Extraction stopped at the html tier: {shell}; the browser tier failed: "
            return replace(_from_html(page), quality="partial", note=note + error.message)
        browser_reading: HtmlReading = await extract_isolated(
            "html", rendered.html.encode("utf-8"), _RENDERED_TYPE, url, what="rendered page"
        )
        browser_page = browser_reading.page
        if len(browser_page.markdown.strip()) > len(text):
            return replace(_from_html(browser_page), extracted_by="browser")
        if not text:
            raise web_error(
                Kind.CONTENT,
                f"No content extracted from {url}: neither the page as fetched nor the page "
                "rendered in the browser holds readable text.",
            )
        return _from_html(page)

    # -- rendering ----------------------------------------------------------------

    def _citation(self, url: str, page: Extracted) -> dict[str, Any]:
        from doiget.web.scrape.citation import build_citation

        return build_citation(
            url=url,
            title=page.title,
            author=page.author,
            site=page.site,
            date=page.date,
            accessed=self._today(),
        )

    def _output(self, url: str, page: Extracted, length: int, truncated: bool) -> dict[str, Any]:
        """The fields every ScrapeOutput has, raw or not, for ``page.content`` as given."""
        from doiget.web.scrape.classify import classify
        from doiget.web.scrape.measure import estimated_tokens, size_category

        kinds = classify(url, page.structured)
        tokens = estimated_tokens(page.content)
        return {
            "url": url,
            "content": page.content,
            "contentType": page.content_type,
            "trust": TRUST,
            "contentLength": length,
            "truncated": truncated,
            "estimatedTokens": tokens,
            "sizeCategory": size_category(tokens),
            "citation": self._citation(url, page),
            "sourceType": kinds.source_type,
            "authorityTier": kinds.authority_tier,
            "domainCategory": kinds.domain_category,
        }

    async def _render(self, url: str, page: Extracted, limit: int) -> dict[str, Any]:
        from doiget.web.scrape.forum import forum_signals
        from doiget.web.scrape.measure import clean_text, truncate_utf8

        content, truncated = truncate_utf8(clean_text(page.content), limit)
        out = self._output(
            url, replace(page, content=content), len(content.encode()), truncated or page.truncated
        )
        if page.extracted_by:
            out["extractedBy"] = page.extracted_by
        if page.quality:
            out["extractionQuality"] = page.quality
        if page.note:
            out["extractionNote"] = page.note
        if page.title:
            out["metadata"] = {"title": page.title, "author": page.author or ""}
        if page.structured is not None:
            out["structuredData"] = page.structured.to_dict()
            signals = forum_signals(url, page.structured.json_ld)
            if signals is not None:
                out["forumSignals"] = signals
        if out["sourceType"] == "peer_reviewed" or out["domainCategory"] == "academic":
            await self._integrity(out, url, page)
        return out

    async def _integrity(self, out: dict[str, Any], url: str, page: Extracted) -> None:
        """``detectedDoi`` and, when Crossref records one, ``retractionStatus``."""
        from doiget.web.scrape.doi import detect_doi, retraction_status

        tags = page.structured.citation if page.structured is not None else None
        doi = detect_doi(tags, url, page.content)
        if doi is None:
            return
        out["detectedDoi"] = doi
        try:
            work = await crossref.get_work(
                self._network.client("crossref"), doi, self._network.settings.email
            )
        except DoigetError as error:
            logger.info("no integrity status for %s: %s", doi, error.message)
            return
        status = retraction_status(work.updates)
        if status is not None:
            out["retractionStatus"] = status


def _from_html(page: HtmlExtraction) -> Extracted:
    return Extracted(
        page.markdown,
        "html",
        page.title,
        page.author,
        page.date,
        page.site,
        page.structured,
        page.extracted_by,
        page.quality,
    )
