"""The web search providers, as their upstream declarations describe them.

A provider is an upstream of role :attr:`~doiget.upstreams.Role.WEB_SEARCH`: its
declaration gives its hosts, settings, preference and the factory that builds it
(imported on first use). Which providers exist, which are configured and which
variables one lacks are all read from those declarations.
DuckDuckGo needs nothing and is always available; asking for a provider that lacks
its key or URL names the variables to set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from doiget.config import Settings
from doiget.errors import quoted
from doiget.upstreams import Role, by_preference, by_role, get
from doiget.web.failure import Kind, web_error

if TYPE_CHECKING:
    from doiget.net.network import Network
    from doiget.web.providers.base import SearchProvider


def provider_names() -> tuple[str, ...]:
    """Every search provider, in declaration order (the order shown to agents)."""
    return tuple(upstream.name for upstream in by_role(Role.WEB_SEARCH))


def preference_order() -> tuple[str, ...]:
    """The providers from most to least preferred when no routing is set."""
    return tuple(upstream.name for upstream in by_preference(Role.WEB_SEARCH))


def missing_settings(name: str, settings: Settings) -> tuple[str, ...]:
    """The variables provider ``name`` needs that are not set."""
    return tuple(env for env in get(name).required if settings.value(env) is None)


def configured_providers(settings: Settings) -> tuple[str, ...]:
    """The providers that can run with ``settings``, in declaration order."""
    return tuple(name for name in provider_names() if not missing_settings(name, settings))


def build_provider(name: str, settings: Settings, network: Network) -> SearchProvider:
    """Provider ``name`` with its client from ``network``.

    Raises VALIDATION for an unknown name and NOT_CONFIGURED (naming the variables to
    set) for a provider whose key or URL is missing.
    """
    chosen = name.strip().lower()
    names = provider_names()
    if chosen not in names:
        raise web_error(
            Kind.VALIDATION,
            f"{quoted(name)} is not a search provider; use one of: {', '.join(names)}.",
        )
    missing = missing_settings(chosen, settings)
    if missing:
        needs = " and ".join(get(chosen).required)
        raise web_error(
            Kind.NOT_CONFIGURED,
            f"{chosen} is not configured: it needs {needs}; set {' and '.join(missing)}.",
            provider=chosen,
        )
    provider: SearchProvider = get(chosen).build(settings, network)
    return provider


def __getattr__(name: str) -> Any:
    # PROVIDER_NAMES is read from the registry when asked for, never at import: the
    # registry imports the provider modules, which import this package.
    if name == "PROVIDER_NAMES":
        return provider_names()
    raise AttributeError(name)
