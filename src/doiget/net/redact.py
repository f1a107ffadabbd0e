"""Keep credentials out of anything that is logged, recorded or returned."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Query parameters and headers that carry credentials at one upstream or another.
SENSITIVE_NAMES = frozenset(
    {
        "api_key",
        "apikey",
        "api-key",
        "key",
        "token",
        "access_token",
        "x-api-key",
        "x-els-apikey",
        "authorization",
        "password",
        "secret",
        "client_secret",
        "insttoken",
        "x-els-insttoken",
        "x-subscription-token",
    }
)
REDACTED = "[redacted]"


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
    pairs = [
        (name, REDACTED if name.lower() in SENSITIVE_NAMES else value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(pairs, safe="[]")))


def redact_text(text: str, secrets: list[str]) -> str:
    """``text`` with every occurrence of each secret value replaced."""
    for secret in secrets:
        if secret:
            text = re.sub(re.escape(secret), REDACTED, text)
    return text
