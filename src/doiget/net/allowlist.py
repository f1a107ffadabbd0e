"""Per-source host allowlists and the operator's block list.

A pattern ``*.x`` matches ``x`` and every subdomain of ``x`` (never ``notx``); any
other pattern matches that host exactly. Each source has its own list, the hosts its
upstream declaration names (:mod:`doiget.upstreams`), so one source's hosts never
open a door for another.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from doiget.upstreams import find

# DOI resolvers that any source may follow on its way to the target host.
DOI_RESOLVERS = ("doi.org", "dx.doi.org")


def default_hosts(source: str) -> tuple[str, ...]:
    """The hosts ``source`` declares (none for a name no upstream declares)."""
    upstream = find(source)
    return upstream.hosts if upstream is not None else ()


def normalise_host(host: str) -> str:
    """Lower-case, without a trailing dot or IPv6 brackets."""
    return host.strip("[]").rstrip(".").lower()


def host_matches(host: str, pattern: str) -> bool:
    """Whether ``host`` is covered by ``pattern`` (``*.x`` covers x and its subdomains)."""
    host = normalise_host(host)
    pattern = pattern.lower()
    if pattern.startswith("*."):
        base = pattern[2:]
        return host == base or host.endswith("." + base)
    return host == pattern


@dataclass(frozen=True, slots=True)
class Allowlist:
    """The hosts one source may reach. ``None`` patterns mean any public host."""

    source: str
    patterns: tuple[str, ...] | None
    follow_doi_resolvers: bool = True

    def allows(self, host: str) -> bool:
        """Whether a request to ``host`` stays within this list."""
        if self.patterns is None:
            return True
        if self.follow_doi_resolvers and normalise_host(host) in DOI_RESOLVERS:
            return True
        return any(host_matches(host, pattern) for pattern in self.patterns)

    def expected(self) -> tuple[str, ...]:
        """The patterns as reported in a denial's ``expected`` field."""
        return self.patterns if self.patterns is not None else ()


def allowlist_for(
    source: str,
    extra: Mapping[str, Iterable[str]] | None = None,
    *,
    any_public_host: bool = False,
) -> Allowlist:
    """The allowlist of ``source``: its declared hosts plus any the user added.

    ``any_public_host`` is for the web tools, which take any public host (the SSRF
    guard still applies on every hop).
    """
    if any_public_host:
        return Allowlist(source, None)
    patterns = list(default_hosts(source))
    for pattern in (extra or {}).get(source, ()):
        if pattern.lower() not in patterns:
            patterns.append(pattern.lower())
    return Allowlist(source, tuple(patterns))


def is_blocked(host: str, blocked: Iterable[str]) -> bool:
    """Whether ``host`` is on the operator's block list (same pattern rules)."""
    return any(host_matches(host, pattern) for pattern in blocked)
