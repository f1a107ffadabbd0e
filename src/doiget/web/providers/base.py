"""What every search provider takes and returns."""

from __future__ import annotations

import html
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol
from urllib.parse import urlsplit

from doiget.errors import DoigetError, ErrorCode
from doiget.jsontext import parse_json
from doiget.sources.markup import plain_text
from doiget.sources.shape import mapping, text
from doiget.web.failure import Kind, web_error

if TYPE_CHECKING:
    from doiget.net.client import Fetched


@dataclass(frozen=True, slots=True)
class ProviderQuery:
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
    # A lens's own Google Programmable Search engine, used instead of site: terms.
    google_cx: str | None = None


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

    async def search(self, request: ProviderQuery) -> ProviderAnswer:
        """Run ``request``; raise DoigetError (via ``web_error`` or net/) on failure."""


# -- helpers every provider shares --------------------------------------------------

# The request fields a provider may take as its own parameters instead of as query text.
SITES: Final = "sites"
EXACT_TERMS: Final = "exact_terms"
EXCLUDE_TERMS: Final = "exclude_terms"

# How a filter is named in a note, so the agent can map it back to its own input.
_FILTER_LABELS: Final = {
    "language": "language",
    "country": "country",
    "time_range": "time_range",
    "safe": "safe search",
}


def not_applied(filter_name: str, provider: str) -> str:
    """The note for a filter ``provider`` has no way to honour."""
    label = _FILTER_LABELS.get(filter_name, filter_name)
    return f"{label} is not supported by {provider} and was not applied"


def requested(request: ProviderQuery, filter_name: str) -> bool:
    """Whether the caller asked for ``filter_name`` (one of ``_FILTER_LABELS``).

    ``safe`` counts only at ``high``: ``medium`` means the provider's own default and
    ``off`` is what a provider without safe search does anyway.
    """
    if filter_name == "safe":
        return request.safe == "high"
    return bool(getattr(request, filter_name))


def unsupported_notes(
    request: ProviderQuery, provider: str, filters: Iterable[str]
) -> tuple[str, ...]:
    """Notes for each of ``filters`` that the caller asked for and ``provider`` lacks."""
    return tuple(not_applied(name, provider) for name in filters if requested(request, name))


def exact_phrase(request: ProviderQuery) -> str | None:
    """The request's exact phrase without stray quotes, or ``None``."""
    phrase = " ".join((request.exact_terms or "").replace('"', " ").split())
    return phrase or None


def split_terms(value: str | None) -> list[str]:
    """Words of ``value``; a double-quoted phrase stays one term (without its quotes)."""
    if not value:
        return []
    try:
        terms = shlex.split(value)
    except ValueError:  # an unbalanced quote: take the words as they are
        terms = value.replace('"', " ").split()
    return [term for term in (t.strip().lstrip("-") for t in terms) if term]


