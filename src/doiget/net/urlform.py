"""URLs parsed the way the HTTP client will read them, for modules outside net/."""

from __future__ import annotations

from dataclasses import dataclass

import httpx


@dataclass(frozen=True, slots=True)
class ParsedUrl:
    """A URL in the client's normal form (IDNA host, percent-encoding) and its parts."""

    text: str
    scheme: str
    host: str
    path: str


def parse_url(raw: str) -> ParsedUrl:
    """``raw`` as the client reads it; ValueError when it cannot be parsed.

    A bad IDNA label or other malformed part raises here, not on first use.
    """
    try:
        url = httpx.URL(raw)
        host = url.host
    except httpx.InvalidURL as exc:
        raise ValueError(str(exc)) from exc
    return ParsedUrl(str(url), url.scheme, host, url.path)
