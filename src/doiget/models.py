"""The shapes every source parses into and every core works with.

Sources fill what their upstream knows and leave the rest ``None``/empty; cores
combine works from several sources with :func:`merge_works`, the earlier work
winning field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, Literal

# What a notice does to the work it updates, as every surface names it.
IntegrityKind = Literal["retraction", "withdrawal", "expression_of_concern", "correction"]

# Crossref's update types (and the spellings publishers deposit) by integrity kind;
# other updates (new_version, new_edition, addendum, clarification ...) are not about
# the work's integrity and are left out.
_INTEGRITY_KINDS: Final[dict[str, IntegrityKind]] = {
    "retraction": "retraction",
    "withdrawal": "withdrawal",
    "removal": "withdrawal",
    "expression_of_concern": "expression_of_concern",
    "correction": "correction",
    "erratum": "correction",
    "corrigendum": "correction",
    "partial_retraction": "correction",
}
# The order notices are shown in: what matters most to a reader first.
INTEGRITY_SEVERITY: Final[dict[str, int]] = {
    "retraction": 3,
    "withdrawal": 3,
    "expression_of_concern": 2,
    "correction": 1,
}


def integrity_kind(kind: str) -> IntegrityKind | None:
    """The integrity kind of a Crossref update type ("Expression of concern",
    "expression-of-concern", "erratum" ...), or None for an update of another sort."""
    return _INTEGRITY_KINDS.get("_".join(kind.strip().lower().replace("-", " ").split()))


@dataclass(frozen=True, slots=True)
class Author:
    """One author: split name when known, else ``literal`` (organisations, unsplit names)."""

    family: str | None = None
    given: str | None = None
    literal: str | None = None
    orcid: str | None = None

    @property
    def display(self) -> str:
        """'Given Family', or the literal name."""
        if self.family:
            return f"{self.given} {self.family}" if self.given else self.family
        return self.literal or ""

    @property
    def sort_name(self) -> str:
        """'Family, Given' (the BibTeX and TOML form), or the literal name."""
        if self.family:
            return f"{self.family}, {self.given}" if self.given else self.family
        return self.literal or ""


@dataclass(frozen=True, slots=True)
class Location:
    """One place a copy of the work can be had (an Unpaywall OA location, an arXiv PDF)."""

    url: str | None = None
    url_for_pdf: str | None = None
    license: str | None = None
    host_type: str | None = None
    version: str | None = None
    is_best: bool = False


@dataclass(frozen=True, slots=True)
class UpdateNotice:
    """A Crossref ``update-to`` / ``updated-by`` notice (retraction, correction, ...)."""

    kind: str
    direction: Literal["update-to", "updated-by"]
    doi: str | None = None
    date: str | None = None
    label: str | None = None
    source: str | None = None  # who recorded it: "publisher" or "retraction-watch"
    record_id: str | None = None  # the Retraction Watch record, when it recorded the notice

    @property
    def is_retraction(self) -> bool:
        """Whether the notice retracts or withdraws the work."""
        return integrity_kind(self.kind) in ("retraction", "withdrawal")

    @property
    def integrity_kind(self) -> IntegrityKind | None:
        """What the notice does to a work's integrity; None for other updates."""
        return integrity_kind(self.kind)


@dataclass(frozen=True, slots=True)
class OpenAccess:
    """What Unpaywall knows about free copies of a DOI."""

    is_oa: bool
    oa_status: str | None = None
    best: Location | None = None
    locations: tuple[Location, ...] = ()

    @property
    def license(self) -> str | None:
        """The licence of the best location, when known."""
        return self.best.license if self.best else None

    def pdf_candidates(self) -> list[Location]:
        """Locations with a PDF URL: the best one first, then the others, each URL once."""
        ordered = [self.best] if self.best else []
        ordered += [loc for loc in self.locations if loc is not self.best]
        seen: set[str] = set()
        out: list[Location] = []
        for location in ordered:
            if location.url_for_pdf and location.url_for_pdf not in seen:
                seen.add(location.url_for_pdf)
                out.append(location)
        return out


@dataclass(frozen=True, slots=True)
class Work:
    """A scholarly work as doiget knows it. ``source`` names the upstream that said so."""

    source: str
    title: str | None = None
    authors: tuple[Author, ...] = ()
    year: int | None = None
    issued: str | None = None  # ISO 8601, possibly partial: "2012", "2012-03", "2012-03-21"
    doi: str | None = None
    arxiv_id: str | None = None
    pmid: str | None = None
    openalex_id: str | None = None
    s2_id: str | None = None
    abstract: str | None = None
    venue: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    type: str | None = None  # CSL item type: article-journal, paper-conference, ...
    publisher: str | None = None
    issn: tuple[str, ...] = ()
    url: str | None = None
    license: str | None = None
    pdf_url: str | None = None
    categories: tuple[str, ...] = ()
    primary_category: str | None = None
    journal_ref: str | None = None
    published: str | None = None  # arXiv first-version timestamp
    updated: str | None = None  # arXiv latest-version timestamp
    updates: tuple[UpdateNotice, ...] = ()
    is_retracted: bool | None = None
    # When Crossref's update relations (``updates``) were read: None when they were not.
    integrity_checked: str | None = None
    referenced_ids: tuple[str, ...] = ()  # OpenAlex ids of the works this one cites
    cited_by_count: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def first_author(self) -> Author | None:
        """The first author, if any."""
        return self.authors[0] if self.authors else None

    @property
    def retracted(self) -> bool:
        """True when a source flags the work retracted or a notice retracts it."""
        return bool(self.is_retracted) or any(
            notice.is_retraction and notice.direction == "updated-by" for notice in self.updates
        )

    @property
    def integrity(self) -> tuple[UpdateNotice, ...]:
        """The work's integrity notices: retractions, withdrawals, expressions of concern
        and corrections, most severe first, those updating this work before those this
        work (itself a notice) issues; kinds normalised, each notice once.

        The same notice recorded by the publisher and by Retraction Watch is one notice,
        its source the publisher, with Retraction Watch's record id kept.
        """
        kept: dict[tuple[str, str, str | None], UpdateNotice] = {}
        for notice in self.updates:
            kind = notice.integrity_kind
            if kind is None:
                continue
            source = notice_source(notice.source)
            key = (notice.direction, kind, notice.doi)
            same = kept.get(key)
            if same is None:
                kept[key] = replace(notice, kind=kind, source=source)
                continue
            kept[key] = replace(
                same,
                date=same.date or notice.date,
                source="publisher" if "publisher" in (same.source, source) else same.source,
                record_id=same.record_id or notice.record_id,
            )
        return tuple(
            sorted(
                kept.values(),
                key=lambda n: (n.direction != "updated-by", -INTEGRITY_SEVERITY[n.kind]),
            )
        )


def notice_source(value: str | None) -> str | None:
    """ "retraction-watch" or "publisher" however Crossref spelled it; other values kept."""
    if value is None:
        return None
    spelled = "-".join(value.strip().lower().replace("_", " ").split())
    return spelled or None


def _empty(value: Any) -> bool:
    return value is None or value == () or value == {} or value == ""


def merge_works(primary: Work, *others: Work) -> Work:
    """``primary`` with each empty field filled from the first of ``others`` that has it."""
    changes: dict[str, Any] = {}
    for spec in fields(Work):
        if spec.name == "source" or not _empty(getattr(primary, spec.name)):
            continue
        for other in others:
            value = getattr(other, spec.name)
            if not _empty(value):
                changes[spec.name] = value
                break
    return replace(primary, **changes) if changes else primary
