"""Stable citation keys: ``authorYEARfirstword`` in lower-case ASCII (``makris2014developing``)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Final

from doiget.models import Work

_STOPWORDS: Final = frozenset(
    [
        "a",
        "an",
        "the",
        "on",
        "of",
        "in",
        "for",
        "and",
        "to",
        "with",
        "from",
        "by",
        "at",
        "as",
        "is",
        "are",
        "be",
        "via",
        "towards",
        "toward",
    ]
)
_WORD: Final = re.compile(r"[a-z0-9]+")
# Characters no citation key may hold: the ones BibTeX reads as syntax or TeX as
# specials. Spaces, control, format (bidi overrides, zero widths), private-use and
# unassigned characters are refused by their Unicode category.
_KEY_SPECIALS: Final = frozenset(",{}()#%\"'=\\~")
_KEY_CATEGORIES: Final = ("C", "Z")
MAX_KEY_CHARS: Final = 128


# Letters that Unicode does not decompose into an ASCII base letter plus accents.
_UNDECOMPOSED: Final = str.maketrans(
    {"ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ł": "l"}
    | {"Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "\u0131": "i"}
)


def ascii_fold(value: str) -> str:
    """Lower-case ASCII letters and digits of ``value`` (Müller -> muller, Ødegård -> odegard)."""
    decomposed: str = unicodedata.normalize("NFKD", value.translate(_UNDECOMPOSED))
    return decomposed.encode("ascii", "ignore").decode("ascii").lower()


def citable_key(key: str | None) -> str | None:
    """``key`` when ``\\cite`` can name it and it shows as it is written, else None: at
    most :data:`MAX_KEY_CHARS` characters, none a BibTeX or TeX special, white space or
    an invisible character (NUL, ESC, DEL, a right-to-left override), and no URL
    (Zotero's CSL-JSON ids are item URLs)."""
    if not key or len(key) > MAX_KEY_CHARS or "://" in key:
        return None
    for char in key:
        if char in _KEY_SPECIALS or unicodedata.category(char).startswith(_KEY_CATEGORIES):
            return None
    return key


def _author_part(work: Work) -> str:
    first = work.first_author
    if first is None:
        return "anon"
    name = first.family or (first.literal or "").split(" ")[0]
    folded = "".join(_WORD.findall(ascii_fold(name)))
    return folded or "anon"


def _title_part(work: Work) -> str:
    words: list[str] = _WORD.findall(ascii_fold(work.title or ""))
    return next((word for word in words if word not in _STOPWORDS), "")


def citekey(work: Work) -> str:
    """The key for one work; the same work always gets the same key."""
    year = str(work.year) if work.year else "nd"
    return f"{_author_part(work)}{year}{_title_part(work)}"


def unique_citekeys(works: Iterable[Work], chosen: Sequence[str | None] = ()) -> list[str]:
    """Keys for several works, with ``a``, ``b``, ... appended where two would clash.

    ``chosen`` gives, position by position, a key a work already has (the user's own,
    from an imported bibliography) to use instead of the generated one."""
    keys = [
        (chosen[index] if index < len(chosen) else None) or citekey(work)
        for index, work in enumerate(works)
    ]
    totals = {key: keys.count(key) for key in keys}
    seen: dict[str, int] = {}
    out = []
    for key in keys:
        if totals[key] == 1:
            out.append(key)
            continue
        index = seen.get(key, 0)
        seen[key] = index + 1
        out.append(key + _suffix(index))
    return out


def _suffix(index: int) -> str:
    """a, b, ..., z, aa, ab, ... for the n-th clash."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters
