"""What every manuscript reader returns, whatever the draft's format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Place:
    """Where a citation stands: a file and 1-based line, or a page of a PDF."""

    file: str
    line: int | None = None
    page: int | None = None


@dataclass(frozen=True, slots=True)
class Citation:
    """One citation in reading order: the sentence citing, and the keys it cites.

    ``quotes`` are the quotations inside the sentence (text between quotation marks),
    checked against the cited work word for word.
    """

    place: Place
    sentence: str
    keys: tuple[str, ...]
    quotes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Cited:
    """What a key names: a reference the verifier reads (BibTeX text, free text, or a
    CSL-JSON item), or ``None`` with ``missing`` saying why (a key not in the
    bibliography)."""

    key: str
    reference: str | dict[str, Any] | None
    missing: str | None = None


@dataclass(slots=True)
class Manuscript:
    """A draft's citations in reading order and its bibliography by key."""

    name: str
    format: str  # latex | markdown | docx | pdf | text
    citations: list[Citation] = field(default_factory=list)
    bibliography: dict[str, Cited] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was skipped, and why
