"""Venue names to venues: acronyms, full names and their year-specific forms
(``NeurIPS 2021`` = ``NIPS`` = ``Advances in Neural Information Processing Systems 34``),
from one data file."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final, Literal

from doiget.verify.text import data_file, words

VenueKind = Literal["conference", "journal", "preprint", "series"]

# Words that only date or number a venue's edition, or frame its name.
_EDITION: Final = re.compile(r"^(?:\d{1,4}|\d+(?:st|nd|rd|th)|[ivxl]+)$")
_FRAME: Final = frozenset({"proceedings", "proc", "of", "the", "in", "on", "annual", "track"})


@dataclass(frozen=True, slots=True)
class Venue:
    """One venue of the data file."""

    id: str
    kind: VenueKind
    acronyms: frozenset[str]
    names: tuple[str, ...]  # comparison forms, longest first


def _core(value: str) -> list[str]:
    """A venue's words without edition numbers and years."""
    return [word for word in words(value) if not _EDITION.match(word)]


def _framed(tokens: list[str]) -> str:
    """Comparison form: core words without framing words ('Proceedings of the')."""
    return " ".join(word for word in tokens if word not in _FRAME)


@functools.cache
def venues() -> tuple[Venue, ...]:
    """Every venue of ``data/venues.json``."""
    found = []
    for item in data_file("venues.json")["venues"]:
        names = {_framed(_core(name)) for name in item["names"]}
        found.append(
            Venue(
                id=item["id"],
                kind=item["kind"],
                acronyms=frozenset("".join(words(acronym)) for acronym in item["acronyms"]),
                names=tuple(sorted(names, key=len, reverse=True)),
            )
        )
    return tuple(found)


def identify(name: str | None) -> Venue | None:
    """The venue ``name`` designates, or None when the data file does not know it.

    A whole-name match wins; then an acronym standing as a word of the name
    ("2022 IEEE/CVF Conference ... (CVPR)"); then the longest known full name found
    inside it ("Proceedings of the AAAI Conference on Artificial Intelligence").
    """
    if not name:
        return None
    tokens = _core(name)
    framed = _framed(tokens)
    joined = "".join(tokens)
    for venue in venues():
        if framed in venue.names or joined in venue.acronyms:
            return venue
    for token in tokens:
        for venue in venues():
            if token in venue.acronyms:
                return venue
    padded = f" {framed} "
    best: tuple[int, Venue] | None = None
    for venue in venues():
        for full in venue.names:
            if " " in full and f" {full} " in padded and (best is None or len(full) > best[0]):
                best = (len(full), venue)
    return best[1] if best else None
