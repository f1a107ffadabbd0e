"""The web search providers and how to build one from the settings.

DuckDuckGo needs nothing and is always available; the others need a key or a URL,
and asking for one that lacks it names the variable to set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from doiget.config import Settings
from doiget.web.failure import Kind, web_error

if TYPE_CHECKING:
    from doiget.net.network import Network
    from doiget.web.providers.base import SearchProvider

PROVIDER_NAMES: Final = ("duckduckgo", "searxng", "brave", "tavily", "google")

# The environment variables each provider needs, in the order to mention them.
_NEEDS: Final[dict[str, tuple[str, ...]]] = {
    "duckduckgo": (),
    "searxng": ("SEARXNG_URL",),
    "brave": ("BRAVE_API_KEY",),
    "tavily": ("TAVILY_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GOOGLE_CX"),
}


def _values(settings: Settings) -> dict[str, object | None]:
    return {
        "SEARXNG_URL": settings.searxng_url,
        "BRAVE_API_KEY": settings.brave_api_key,
        "TAVILY_API_KEY": settings.tavily_api_key,
        "GOOGLE_API_KEY": settings.google_api_key,
        "GOOGLE_CX": settings.google_cx,
    }


def missing_settings(name: str, settings: Settings) -> tuple[str, ...]:
    """The variables provider ``name`` needs that are not set."""
    values = _values(settings)
    return tuple(var for var in _NEEDS[name] if values[var] is None)


def configured_providers(settings: Settings) -> tuple[str, ...]:
    """The providers that can run with ``settings``, in PROVIDER_NAMES order."""
    return tuple(name for name in PROVIDER_NAMES if not missing_settings(name, settings))


def build_provider(name: str, settings: Settings, network: Network) -> SearchProvider:
    """Provider ``name`` with its client from ``network``.

    Raises VALIDATION for an unknown name and NOT_CONFIGURED (naming the variables to
    set) for a provider whose key or URL is missing.
    """
    chosen = name.strip().lower()
    if chosen not in PROVIDER_NAMES:
        raise web_error(
            Kind.VALIDATION,
            f"{name!r} is not a search provider; use one of: {', '.join(PROVIDER_NAMES)}.",
        )
    missing = missing_settings(chosen, settings)
    if missing:
        needs = " and ".join(_NEEDS[chosen])
        raise web_error(
            Kind.NOT_CONFIGURED,
            f"{chosen} is not configured: it needs {needs}; set {' and '.join(missing)}.",
            provider=chosen,
        )
    # Imported here: the provider modules pull in the HTTP stack and lxml, which a
    # server answering tools/list does not need.
    from doiget.web.providers.brave import Brave
    from doiget.web.providers.duckduckgo import DuckDuckGo
    from doiget.web.providers.google import Google
    from doiget.web.providers.searxng import SearXNG
    from doiget.web.providers.tavily import Tavily

    if chosen == "duckduckgo":
        return DuckDuckGo(network.client(chosen))
    if chosen == "searxng":
        assert settings.searxng_url is not None
        return SearXNG(network.client(chosen, endpoint=settings.searxng_url), settings.searxng_url)
    if chosen == "brave":
        assert settings.brave_api_key is not None
        return Brave(network.client(chosen), settings.brave_api_key)
    if chosen == "tavily":
        assert settings.tavily_api_key is not None
        return Tavily(network.client(chosen), settings.tavily_api_key)
    assert settings.google_api_key is not None and settings.google_cx is not None
    return Google(network.client(chosen), settings.google_api_key, settings.google_cx)
