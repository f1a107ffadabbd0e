"""Whether a quotation occurs in a text, or where the text comes closest to it.

Both sides are compared in a normal form that keeps words, their case and their
punctuation and drops only what typesetting changes: Unicode compatibility forms
(ligatures such as "ﬁ" and "ﬂ", full-width letters, non-breaking spaces) are
folded (NFKC); curly and angled quote marks become ``'`` and ``"``; every kind of
hyphen and dash is dropped together with the white space around it (so a word broken
at a line end, "experi-" / "ment", reads as "experiment", and "state-of-the-art" as
"stateoftheart" on both sides); soft hyphens and zero-width characters are dropped;
any run of white space (line ends included) is one space. Case is kept: "The model"
and "the model" differ.

A quotation that is not there exactly is matched against stretches of the text of its
length (the normalised Indel similarity); the best stretch is the closest passage, with
its score from 0 to 1. A short quotation is compared with every stretch
(:func:`rapidfuzz.fuzz.partial_ratio_alignment`, whose cost grows with the cube of the
quotation's length). A longer one is compared only near the few places sharing most of
its three-character runs (found in one linear pass), a bounded number of stretches
each, so no quotation costs more than a fixed amount of work however it is made.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_QUOTES: Final = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u0060\u00b4\u02bc", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
}
_HYPHENS: Final = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d")
_INVISIBLE: Final = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff\ufffe\x02")
# Up to this length a quotation is compared with every stretch of the text.
EVERY_STRETCH_CHARS: Final = 300
# A longer one: the places compared, how far around each the stretch is moved, and in
# how many coarse steps before the last step is walked one character at a time.
PLACES: Final = 4
COARSE_STEPS: Final = 32


@dataclass(frozen=True, slots=True)
class Normal:
    """A text in the compared form, and for each of its characters the offset in the
    original text it came from."""

    key: str
    origins: tuple[int, ...]


def normal(text: str) -> Normal:
    """``text`` in the compared form (see the module docstring)."""
    out: list[str] = []
    origins: list[int] = []
    after_hyphen = False
    for index, char in enumerate(unicodedata.normalize("NFC", text)):
        if char in _INVISIBLE:
            continue
        for folded in unicodedata.normalize("NFKC", char):
            mapped = _QUOTES.get(folded, folded)
            if mapped in _HYPHENS:
                if out and out[-1] == " ":
                    out.pop()
                    origins.pop()
                after_hyphen = True
            elif mapped.isspace():
                if out and out[-1] != " " and not after_hyphen:
                    out.append(" ")
                    origins.append(index)
            else:
                out.append(mapped)
                origins.append(index)
                after_hyphen = False
    if out and out[-1] == " ":
        out.pop()
        origins.pop()
    return Normal("".join(out), tuple(origins))


@dataclass(frozen=True, slots=True)
class Match:
    """Where a quotation stands in a text: the original span, the normal-form score
    (1.0 when it is there exactly) and how many times it occurs exactly."""

    start: int
    end: int
    similarity: float
    occurrences: int


def find(quote: str, text: Normal, source_length: int) -> Match | None:
    """Where ``quote`` (already normal) occurs in ``text``, or the closest stretch;
    None when ``text`` is empty."""
    if not text.key or not quote:
        return None
    position = text.key.find(quote)
    if position >= 0:
        occurrences = text.key.count(quote)
        return _span(text, position, position + len(quote), 1.0, occurrences, source_length)
    score, start, end = closest(quote, text.key)
    return _span(text, start, max(end, start + 1), score, 0, source_length)


def closest(quote: str, text: str) -> tuple[float, int, int]:
    """The similarity (0 to 1), start and end of the stretch of ``text`` closest to
    ``quote`` (both non-empty); see the module docstring for the bound on its work."""
    from rapidfuzz import fuzz
    from rapidfuzz.distance import Indel

    if len(quote) <= EVERY_STRETCH_CHARS:
        aligned = fuzz.partial_ratio_alignment(quote, text)
        if aligned is None:
            return 0.0, 0, 0
        return aligned.score / 100, aligned.dest_start, aligned.dest_end
    size = len(quote)
    last = max(len(text) - size, 0)

    def score(start: int) -> float:
        return float(Indel.normalized_similarity(quote, text[start : start + size]))

    # (similarity, -start): the most similar stretch, the first of equals.
    best = (-1.0, 0)
    reach = max(size // 4, 1)
    step = max(2 * reach // COARSE_STEPS, 1)
    for place in _places(quote, text):
        starts = range(max(place - reach, 0), min(place + reach, last) + 1, step)
        middle = -max((score(start), -start) for start in starts)[1]
        fine = range(max(middle - step + 1, 0), min(middle + step - 1, last) + 1)
        best = max(best, *((score(start), -start) for start in fine))
    start = -best[1]
    return best[0], start, min(start + size, len(text))


def _places(quote: str, text: str) -> list[int]:
    """Where the stretches of ``text`` sharing most three-character runs with ``quote``
    begin: at most :data:`PLACES`, each at least half a quotation from the others."""
    import numpy as np

    size = len(quote)
    if len(text) <= size:
        return [0]
    runs = _runs(text)
    hits = np.isin(runs, np.unique(_runs(quote))).astype(np.int64)
    total = np.concatenate(([0], np.cumsum(hits)))
    width = size - 2
    shared = total[width : len(runs) + 1] - total[: len(runs) + 1 - width]
    places: list[int] = []
    for _ in range(PLACES):
        place = int(np.argmax(shared))
        if shared[place] < 0:
            break
        places.append(place)
        shared[max(place - size // 2, 0) : place + size // 2] = -1
    return places


def _runs(text: str) -> npt.NDArray[np.int64]:
    """Each three-character run of ``text`` as one number (code points are 21 bits)."""
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    return (codes[:-2] << 42) | (codes[1:-1] << 21) | codes[2:]


def _span(
    text: Normal, start: int, end: int, similarity: float, occurrences: int, length: int
) -> Match:
    first = text.origins[min(start, len(text.origins) - 1)]
    last = text.origins[min(end, len(text.origins)) - 1] + 1
    return Match(first, min(last, length), round(similarity, 4), occurrences)


def widened(source: str, start: int, end: int) -> tuple[int, int]:
    """``start``..``end`` grown to whole words of ``source`` (a closest stretch may
    begin or end inside one)."""
    while start > 0 and not source[start - 1].isspace():
        start -= 1
    while end < len(source) and not source[end].isspace():
        end += 1
    return start, end


def line_at(starts: list[int], offset: int) -> int:
    """The index of the line holding ``offset``, given each line's start offset."""
    return max(bisect.bisect_right(starts, offset) - 1, 0)
