"""Author lists compared by family names: initials against full given names, accents,
hyphens, particles ("van der", "de la") and DBLP's disambiguation numbers are benign;
an author cited under another name is not."""

from __future__ import annotations

import functools
import heapq
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from doiget.models import Author
from doiget.namewords import PARTICLES, SUFFIXES
from doiget.verify.cited import CitedAuthor
from doiget.verify.text import data_file, fold

_LETTERS: Final = re.compile(r"[a-z]+")
# Tokens that never are a given-name initial (suffixes and particles).
_NOT_INITIALS: Final = SUFFIXES | PARTICLES
# The cited authors compared with a record's list: the first ones and the last. Longer
# lists are collaborations cited whole, where the first names and the last say enough.
MAX_COMPARED: Final = 500
# The real authors sharing a name part that one cited author is held against (a list
# of 3,000 names has a few hundred Wangs; the cited one is among the first of them).
MAX_NAMESAKES: Final = 1000
# Names up to this long have their tokens kept (a bounded cache of short strings).
NAME_KEPT: Final = 128


@functools.cache
def _placeholders() -> frozenset[str]:
    names: list[str] = data_file("placeholders.json")["names"]
    return frozenset(" ".join(_LETTERS.findall(fold(name))) for name in names)


def _tokens(value: str) -> tuple[str, ...]:
    if len(value) <= NAME_KEPT:
        return _kept_tokens(value)
    return tuple(_LETTERS.findall(fold(value)))


@functools.lru_cache(maxsize=1 << 16)
def _kept_tokens(value: str) -> tuple[str, ...]:
    # Kept: one record's authors are compared again for every candidate and version.
    return tuple(_LETTERS.findall(fold(value)))


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


def _name(family: Sequence[str], given: Sequence[str]) -> _Name:
    if not family and given:  # a family name of digits alone: "Wei Wang 0001" read wrongly
        family, given = given[-1:], given[:-1]
    initials = frozenset(token[0] for token in given if token not in _NOT_INITIALS)
    return _Name(
        "".join(family), family[-1] if family else "", initials, frozenset((*family, *given))
    )


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
    authors not among those compared.
    """

    pairs: tuple[tuple[int, int], ...]
    unmatched: tuple[int, ...]
    missing: tuple[int, ...]
    partial: bool = False  # the cited list was longer than :data:`MAX_COMPARED`

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


def _candidates(name: _Name, index: dict[str, list[int]]) -> Iterator[int]:
    """The real authors ``name`` may be, in their order, at most :data:`MAX_NAMESAKES`:
    those with the cited family name or its last token as their family name, its last
    token, or any token of their name (every way :func:`_same_person` can hold)."""
    lists = [index.get(key, []) for key in {name.family, name.last} if key]
    merged = (position for position, _ in itertools.groupby(heapq.merge(*lists)))
    return itertools.islice(merged, MAX_NAMESAKES)


def compare_authors(cited: tuple[CitedAuthor, ...], real: tuple[Author, ...]) -> AuthorComparison:
    """Line up ``cited`` against ``real``: each cited author takes the first real author
    not yet taken who is the same person.

    The real authors are indexed by their name's tokens, so each cited author is held
    against the few real ones sharing a name part, never against the whole list: the
    time grows with the sum of the two lists' lengths, not their product (a 1,000-name
    citation of a 3,000-author record). Of the cited list, the first
    :data:`MAX_COMPARED` - 1 and the last are compared; the authors between them are
    neither matched nor reported."""
    real_names = [_of_real(author) for author in real]
    index: dict[str, list[int]] = {}
    for position, other in enumerate(real_names):
        for key in {other.family, other.last, *other.tokens} - {""}:
            index.setdefault(key, []).append(position)
    compared = [*range(min(len(cited), MAX_COMPARED - 1))]
    if len(cited) >= MAX_COMPARED:
        compared.append(len(cited) - 1)
    taken: set[int] = set()
    pairs: list[tuple[int, int]] = []
    unmatched: list[int] = []
    for position in compared:
        name = _of_cited(cited[position])
        found = next(
            (
                i
                for i in _candidates(name, index)
                if i not in taken and _same_person(name, real_names[i])
            ),
            None,
        )
        if found is None:
            unmatched.append(position)
        else:
            taken.add(found)
            pairs.append((position, found))
    missing = tuple(i for i in range(len(real)) if i not in taken)
    return AuthorComparison(tuple(pairs), tuple(unmatched), missing, len(compared) < len(cited))
