"""Keep credentials out of anything that is logged, recorded or returned."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from doiget.upstreams import Carrier, all_upstreams

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
REDACTED = "[redacted]"


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


def redact_text(text: str, secrets: list[str]) -> str:
    """``text`` with every occurrence of each secret value replaced."""
    for secret in secrets:
        if secret:
            text = re.sub(re.escape(secret), REDACTED, text)
    return text


# The loggers of the HTTP libraries: httpx logs every request's full URL at INFO, and
# httpcore traces connections at DEBUG, query strings and all.
_LIBRARY_LOGGERS: Final = (
    "httpx",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
)


class _SecretScrubber(logging.Filter):
    """Rewrites a library's log record so that no configured secret is in its text."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            scrubbed = redact_text(message, sorted(self.secrets, key=len, reverse=True))
            if scrubbed != message:
                record.msg, record.args = scrubbed, None
        return True


_SCRUBBER: Final = _SecretScrubber()


def scrub_library_logs(secrets: Iterable[str]) -> None:
    """Keep ``secrets`` out of what the HTTP libraries log, for the life of the process."""
    _SCRUBBER.secrets.update(secret for secret in secrets if secret)
    for name in _LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        if _SCRUBBER not in library.filters:
            library.addFilter(_SCRUBBER)
