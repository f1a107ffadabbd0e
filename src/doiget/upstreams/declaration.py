"""What one upstream declares about itself: hosts, scheme, ceilings, settings, gate.

Every module that talks to an upstream states these facts once, in an
:class:`Upstream`, and registers it; the allowlists, the rate gate, redaction, the
capability profile, settings loading and the docs are derived from the registry.
This module imports nothing of doiget but errors and secrets, so the bottom layer
(config, capability) can read declarations without pulling in the HTTP stack.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Scheme(StrEnum):
    """Which URLs an upstream's client may request."""

    # https to the declared hosts only.
    HTTPS = "https"
    # The operator's own base URL (``endpoint`` setting): bound to that host and
    # scheme, which may be plain http on a private address.
    ENDPOINT = "endpoint"


class Gate(StrEnum):
    """When an upstream may be used at all."""

    ALWAYS = "always"
    # Used by papers resolution only when its ``DOIGET_ENABLE_*`` variable is present.
    OPT_IN = "opt-in"
    # Granted only when its ``DOIGET_AGREE_TDM_*`` is exactly 1 and its key is set.
    TDM = "tdm"
    # Usable once its required settings are set (a key, a URL).
    CONFIGURED = "configured"


class Role(StrEnum):
    """What an upstream is for; routers pick their members by role."""

    SCHOLARLY = "scholarly"
    WEB_SEARCH = "web-search"
    PATENT_SEARCH = "patent-search"
    SCRAPE = "scrape"
    TDM = "tdm"
    SERVICE = "service"


class Carrier(StrEnum):
    """How a credential travels to its upstream (redaction hides it there)."""

    HEADER = "header"
    QUERY = "query"
    BODY = "body"
    # Inside the URL's userinfo (``redis://:password@host``).
    USERINFO = "userinfo"


class Redaction(StrEnum):
    """What of a setting's value must never appear in logs, errors or provenance."""

    NONE = "none"
    # The whole value: it is read into a :class:`~doiget.secret.Secret`.
    VALUE = "value"
    # Only the password inside a URL's userinfo; the URL itself stays a string.
    USERINFO = "userinfo"


@dataclass(frozen=True, slots=True)
class Setting:
    """One variable an upstream reads: environment first, then an optional config.toml key.

    ``attr`` is the :class:`~doiget.config.Settings` attribute that exposes it;
    ``required`` settings must all be set for a CONFIGURED upstream to run;
    ``carrier``/``carried_as`` say where the value travels when it is a credential.
    """

    env: str
    help: str
    attr: str | None = None
    config_key: str | None = None
    redaction: Redaction = Redaction.NONE
    required: bool = False
    url: bool = False
    carrier: Carrier | None = None
    carried_as: str | None = None

    @property
    def secret(self) -> bool:
        """Whether the value, or part of it, is a credential."""
        return self.redaction is not Redaction.NONE


