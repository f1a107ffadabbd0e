"""The OAuth 2.1 settings of the HTTP server (``DOIGET_HTTP_OAUTH_*``), read and checked
with the others: a value that cannot be honoured refuses the start."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from doiget.errors import quoted
from doiget.secret import Secret
from doiget.settingvalues import refuse

DEFAULT_READ_SCOPE: Final = "doiget.read"
DEFAULT_WRITE_SCOPE: Final = "doiget.write"
# RFC 6749 §3.3: a scope token is printable ASCII without space, '"' or '\'.
_SCOPE_TOKEN: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]{1,128}")


@dataclass(frozen=True)
class OAuthSettings:
    """Whose access tokens the HTTP server accepts, for what audience, and the scopes
    its tools need; see docs/guides/team.md (OAuth)."""

    issuer: str
    resource_url: str
    read_scope: str = DEFAULT_READ_SCOPE
    write_scope: str = DEFAULT_WRITE_SCOPE
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: Secret | None = None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url(var: str, raw: str, *, http_on_loopback: bool = False) -> str:
    """``raw`` as an absolute https URL without query or fragment (http only to a
    loopback host when ``http_on_loopback``)."""
    parts = urlsplit(raw)
    host = parts.hostname or ""
    plain_allowed = http_on_loopback and parts.scheme == "http" and _loopback(host)
    if not host or parts.query or parts.fragment or parts.username or parts.password:
        raise refuse(f"{var}={quoted(raw)} is not a URL; give an absolute https:// URL.")
    if parts.scheme != "https" and not plain_allowed:
        where = " (http:// only on a loopback address)" if http_on_loopback else ""
        raise refuse(f"{var}={quoted(raw)}: use an https:// URL{where}.")
    return raw


def _scope(var: str, raw: Any, default: str) -> str:
    value = str(raw).strip() if raw not in (None, "") else default
    if not _SCOPE_TOKEN.fullmatch(value):
        raise refuse(
            f"{var}={quoted(value)}; a scope is one word of printable ASCII (no spaces "
            "or quotes), e.g. doiget.read."
        )
    return value


def oauth_settings(pick: Callable[[str, str], Any]) -> OAuthSettings | None:
    """The OAuth settings, or None when ``DOIGET_HTTP_OAUTH_ISSUER`` is not set."""
    issuer = str(pick("DOIGET_HTTP_OAUTH_ISSUER", "http_oauth_issuer") or "").strip()
    if not issuer:
        return None
    resource = str(pick("DOIGET_HTTP_RESOURCE_URL", "http_resource_url") or "").strip()
    if not resource:
        raise refuse(
            "DOIGET_HTTP_OAUTH_ISSUER is set but DOIGET_HTTP_RESOURCE_URL is not; set it to "
            "this server's public MCP URL (e.g. https://doiget.lab.example/mcp), the "
            "audience access tokens must name."
        )
    read = _scope(
        "DOIGET_HTTP_OAUTH_READ_SCOPE",
        pick("DOIGET_HTTP_OAUTH_READ_SCOPE", "http_oauth_read_scope"),
        DEFAULT_READ_SCOPE,
    )
    write = _scope(
        "DOIGET_HTTP_OAUTH_WRITE_SCOPE",
        pick("DOIGET_HTTP_OAUTH_WRITE_SCOPE", "http_oauth_write_scope"),
        DEFAULT_WRITE_SCOPE,
    )
    if read == write:
        raise refuse(
            f"DOIGET_HTTP_OAUTH_READ_SCOPE and DOIGET_HTTP_OAUTH_WRITE_SCOPE are both "
            f"{quoted(read)}; give the writing tools a scope of their own."
        )
    introspection = str(
        pick("DOIGET_HTTP_OAUTH_INTROSPECTION_URL", "http_oauth_introspection_url") or ""
    ).strip()
    client_id = str(pick("DOIGET_HTTP_OAUTH_CLIENT_ID", "http_oauth_client_id") or "").strip()
    secret = str(pick("DOIGET_HTTP_OAUTH_CLIENT_SECRET", "") or "")
    if introspection and not (client_id and secret):
        raise refuse(
            "DOIGET_HTTP_OAUTH_INTROSPECTION_URL needs DOIGET_HTTP_OAUTH_CLIENT_ID and "
            "DOIGET_HTTP_OAUTH_CLIENT_SECRET (the client doiget introspects tokens as)."
        )
    return OAuthSettings(
        issuer=_url("DOIGET_HTTP_OAUTH_ISSUER", issuer),
        resource_url=_url("DOIGET_HTTP_RESOURCE_URL", resource, http_on_loopback=True),
        read_scope=read,
        write_scope=write,
        introspection_url=(
            _url("DOIGET_HTTP_OAUTH_INTROSPECTION_URL", introspection) if introspection else None
        ),
        client_id=client_id or None,
        client_secret=Secret(secret) if secret else None,
    )
