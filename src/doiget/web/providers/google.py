"""Google Programmable Search (Custom Search JSON API), keyed by GOOGLE_API_KEY and
GOOGLE_CX.

The key has to travel in the URL (``key=``); the network layer redacts it from every
URL and message it shows, and the refusals built here scrub it too. Google takes
exact and excluded terms and one site as parameters of their own; more sites become
``site:`` terms. Its safe search has only "active" and "off", so ``medium`` is
served as "active" (stricter rather than looser). Google reports a refused key or a
spent quota as HTTP 400 or 403 with a reason in the body, which is read to tell the
two apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from doiget.errors import DoigetError
from doiget.net.redact import redact_text
from doiget.secret import Secret
from doiget.sources.shape import expect_dict, expect_list, items, mapping, parse_or_drift, text
from doiget.upstreams.google import CX_VAR, KEY_VAR, UPSTREAM
from doiget.web.failure import Kind, web_error
from doiget.web.providers.base import (
    EXACT_TERMS,
    EXCLUDE_TERMS,
    SITES,
    ProviderAnswer,
    ProviderQuery,
    SearchHit,
    attributed,
    capped_count,
    compose_query,
    error_body,
    exact_phrase,
    hits_from,
    split_terms,
)

if TYPE_CHECKING:
    from doiget.config import Settings
    from doiget.net.client import Fetched, SourceClient
    from doiget.net.network import Network


NAME: Final = UPSTREAM.name
ENDPOINT: Final = "https://www.googleapis.com/customsearch/v1"
KEY_VARS: Final = f"{KEY_VAR} and {CX_VAR}"
MAX_RESULTS: Final = 10
MAX_SITES: Final = 10

_DATE_RESTRICT: Final = {"day": "d1", "week": "w1", "month": "m1", "year": "y1"}
_SAFE: Final = {"off": "off", "medium": "active", "high": "active"}
# The languages ``lr`` takes (as lang_<code>), with Google's own spellings for a few.
_LR_LANGUAGES: Final = (
    "ar bg ca cs da de el en es et fi fr hr hu id is it iw ja ko lt lv nl no pl pt ro ru sk sl "
    "sr sv tr zh-CN zh-TW"
)
_LR_CODES: Final = frozenset(_LR_LANGUAGES.split())
_LR_ALIASES: Final = {"he": "iw", "nb": "no", "zh": "zh-CN"}
# Reasons Google gives when a quota, not the configuration, is the problem.
_QUOTA_REASONS: Final = frozenset(
    {
        "dailylimitexceeded",
        "quotaexceeded",
        "ratelimitexceeded",
        "userratelimitexceeded",
        "rate_limit_exceeded",
        "resource_exhausted",
    }
)


def _parse(data: Any, limit: int) -> tuple[SearchHit, ...]:
    document = expect_dict(data, "a search answer")
    results = expect_list(document.get("items", []), "an items list")
    rows = ((row.get("title"), row.get("link"), row.get("snippet")) for row in items(results))
    return hits_from(rows, limit)


def language_restriction(language: str) -> str | None:
    """``lang_xx`` for ``language``, or ``None`` when Google cannot restrict to it."""
    code = _LR_ALIASES.get(language.lower(), language.lower())
    return f"lang_{code}" if code in _LR_CODES else None


class Google:
    """Searches one Programmable Search Engine (GOOGLE_CX)."""

    name = NAME

    def __init__(self, client: SourceClient, api_key: Secret, engine_id: str) -> None:
        self._client = client
        self._key = api_key
        self._cx = engine_id

    async def search(self, request: ProviderQuery) -> ProviderAnswer:
        """One call to ``/customsearch/v1``."""
        count, notes = capped_count(request, MAX_RESULTS, NAME)
        excluded = split_terms(request.exclude_terms)
        sites = tuple(dict.fromkeys(request.sites))
        native = {EXACT_TERMS}
        if len(excluded) == 1:  # excludeTerms takes one word or phrase
            native.add(EXCLUDE_TERMS)
        if len(sites) == 1:  # siteSearch takes one site
            native.add(SITES)
        query, site_notes = compose_query(
            request, native=frozenset(native), provider=NAME, max_sites=MAX_SITES
        )
        params: dict[str, str | int] = {
            "key": self._key.reveal(),
            "cx": request.google_cx or self._cx,
            "q": query,
            "num": count,
            "safe": _SAFE.get(request.safe, "active"),
        }
        phrase = exact_phrase(request)
        if phrase:
            params["exactTerms"] = phrase
        if EXCLUDE_TERMS in native:
            params["excludeTerms"] = excluded[0]
        if SITES in native:
            params["siteSearch"] = sites[0]
            params["siteSearchFilter"] = "i"
        restrict = _DATE_RESTRICT.get(request.time_range or "")
        if restrict:
            params["dateRestrict"] = restrict
        if request.language:
            lr = language_restriction(request.language)
            if lr:
                params["lr"] = lr
            else:
                notes += (
                    f"language {request.language!r} is not one google can restrict to and "
                    "was not applied",
                )
        if request.country:
            params["gl"] = request.country.lower()
        with attributed(NAME, key_vars=KEY_VARS):
            fetched = await self._client.get(
                ENDPOINT,
                params=params,
                headers={"Accept": "application/json"},
                accept_status=(400, 403),
            )
            if fetched.status in (400, 403):
                raise self._refusal(fetched)
            data = self._client.json_of(fetched)
            hits = parse_or_drift(self._client, lambda value: _parse(value, count), data)
        return ProviderAnswer(provider=NAME, hits=hits, notes=notes + site_notes)

    def _refusal(self, fetched: Fetched) -> DoigetError:
        """A 400/403: a spent quota is RATE_LIMIT, anything else is the configuration."""
        error = mapping(error_body(fetched).get("error"))
        reasons = {
            str(found).lower()
            for entry in items(error.get("errors")) + items(error.get("details"))
            if (found := text(entry.get("reason")))
        }
        if status := text(error.get("status")):
            reasons.add(status.lower())
        said = redact_text(
            text(error.get("message")) or "no explanation given", [self._key.reveal()]
        )
        if reasons & _QUOTA_REASONS:
            return web_error(
                Kind.RATE_LIMIT,
                f"google refused the search (HTTP {fetched.status}): {said}",
                provider=NAME,
                suggested_action="The key's search quota is used up for now; wait (daily "
                "quotas reset at midnight Pacific time) or use another provider.",
            )
        return web_error(
            Kind.NOT_CONFIGURED,
            f"google refused the search (HTTP {fetched.status}): {said}; check {KEY_VARS}.",
            provider=NAME,
        )


def build(settings: Settings, network: Network) -> Google:
    """The provider with its key and engine id."""
    key, cx = settings.secret(KEY_VAR), settings.text(CX_VAR)
    assert key is not None and cx is not None
    return Google(network.client(NAME), key, cx)
