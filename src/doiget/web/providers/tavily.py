"""Tavily search API, keyed by TAVILY_API_KEY.

A JSON POST with the key as a bearer token. Sites go to ``include_domains`` (Tavily
restricts to them natively). Tavily has no language or safe-search filter, and its
``country`` takes full English country names, of which only a common few are mapped
here; whatever is not applied is said in the notes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from doiget.secret import Secret
from doiget.sources.shape import expect_dict, expect_list, items, parse_or_drift
from doiget.upstreams.tavily import KEY_VAR, UPSTREAM
from doiget.web.failure import Kind
from doiget.web.providers.base import (
    SITES,
    ProviderAnswer,
    ProviderQuery,
    SearchHit,
    StatusMeaning,
    attributed,
    cap_sites,
    capped_count,
    compose_query,
    hits_from,
    unsupported_notes,
)

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.net.client import SourceClient
    from doiget.net.network import Network


NAME: Final = UPSTREAM.name
ENDPOINT: Final = "https://api.tavily.com/search"
MAX_RESULTS: Final = 20
MAX_DOMAINS: Final = 300

# ISO 3166-1 codes to the names Tavily's ``country`` takes (topic "general" only).
_COUNTRIES: Final = {
    "au": "australia",
    "br": "brazil",
    "ca": "canada",
    "ch": "switzerland",
    "cn": "china",
    "de": "germany",
    "es": "spain",
    "fr": "france",
    "gb": "united kingdom",
    "in": "india",
    "it": "italy",
    "jp": "japan",
    "kr": "south korea",
    "mx": "mexico",
    "nl": "netherlands",
    "se": "sweden",
    "us": "united states",
}

_OUT_OF_CREDITS: Final = "Use another provider, or raise the limit of the Tavily plan."
_STATUSES: Final = {
    432: StatusMeaning(
        Kind.RATE_LIMIT,
        "tavily refused the search (HTTP 432): the key's plan limit is used up.",
        _OUT_OF_CREDITS,
    ),
    433: StatusMeaning(
        Kind.RATE_LIMIT,
        "tavily refused the search (HTTP 433): the pay-as-you-go limit is reached.",
        _OUT_OF_CREDITS,
    ),
}


def _parse(data: Any, limit: int) -> tuple[SearchHit, ...]:
    document = expect_dict(data, "a search answer")
    results = expect_list(document.get("results", []), "a results list")
    rows = ((row.get("title"), row.get("url"), row.get("content")) for row in items(results))
    return hits_from(rows, limit)


class Tavily:
    """Searches the Tavily API."""

    name = NAME

    def __init__(self, client: SourceClient, api_key: Secret) -> None:
        self._client = client
        self._key = api_key

    async def search(self, request: ProviderQuery) -> ProviderAnswer:
        """One POST to ``/search`` (basic depth, general topic)."""
        count, notes = capped_count(request, MAX_RESULTS, NAME)
        query, _ = compose_query(request, native=frozenset({SITES}), provider=NAME)
        payload: dict[str, Any] = {
            "query": query,
            "max_results": count,
            "search_depth": "basic",
            "topic": "general",
        }
        if request.time_range:
            payload["time_range"] = request.time_range
        if request.sites:
            domains, site_notes = cap_sites(request.sites, MAX_DOMAINS, NAME)
            payload["include_domains"] = list(domains)
            notes += site_notes
        if request.country:
            country = _COUNTRIES.get(request.country.lower())
            if country:
                payload["country"] = country
            else:
                notes += (
                    f"country {request.country!r} has no tavily country name known to "
                    "doiget and was not applied",
                )
        notes += unsupported_notes(request, NAME, ("language", "safe"))
        if request.exact_terms or request.exclude_terms:
            notes += (
                "tavily documents no exact-phrase or exclusion operators; exact_terms and "
                "exclude_terms were written into the query and may be honoured loosely",
            )
        headers = {"Authorization": f"Bearer {self._key.reveal()}"}
        with attributed(NAME, key_vars=KEY_VAR, statuses=_STATUSES):
            data = await self._client.post_json(ENDPOINT, payload, headers=headers)
            hits = parse_or_drift(self._client, lambda value: _parse(value, count), data)
        return ProviderAnswer(provider=NAME, hits=hits, notes=notes)


def build(settings: Settings, network: Network) -> Tavily:
    """The provider with its key."""
    key = settings.secret(KEY_VAR)
    assert key is not None
    return Tavily(network.client(NAME), key)
