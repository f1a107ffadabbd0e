"""Tolerant readers for upstream JSON: missing fields are fine, wrong shapes are drift.

Parsers read optional fields with :func:`text`, :func:`items` and friends, which turn
absent or mistyped values into ``None``/empty. Only a response whose skeleton is wrong
(the top-level object, the list of results) raises :class:`ShapeError`, which
:func:`parse_or_drift` turns into the source's ``schema_drift`` error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from doiget.net.client import SourceClient

T = TypeVar("T")

_SPACES = re.compile(r"\s+")


class ShapeError(ValueError):
    """The response does not have the structure the parser relies on."""


def expect_dict(value: Any, what: str) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ShapeError naming ``what``."""
    if not isinstance(value, dict):
        raise ShapeError(f"returned {what} that is not a JSON object")
    return value


def expect_list(value: Any, what: str) -> list[Any]:
    """``value`` when it is a JSON array, else ShapeError naming ``what``."""
    if not isinstance(value, list):
        raise ShapeError(f"returned {what} that is not a JSON array")
    return value


def text(value: Any) -> str | None:
    """A non-empty string with its whitespace runs collapsed, else ``None``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    collapsed = _SPACES.sub(" ", value).strip()
    return collapsed or None


def first_text(value: Any) -> str | None:
    """The first usable string of a list (Crossref's titles), or the value itself."""
    if isinstance(value, list):
        for item in value:
            found = text(item)
            if found:
                return found
        return None
    return text(value)


def strings(value: Any) -> tuple[str, ...]:
    """The usable strings of a list (or of a lone string); anything else gives ()."""
    values = value if isinstance(value, list) else [value]
    return tuple(found for item in values if (found := text(item)))


def items(value: Any) -> list[dict[str, Any]]:
    """The objects of a list; anything else in it (or a non-list) is skipped."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one (for optional nested objects)."""
    return value if isinstance(value, dict) else {}


def integer(value: Any) -> int | None:
    """An int from an int or a digit string, else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def bare_orcid(value: Any) -> str | None:
    """``0000-0002-1825-0097`` from any ORCID form (URL or bare)."""
    found = text(value)
    if not found:
        return None
    match = re.search(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])", found, re.IGNORECASE)
    return match.group(1).upper() if match else None


def bare_doi(value: Any) -> str | None:
    """A lower-cased DOI without any ``https://doi.org/`` prefix."""
    found = text(value)
    if not found:
        return None
    found = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", found, flags=re.IGNORECASE)
    return found.lower() if found.startswith("10.") else None


def parse_or_drift(client: SourceClient, parse: Callable[[Any], T], data: Any) -> T:
    """``parse(data)``, with a ShapeError reported as the source's schema drift."""
    try:
        return parse(data)
    except ShapeError as exc:
        raise client.schema_drift(str(exc)) from exc
