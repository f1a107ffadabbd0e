"""search_and_scrape: one search, its result pages read concurrently, ranked and combined.

A failed page never fails the call: it is listed in ``scrapeFailures`` and the status
becomes ``partial``. Pages are scored, filtered and ranked on their whole text; then,
in rank order, paragraphs a higher-ranked page already has are dropped and the
contents are cut to one shared byte budget (``total_max_length``).
Scores (each 0-1) are transparent: relevance is the share of the query's content
words the page contains; freshness decays with the page's age (0.5 when unknown);
authority follows the source's authority tier; content quality follows the amount of
extracted prose. Overall = 0.35 relevance + 0.20 freshness + 0.25 authority + 0.20
content quality.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final, Literal

import anyio

from doiget.contract import build
from doiget.errors import DoigetError
from doiget.web.claim import claim_signal, content_words, split_sentences
from doiget.web.failure import Kind, failure_of, web_error
from doiget.web.outcome import TRUST
from doiget.web.requests import ScrapePageRequest, SearchAndScrapeRequest, WebSearchRequest
from doiget.web.results import (
    CombinedSource,
    CombinedSummary,
    Scores,
    ScrapeFailure,
    ScrapePageResult,
    SearchAndScrapeResult,
    SearchHit,
    WebSearchResult,
)
from doiget.web.router import Router
from doiget.web.scrape.measure import truncate_utf8

logger = logging.getLogger("doiget.web")

Search = Callable[[WebSearchRequest], Awaitable[WebSearchResult]]
Scrape = Callable[[ScrapePageRequest], Awaitable[ScrapePageResult]]

Status = Literal["complete", "partial", "failed"]
CONCURRENT_SCRAPES: Final = 5
# A source whose relevance is below this is dropped by filter_by_query.
RELEVANCE_FLOOR: Final = 0.25
SPARSE_WORDS: Final = 150
KEY_SENTENCES: Final = 3
_AUTHORITY: Final = {"high": 1.0, "medium": 0.6, "low": 0.3}
_WEIGHTS: Final = {"relevance": 0.35, "freshness": 0.20, "authority": 0.25, "content_quality": 0.20}


def _relevance(query: str, content: str) -> float:
    wanted = content_words(query)
    if not wanted:
        return 0.0
    return len(wanted & content_words(content)) / len(wanted)


def _freshness(date: str, today: dt.date) -> float:
    """1 within a year, falling linearly to 0.2 at ten years; 0.5 when undated."""
    try:
        year = int(date[:4])
    except ValueError:
        return 0.5
    age = max(0, today.year - year)
    return round(max(0.2, 1.0 - 0.8 * max(0, age - 1) / 9), 3)


def _content_quality(words: int, quality: str | None) -> float:
    return min(1.0, words / 600) * (1.0 if quality != "partial" else 0.7)


def _scores(query: str, page: ScrapePageResult, content: str, words: int, today: dt.date) -> Scores:
    parts = {
        "relevance": _relevance(query, content),
        "freshness": _freshness(page.citation.metadata.date, today),
        "authority": _AUTHORITY.get(page.authority_tier, 0.3),
        "content_quality": _content_quality(words, page.extraction_quality),
    }
    overall = sum(_WEIGHTS[name] * value for name, value in parts.items())
    return Scores(
        overall=round(overall, 3), **{name: round(value, 3) for name, value in parts.items()}
    )


def _key_sentences(claim: str, content: str) -> list[str]:
    """The sentences sharing most words with the claim, in document order."""
    wanted = content_words(claim)
    scored = [
        (len(wanted & content_words(sentence)), index, sentence)
        for index, sentence in enumerate(split_sentences(content))
    ]
    best = sorted((item for item in scored if item[0] > 0), key=lambda item: -item[0])
    return [sentence for _, _, sentence in sorted(best[:KEY_SENTENCES], key=lambda i: i[1])]


def _paragraph_key(paragraph: str) -> str:
    return hashlib.sha256(" ".join(paragraph.lower().split()).encode()).hexdigest()


def _dedup(content: str, seen: set[str]) -> str:
    """``content`` without the paragraphs already in ``seen`` (which it then joins)."""
    kept = []
    for paragraph in content.split("\n\n"):
        if not paragraph.strip():
            continue
        key = _paragraph_key(paragraph)
        if key in seen:
            continue
        seen.add(key)
        kept.append(paragraph)
    return "\n\n".join(kept)


def _failure(url: str, error: DoigetError) -> ScrapeFailure:
    failure = failure_of(error)
    return ScrapeFailure(
        url=url,
        kind=failure.kind.value,
        reason=failure.message,
        retryable=failure.retryable,
        suggested_action=failure.suggested_action,
    )


async def _read_all(
    urls: list[str], scrape: Scrape, per_source: int
) -> tuple[list[ScrapePageResult | None], list[ScrapeFailure]]:
    """Every page (None where it failed) and the failures, at most 5 reads at a time."""
    pages: list[ScrapePageResult | None] = [None] * len(urls)
    failures: list[ScrapeFailure | None] = [None] * len(urls)
    limiter = anyio.CapacityLimiter(CONCURRENT_SCRAPES)

    async def read(slot: int, url: str) -> None:
        async with limiter:
            try:
                pages[slot] = await scrape(build(ScrapePageRequest, url=url, max_length=per_source))
            except DoigetError as error:
                failures[slot] = _failure(url, error)
            except Exception as exc:  # one page's extractor bug must not sink the rest
                logger.exception("reading %s for search_and_scrape failed", url)
                internal = web_error(
                    Kind.INTERNAL, f"reading {url} failed unexpectedly ({type(exc).__name__})."
                )
                failures[slot] = _failure(url, internal)

    async with anyio.create_task_group() as tasks:
        for slot, url in enumerate(urls):
            tasks.start_soon(read, slot, url)
    return pages, [failure for failure in failures if failure is not None]


def _source(
    hit: SearchHit,
    page: ScrapePageResult,
    request: SearchAndScrapeRequest,
    today: dt.date,
) -> CombinedSource:
    content = page.content
    words = len(content.split())
    source = CombinedSource(
        url=hit.url,
        title=(page.metadata.title if page.metadata is not None else "") or hit.title,
        content=content,
        content_type=page.content_type,
        trust=TRUST,
        scores=_scores(request.query, page, content, words, today),
        source_type=page.source_type,
        authority_tier=page.authority_tier,
        domain_category=page.domain_category,
        extraction_quality=page.extraction_quality or "complete",
        word_count=words,
    )
    if page.citation.metadata.date:
        source.published_at = page.citation.metadata.date
    if request.claim is not None:
        source.claim_signal = claim_signal(request.claim, content)
        source.key_sentences = _key_sentences(request.claim, content)
    return source


def _trimmed(
    ranked: list[CombinedSource], deduplicate: bool, budget: int
) -> tuple[list[CombinedSource], int]:
    """Sources in rank order without paragraphs a higher-ranked one has, their contents
    together within ``budget`` bytes; and how many were nothing but repeats."""
    seen: set[str] = set()
    kept: list[CombinedSource] = []
    duplicates = 0
    for source in ranked:
        content = _dedup(source.content, seen) if deduplicate else source.content
        if not content.strip():
            duplicates += 1
            continue
        content, _ = truncate_utf8(content, max(budget, 0))
        budget -= len(content.encode("utf-8"))
        source.content = content
        source.word_count = len(content.split())
        kept.append(source)
    return kept, duplicates


def _combined(sources: list[CombinedSource], limit: int) -> str:
    text = "\n\n".join(
        f"## [{number}] {source.title}\n{source.url}\n\n{source.content}"
        for number, source in enumerate(sources, start=1)
    )
    return truncate_utf8(text, limit)[0]


async def search_and_scrape(
    request: SearchAndScrapeRequest,
    search: Search,
    scrape: Scrape,
    router: Router,
    today: Callable[[], dt.date] = dt.date.today,
) -> SearchAndScrapeResult:
    """The result for ``request``."""
    started = time.monotonic()
    found = await search(
        WebSearchRequest(
            query=request.query, num_results=request.num_results, provider=request.provider
        )
    )
    hits = found.results
    pages, failures = await _read_all(
        [hit.url for hit in hits], scrape, request.max_length_per_source
    )

    sources = [
        _source(hit, page, request, today())
        for hit, page in zip(hits, pages, strict=True)
        if page is not None
    ]
    sparse = sum(source.word_count < SPARSE_WORDS for source in sources)
    read = len(sources)
    wanted = request.filter_by_query
    if wanted if wanted is not None else request.claim is not None:
        sources = [s for s in sources if s.scores.relevance >= RELEVANCE_FLOOR]
    filtered_out = read - len(sources)
    sources.sort(key=lambda source: -source.scores.overall)
    sources, duplicates = _trimmed(sources, request.deduplicate, request.total_max_length)
    combined = _combined(sources, request.total_max_length)
    if not request.include_sources:
        for source in sources:
            source.content = ""

    status: Status = "failed" if not sources else "partial" if failures else "complete"
    result = SearchAndScrapeResult(
        query=request.query,
        status=status,
        sources=sources,
        combined_content=combined,
        scrape_failures=failures,
        summary=CombinedSummary(
            urls_searched=len(hits),
            urls_scraped=sum(page is not None for page in pages),
            urls_failed=len(failures),
            duplicates_removed=duplicates,
            filtered_out=filtered_out,
            sparse_sources=sparse,
            processing_time_ms=int((time.monotonic() - started) * 1000),
        ),
        trust=TRUST,
    )
    if found.hints is not None:
        result.hints = found.hints
    if status == "failed" and read:
        result.note = (
            f"{read} page(s) were read but none kept: off-topic for the query "
            f"({filtered_out}) or repeating a kept page ({duplicates}); set filter_by_query "
            "false, or rephrase the query."
        )
    elif status == "failed":
        result.note = (
            "No page could be read: see scrapeFailures and hints; try other search terms, "
            f"another provider ({', '.join(router.healthy()) or 'none healthy'}), or "
            "scrape_page on a known URL."
        )
    return result
