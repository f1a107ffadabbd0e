"""The registry of upstream declarations, filled on first use from one list of modules.

Each upstream has one small module in this package that declares it (an
:class:`~doiget.upstreams.declaration.Upstream`) and calls :func:`register`; its
client module imports its facts from there, and routers build the client through the
declaration's ``factory``. The registry imports the modules of :data:`REGISTRATION`
the first time anyone asks for a declaration. That happens at start (settings and
the capability profile read it), which is why declarations live apart from their
clients: a declaration module costs well under a millisecond to import, a client
module with its parsers and data classes far more. A declaring module must not read
the registry while it is being imported: the listing is complete only once every
module of the list has run.
"""

from __future__ import annotations

import importlib
import sys
from typing import Final

from doiget.upstreams.declaration import Role, Upstream

# Every module that declares an upstream, in the order the registry lists them
# (capability and docs show upstreams in this order).
REGISTRATION: Final = tuple(
    f"doiget.upstreams.{module}"
    for module in (
        "crossref",
        "unpaywall",
        "arxiv",
        "dblp",
        "oa_publisher",
        "openalex",
        "semantic_scholar",
        "pubmed",
        "doaj",
        "tdm",
        "duckduckgo",
        "searxng",
        "brave",
        "tavily",
        "google",
        "lens_org",
        "epo",
        "hackernews",
        "youtube",
        "zotero",
        "operator",
    )
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
    for module in REGISTRATION:
        importlib.import_module(module)
    _loaded = True


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
