"""The HTTP server's settings (``doiget serve --http``), read with the others."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from doiget.oauthconfig import OAuthSettings, oauth_settings
from doiget.secret import Secret
from doiget.settingvalues import seconds_setting, switch_setting, whole_setting

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8765
DEFAULT_RATE: Final = 600  # requests a minute per token
DEFAULT_MAX_BODY: Final = 4 * 1024 * 1024
DEFAULT_GRACE: Final = 30.0
MAX_GRACE: Final = 3600.0
DEFAULT_MAX_SESSIONS: Final = 32  # open MCP sessions per token
DEFAULT_SESSION_IDLE: Final = 300.0  # seconds without a request before a session ends
MAX_SESSION_IDLE: Final = 86400.0
DEFAULT_UNAUTH_RATE: Final = 60  # requests a minute per client address without a valid token
DEFAULT_HEADER_TIMEOUT: Final = 10.0  # seconds a connection has to send a request head
MAX_HEADER_TIMEOUT: Final = 300.0
DEFAULT_MAX_CONNECTIONS: Final = 1000


@dataclass(frozen=True)
class HttpSettings:
    """Where and how the HTTP server listens; see docs/guides/team.md."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    tokens_file: Path | None = None
    tokens: Secret | None = None
    insecure_no_auth: bool = False
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    rate_per_minute: int = DEFAULT_RATE
    max_body_bytes: int = DEFAULT_MAX_BODY
    metrics: bool = False
    shutdown_grace: float = DEFAULT_GRACE
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle: float = DEFAULT_SESSION_IDLE
    unauth_rate_per_minute: int = DEFAULT_UNAUTH_RATE
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    oauth: OAuthSettings | None = None
    # Kept whether OAuth is on or not: a secret that is set is never shown, used or not.
    oauth_client_secret: Secret | None = None

    @property
    def loopback(self) -> bool:
        """Whether the bind address only takes connections from this machine."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def host_headers(self) -> list[str]:
        """The Host header values requests may carry (DNS-rebinding protection): the
        configured names, and on loopback the loopback names with this port."""
        names = [f"{name}:{self.port}" if ":" not in name else name for name in self.allowed_hosts]
        if self.loopback:
            names += [f"{name}:{self.port}" for name in ("127.0.0.1", "localhost", "[::1]")]
        elif self.host not in ("0.0.0.0", "::"):  # noqa: S104 (naming, not binding)
            names.append(f"{self.host}:{self.port}")
        return names

    def token_values(self) -> list[str]:
        """The tokens given in DOIGET_HTTP_TOKENS (the file is read by the server)."""
        raw = self.tokens.reveal() if self.tokens is not None else ""
        return [token.strip() for token in raw.split(",") if token.strip()]


def _names(raw: Any) -> list[str]:
    """A comma list (or a TOML list) of names, trimmed, blanks dropped."""
    items = raw if isinstance(raw, list) else str(raw or "").split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def _client_secret(pick: Callable[[str, str], Any]) -> str:
    return str(pick("DOIGET_HTTP_OAUTH_CLIENT_SECRET", "") or "")


def http_settings(pick: Callable[[str, str], Any]) -> HttpSettings:
    """The HTTP settings from the environment / config.toml (``pick(var, key)``)."""
    listed = _names(pick("DOIGET_HTTP_ALLOWED_ORIGINS", "http_allowed_origins"))
    hosts = _names(pick("DOIGET_HTTP_ALLOWED_HOSTS", "http_allowed_hosts"))
    tokens_file = pick("DOIGET_HTTP_TOKENS_FILE", "http_tokens_file")
    tokens = pick("DOIGET_HTTP_TOKENS", "")
    return HttpSettings(
        host=str(pick("DOIGET_HTTP_HOST", "http_host") or DEFAULT_HOST),
        port=whole_setting(
            "DOIGET_HTTP_PORT", pick("DOIGET_HTTP_PORT", "http_port"), DEFAULT_PORT, 1, 65535
        ),
        tokens_file=Path(str(tokens_file)).expanduser() if tokens_file else None,
        tokens=Secret(str(tokens)) if tokens else None,
        insecure_no_auth=switch_setting(
            "DOIGET_HTTP_INSECURE_NO_AUTH", pick("DOIGET_HTTP_INSECURE_NO_AUTH", ""), False
        ),
        allowed_origins=tuple(origin.rstrip("/") for origin in listed),
        allowed_hosts=tuple(hosts),
        rate_per_minute=whole_setting(
            "DOIGET_HTTP_RATE", pick("DOIGET_HTTP_RATE", "http_rate"), DEFAULT_RATE, 1, 1_000_000
        ),
        max_body_bytes=whole_setting(
            "DOIGET_HTTP_MAX_BODY",
            pick("DOIGET_HTTP_MAX_BODY", "http_max_body"),
            DEFAULT_MAX_BODY,
            1024,
            100 * 1024 * 1024,
        ),
        metrics=switch_setting(
            "DOIGET_HTTP_METRICS", pick("DOIGET_HTTP_METRICS", "http_metrics"), False
        ),
        shutdown_grace=seconds_setting(
            "DOIGET_HTTP_SHUTDOWN_GRACE",
            pick("DOIGET_HTTP_SHUTDOWN_GRACE", "http_shutdown_grace"),
            DEFAULT_GRACE,
            MAX_GRACE,
        ),
        max_sessions=whole_setting(
            "DOIGET_HTTP_MAX_SESSIONS",
            pick("DOIGET_HTTP_MAX_SESSIONS", "http_max_sessions"),
            DEFAULT_MAX_SESSIONS,
            1,
            10_000,
        ),
        session_idle=seconds_setting(
            "DOIGET_HTTP_SESSION_IDLE",
            pick("DOIGET_HTTP_SESSION_IDLE", "http_session_idle"),
            DEFAULT_SESSION_IDLE,
            MAX_SESSION_IDLE,
        ),
        unauth_rate_per_minute=whole_setting(
            "DOIGET_HTTP_UNAUTH_RATE",
            pick("DOIGET_HTTP_UNAUTH_RATE", "http_unauth_rate"),
            DEFAULT_UNAUTH_RATE,
            1,
            1_000_000,
        ),
        header_timeout=seconds_setting(
            "DOIGET_HTTP_HEADER_TIMEOUT",
            pick("DOIGET_HTTP_HEADER_TIMEOUT", "http_header_timeout"),
            DEFAULT_HEADER_TIMEOUT,
            MAX_HEADER_TIMEOUT,
        ),
        max_connections=whole_setting(
            "DOIGET_HTTP_MAX_CONNECTIONS",
            pick("DOIGET_HTTP_MAX_CONNECTIONS", "http_max_connections"),
            DEFAULT_MAX_CONNECTIONS,
            16,
            1_000_000,
        ),
        oauth=oauth_settings(pick),
        oauth_client_secret=Secret(secret) if (secret := _client_secret(pick)) else None,
    )
