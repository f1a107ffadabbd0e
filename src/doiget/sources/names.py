"""Splitting a display name ("Jerry C. Hu", "Ludwig van Beethoven") into family/given."""

from __future__ import annotations

from typing import Any, Final

from doiget.models import Author
from doiget.sources.shape import items, text

# Lower-case words that belong to the family name that follows them ("van der
# Walt", "de la Cruz", "bin Laden", "St John"): one list for every reader of names.
PARTICLES: Final = frozenset(
    {
        "al",
        "bin",
        "da",
        "das",
        "de",
        "del",
        "della",
        "den",
        "der",
        "di",
        "dos",
        "du",
        "el",
        "la",
        "le",
        "st",
        "ten",
        "ter",
        "van",
        "von",
    }
)
# Generational suffixes that follow a name and are neither given name nor family.
SUFFIXES: Final = frozenset({"jr", "sr", "ii", "iii", "iv"})


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
