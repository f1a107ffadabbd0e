"""Whether a record is the cited work, and which cited details it contradicts.

Titles are compared after :func:`doiget.verify.text.key` (LaTeX, accents, case,
punctuation, spelling): equal keys are the same title; a title equal to the other's
part before a colon is the same title without its subtitle, one equal to the part
after it the same title without the name it starts with; a character similarity
of at least :data:`NEAR_TITLE` is a near miss, accepted as the cited work only when
at least half of the cited authors are its authors. Everything else is another work.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from rapidfuzz import fuzz

from doiget.models import Work
from doiget.verify.cited import CitedWork
from doiget.verify.contracts import LISTED_AUTHORS, Problem
from doiget.verify.names import AuthorComparison, compare_authors, is_placeholder
from doiget.verify.text import key
from doiget.verify.venues import Venue, identify

TitleRelation = Literal["same", "subtitle", "near"]

NEAR_TITLE: Final = 0.8
NEAR_AUTHORS: Final = 0.5
_RANK: Final = {"same": 0, "subtitle": 1, "near": 2}


def _parts(title: str) -> tuple[str, str]:
    """The comparison forms of a title's parts before and after its first colon (empty
    when it has none): "BERT4Rec: Sequential Recommendation with ..." as ACM prints it."""
    if ":" not in title:
        return "", ""
    main, _, subtitle = title.partition(":")
    return key(main), key(subtitle)


def _one_part(whole: str, title: str) -> bool:
    """Whether ``whole`` (a comparison form) is ``title`` without its subtitle (a part of
    two words or more), or its subtitle without the name before it (three or more)."""
    main, subtitle = _parts(title)
    return (whole == main and " " in whole) or (whole == subtitle and whole.count(" ") >= 2)


_NOTICE_PREFIX: Final = re.compile(r"^\s*(?:retracted|withdrawn|retraction)\s*:\s*", re.I)


def title_relation(cited: str, real: str) -> tuple[TitleRelation | None, float]:
    """How ``cited`` stands to ``real`` and their similarity (0-1). A publisher's
    "RETRACTED:" before the real title is not part of it."""
    real = _NOTICE_PREFIX.sub("", real)
    a, b = key(cited), key(real)
    if not a or not b:
        return None, 0.0
    if a == b:
        return "same", 1.0
    similarity = fuzz.ratio(a, b) / 100
    if _one_part(a, real) or _one_part(b, cited):
        return "subtitle", similarity
    return ("near" if similarity >= NEAR_TITLE else None), similarity


def is_preprint(work: Work) -> bool:
    """Whether the record is a preprint (arXiv, CoRR) rather than a published version."""
    venue = identify(work.venue)
    return work.source == "arxiv" or (venue is not None and venue.kind == "preprint")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A record that may be the cited work, with how well it fits."""

    work: Work
    relation: TitleRelation
    similarity: float
    authors: AuthorComparison

    @property
    def rank(self) -> tuple[int, float, float]:
        """Lower is better: title relation, then author agreement, then similarity."""
        return (_RANK[self.relation], -self.authors.share, -self.similarity)


def closeness(cited: CitedWork, found: Candidate) -> tuple[int, float, bool]:
    """How close a candidate is, coarsely: title relation, share of the cited authors,
    and whether it carries the cited year (a tie on all three is undecidable)."""
    year_fits = cited.year is None or found.work.year in (None, cited.year)
    return (_RANK[found.relation], round(found.authors.share, 2), year_fits)


def candidate(cited: CitedWork, work: Work) -> Candidate | None:
    """``work`` as a candidate for ``cited``, or None when it is another work."""
    if not cited.title or not work.title:
        return None
    relation, similarity = title_relation(cited.title, work.title)
    if relation is None:
        return None
    authors = compare_authors(cited.authors, work.authors)
    if relation == "near" and cited.authors and authors.share < NEAR_AUTHORS:
        return None
    return Candidate(work, relation, similarity, authors)


def same_work(a: Work, b: Work) -> bool:
    """Whether two records are versions of one work (title and an author in common)."""
    if not a.title or not b.title:
        return False
    relation, similarity = title_relation(a.title, b.title)
    if relation is None or (relation == "near" and similarity < 0.9):
        return False
    if not a.authors or not b.authors:
        return True
    from doiget.verify.cited import CitedAuthor

    cited = tuple(CitedAuthor(x.family or x.literal or "", x.given or "") for x in a.authors)
    return bool(compare_authors(cited, b.authors).pairs)


def _names(authors: Sequence[object]) -> str:
    """The names as one text, the first :data:`LISTED_AUTHORS` of a longer list and how
    many more there are."""
    listed = "; ".join(
        getattr(author, "display", str(author)) for author in authors[:LISTED_AUTHORS]
    )
    more = len(authors) - LISTED_AUTHORS
    return f"{listed}; and {more} more" if more > 0 else listed


