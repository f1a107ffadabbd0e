"""The capability profile: which sources this process may use, fixed at start.

Rules:

- Open Access retrieval is always on.
- An opt-in upstream joins the papers resolution chain when the ``DOIGET_ENABLE_*``
  variable it declares is present (empty, ``1``, ``true``, ...). A value that reads as
  off (``0``, ``false``, ``no``, ``off``) refuses the start: presence would enable the
  source all the same, which is not what whoever wrote it meant.
- A TDM source is granted only when its ``DOIGET_AGREE_TDM_*`` is exactly ``1`` *and*
  its key is set. Agreement without a key, or a key without agreement, refuses the
  start: a silent skip would hide a misconfiguration, and a key leaked from a parent
  shell must never enable a source nobody agreed to.
- A granted TDM source is usable only when its code is installed: the sources are
  the separate ``doiget-tdm`` distribution (the ``tdm`` extra), found through the
  ``doiget.tdm`` entry points, so a default install holds no TDM code path at all.
- Rate limits are the hard-coded ones of :mod:`doiget.upstreams.limits`.

Which upstreams are opt-in and which are TDM publishers comes from their declarations
(:mod:`doiget.upstreams`).

The profile is immutable; a changed environment takes effect only after a restart.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from doiget.errors import DenialReason, DoigetError, ErrorCode, denied
from doiget.secret import Secret
from doiget.settingvalues import presence_setting
from doiget.upstreams import Gate, Upstream, agree_var, all_upstreams, key_var
from doiget.upstreams.limits import HARD_CODED, RateLimits

# The entry-point group the TDM sources register under, and how to install them.
TDM_ENTRY_POINTS: Final = "doiget.tdm"
TDM_INSTALL: Final = "pip install -e '.[tdm]'"


@functools.cache
def installed_tdm_sources() -> frozenset[str]:
    """The publishers whose TDM source is installed (read once: installs need a restart)."""
    from importlib.metadata import entry_points

    return frozenset(point.name for point in entry_points(group=TDM_ENTRY_POINTS))


def opt_in_sources() -> tuple[Upstream, ...]:
    """The upstreams papers resolution consults only when their variable is present."""
    return tuple(u for u in all_upstreams() if u.gate is Gate.OPT_IN and u.opt_in_var)


def tdm_publishers() -> tuple[str, ...]:
    """The TDM publishers, in declaration order."""
    return tuple(u.name for u in all_upstreams() if u.gate is Gate.TDM)


@dataclass(frozen=True, slots=True)
class TdmGrant:
    """A TDM source the user agreed to and holds a key for."""

    publisher: str
    api_key: Secret
    agreed_at: datetime
    agree_env_var: str


@dataclass(frozen=True, slots=True)
class MetadataAccess:
    """Optional metadata sources enabled for papers resolution.

    ``sources`` holds the profile names (``openalex``, ``semantic_scholar``, ...) of
    the enabled ones, in declaration order; each is also readable as a boolean
    attribute (``access.openalex``).
    """

    sources: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> MetadataAccess:
        """The opt-in sources whose variable is present in ``env``; one set to a value
        that reads as off (``0``, ``false``, ...) refuses the start (INVALID_CONFIG)."""
        return cls(
            tuple(
                u.profile_name
                for u in opt_in_sources()
                if u.opt_in_var and presence_setting(u.opt_in_var, env.get(u.opt_in_var), u.label)
            )
        )

    def enabled(self) -> list[str]:
        """Profile names of the enabled sources, in declaration order."""
        return list(self.sources)

    def allows(self, source: str) -> bool:
        """Whether opt-in source ``source`` (canonical or profile name) is enabled."""
        return any(
            source in (u.name, u.profile_name) and u.profile_name in self.sources
            for u in opt_in_sources()
        )

    def __getattr__(self, name: str) -> bool:
        if name.startswith("_") or name == "sources":
            raise AttributeError(name)
        if not any(name == u.profile_name for u in opt_in_sources()):
            raise AttributeError(f"no opt-in metadata source named {name!r}")
        return name in self.sources


def _read_tdm_grant(publisher: str, env: Mapping[str, str], now: datetime) -> TdmGrant | None:
    agree_name, key_name = agree_var(publisher), key_var(publisher)
    agreed = env.get(agree_name) == "1"
    key = env.get(key_name) or None
    if agreed and key is not None:
        return TdmGrant(publisher, Secret(key), now, agree_name)
    if agreed:
        raise DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            f"{agree_name}=1 is set but {key_name} is not: set {key_name} to your "
            f"{publisher} API key, or unset {agree_name}.",
        )
    if key is not None:
        raise DoigetError(
            ErrorCode.CAPABILITY_DENIED,
            f"{key_name} is set but {agree_name} is not 1: set {agree_name}=1 to accept "
            f"{publisher}'s TDM terms, or unset {key_name}.",
        )
    return None


@dataclass(frozen=True, slots=True)
class CapabilityProfile:
    """What this process may do. Build with :meth:`from_env`; it never changes."""

    metadata: MetadataAccess
    tdm: tuple[TdmGrant, ...] = ()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CapabilityProfile:
        """Resolve the profile from the environment, or refuse with CAPABILITY_DENIED."""
        env = os.environ if environ is None else environ
        now = datetime.now(UTC).replace(microsecond=0)
        grants = (_read_tdm_grant(publisher, env, now) for publisher in tdm_publishers())
        return cls(
            metadata=MetadataAccess.from_env(env),
            tdm=tuple(grant for grant in grants if grant is not None),
        )

    @property
    def oa_enabled(self) -> bool:
        """Open Access retrieval is always permitted."""
        return True

    @property
    def rate_limits(self) -> RateLimits:
        """The hard-coded limits; no profile can carry others."""
        return HARD_CODED

    def grants(self) -> list[TdmGrant]:
        """The TDM grants of this session."""
        return list(self.tdm)

    def usable_tdm(self) -> list[TdmGrant]:
        """The grants whose source is installed: the TDM sources a fetch may use."""
        grants = self.grants()
        if not grants:
            return []
        installed = installed_tdm_sources()
        return [grant for grant in grants if grant.publisher in installed]

    def require_tdm(self, publisher: str) -> TdmGrant:
        """The grant for ``publisher``, or a CAPABILITY_DENIED naming what to set or
        install."""
        for grant in self.grants():
            if grant.publisher != publisher:
                continue
            if publisher in installed_tdm_sources():
                return grant
            raise denied(
                ErrorCode.CAPABILITY_DENIED,
                f"TDM access to {publisher} is granted, but the TDM sources are not "
                f"installed: run {TDM_INSTALL} in the doiget checkout, then restart doiget.",
                DenialReason.CAPABILITY_NOT_GRANTED,
                source=f"tdm-{publisher}",
                expected=sorted(installed_tdm_sources()),
            )
        raise denied(
            ErrorCode.CAPABILITY_DENIED,
            f"TDM access to {publisher} is not granted in this session; set "
            f"{agree_var(publisher)}=1 and {key_var(publisher)}, then restart doiget.",
            DenialReason.CAPABILITY_NOT_GRANTED,
            source=f"tdm-{publisher}",
            expected=[grant.publisher for grant in self.grants()],
        )

    def banner(self) -> str:
        """The one-line stderr banner. It never holds any part of a key."""
        usable = {grant.publisher for grant in self.usable_tdm()}
        tdm = ",".join(
            f"{grant.publisher}(agreed={_stamp(grant.agreed_at)}"
            f"{'' if grant.publisher in usable else ',not installed'})"
            for grant in self.grants()
        )
        return (
            f"[doiget] capability: oa=on metadata=[{','.join(self.metadata.enabled())}] tdm=[{tdm}]"
        )

    def to_redacted_dict(self) -> dict[str, Any]:
        """The doiget_capability_profile payload: booleans, names and timestamps only.

        ``tdm_<publisher>`` is true only when the grant is present *and* its source is
        installed; ``tdm_not_installed`` names the granted ones that are not.
        """
        grants = {grant.publisher: grant for grant in self.grants()}
        usable = {grant.publisher for grant in self.usable_tdm()}
        return {
            "oa_enabled": True,
            "metadata_sources": self.metadata.enabled(),
            "tdm_enabled": bool(usable),
            **{f"tdm_{publisher}": publisher in usable for publisher in tdm_publishers()},
            "tdm_not_installed": sorted(set(grants) - usable),
            "rate_limit_per_sec": HARD_CODED.max_fetches_per_second,
            "tdm_agreed_at": {name: _stamp(grant.agreed_at) for name, grant in grants.items()},
        }


def _stamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
