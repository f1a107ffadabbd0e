"""A cited work: what a reference says, before anything is looked up.

Readers (:mod:`doiget.verify.readers`) fill what their format carries; every field
may be missing. ``more_authors`` records a list cut short on purpose ("and others",
"et al."), which is not an error.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CitedAuthor:
    """One cited author: family name and given names or initials as written."""

    family: str
    given: str = ""

    @property
    def display(self) -> str:
        """'Given Family' as cited."""
        return f"{self.given} {self.family}".strip()


@dataclass(frozen=True, slots=True)
class Unread:
    """Why a reference could not be read: a coded error's code and message."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class CitedWork:
    """A reference as written: ``key`` is its BibTeX key or CSL id, ``text`` the free
    text it came from (when it came as free text), ``files`` the local files a citation
    manager attached to it (paths or ``file:`` URLs, as exported); ``unread`` why the
    reference could not be read at all, when it could not (its row says so, the others
    are checked). A BibTeX entry also has the ``line`` it starts on, and ``unreadable``
    says why it could not be read whole (the fields are then those read before that).
    """

    key: str | None = None
    title: str | None = None
    authors: tuple[CitedAuthor, ...] = ()
    more_authors: bool = False
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    pmid: str | None = None
    kind: str | None = None
    text: str | None = None
    files: tuple[str, ...] = ()
    unread: Unread | None = None
    line: int | None = None
    unreadable: str | None = None

    @property
    def empty(self) -> bool:
        """Whether nothing that could identify a work was read."""
        return not (self.title or self.doi or self.arxiv_id or self.pmid)
