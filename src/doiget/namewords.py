"""Words of personal names that are not given or family names on their own."""

from __future__ import annotations

from typing import Final

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
