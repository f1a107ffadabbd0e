"""What every patent provider takes and returns, and the small readers they share.

Kept free of the HTTP stack and lxml: the tool's input contract and its request
building import this module at server start, the providers only on first search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from doiget.web.results import PatentRecord

# Company-form words that say nothing about who the applicant is; dropped from the
# end of an assignee name before matching, so "Acme Corp." finds "ACME CORPORATION".
_SUFFIX: Final = re.compile(
    r"[\s,]+(?:inc|incorporated|llc|l\.l\.c|ltd|limited|corp|corporation|co|company|"
    r"gmbh|ag|sa|s\.a|plc|b\.?v|n\.?v|k\.?k)\.?$",
    re.IGNORECASE,
)
# A bare patent or publication number: office code, at least five digits (separators
# as printed: "US 7,654,321 B2", "WO2017/123335"), optional kind code.
_NUMBER: Final = re.compile(r"([A-Z]{2})[\s-]*(\d[\d\s,./-]{3,}\d)[\s-]*([A-Z]\d?)?")
_ISO_DATE: Final = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})")


@dataclass(frozen=True, slots=True)
class PatentQuery:
    """One patent search, validated and provider-neutral.

    ``number`` is set for a ``specific`` search whose query is a patent number (then
    ``text`` is that query as typed); ``size`` is how many records to fetch (a
    landscape fetches a wider pool than it returns). ``assignee`` is already stripped
    of company-form suffixes; ``cpc`` is upper-case without spaces.
    """

    text: str | None
    search_type: str
    size: int
    number: str | None = None
    office: str | None = None
    assignee: str | None = None
    inventor: str | None = None
    cpc: str | None = None
    year_from: int | None = None
    year_to: int | None = None


@dataclass(frozen=True, slots=True)
class PatentAnswer:
    """A provider's results plus the filters it could not honour as asked."""

    provider: str
    patents: tuple[PatentRecord, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


class PatentProvider(Protocol):
    """A patent search backend."""

    name: str

    async def search(self, query: PatentQuery) -> PatentAnswer:
        """Run ``query``; raise DoigetError (via ``web_error`` or net/) on failure."""


def normalise_assignee(name: str) -> str:
    """``name`` without trailing company-form words (never emptied entirely)."""
    base = " ".join(name.split())
    while True:
        stripped = _SUFFIX.sub("", base).strip(" ,.")
        if not stripped or stripped == base:
            return base
        base = stripped


def patent_number(value: str) -> str | None:
    """``US7654321B2`` from a number as printed (``US 7,654,321 B2``), else ``None``."""
    match = _NUMBER.fullmatch(value.strip().upper())
    if match is None:
        return None
    office, digits, kind = match.groups()
    return f"{office}{re.sub(r'[^0-9]', '', digits)}{kind or ''}"


def iso_date(value: Any) -> str | None:
    """``YYYY-MM-DD`` from ``YYYY-MM-DD`` or ``YYYYMMDD`` (time parts dropped)."""
    if not isinstance(value, str | int) or isinstance(value, bool):
        return None
    match = _ISO_DATE.match(str(value).strip())
    return "-".join(match.groups()) if match else None


def grant_date(kind: str | None, published: str | None) -> str | None:
    """The grant date a publication implies: B kind codes are granted patents, so
    their publication date is the grant date; other kinds say nothing."""
    return published if kind and kind.upper().startswith("B") else None
