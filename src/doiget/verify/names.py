"""Author lists compared by family names: initials against full given names, accents,
hyphens, particles ("van der", "de la") and DBLP's disambiguation numbers are benign;
an author cited under another name is not."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

from doiget.models import Author
from doiget.sources.names import PARTICLES, SUFFIXES
from doiget.verify.cited import CitedAuthor
from doiget.verify.text import data_file, fold

_LETTERS: Final = re.compile(r"[a-z]+")
# Tokens that never are a given-name initial (suffixes and particles).
_NOT_INITIALS: Final = SUFFIXES | PARTICLES


@functools.cache
def _placeholders() -> frozenset[str]:
    names: list[str] = data_file("placeholders.json")["names"]
    return frozenset(" ".join(_LETTERS.findall(fold(name))) for name in names)


def _tokens(value: str) -> list[str]:
    return _LETTERS.findall(fold(value))


@dataclass(frozen=True, slots=True)
class _Name:
    family: str  # folded family name, particles and hyphens kept as one token run
    last: str  # last token of the family name
    initials: frozenset[str]  # first letters of the given names
    tokens: frozenset[str]  # every token of the full name


def _of_cited(author: CitedAuthor) -> _Name:
    family, given = _tokens(author.family), _tokens(author.given)
    return _name(family, given)


def _of_real(author: Author) -> _Name:
    if author.family:
        return _name(_tokens(author.family), _tokens(author.given or ""))
    parts = _tokens(author.literal or "")
    return _name(parts[-1:], parts[:-1])


def _name(family: list[str], given: list[str]) -> _Name:
    initials = frozenset(token[0] for token in given if token not in _NOT_INITIALS)
    return _Name("".join(family), family[-1] if family else "", initials, frozenset(family + given))


def _same_person(cited: _Name, real: _Name) -> bool:
    """Family names agree (whole, or the last token against a name with particles) and
    the given names' initials do not contradict; or the cited name has its parts the
    other way round (given and family swapped)."""
    if not cited.family:
        return False
    initials_agree = not cited.initials or not real.initials or bool(cited.initials & real.initials)
    if cited.family in (real.family, real.last) or cited.last == real.family:
        return initials_agree
    # "Wang Wei" against "Wei Wang": the parts the other way round.
    return cited.family in real.tokens and real.family in cited.tokens


def is_placeholder(author: CitedAuthor) -> bool:
    """Whether the name is one of the stand-ins writers and generators use ('John Doe')."""
    full = " ".join(_tokens(author.display))
    return full in _placeholders() or " ".join(_tokens(author.family)) in _placeholders()


@dataclass(frozen=True, slots=True)
class AuthorComparison:
    """How a cited author list lines up with a real one.

    ``pairs`` holds (cited index, real index) of the authors found in both, in cited
    order; ``unmatched`` the cited authors not in the real list; ``missing`` the real
    authors not cited.
    """

    pairs: tuple[tuple[int, int], ...]
    unmatched: tuple[int, ...]
    missing: tuple[int, ...]

    @property
    def reordered(self) -> bool:
        """Whether the authors found in both appear in another order."""
        order = [real for _, real in self.pairs]
        return order != sorted(order)

    @property
    def share(self) -> float:
        """The share of cited authors found in the real list (1.0 when none cited)."""
        cited = len(self.pairs) + len(self.unmatched)
        return len(self.pairs) / cited if cited else 1.0


def compare_authors(cited: tuple[CitedAuthor, ...], real: tuple[Author, ...]) -> AuthorComparison:
    """Line up ``cited`` against ``real``: each cited author takes the first real author
    not yet taken who is the same person."""
    real_names = [_of_real(author) for author in real]
    taken: set[int] = set()
    pairs: list[tuple[int, int]] = []
    unmatched: list[int] = []
    for index, author in enumerate(cited):
        name = _of_cited(author)
        found = next(
            (
                i
                for i, other in enumerate(real_names)
                if i not in taken and _same_person(name, other)
            ),
            None,
        )
        if found is None:
            unmatched.append(index)
        else:
            taken.add(found)
            pairs.append((index, found))
    missing = tuple(i for i in range(len(real)) if i not in taken)
    return AuthorComparison(tuple(pairs), tuple(unmatched), missing)
