"""web_search: one provider query turned into the spec's SearchOutput."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from doiget.web.claim import claim_signal
from doiget.web.failure import Kind, web_error
from doiget.web.lens import Lens, find_lens
from doiget.web.outcome import TRUST
from doiget.web.providers.base import ProviderQuery, SearchHit
from doiget.web.reputation import reputation_of
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
    args: Mapping[str, Any], lenses: dict[str, Lens], *, dedicated_engine_usable: bool = False
) -> ProviderQuery:
    """The provider-neutral request for validated ``args``.

    ``dedicated_engine_usable``: Google is configured and will answer, so a lens with
    its own engine (``cx``) uses it instead of ``site:`` terms.
    """
    if args.get("site") and args.get("lens"):
        raise web_error(
            Kind.VALIDATION,
            "site and lens cannot be combined: a lens already restricts the domains. "
            "Pass one of them.",
        )
    sites: tuple[str, ...] = ()
    google_cx: str | None = None
    if args.get("lens"):
        lens = find_lens(lenses, str(args["lens"]))
        if lens.cx and dedicated_engine_usable:
            google_cx = lens.cx
        else:
            sites = lens.domains
    elif args.get("site"):
        sites = (str(args["site"]).lower(),)
    return ProviderQuery(
        google_cx=google_cx,
        query=str(args["query"]).strip(),
        num_results=int(args.get("num_results", 5)),
        time_range=args.get("time_range"),
        safe=str(args.get("safe", "medium")),
        language=args.get("language"),
        country=args.get("country", "").lower() or None,
        sites=sites,
        exact_terms=args.get("exact_terms"),
        exclude_terms=args.get("exclude_terms"),
    )


def _result(hit: SearchHit, claim: str | None) -> dict[str, Any]:
    host = urlsplit(hit.url).hostname or ""
    result: dict[str, Any] = {
        "title": hit.title,
        "url": hit.url,
        "snippet": hit.snippet,
        "displayLink": host.removeprefix("www."),
    }
    reputation = reputation_of(host)
    if reputation is not None:
        result["sourceReputation"] = reputation
    if claim is not None:
        result["claimSignal"] = claim_signal(claim, hit.snippet)
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


def _hints(args: Mapping[str, Any], router: Router, used: str | None) -> dict[str, Any]:
    applied = [name for name in FILTERS if args.get(name)]
    return zero_result_hints(applied, router.healthy(exclude=used))


async def web_search(
    args: Mapping[str, Any], router: Router, lenses: dict[str, Lens]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The SearchOutput for ``args``, plus routing provenance when routing is on."""
    provider = args.get("provider")
    lens = lenses.get(str(args.get("lens", "")).lower())
    # A lens's own engine replaces site: terms only where Google alone answers: asked
    # for by name, or the single provider when no fallback order is configured.
    google_alone = provider == "google" or (provider is None and router.order() == ("google",))
    dedicated = lens is not None and lens.cx is not None and google_alone
    request = build_request(args, lenses, dedicated_engine_usable=dedicated)
    answer, trace = await router.search(request, provider)
    claim = args.get("claim")
    seen: set[str] = set()
    results = []
    for hit in answer.hits:
        key = url_key(hit.url)
        if key in seen:
            continue
        seen.add(key)
        results.append(_result(hit, claim))
        if len(results) == request.num_results:
            break
    body: dict[str, Any] = {
        "urls": [result["url"] for result in results],
        "query": request.query,
        "resultCount": len(results),
        "results": results,
    }
    if answer.notes:
        body["notes"] = list(answer.notes)
    if not results:
        body["hints"] = _hints(args, router, answer.provider)
    body["trust"] = TRUST
    return body, (trace.to_meta() if router.routed else None)
