"""DuckDuckGo through its HTML results page: the keyless default provider.

There is no API, so the page's markup is read: ``div.result`` blocks (ads carry
``result--ad``), the title link ``a.result__a`` and the snippet ``.result__snippet``.
Links usually go through DuckDuckGo's redirector (``//duckduckgo.com/l/?uddg=<url>``)
and are unwrapped to the page itself. When DuckDuckGo suspects a bot it answers with
a challenge page instead of results; that is reported as a rate limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio.to_thread
from lxml import etree, html

from doiget.net.client import SourceClient
from doiget.upstreams.duckduckgo import UPSTREAM
from doiget.web.failure import Kind, web_error
from doiget.web.providers.base import (
    ProviderAnswer,
    ProviderQuery,
    SearchHit,
    StatusMeaning,
    attributed,
    compose_query,
    hits_from,
    not_applied,
)

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.net.network import Network

NAME: Final = UPSTREAM.name
ENDPOINT: Final = "https://html.duckduckgo.com/html/"
MAX_SITES: Final = 10
PAGE_CAP_BYTES: Final = 5 * 1024 * 1024

_TIME_RANGES: Final = {"day": "d", "week": "w", "month": "m", "year": "y"}
_SAFE: Final = {"high": "1", "medium": "-1", "off": "-2"}

# DuckDuckGo's regions (``kl``) by ISO country, then ISO language; a country's first
# entry is its default. Its own codes differ from ISO in places (uk-en, jp-jp, ...).
_REGIONS: Final[dict[str, dict[str, str]]] = {
    "ar": {"es": "ar-es"},
    "at": {"de": "at-de"},
    "au": {"en": "au-en"},
    "be": {"fr": "be-fr", "nl": "be-nl"},
    "bg": {"bg": "bg-bg"},
    "br": {"pt": "br-pt"},
    "ca": {"en": "ca-en", "fr": "ca-fr"},
    "ch": {"de": "ch-de", "fr": "ch-fr", "it": "ch-it"},
    "cl": {"es": "cl-es"},
    "cn": {"zh": "cn-zh"},
    "co": {"es": "co-es"},
    "cz": {"cs": "cz-cs"},
    "de": {"de": "de-de"},
    "dk": {"da": "dk-da"},
    "ee": {"et": "ee-et"},
    "es": {"es": "es-es", "ca": "ct-ca"},
    "fi": {"fi": "fi-fi"},
    "fr": {"fr": "fr-fr"},
    "gb": {"en": "uk-en"},
    "gr": {"el": "gr-el"},
    "hk": {"zh": "hk-tzh"},
    "hr": {"hr": "hr-hr"},
    "hu": {"hu": "hu-hu"},
    "id": {"id": "id-id", "en": "id-en"},
    "ie": {"en": "ie-en"},
    "il": {"he": "il-he"},
    "in": {"en": "in-en"},
    "it": {"it": "it-it"},
    "jp": {"ja": "jp-jp"},
    "kr": {"ko": "kr-kr"},
    "lt": {"lt": "lt-lt"},
    "lv": {"lv": "lv-lv"},
    "mx": {"es": "mx-es"},
    "my": {"ms": "my-ms", "en": "my-en"},
    "nl": {"nl": "nl-nl"},
    "no": {"no": "no-no", "nb": "no-no"},
    "nz": {"en": "nz-en"},
    "pe": {"es": "pe-es"},
    "ph": {"en": "ph-en", "tl": "ph-tl"},
    "pl": {"pl": "pl-pl"},
    "pt": {"pt": "pt-pt"},
    "ro": {"ro": "ro-ro"},
    "ru": {"ru": "ru-ru"},
    "se": {"sv": "se-sv"},
    "sg": {"en": "sg-en"},
    "si": {"sl": "sl-sl"},
    "sk": {"sk": "sk-sk"},
    "th": {"th": "th-th"},
    "tr": {"tr": "tr-tr"},
    "tw": {"zh": "tw-tzh"},
    "ua": {"uk": "ua-uk"},
    "us": {"en": "us-en", "es": "ue-es"},
    "vn": {"vi": "vn-vi"},
    "za": {"en": "za-en"},
}


def _has_class(name: str) -> str:
    """An XPath test for one class among several (no cssselect needed)."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


_RESULTS: Final = etree.XPath(f"//div[{_has_class('result')}]")
_TITLE_LINK: Final = etree.XPath(f".//a[{_has_class('result__a')}]")
_SNIPPET: Final = etree.XPath(f".//*[{_has_class('result__snippet')}]")
_CHALLENGE: Final = etree.XPath(
    "//*[contains(@class, 'anomaly-modal')] | //form[@id='challenge-form']"
)
_NO_RESULTS: Final = etree.XPath(f"//*[{_has_class('no-results')}]")
_RESULTS_LIST: Final = etree.XPath("//*[@id='links']")


