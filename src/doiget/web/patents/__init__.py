"""patent_search: keyed patent databases (Lens.org, EPO OPS) behind one contract.

The tool's input contract (:data:`PATENT_SEARCH`) lives here so the server can list it
without loading a provider. :class:`Patents` turns validated arguments into a
:class:`~doiget.web.patents.base.PatentQuery`, asks the pinned provider or each
configured one in turn (a failing provider is skipped, and said so in ``notes``),
and shapes the answer: landscape searches over-fetch and cluster by assignee, and
a search that finds nothing carries hints on how to widen it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from doiget.config import Settings
from doiget.errors import DoigetError, quoted
from doiget.upstreams import get
from doiget.web.failure import Kind, failure_of, web_error
from doiget.web.outcome import TRUST
from doiget.web.patents.base import (
    PatentAnswer,
    PatentProvider,
    PatentQuery,
    normalise_assignee,
    patent_number,
)
from doiget.web.requests import (
    PATENT_OFFICES,
    PATENT_PROVIDERS,
    SEARCH_TYPES,
)
from doiget.web.results import PatentRecord

if TYPE_CHECKING:
    from doiget.net.network import Network

logger = logging.getLogger("doiget.web")

# How many candidates a landscape search clusters before cutting to num_results.
LANDSCAPE_POOL: Final = 50
# The inputs that narrow a search, as named in a zero-result hint.
FILTERS: Final = ("assignee", "inventor", "cpc_code", "year_from", "year_to", "patent_office")


def _missing(name: str, settings: Settings) -> tuple[str, ...]:
    return tuple(env for env in get(name).required if settings.value(env) is None)


def configured_patent_providers(settings: Settings) -> tuple[str, ...]:
    """The patent providers that can run with ``settings``, in ladder order."""
    return tuple(name for name in PATENT_PROVIDERS if not _missing(name, settings))


def _none_configured(settings: Settings) -> DoigetError:
    names = PATENT_PROVIDERS
    options = ", ".join(f"{' + '.join(get(name).required)} ({get(name).label})" for name in names)
    partly = [
        f"{' and '.join(var for var in get(name).required if var not in missing)} is set but "
        f"{' and '.join(missing)} is missing"
        for name in names
        if 0 < len(missing := _missing(name, settings)) < len(get(name).required)
    ]
    return web_error(
        Kind.NOT_CONFIGURED,
        f"patent_search needs a patent provider: configure one of {options}"
        + (f" ({'; '.join(partly)})" if partly else "")
        + ".",
        suggested_action="Set the variables of one provider and restart doiget.",
    )


def _text(args: Mapping[str, Any], name: str) -> str | None:
    """The argument with its whitespace runs collapsed; ``None`` when absent or blank."""
    value = args.get(name)
    if value is None:
        return None
    return " ".join(str(value).split()) or None


def _choice(args: Mapping[str, Any], name: str, default: str, known: Sequence[str]) -> str:
    """The argument (``default`` when absent), which must be one of ``known``."""
    value = str(args.get(name, default))
    if value not in known:
        raise web_error(
            Kind.VALIDATION, f"{name} {quoted(value)} is not known; use one of: {', '.join(known)}."
        )
    return value


def _year(args: Mapping[str, Any], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise web_error(Kind.VALIDATION, f"{name} must be a whole year such as 2015.")
    return int(value)


def build_query(args: Mapping[str, Any]) -> PatentQuery:
    """The provider-neutral query for schema-valid ``args``.

    Raises VALIDATION for what the schema cannot say: a query is needed unless an
    assignee or inventor is given, ``specific`` needs a query, and ``year_from``
    may not come after ``year_to``.
    """
    text = _text(args, "query")
    assignee = _text(args, "assignee")
    inventor = _text(args, "inventor")
    if not (text or assignee or inventor):
        raise web_error(
            Kind.VALIDATION,
            "patent_search needs query, or assignee or inventor to search by; give at least one.",
        )
    search_type = _choice(args, "search_type", "prior_art", SEARCH_TYPES)
    if search_type == "specific" and not text:
        raise web_error(
            Kind.VALIDATION,
            "search_type specific needs query: a patent number (e.g. US10123456B2) or an "
            "exact title.",
        )
    office = _choice(args, "patent_office", "all", PATENT_OFFICES)
    year_from, year_to = _year(args, "year_from"), _year(args, "year_to")
    if year_from is not None and year_to is not None and year_from > year_to:
        raise web_error(
            Kind.VALIDATION,
            f"year_from ({year_from}) is after year_to ({year_to}); swap or widen them.",
        )
    cpc = _text(args, "cpc_code")
    wanted = int(args.get("num_results", 5))
    return PatentQuery(
        text=text,
        search_type=search_type,
        size=max(wanted, LANDSCAPE_POOL) if search_type == "landscape" else wanted,
        number=patent_number(text) if text and search_type == "specific" else None,
        office=None if office == "all" else office,
        assignee=normalise_assignee(assignee) if assignee else None,
        inventor=inventor,
        cpc=cpc.replace(" ", "").upper() if cpc else None,
        year_from=year_from,
        year_to=year_to,
    )


def cluster_by_assignee(
    patents: list[PatentRecord], limit: int
) -> tuple[list[PatentRecord], list[dict[str, Any]]]:
    """Up to ``limit`` patents grouped by assignee, and the groups' sizes among them.

    The most-represented assignee of the pool comes first (ties: first seen), each
    group's patents stay together, and patents without an assignee fill any room
    left. Names differing only in company-form suffixes or case are one assignee.
    """
    groups: dict[str, list[PatentRecord]] = {}
    shown: dict[str, str] = {}
    unassigned: list[PatentRecord] = []
    for patent in patents:
        if not patent.assignee:
            unassigned.append(patent)
            continue
        key = normalise_assignee(patent.assignee).casefold()
        groups.setdefault(key, []).append(patent)
        shown.setdefault(key, patent.assignee)
    ordered = sorted(groups.values(), key=len, reverse=True)
    picked = ([patent for group in ordered for patent in group] + unassigned)[:limit]
    counts: dict[str, int] = {}
    for patent in picked:
        if patent.assignee:
            key = normalise_assignee(patent.assignee).casefold()
            counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts.items(), key=lambda pair: -pair[1])
    return picked, [{"assignee": shown[key], "count": count} for key, count in ranked]


def _hints(args: Mapping[str, Any], others: tuple[str, ...]) -> dict[str, Any]:
    """Why nothing came back and how to widen the search (web_search's hint shape)."""
    from doiget.web.search import zero_result_hints

    applied = [
        name
        for name in FILTERS
        if args.get(name) is not None and (name != "patent_office" or args[name] != "all")
    ]
    extra = (
        ["use search_type=prior_art to match the terms instead of an exact title"]
        if args.get("search_type") == "specific"
        else []
    )
    return zero_result_hints(applied, others, extra)


class Patents:
    """patent_search over the configured patent providers (one per process)."""

    def __init__(self, settings: Settings, network: Network) -> None:
        self._settings = settings
        self._network = network
        self._providers: dict[str, PatentProvider] = {}

    def configured(self) -> tuple[str, ...]:
        """The providers that can run, in the order they are tried."""
        return configured_patent_providers(self._settings)

    async def search(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``{patents, query, searchType, resultCount, source, notes?, hints?,
        assigneeClusters?, trust}`` for ``args``."""
        query = build_query(args)
        order = self._order(args.get("provider"))
        answer, notes = await self._ask(order, query)
        wanted = int(args.get("num_results", 5))
        found = [
            patent
            for patent in answer.patents
            if query.office is None or patent.number.upper().startswith(query.office)
        ]
        clusters: list[dict[str, Any]] | None = None
        if query.search_type == "landscape":
            found, clusters = cluster_by_assignee(found, wanted)
        else:
            found = found[:wanted]
        body: dict[str, Any] = {
            "patents": [patent.model_dump(exclude_none=True) for patent in found],
            "query": query.text or "",
            "searchType": query.search_type,
            "resultCount": len(found),
            "source": answer.provider,
        }
        notes += answer.notes
        if notes:
            body["notes"] = list(notes)
        if clusters is not None and found:
            body["assigneeClusters"] = clusters
        if not found:
            others = tuple(name for name in self.configured() if name != answer.provider)
            body["hints"] = _hints(args, others)
        body["trust"] = TRUST
        return body

    def _order(self, pinned: Any) -> tuple[str, ...]:
        """The providers to ask: the pinned one, else every configured one."""
        if pinned is None:
            order = self.configured()
            if not order:
                raise _none_configured(self._settings)
            return order
        name = str(pinned).strip().lower()
        names = PATENT_PROVIDERS
        if name not in names:
            raise web_error(
                Kind.VALIDATION,
                f"{quoted(pinned)} is not a patent provider; use one of: {', '.join(names)}.",
            )
        missing = _missing(name, self._settings)
        if missing:
            raise web_error(
                Kind.NOT_CONFIGURED,
                f"{name} is not configured: it needs {' and '.join(get(name).required)}; "
                f"set {' and '.join(missing)}.",
                provider=name,
            )
        return (name,)

    async def _ask(
        self, order: tuple[str, ...], query: PatentQuery
    ) -> tuple[PatentAnswer, tuple[str, ...]]:
        """The first answer along ``order``, with a note for each provider that failed.

        Only when every provider failed is the call failed, with the first failure
        (the preferred provider's) and the others' messages appended.
        """
        failures: list[tuple[str, DoigetError]] = []
        for name in order:
            try:
                answer = await self._provider(name).search(query)
            except DoigetError as error:
                if len(order) == 1:
                    raise
                logger.info("patent provider %s failed: %s", name, error.message)
                failures.append((name, error))
                continue
            notes = tuple(
                f"{failed} failed and was skipped ({failure_of(error).kind.value}): {error.message}"
                for failed, error in failures
            )
            return answer, notes
        first = failures[0][1]
        if len(failures) == 1:
            raise first
        others = "; ".join(f"{name}: {error.message}" for name, error in failures[1:])
        raise DoigetError(
            first.code,
            f"{first.message} (also failed: {others})",
            first.denial,
            retry_after=first.retry_after,
            details=first.details,
        ) from first

    def _provider(self, name: str) -> PatentProvider:
        """Provider ``name`` with its own client (built on first use, then reused, so a
        held EPO token outlives one call)."""
        existing = self._providers.get(name)
        if existing is not None:
            return existing
        built: PatentProvider = get(name).build(self._settings, self._network)
        self._providers[name] = built
        return built
