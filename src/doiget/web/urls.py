"""URL normal forms shared by the web tools."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def url_key(url: str) -> str:
    """A URL without its fragment or trailing slash, scheme and host lower-cased: two
    links to one page give one key."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))