def _elements(found: object) -> list[html.HtmlElement]:
    """The elements of an XPath answer (lxml types it as any XPath value)."""
    if not isinstance(found, list):
        return []
    return [node for node in found if isinstance(node, html.HtmlElement)]


def region(request: ProviderQuery) -> tuple[str | None, tuple[str, ...]]:
    """The ``kl`` region for the request's country and language, and what was not applied.

    DuckDuckGo filters by region only: a language counts when it is one of the
    country's regional languages, and is otherwise reported as not applied.
    """
    country = (request.country or "").lower()
    language = (request.language or "").lower()
    notes: list[str] = []
    kl: str | None = None
    regional = _REGIONS.get(country)
    if country and regional is None:
        notes.append(f"country {country!r} has no duckduckgo region and was not applied")
    if regional is not None:
        kl = regional.get(language) or next(iter(regional.values()))
    if language and (regional is None or language not in regional):
        notes.append(not_applied("language", NAME))
    return kl, tuple(notes)


def unwrap(href: str) -> str:
    """The destination of a result link, out of DuckDuckGo's ``/l/?uddg=`` redirector."""
    absolute = urljoin("https://duckduckgo.com/", href.strip())
    parts = urlsplit(absolute)
    host = (parts.hostname or "").lower()
    if (host == "duckduckgo.com" or host.endswith(".duckduckgo.com")) and parts.path == "/l/":
        wrapped = parse_qs(parts.query).get("uddg")
        if wrapped:
            return wrapped[0]
    return absolute


def _rows(page: html.HtmlElement) -> Iterator[tuple[str, str, str]]:
    for block in _elements(_RESULTS(page)):
        if "result--ad" in (block.get("class") or "").split():
            continue
        links = _elements(_TITLE_LINK(block))
        if not links:
            continue
        link = links[0]
        target = unwrap(link.get("href") or "")
        host = (urlsplit(target).hostname or "").lower()
        if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
            continue  # an ad or an internal page that slipped through
        snippets = _elements(_SNIPPET(block))
        snippet = snippets[0].text_content() if snippets else ""
        yield link.text_content(), target, snippet


def parse_page(body: str, limit: int, client: SourceClient) -> tuple[SearchHit, ...]:
    """Up to ``limit`` hits from a results page.

    A "No results" page gives no hits; the bot challenge is a RATE_LIMIT; a page with
    neither results nor either marker means the markup changed (schema drift).
    """
    if not body.strip():
        raise client.schema_drift("answered with an empty page")
    try:
        page = html.document_fromstring(body)
    except (etree.ParserError, ValueError) as exc:
        raise client.schema_drift("answered with a page that is not HTML") from exc
    if _elements(_CHALLENGE(page)):
        raise web_error(
            Kind.RATE_LIMIT,
            "duckduckgo answered with its bot challenge instead of results: it is limiting "
            "automated searches from this address.",
            provider=NAME,
            suggested_action="Wait a few minutes before searching duckduckgo again, or use "
            "another configured provider.",
        )
    hits = hits_from(_rows(page), limit, markup=False)
    if hits or _elements(_NO_RESULTS(page)) or _elements(_RESULTS_LIST(page)):
        return hits
    raise client.schema_drift("answered with a page that has no results list")


class DuckDuckGo:
    """Searches html.duckduckgo.com; needs no key."""

    name = NAME

    def __init__(self, client: SourceClient) -> None:
        self._client = client

    async def search(self, request: ProviderQuery) -> ProviderAnswer:
        """Fetch the results page for ``request`` and read its results."""
        query, notes = compose_query(request, provider=NAME, max_sites=MAX_SITES)
        kl, region_notes = region(request)
        params: dict[str, str | int] = {"q": query, "kp": _SAFE.get(request.safe, "-1")}
        if kl:
            params["kl"] = kl
        df = _TIME_RANGES.get(request.time_range or "")
        if df:
            params["df"] = df
        refused = StatusMeaning(
            Kind.RATE_LIMIT,
            "duckduckgo refused the search (HTTP 403), as it does when it suspects automated use.",
        )
        with attributed(NAME, statuses={403: refused}):
            fetched = await self._client.get(
                ENDPOINT,
                params=params,
                headers={"Accept": "text/html"},
                max_bytes=PAGE_CAP_BYTES,
            )
            # Parsing a large page is CPU work: it runs off the event loop.
            hits = await anyio.to_thread.run_sync(
                parse_page, fetched.text, request.num_results, self._client
            )
        return ProviderAnswer(provider=NAME, hits=hits, notes=notes + region_notes)


def build(settings: Settings, network: Network) -> DuckDuckGo:
    """The keyless provider (the factory its declaration names)."""
    return DuckDuckGo(network.client(NAME))
