"""Brave Search API (web search), keyed by BRAVE_API_KEY.

The key travels in the ``X-Subscription-Token`` header. Brave marks matched words in
descriptions with ``<strong>``; hits carry plain text. Brave answers a bad token or
a parameter it does not take (an unknown country, say) with HTTP 422 and a code that
tells the two apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from doiget.errors import DoigetError
from doiget.secret import Secret
from doiget.sources.shape import expect_dict, expect_list, items, mapping, parse_or_drift, text
from doiget.upstreams.brave import KEY_VAR, UPSTREAM
from doiget.web.failure import Kind, web_error
from doiget.web.providers.base import (
    ProviderAnswer,
    ProviderQuery,
    SearchHit,
    attributed,
    capped_count,
    compose_query,
    error_body,
    hits_from,
)

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.net.client import Fetched, SourceClient
    from doiget.net.network import Network


NAME: Final = UPSTREAM.name
ENDPOINT: Final = "https://api.search.brave.com/res/v1/web/search"
MAX_RESULTS: Final = 20
MAX_SITES: Final = 10
# Longest piece of Brave's own error text repeated to the agent.
_DETAIL_CHARS: Final = 300

_FRESHNESS: Final = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
_SAFE: Final = {"off": "off", "medium": "moderate", "high": "strict"}
# Brave's ``search_lang`` spells a few languages its own way; the rest are ISO 639-1.
_LANGUAGES: Final = {"ja": "jp", "zh": "zh-hans", "pt": "pt-pt", "no": "nb"}


def _parse(data: Any, limit: int) -> tuple[SearchHit, ...]:
    document = expect_dict(data, "a search answer")
    results = expect_list(mapping(document.get("web")).get("results", []), "a results list")
    rows = ((row.get("title"), row.get("url"), row.get("description")) for row in items(results))
    return hits_from(rows, limit)


def _detail(body: Any) -> tuple[str, str]:
    """Brave's error code and its explanation, from a 422 body of any shape."""
    error = mapping(mapping(body).get("error"))
    code = text(error.get("code")) or ""
    detail = text(error.get("detail")) or "no explanation given"
    problems = [
        found
        for problem in items(mapping(error.get("meta")).get("errors"))
        if (found := text(problem.get("msg")))
    ]
    if problems:
        detail = f"{detail}: {'; '.join(problems)}"
    return code, detail[:_DETAIL_CHARS]


class Brave:
    """Searches the Brave Search API."""

    name = NAME

    def __init__(self, client: SourceClient, api_key: Secret) -> None:
        self._client = client
        self._key = api_key

    async def search(self, request: ProviderQuery) -> ProviderAnswer:
        """One call to ``/res/v1/web/search`` with the request's filters as parameters."""
        count, notes = capped_count(request, MAX_RESULTS, NAME)
        query, site_notes = compose_query(request, provider=NAME, max_sites=MAX_SITES)
        params: dict[str, str | int] = {
            "q": query,
            "count": count,
            "safesearch": _SAFE.get(request.safe, "moderate"),
            "result_filter": "web",
        }
        freshness = _FRESHNESS.get(request.time_range or "")
        if freshness:
            params["freshness"] = freshness
        if request.language:
            language = request.language.lower()
            params["search_lang"] = _LANGUAGES.get(language, language)
        if request.country:
            params["country"] = request.country.upper()
        headers = {"Accept": "application/json", "X-Subscription-Token": self._key.reveal()}
        with attributed(NAME, key_vars=KEY_VAR):
            fetched = await self._client.get(
                ENDPOINT, params=params, headers=headers, accept_status=(422,)
            )
            if fetched.status == 422:
                raise self._refusal(fetched)
            data = self._client.json_of(fetched)
            hits = parse_or_drift(self._client, lambda value: _parse(value, count), data)
        return ProviderAnswer(provider=NAME, hits=hits, notes=notes + site_notes)

    def _refusal(self, fetched: Fetched) -> DoigetError:
        code, detail = _detail(error_body(fetched))
        if "TOKEN" in code.upper():
            return web_error(
                Kind.NOT_CONFIGURED,
                f"brave rejected the API key ({code}: {detail}); check {KEY_VAR}.",
                provider=NAME,
            )
        return web_error(
            Kind.VALIDATION,
            f"brave refused the search parameters (HTTP 422{', ' + code if code else ''}): "
            f"{detail}",
            provider=NAME,
        )


def build(settings: Settings, network: Network) -> Brave:
    """The provider with its key."""
    key = settings.secret(KEY_VAR)
    assert key is not None
    return Brave(network.client(NAME), key)
