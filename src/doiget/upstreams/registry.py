"""The registry of upstream declarations, filled on first use from one list of modules.

Each module in :data:`REGISTRATION` calls :func:`register` for its own
:class:`~doiget.upstreams.declaration.Upstream` when imported. The registry imports
them the first time anyone asks for a declaration, so importing this module costs
nothing, and a declaring module must itself be cheap to import (its HTTP stack and
parsers are imported where they are used).
"""

from __future__ import annotations

import importlib
import sys
from typing import Final

from doiget.upstreams.declaration import Role, Upstream

# Every module that declares an upstream, in the order the registry lists them
# (capability and docs show upstreams in this order).
REGISTRATION: Final = (
    "doiget.sources.crossref",
    "doiget.sources.unpaywall",
    "doiget.sources.arxiv",
    "doiget.sources.oa_publishers",
    "doiget.sources.openalex",
    "doiget.sources.semantic_scholar",
    "doiget.sources.pubmed",
    "doiget.sources.doaj",
    "doiget.sources.tdm",
    "doiget.web.providers.duckduckgo",
    "doiget.web.providers.searxng",
    "doiget.web.providers.brave",
    "doiget.web.providers.tavily",
    "doiget.web.providers.google",
    "doiget.web.patents.lens",
    "doiget.web.patents.epo",
    "doiget.web.scrape.hn",
    "doiget.web.scrape.youtube",
    "doiget.upstreams.operator",
)

_declared: dict[str, Upstream] = {}
# The module each declaration came from, which fixes its place in the listing.
_origin: dict[str, str] = {}
_loaded = False


def register(upstream: Upstream) -> Upstream:
    """Add ``upstream`` to the registry and return it (for ``X = register(Upstream(...))``).

    Registering the same declaration again is a no-op; a different declaration under
    a name already taken is refused, so two modules cannot both claim one upstream.
    """
    existing = _declared.get(upstream.name)
    if existing is not None and existing != upstream:
        raise ValueError(f"upstream {upstream.name!r} is declared twice, differently")
    _declared[upstream.name] = upstream
    _origin.setdefault(upstream.name, sys._getframe(1).f_globals.get("__name__", ""))
    return upstream


def _place(name: str) -> int:
    """Where ``name`` is listed: its module's place in REGISTRATION, others after."""
    module = _origin.get(name, "")
    return REGISTRATION.index(module) if module in REGISTRATION else len(REGISTRATION)


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in REGISTRATION:
        importlib.import_module(module)


def get(name: str) -> Upstream:
    """The declaration of ``name``; KeyError when no module declares it."""
    _load()
    return _declared[name]


def find(name: str) -> Upstream | None:
    """The declaration of ``name``, or ``None``."""
    _load()
    return _declared.get(name)


def all_upstreams() -> tuple[Upstream, ...]:
    """Every declaration, in the order of REGISTRATION (each module's own in the order
    it declares them; declarations from elsewhere last)."""
    _load()
    return tuple(sorted(_declared.values(), key=lambda upstream: _place(upstream.name)))


def by_role(role: Role) -> tuple[Upstream, ...]:
    """The declarations of one role, in registration order."""
    return tuple(upstream for upstream in all_upstreams() if upstream.role is role)


def by_preference(role: Role) -> tuple[Upstream, ...]:
    """The declarations of one role, most preferred first (undeclared preference last)."""
    members = by_role(role)
    return tuple(
        sorted(members, key=lambda u: u.preference if u.preference is not None else len(members))
    )
