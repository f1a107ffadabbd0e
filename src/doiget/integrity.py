"""A work's integrity as every surface shows it: the notice model and its wording.

Crossref's ``update-to`` / ``updated-by`` relations are read once
(:func:`doiget.sources.crossref.update_notices`) and normalised once
(``Work.integrity``); this module turns them into what a reply carries (a list of
:class:`Notice`, absent when there is none) and what a citation carries (one line
of text, :func:`describe`), so an info reply, a passage, a BibTeX ``note`` and a
formatted reference all say the same thing about the same paper.
"""

# Annotations are evaluated as the classes are made (see doiget.papers.contracts).
from typing import Annotated, Final

from pydantic import Field

from doiget.contract import Reply
from doiget.models import IntegrityKind, UpdateNotice, Work

# How a citation names a notice that updates the work, and one the work itself issues.
_UPDATED_BY: Final = {
    "retraction": "Retracted",
    "withdrawal": "Withdrawn",
    "expression_of_concern": "Expression of concern",
    "correction": "Corrected",
}
_UPDATE_TO: Final = {
    "retraction": "Retraction of",
    "withdrawal": "Withdrawal of",
    "expression_of_concern": "Expression of concern about",
    "correction": "Correction to",
}


class Notice(Reply):
    """A retraction, withdrawal, expression of concern or correction of the work
    (``notice_doi``), or, for a work that is itself such a notice, the work it updates
    (``notice_of``)."""

    sparse = True
    kind: IntegrityKind
    notice_doi: Annotated[str | None, Field(description="The notice's DOI.")] = None
    notice_of: Annotated[
        str | None, Field(description="This work is the notice; the DOI it updates.")
    ] = None
    date: str | None = None
    source: Annotated[
        str | None, Field(description="Who recorded it: publisher or retraction-watch.")
    ] = None
    retraction_watch_id: str | None = None
    checked_at: Annotated[str | None, Field(description="When Crossref was last asked (UTC).")] = (
        None
    )


def notice(update: UpdateNotice, checked_at: str | None = None) -> Notice:
    """One normalised notice (from ``Work.integrity``) as a reply part, absent fields left out."""
    fields = {
        "kind": update.kind,
        "notice_doi": update.doi if update.direction == "updated-by" else None,
        "notice_of": update.doi if update.direction == "update-to" else None,
        "date": update.date,
        "source": update.source,
        "retraction_watch_id": update.record_id,
        "checked_at": checked_at,
    }
    return Notice(**{name: value for name, value in fields.items() if value is not None})


def notices(work: Work) -> list[Notice] | None:
    """The work's integrity notices, most severe first; None when it has none."""
    found = [notice(update, work.integrity_checked) for update in work.integrity]
    return found or None


def describe(work: Work) -> str | None:
    """The integrity notices in one line for a citation, or None when there are none:
    'Retracted (2010-02-06), notice https://doi.org/...; Corrected (...), notice ...'."""
    parts = []
    for update in work.integrity:
        link = f"https://doi.org/{update.doi}" if update.doi else None
        if update.direction == "updated-by":
            text = _UPDATED_BY[update.kind]
            text += f" ({update.date})" if update.date else ""
            text += f", notice {link}" if link else ""
        else:
            text = f"{_UPDATE_TO[update.kind]} {link or 'another work'}"
        parts.append(text)
    if work.retracted and not any(
        u.is_retraction and u.direction == "updated-by" for u in work.integrity
    ):
        parts.insert(0, "Retracted")  # flagged by a source that names no notice
    return "; ".join(parts) or None
