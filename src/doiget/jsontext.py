"""Parsing JSON text that came from outside: a client, an upstream, a web page.

``json.loads`` answers a document nested more deeply than the interpreter's
recursion limit with ``RecursionError``, which no caller expects from a parser: one
line of ``[`` brackets would end whatever read it. Here that is the same
``ValueError`` any other unreadable document gives, so every caller's existing
"not JSON" branch covers it.
"""

from __future__ import annotations

import json
from typing import Any


class NestingError(ValueError):
    """The document is nested too deeply to be read."""


def parse_json(text: str | bytes, **options: Any) -> Any:
    """``json.loads(text, **options)``; too deep a nesting is :class:`NestingError`."""
    try:
        return json.loads(text, **options)
    except RecursionError:
        raise NestingError("the JSON document is nested too deeply to be read") from None
