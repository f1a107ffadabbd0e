"""SearXNG: an operator's own metasearch instance, through its JSON API.

The instance lives at SEARXNG_URL, which may be on a private address or plain http
(the client is bound to that host alone). Its JSON output is off by default; an
instance that has not enabled it answers 403, which is reported as a configuration
problem rather than a refusal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from doiget.net.redact import redact_url
from doiget.sources.shape import expect_dict, expect_list, items, parse_or_drift, text
from doiget.upstreams.searxng import UPSTREAM, URL_VAR
from doiget.web.failure import Kind
from doiget.web.providers.base import (
    ProviderAnswer,
    ProviderQuery,
    SearchHit,
    StatusMeaning,
    attributed,
    compose_query,
    hits_from,
)

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.net.client import SourceClient
    from doiget.net.network import Network


NAME: Final = UPSTREAM.name
MAX_SITES: Final = 10

_SAFE: Final = {"off": 0, "medium": 1, "high": 2}


def _silent_engines(value: Any) -> list[str]:
    """``unresponsive_engines`` ([[name, reason], ...]) as "name (reason)" strings."""
    found: list[str] = []
    for entry in value if isinstance(value, list) else []:
        name = text(entry[0]) if isinstance(entry, list) and entry else None
        if name is None:
            continue
        reason = text(entry[1]) if len(entry) > 1 else None
        found.append(f"{name} ({reason})" if reason else name)
    return found


def _parse(data: Any, limit: int) -> tuple[tuple[SearchHit, ...], tuple[str, ...]]:
    document = expect_dict(data, "a search answer")
    results = expect_list(document.get("results", []), "a results list")
    hits = hits_from(
        ((row.get("title"), row.get("url"), row.get("content")) for row in items(results)),
        limit,
    )
    silent = _silent_engines(document.get("unresponsive_engines"))
    notes = (f"searxng engines that did not answer: {', '.join(silent)}",) if silent else ()
    return hits, notes


class SearXNG:
    """Searches the instance at SEARXNG_URL."""

    name = NAME

    def __init__(self, client: SourceClient, base_url: str) -> None:
        self._client = client
        self._base_url = base_url.rstrip("/")

    async def search(self, request: ProviderQuery) -> ProviderAnswer:
        """Ask the instance's ``/search`` for JSON results."""
        query, notes = compose_query(request, provider=NAME, max_sites=MAX_SITES)
        params: dict[str, str | int] = {
            "q": query,
            "format": "json",
            "pageno": 1,
            "safesearch": _SAFE.get(request.safe, 1),
        }
        if request.time_range:
            params["time_range"] = request.time_range
        if request.language:
            language = request.language.lower()
            params["language"] = (
                f"{language}-{request.country.upper()}" if request.country else language
            )
        elif request.country:
            notes += (
                "country is applied by searxng only together with a language and was not applied",
            )
        json_off = StatusMeaning(
            Kind.NOT_CONFIGURED,
            f"searxng at {redact_url(self._base_url)} refused format=json (HTTP 403): its "
            "JSON API is not enabled.",
            "Add 'json' to search.formats in the instance's settings.yml and restart it, "
            "or use another provider.",
        )
        with attributed(NAME, statuses={403: json_off}):
            data = await self._client.get_json(f"{self._base_url}/search", params=params)
            hits, engine_notes = parse_or_drift(
                self._client, lambda value: _parse(value, request.num_results), data
            )
        return ProviderAnswer(provider=NAME, hits=hits, notes=notes + engine_notes)


def build(settings: Settings, network: Network) -> SearXNG:
    """The provider bound to the instance at SEARXNG_URL."""
    base_url = settings.text(URL_VAR)
    assert base_url is not None
    return SearXNG(network.client(NAME), base_url)
