"""Which search provider answers: an explicit choice, or the routing order with fallback.

With ``DOIGET_SEARCH_ROUTING`` set, providers are tried in that order; one that fails
or whose circuit breaker is open is passed over for the next. Without it, one
provider answers: the most preferred configured one, by the ``preference`` each
provider declares (the keyless one last). A ``provider`` argument always means that
provider alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from doiget.config import Settings
from doiget.errors import DoigetError, quoted
from doiget.net.network import Network
from doiget.web.breaker import CircuitBreaker, watch
from doiget.web.failure import Kind, kind_of, web_error
from doiget.web.providers import (
    build_provider,
    configured_providers,
    preference_order,
    provider_names,
)
from doiget.web.providers.base import ProviderAnswer, ProviderQuery, SearchProvider

logger = logging.getLogger("doiget.web")


@dataclass
class RoutingTrace:
    """What routing did for one call (operator data for ``_meta.routing``)."""

    attempted: list[str] = field(default_factory=list)
    used: str | None = None
    fallback_reason: str | None = None

    def to_meta(self) -> dict[str, Any]:
        """``{provider_used, providers_attempted, fallback, fallback_reason?}``."""
        meta: dict[str, Any] = {
            "provider_used": self.used,
            "providers_attempted": list(self.attempted),
            "fallback": bool(self.attempted) and self.used != self.attempted[0],
        }
        if self.fallback_reason is not None and meta["fallback"]:
            meta["fallback_reason"] = self.fallback_reason
        return meta


class Router:
    """Owns one provider object and one circuit breaker per provider name."""

    def __init__(
        self,
        settings: Settings,
        network: Network,
        breaker_factory: Callable[[], CircuitBreaker] = CircuitBreaker,
    ) -> None:
        self._settings = settings
        self._network = network
        self._providers: dict[str, SearchProvider] = {}
        self._breakers = {name: watch(name, breaker_factory()) for name in provider_names()}

    @property
    def routed(self) -> bool:
        """Whether a routing order is configured (fallback is on)."""
        return bool(self._settings.search_routing)

    def order(self) -> tuple[str, ...]:
        """The providers tried for a call without an explicit provider, in order."""
        names = provider_names()
        if self._settings.search_routing:
            unknown = [n for n in self._settings.search_routing if n not in names]
            if unknown:
                raise web_error(
                    Kind.NOT_CONFIGURED,
                    f"DOIGET_SEARCH_ROUTING names unknown provider(s) {', '.join(unknown)}; "
                    f"supported: {', '.join(names)}.",
                )
            return self._settings.search_routing
        configured = configured_providers(self._settings)
        return (next(name for name in preference_order() if name in configured),)

    def healthy(self, exclude: str | None = None) -> list[str]:
        """Configured providers whose breaker would let a call through now."""
        return [
            name
            for name in configured_providers(self._settings)
            if name != exclude and self._breakers[name].healthy()
        ]

    def _provider(self, name: str) -> SearchProvider:
        existing = self._providers.get(name)
        if existing is None:
            existing = build_provider(name, self._settings, self._network)
            self._providers[name] = existing
        return existing

    async def search(
        self, request: ProviderQuery, provider: str | None = None
    ) -> tuple[ProviderAnswer, RoutingTrace]:
        """Answer ``request`` from ``provider`` alone, or from the routing order."""
        trace = RoutingTrace()
        if provider is not None:
            return await self._one(provider, request, trace), trace
        names = self.order()
        if len(names) == 1:
            return await self._one(names[0], request, trace), trace
        failures: list[tuple[str, DoigetError | None]] = []
        for name in names:
            breaker = self._breakers[name]
            if name not in configured_providers(self._settings):
                failures.append((name, None))
                trace.fallback_reason = trace.fallback_reason or "primary_unavailable"
                continue
            if not breaker.allow():
                failures.append((name, None))
                trace.fallback_reason = trace.fallback_reason or "circuit_open"
                continue
            trace.attempted.append(name)
            try:
                answer = await self._call(name, breaker, request)
            except DoigetError as error:
                failures.append((name, error))
                trace.fallback_reason = trace.fallback_reason or "primary_unavailable"
                logger.info("search provider %s failed, trying the next: %s", name, error.message)
                continue
            trace.used = name
            return answer, trace
        raise self._all_failed(failures)

    async def _one(self, name: str, request: ProviderQuery, trace: RoutingTrace) -> ProviderAnswer:
        names = provider_names()
        if name not in names:
            raise web_error(
                Kind.VALIDATION,
                f"unknown provider {quoted(name)}; supported providers: {', '.join(names)}.",
            )
        breaker = self._breakers[name]
        if not breaker.allow():
            wait = self._breakers[name].retry_in()
            what = (
                f"failed repeatedly and is paused for {max(1, round(wait))} s"
                if wait > 0
                else "is being probed by another call after repeated failures"
            )
            raise self._wait_error(name, wait, what)
        trace.attempted.append(name)
        try:
            answer = await self._call(name, breaker, request)
        except DoigetError as error:
            if kind_of(error) is Kind.RATE_LIMIT:
                raise self._wait_error(
                    name, error.retry_after or 60, "is rate limiting searches"
                ) from None
            raise
        trace.used = name
        return answer

    async def _call(
        self, name: str, breaker: CircuitBreaker, request: ProviderQuery
    ) -> ProviderAnswer:
        provider = self._provider(name)
        try:
            answer = await provider.search(request)
        except DoigetError as error:
            kind = kind_of(error)
            if kind is Kind.VALIDATION and error.denial is None:
                # The provider is up; the request was refused on its merits.
                breaker.succeeded()
            else:
                breaker.failed(rate_limited=kind is Kind.RATE_LIMIT)
            raise
        except BaseException:
            # Cancelled or broken mid-call: never leave a half-open probe taken.
            breaker.failed()
            raise
        breaker.succeeded()
        return answer

    def _wait_error(self, name: str, wait_seconds: float, what: str) -> DoigetError:
        """RATE_LIMIT for ``name``: how long to wait, and which providers are healthy now."""
        wait = max(1, round(wait_seconds))
        others = self.healthy(exclude=name)
        advice = (
            f"Wait {wait} s, or pass provider=" + " / ".join(others) + " (configured and healthy)."
            if others
            else f"Wait {wait} s; no other provider is configured and healthy."
        )
        return web_error(
            Kind.RATE_LIMIT,
            f"{name} {what}.",
            provider=name,
            retry_after=float(wait),
            suggested_action=advice,
        )

    def _all_failed(self, failures: list[tuple[str, DoigetError | None]]) -> DoigetError:
        parts = []
        for name, error in failures:
            if error is not None:
                parts.append(f"{name}: {error.message}")
            elif name not in configured_providers(self._settings):
                parts.append(f"{name}: not configured")
            else:
                parts.append(f"{name}: paused after repeated failures")
        waits = [self._breakers[name].retry_in() for name, _ in failures]
        wait = max(1, round(min((w for w in waits if w > 0), default=60)))
        return web_error(
            Kind.UPSTREAM,
            "every search provider in DOIGET_SEARCH_ROUTING failed: " + "; ".join(parts),
            retry_after=float(wait),
            suggested_action=f"Retry in about {wait} s, or configure another provider.",
        )