@dataclass(frozen=True, slots=True)
class Upstream:
    """One upstream service as doiget may use it.

    ``min_gap_s`` is the upstream's own ceiling as the minimum seconds between two
    requests (0 when it publishes none: the per-source gap of the rate gate still
    applies); ``keyed_min_gap_s`` replaces it when the ``keyed_by`` setting is set.
    ``preference`` orders the members of a role when the user names none (lower
    first). ``listed_as`` is the spelling the capability profile reports for an
    opt-in source, and ``endpoint`` names the setting holding an operator's base URL.
    ``factory`` (``"module:function"``) builds the upstream's client object for a
    router; it is imported only when first needed, so a declaration stays cheap.
    ``doi_prefixes`` scopes a TDM publisher: only DOIs under them are ever sent to it.
    ``paths`` bounds an operator endpoint to those path prefixes: its client requests
    nothing else at that host.
    """

    name: str
    label: str
    role: Role
    hosts: tuple[str, ...]
    min_gap_s: float
    toolsets: tuple[str, ...]
    gate: Gate = Gate.ALWAYS
    scheme: Scheme = Scheme.HTTPS
    settings: tuple[Setting, ...] = ()
    keyed_by: str | None = None
    keyed_min_gap_s: float | None = None
    opt_in_var: str | None = None
    listed_as: str | None = None
    endpoint: str | None = None
    factory: str | None = None
    preference: int | None = None
    doi_prefixes: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    def serves_doi(self, doi: str) -> bool:
        """Whether ``doi`` lies under one of the declared ``doi_prefixes``."""
        return any(doi.lower().startswith(f"{prefix}/") for prefix in self.doi_prefixes)

    def setting(self, env: str) -> Setting:
        """The declared setting read from ``env`` (KeyError when not declared)."""
        for setting in self.settings:
            if setting.env == env:
                return setting
        raise KeyError(f"{self.name} declares no setting {env}")

    @property
    def required(self) -> tuple[str, ...]:
        """The variables that must all be set for this upstream to run."""
        return tuple(setting.env for setting in self.settings if setting.required)

    @property
    def profile_name(self) -> str:
        """The name the capability profile lists this upstream under."""
        return self.listed_as or self.name

    def build(self, *args: Any) -> Any:
        """Call the declared factory (importing its module on first use)."""
        if self.factory is None:
            raise LookupError(f"{self.name} declares no factory")
        module, _, function = self.factory.partition(":")
        return getattr(importlib.import_module(module), function)(*args)

    def gap_seconds(self, *, keyed: bool) -> float:
        """The upstream's own ceiling as seconds between requests (0 for none)."""
        if keyed and self.keyed_min_gap_s is not None:
            return self.keyed_min_gap_s
        return self.min_gap_s


def agree_var(publisher: str) -> str:
    """The agreement variable of a TDM publisher, e.g. DOIGET_AGREE_TDM_ELSEVIER."""
    return f"DOIGET_AGREE_TDM_{publisher.upper()}"


def key_var(publisher: str) -> str:
    """The key variable of a TDM publisher, e.g. DOIGET_KEY_ELSEVIER."""
    return f"DOIGET_KEY_{publisher.upper()}"


def api_credential(
    env: str, help: str, *, carried_as: str, carrier: Carrier = Carrier.HEADER
) -> Setting:
    """A required credential of a keyed API, redacted whole wherever it travels."""
    return Setting(
        env,
        help,
        redaction=Redaction.VALUE,
        required=True,
        carrier=carrier,
        carried_as=carried_as,
    )


def keyed_web_api(
    *,
    name: str,
    label: str,
    role: Role,
    host: str,
    settings: tuple[Setting, ...],
    factory: str,
    preference: int,
) -> Upstream:
    """A web-toolset API at one https host, usable once its required settings are set.

    Such APIs publish no request ceiling of their own (``min_gap_s`` 0): the
    per-source gap of the rate gate paces them.
    """
    return Upstream(
        name=name,
        label=label,
        role=role,
        hosts=(host,),
        min_gap_s=0.0,
        toolsets=("web",),
        gate=Gate.CONFIGURED,
        settings=settings,
        factory=factory,
        preference=preference,
    )


def operator_endpoint(
    *,
    name: str,
    label: str,
    role: Role,
    toolsets: tuple[str, ...],
    url: Setting,
    extra: tuple[Setting, ...] = (),
    factory: str | None = None,
    preference: int | None = None,
    paths: tuple[str, ...] = (),
) -> Upstream:
    """A service at the base URL the operator sets in ``url`` (bound to that host, and
    to the path prefixes ``paths`` when given)."""
    return Upstream(
        name=name,
        label=label,
        role=role,
        hosts=(),
        min_gap_s=0.0,
        toolsets=toolsets,
        gate=Gate.CONFIGURED,
        scheme=Scheme.ENDPOINT,
        endpoint=url.env,
        settings=(url, *extra),
        factory=factory,
        preference=preference,
        paths=paths,
    )
