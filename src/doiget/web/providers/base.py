"""What every search provider takes and returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One web search, already validated.

    ``sites`` restricts results to those domains (from ``site`` or a lens); each
    provider honours it natively or as ``site:`` terms in the query.
    """

    query: str
    num_results: int = 5
    time_range: str | None = None  # day | week | month | year
    safe: str = "medium"  # off | medium | high
    language: str | None = None  # ISO 639-1
    country: str | None = None  # ISO 3166-1 alpha-2
    sites: tuple[str, ...] = ()
    exact_terms: str | None = None
    exclude_terms: str | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result as a provider gave it."""

    title: str
    url: str
    snippet: str


@dataclass(frozen=True, slots=True)
class ProviderAnswer:
    """A provider's results plus what it could not honour.

    ``notes`` are sentences for the agent, e.g. "language is not supported by
    duckduckgo and was not applied" or "lens has 14 domains; brave took the first 10".
    """

    provider: str
    hits: tuple[SearchHit, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


class SearchProvider(Protocol):
    """A web search backend."""

    name: str

    async def search(self, request: SearchRequest) -> ProviderAnswer:
        """Run ``request``; raise DoigetError (via ``web_error`` or net/) on failure."""
