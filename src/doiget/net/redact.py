"""Keep credentials out of anything that is logged, recorded or returned."""

from __future__ import annotations

from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from doiget.redaction import REDACTED, redact_text
from doiget.upstreams import Carrier, all_upstreams

__all__ = ["REDACTED", "redact_text", "redact_url", "sensitive_names"]

# Query parameters and headers that carry credentials at many upstreams; the names
# each upstream declares for its own key are added (see :func:`sensitive_names`).
GENERIC_SENSITIVE_NAMES: Final = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "key",
        "token",
        "access_token",
        "x-api-key",
        "authorization",
        "password",
        "secret",
        "client_secret",
        "insttoken",
        "x-els-insttoken",
    }
)


def sensitive_names() -> frozenset[str]:
    """Lower-cased query parameter and header names whose values are credentials."""
    declared = {
        setting.carried_as.lower()
        for upstream in all_upstreams()
        for setting in upstream.settings
        if setting.carried_as and setting.carrier in (Carrier.QUERY, Carrier.HEADER)
    }
    return GENERIC_SENSITIVE_NAMES | declared


def redact_url(url: str) -> str:
    """``url`` with the values of credential-bearing query parameters and userinfo hidden."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    if not parts.query:
        return urlunsplit(parts._replace(netloc=netloc))
    sensitive = sensitive_names()
    pairs = [
        (name, REDACTED if name.lower() in sensitive else value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(pairs, safe="[]")))