def cap_sites(
    sites: Sequence[str], max_sites: int | None, provider: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The first ``max_sites`` of ``sites``, and a note when some were dropped."""
    kept = tuple(dict.fromkeys(sites))
    if max_sites is None or len(kept) <= max_sites:
        return kept, ()
    dropped = len(kept) - max_sites
    note = (
        f"{len(kept)} site domains were given; {provider} takes at most {max_sites}, so the "
        f"first {max_sites} were searched and {dropped} were dropped"
    )
    return kept[:max_sites], (note,)


def compose_query(
    request: ProviderQuery,
    *,
    native: frozenset[str] = frozenset(),
    provider: str,
    max_sites: int | None = None,
) -> tuple[str, tuple[str, ...]]:
    """The query text for ``provider`` and the notes it brings.

    Exact and excluded terms become ``"phrase"`` and ``-term`` operators and the sites
    ``site:`` terms (OR-joined), unless ``native`` names the field: the provider then
    sends it as a parameter of its own.
    """
    parts = [request.query.strip()]
    notes: tuple[str, ...] = ()
    phrase = exact_phrase(request)
    if EXACT_TERMS not in native and phrase:
        parts.append(f'"{phrase}"')
    if EXCLUDE_TERMS not in native:
        parts.extend(
            f'-"{term}"' if " " in term else f"-{term}"
            for term in split_terms(request.exclude_terms)
        )
    if SITES not in native and request.sites:
        kept, notes = cap_sites(request.sites, max_sites, provider)
        terms = [f"site:{site}" for site in kept]
        parts.append(terms[0] if len(terms) == 1 else f"({' OR '.join(terms)})")
    return " ".join(part for part in parts if part), notes


def capped_count(request: ProviderQuery, cap: int, provider: str) -> tuple[int, tuple[str, ...]]:
    """How many results to ask ``provider`` for, with a note when it gives fewer."""
    if request.num_results <= cap:
        return request.num_results, ()
    note = (
        f"{provider} returns at most {cap} results per search; {request.num_results} were asked for"
    )
    return cap, (note,)


def web_url(value: Any) -> str | None:
    """``value`` when it is an absolute http(s) URL, else ``None``."""
    if not isinstance(value, str):
        return None
    candidate = value.strip()
    try:
        parts = urlsplit(candidate)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return candidate


def plain(value: Any) -> str | None:
    """Text without markup or entities (Brave's ``<strong>``, ``&#x27;``)."""
    if not isinstance(value, str):
        return text(value)
    if "<" in value:
        return plain_text(value)
    return text(html.unescape(value))


def hits_from(
    rows: Iterable[tuple[Any, Any, Any]], limit: int, *, markup: bool = True
) -> tuple[SearchHit, ...]:
    """Up to ``limit`` hits from (title, url, snippet) rows.

    A row without an http(s) URL is skipped (there is nothing to open), as is a
    repeat of an earlier URL; a missing title falls back to the URL. ``markup=False``
    is for text already taken out of a parsed page: it is only tidied, never parsed
    again (a literal "<" in it is text).
    """
    clean = plain if markup else text
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for title, url, snippet in rows:
        if len(hits) >= limit:
            break
        link = web_url(url)
        if link is None or link in seen:
            continue
        seen.add(link)
        hits.append(SearchHit(title=clean(title) or link, url=link, snippet=clean(snippet) or ""))
    return tuple(hits)


def error_body(fetched: Fetched) -> dict[str, Any]:
    """The JSON object of an error answer, or ``{}``: the body only explains the status."""
    try:
        return mapping(parse_json(fetched.content))
    except ValueError:
        return {}


class StatusMeaning(NamedTuple):
    """What an HTTP status means at one provider: the kind, the message, the advice."""

    kind: Kind
    message: str
    advice: str | None = None


def attribute(
    error: DoigetError,
    provider: str,
    *,
    key_vars: str | None = None,
    statuses: Mapping[int, StatusMeaning] | None = None,
) -> DoigetError:
    """``error`` (from net/) restated as ``provider``'s failure, so the router can tell
    which provider failed and how.

    ``statuses`` gives a provider's own reading of a status; with ``key_vars`` (the
    variables holding its credentials) a 401 or 403 means the key was refused. A 429
    that outlasted the retries becomes RATE_LIMIT keeping its wait.
    """
    details = error.details or {}
    if details.get("provider"):
        return error
    status = details.get("status")
    if statuses and isinstance(status, int) and status in statuses:
        meaning = statuses[status]
        return web_error(
            meaning.kind,
            meaning.message,
            provider=provider,
            suggested_action=meaning.advice,
            retry_after=error.retry_after,
        )
    if key_vars and status in (401, 403):
        return web_error(
            Kind.NOT_CONFIGURED,
            f"{provider} rejected the API key (HTTP {status}); check {key_vars}.",
            provider=provider,
        )
    if error.code is ErrorCode.RATE_LIMITED or status == 429:
        return web_error(
            Kind.RATE_LIMIT, error.message, provider=provider, retry_after=error.retry_after
        )
    return DoigetError(
        error.code,
        error.message,
        error.denial,
        retry_after=error.retry_after,
        details={**details, "provider": provider},
    )


@contextmanager
def attributed(
    provider: str,
    *,
    key_vars: str | None = None,
    statuses: Mapping[int, StatusMeaning] | None = None,
) -> Iterator[None]:
    """Run a provider's requests with every DoigetError passed through :func:`attribute`."""
    try:
        yield
    except DoigetError as error:
        raise attribute(error, provider, key_vars=key_vars, statuses=statuses) from error