def author_problems(cited: CitedWork, work: Work, comparison: AuthorComparison) -> list[Problem]:
    """What is wrong with the cited author list against ``work``'s."""
    if not cited.authors or not work.authors:
        return []
    actual = _names(work.authors)
    cited_names = _names(cited.authors)
    unmatched = [cited.authors[i] for i in comparison.unmatched]
    problems: list[Problem] = []
    placeholders = [author for author in unmatched if is_placeholder(author)]
    if placeholders:
        problems.append(Problem(field="authors", kind="authors_placeholder",
                                cited=_names(placeholders), actual=actual))  # fmt: skip
    elif unmatched:
        extra = len(comparison.pairs) == len(work.authors)
        kind = "authors_extra" if extra else "authors_replaced"
        problems.append(Problem(field="authors", kind=kind, cited=_names(unmatched), actual=actual))
    if comparison.missing and not (cited.more_authors or comparison.partial or unmatched):
        missing = _names([work.authors[i] for i in comparison.missing])
        problems.append(
            Problem(field="authors", kind="authors_missing", cited=cited_names, actual=missing)
        )
    if comparison.reordered and not unmatched:
        problems.append(
            Problem(field="authors", kind="authors_reordered", cited=cited_names, actual=actual)
        )
    return problems


def year_problems(cited: CitedWork, versions: Sequence[Work]) -> list[Problem]:
    """A year in the future, or one no version of the work carries."""
    if cited.year is None:
        return []
    if cited.year > datetime.datetime.now(datetime.UTC).year:
        actual = next((str(v.year) for v in versions if v.year), None)
        return [Problem(field="year", kind="year_future", cited=str(cited.year), actual=actual)]
    mixed = _mixed_versions(cited, versions)
    if mixed is not None:
        return [mixed]
    years = {version.year for version in versions if version.year}
    if not years or cited.year in years:
        return []
    actual = ", ".join(str(year) for year in sorted(years))
    return [Problem(field="year", kind="year_differs", cited=str(cited.year), actual=actual)]


def _mixed_versions(cited: CitedWork, versions: Sequence[Work]) -> Problem | None:
    """A ``version_mismatch``: the cited venue is a published version's and the cited
    year is only the preprint's, so the reference mixes two versions of the work."""
    cited_venue = identify(cited.venue)
    preprint_years = {v.year for v in versions if is_preprint(v) and v.year}
    published_years = {v.year for v in versions if not is_preprint(v)}
    if not cited.venue or cited.year not in preprint_years or cited.year in published_years:
        return None
    for published in versions:
        if not is_preprint(published) and _venue_fits(cited_venue, cited.venue, published):
            preprint = ", ".join(f"arXiv {year}" for year in sorted(preprint_years))
            return Problem(field="year", kind="version_mismatch",
                           cited=f"{cited.venue} {cited.year}",
                           actual=f"{published.venue} {published.year}; {preprint}")  # fmt: skip
    return None


def _venue_fits(cited: Venue | None, cited_name: str, work: Work) -> bool:
    real = identify(work.venue)
    if cited is not None and real is not None:
        return cited.id == real.id or real.kind == "series"
    if real is not None and real.kind == "series":
        return True
    return fuzz.token_set_ratio(key(cited_name), key(work.venue or "")) >= 80


# How much of its words a published version's new title shares with its preprint's.
RENAMED_WORDS: Final = 50


def renamed_from(cited: CitedWork, work: Work) -> bool:
    """Whether ``work`` may be the published version of the cited preprint under a new
    title: at the cited venue, by every cited author, the titles sharing words."""
    if not cited.venue or not cited.title or not work.title:
        return False
    if not _venue_fits(identify(cited.venue), cited.venue, work):
        return False
    authors = compare_authors(cited.authors, work.authors)
    if authors.unmatched or not authors.pairs:
        return False
    return fuzz.token_set_ratio(key(cited.title), key(work.title)) >= RENAMED_WORDS


def venue_problems(cited: CitedWork, versions: Sequence[Work]) -> list[Problem]:
    """A cited venue that no version was published in (a preprint cited as published)."""
    if not cited.venue:
        return []
    known = [version for version in versions if version.venue or version.source == "arxiv"]
    if not known:
        return []
    cited_venue = identify(cited.venue)
    published = [version for version in known if not is_preprint(version)]
    if cited_venue is not None and cited_venue.kind == "preprint":
        return []  # a preprint cited as one; a published version is news, not a problem
    if any(_venue_fits(cited_venue, cited.venue, version) for version in published):
        return []
    actual = "; ".join(dict.fromkeys(v.venue or "arXiv" for v in published or known))
    if not published:
        return [
            Problem(field="venue", kind="preprint_as_published", cited=cited.venue, actual=actual)
        ]
    kind = "venue_differs" if cited_venue is not None else "venue_unknown"
    return [Problem(field="venue", kind=kind, cited=cited.venue, actual=actual)]
