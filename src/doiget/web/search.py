"""web_search: one provider query turned into a :class:`WebSearchResult`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from doiget.web.claim import claim_signal
from doiget.web.failure import Kind, web_error
from doiget.web.lens import Lens, find_lens
from doiget.web.outcome import TRUST
from doiget.web.providers.base import ProviderQuery
from doiget.web.providers.base import SearchHit as SearchHitFound
from doiget.web.reputation import reputation_of
from doiget.web.requests import WebSearchRequest
from doiget.web.results import SearchHit, SourceReputation, WebSearchResult, ZeroResultHints
from doiget.web.router import Router
from doiget.web.urls import url_key

# Filters that can eliminate results, as named in a zero-result hint.
FILTERS: Final = (
    "site",
    "lens",
    "time_range",
    "country",
    "language",
    "exact_terms",
    "exclude_terms",
)
EPISTEMIC_WARNING: Final = (
    "Zero results do not show that something does not exist; it may be out of this "
    "provider's reach or phrased differently."
)


def build_request(
    request: WebSearchRequest, lenses: dict[str, Lens], *, dedicated_engine_usable: bool = False
) -> ProviderQuery:
    """The provider-neutral request for ``request``.

    ``dedicated_engine_usable``: Google is configured and will answer, so a lens with
    its own engine (``cx``) uses it instead of ``site:`` terms.
    """
    if request.site and request.lens:
        raise web_error(
            Kind.VALIDATION,
            "site and lens cannot be combined: a lens already restricts the domains. "
            "Pass one of them.",
        )
    sites: tuple[str, ...] = ()
    google_cx: str | None = None
    if request.lens:
        lens = find_lens(lenses, request.lens)
        if lens.cx and dedicated_engine_usable:
            google_cx = lens.cx
        else:
            sites = lens.domains
    elif request.site:
        sites = (request.site.lower(),)
    return ProviderQuery(
        google_cx=google_cx,
        query=request.query.strip(),
        num_results=request.num_results,
        time_range=request.time_range,
        safe=request.safe,
        language=request.language,
        country=request.country.lower() if request.country else None,
        sites=sites,
        exact_terms=request.exact_terms,
        exclude_terms=request.exclude_terms,
    )


def _hit(hit: SearchHitFound, claim: str | None) -> SearchHit:
    host = urlsplit(hit.url).hostname or ""
    result = SearchHit(
        title=hit.title, url=hit.url, snippet=hit.snippet, display_link=host.removeprefix("www.")
    )
    reputation = reputation_of(host)
    if reputation is not None:
        result.source_reputation = SourceReputation.model_validate(reputation)
    if claim is not None:
        result.claim_signal = claim_signal(claim, hit.snippet)
    return result


def zero_result_hints(
    applied: Sequence[str], alternatives: Iterable[str], extra_actions: Sequence[str] = ()
) -> dict[str, Any]:
    """The ``hints`` of a search that found nothing (web, academic and patent search).

    ``applied`` names the filters that were in force, ``alternatives`` the providers
    worth trying instead, ``extra_actions`` advice of the tool's own.
    """
    actions = [f"remove the {name} filter" for name in applied]
    actions += extra_actions
    actions += [f"try provider={name}" for name in alternatives]
    actions.append("rephrase the query with fewer or more general terms")
    return {
        "reason": "filters_too_restrictive" if applied else "no_match",
        "filtersApplied": list(applied),
        "suggestedActions": actions,
        "epistemicWarning": EPISTEMIC_WARNING,
    }


def _hints(request: WebSearchRequest, router: Router, used: str | None) -> ZeroResultHints:
    applied = [name for name in FILTERS if getattr(request, name)]
    return ZeroResultHints.model_validate(zero_result_hints(applied, router.healthy(exclude=used)))


async def web_search(
    request: WebSearchRequest, router: Router, lenses: dict[str, Lens]
) -> tuple[WebSearchResult, dict[str, Any] | None]:
    """The result for ``request``, plus routing provenance when routing is on."""
    provider = request.provider
    lens = lenses.get((request.lens or "").lower())
    # A lens's own engine replaces site: terms only where Google alone answers: asked
    # for by name, or the single provider when no fallback order is configured.
    google_alone = provider == "google" or (provider is None and router.order() == ("google",))
    dedicated = lens is not None and lens.cx is not None and google_alone
    asked = build_request(request, lenses, dedicated_engine_usable=dedicated)
    answer, trace = await router.search(asked, provider)
    seen: set[str] = set()
    hits: list[SearchHit] = []
    for found in answer.hits:
        key = url_key(found.url)
        if key in seen:
            continue
        seen.add(key)
        hits.append(_hit(found, request.claim))
        if len(hits) == asked.num_results:
            break
    result = WebSearchResult(
        urls=[hit.url for hit in hits],
        query=asked.query,
        result_count=len(hits),
        results=hits,
        trust=TRUST,
    )
    if answer.notes:
        result.notes = list(answer.notes)
    if not hits:
        result.hints = _hints(request, router, answer.provider)
    return result, (trace.to_meta() if router.routed else None)
