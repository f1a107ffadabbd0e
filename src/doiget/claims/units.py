"""The text a claim is weighed against, as units: sentences with where they stand.

Full text (a stored PDF) gives sentences with their page and section; an abstract or
text the caller passed gives sentences with their character offsets in that text.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Unit:
    """One sentence of the source, and where it stands."""

    text: str
    page: int | None = None
    section: str | None = None
    start: int | None = None  # offsets into the abstract or inline text
    end: int | None = None
