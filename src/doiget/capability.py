"""The capability profile: which sources this process may use, fixed at start.

Rules (spec/papers-capability-profile.md):

- Open Access retrieval is always on.
- OpenAlex, Semantic Scholar and DOAJ join the papers resolution chain when their
  ``DOIGET_ENABLE_*`` variable is present (any value).
- A TDM source is granted only when its ``DOIGET_AGREE_TDM_*`` is exactly ``1`` *and*
  its key is set. Agreement without a key, or a key without agreement, refuses the
  start: a silent skip would hide a misconfiguration, and a key leaked from a parent
  shell must never enable a source nobody agreed to.
- Rate limits are the hard-coded ones of :mod:`doiget.net.ratelimit`.

The profile is immutable; a changed environment takes effect only after a restart.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from doiget.errors import DenialReason, DoigetError, ErrorCode, denied
from doiget.net.ratelimit import HARD_CODED, RateLimits
from doiget.secret import Secret

TDM_PUBLISHERS: Final = ("elsevier", "aps", "springer")
_METADATA_VARS: Final = {
    "openalex": "DOIGET_ENABLE_OPENALEX",
    "semantic_scholar": "DOIGET_ENABLE_S2",
    "doaj": "DOIGET_ENABLE_DOAJ",
}


def agree_var(publisher: str) -> str:
    """The agreement variable of a TDM publisher, e.g. DOIGET_AGREE_TDM_ELSEVIER."""
    return f"DOIGET_AGREE_TDM_{publisher.upper()}"


def key_var(publisher: str) -> str:
    """The key variable of a TDM publisher, e.g. DOIGET_KEY_ELSEVIER."""
    return f"DOIGET_KEY_{publisher.upper()}"


@dataclass(frozen=True, slots=True)
class TdmGrant:
    """A TDM source the user agreed to and holds a key for."""

    publisher: str
    api_key: Secret
    agreed_at: datetime
    agree_env_var: str


@dataclass(frozen=True, slots=True)
class MetadataAccess:
    """Optional metadata sources enabled for papers resolution."""

    openalex: bool = False
    semantic_scholar: bool = False
    doaj: bool = False

    def enabled(self) -> list[str]:
        """Names of the enabled sources, in a fixed order."""
        return [name for name in _METADATA_VARS if getattr(self, name)]


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
    tdm_elsevier: TdmGrant | None = None
    tdm_aps: TdmGrant | None = None
    tdm_springer: TdmGrant | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CapabilityProfile:
        """Resolve the profile from the environment, or refuse with CAPABILITY_DENIED."""
        env = os.environ if environ is None else environ
        now = datetime.now(UTC).replace(microsecond=0)
        return cls(
            metadata=MetadataAccess(**{name: var in env for name, var in _METADATA_VARS.items()}),
            tdm_elsevier=_read_tdm_grant("elsevier", env, now),
            tdm_aps=_read_tdm_grant("aps", env, now),
            tdm_springer=_read_tdm_grant("springer", env, now),
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
        candidates = (self.tdm_elsevier, self.tdm_aps, self.tdm_springer)
        return [grant for grant in candidates if grant is not None]

    def require_tdm(self, publisher: str) -> TdmGrant:
        """The grant for ``publisher``, or a CAPABILITY_DENIED naming what to set."""
        for grant in self.grants():
            if grant.publisher == publisher:
                return grant
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
        tdm = ",".join(
            f"{grant.publisher}(agreed={grant.agreed_at.isoformat().replace('+00:00', 'Z')})"
            for grant in self.grants()
        )
        return (
            f"[doiget] capability: oa=on metadata=[{','.join(self.metadata.enabled())}] tdm=[{tdm}]"
        )

    def to_redacted_dict(self) -> dict[str, Any]:
        """The doiget_capability_profile payload: booleans, names and timestamps only."""
        grants = {grant.publisher: grant for grant in self.grants()}
        return {
            "oa_enabled": True,
            "metadata_sources": self.metadata.enabled(),
            "tdm_enabled": bool(grants),
            "tdm_elsevier": "elsevier" in grants,
            "tdm_aps": "aps" in grants,
            "tdm_springer": "springer" in grants,
            "rate_limit_per_sec": HARD_CODED.max_fetches_per_second,
            "tdm_agreed_at": {
                name: grant.agreed_at.isoformat().replace("+00:00", "Z")
                for name, grant in grants.items()
            },
        }
