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

A quotation that is not there exactly is matched against every stretch of the text of
its length (:func:`rapidfuzz.fuzz.partial_ratio_alignment`, the normalised Indel
similarity); the best stretch is the closest passage, with its score from 0 to 1.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass
from typing import Final

_QUOTES: Final = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u0060\u00b4\u02bc", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
}
_HYPHENS: Final = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2043\ufe58\ufe63\uff0d")
_INVISIBLE: Final = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff\ufffe\x02")


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
    from rapidfuzz import fuzz

    best = fuzz.partial_ratio_alignment(quote, text.key)
    if best is None:
        return None
    end = max(best.dest_end, best.dest_start + 1)
    return _span(text, best.dest_start, end, best.score / 100, 0, source_length)


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
