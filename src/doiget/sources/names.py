"""Splitting a display name ("Jerry C. Hu", "Ludwig van Beethoven") into family/given."""

from __future__ import annotations

from typing import Any

from doiget.models import Author
from doiget.namewords import PARTICLES
from doiget.sources.shape import items, text


def author_from_name(name: str, orcid: str | None = None) -> Author:
    """An Author from a display name ('Given Family'); anything odd stays a literal name."""
    name = " ".join(name.split())
    tokens = name.split(" ")
    if len(tokens) == 1 or "," in name:
        return Author(literal=name, orcid=orcid)
    start = len(tokens) - 1
    while start > 1 and tokens[start - 1].lower() in PARTICLES:
        start -= 1
    return Author(family=" ".join(tokens[start:]), given=" ".join(tokens[:start]), orcid=orcid)


def authors_from_named(value: Any) -> tuple[Author, ...]:
    """Authors from a list of ``{"name": "Given Family", ...}`` objects (S2, DOAJ)."""
    return tuple(
        author_from_name(name) for item in items(value) if (name := text(item.get("name")))
    )
