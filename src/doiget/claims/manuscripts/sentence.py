"""The sentence around a citation, without the citation, and the quotations in it.

Every format finds its citations in a passage of plain text (a paragraph) and hands
their spans here: the spans are blanked so a citation's own punctuation ("et al.",
"p. 3.") never ends a sentence (one that opens a sentence holds its place), the
passage is split as every document reader splits text
(:func:`doiget.documents.sentences.split_sentences`), and the sentence holding a
citation is returned with the white space left by the citations closed up.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Final

from doiget.claims.manuscripts.source import blank
from doiget.documents.sentences import split_sentences

# Quotation marks of English and other languages, and straight double quotes; a quote
# spans at most this many characters (a longer one is a mark left unclosed).
MAX_QUOTE_CHARS: Final = 2_000
_LENGTH: Final = f"{{1,{MAX_QUOTE_CHARS}}}"
_QUOTES: Final = re.compile(
    rf"\u201c([^\u201c\u201d]{_LENGTH})\u201d"
    rf"|\u00ab\s?([^\u00ab\u00bb]{_LENGTH}?)\s?\u00bb"
    rf"|\u201e([^\u201c\u201d\u201e]{_LENGTH})[\u201c\u201d]"
    rf"|\"([^\"]{_LENGTH})\""
)
# The most characters of a sentence kept around its citation: prose sentences are far
# shorter, and a "sentence" of a whole unpunctuated draft is read once, not per citation.
MAX_SENTENCE_CHARS: Final = 2_000
_SPACES: Final = re.compile(r"\s+")
_BEFORE_PUNCTUATION: Final = re.compile(r" ([.,;:!?)\]])")
_EMPTY_BRACKETS: Final = re.compile(r"\( ?\)|\[ ?\]")


def tidy(text: str) -> str:
    """``text`` on one line, with the gaps a removed citation leaves closed up."""
    # White space first, one character at a time: a pattern that starts over at every
    # blank of a long run of them would take time quadratic in the run.
    text = _SPACES.sub(" ", text)
    text = _EMPTY_BRACKETS.sub(" ", text)
    return _BEFORE_PUNCTUATION.sub(r"\1", _SPACES.sub(" ", text).strip())


def sentences_around(
    passage: str, spans: Sequence[tuple[int, int]]
) -> list[tuple[str, tuple[str, ...]]]:
    """For each citation span of ``passage`` (in order), the sentence holding it without
    the citations, and the quotations inside that sentence."""
    blanked = blank(passage, spans)
    bounds = split_sentences(_held(blanked, spans)) or [(0, len(blanked))]
    starts = [begin for begin, _ in bounds]
    found: list[tuple[str, tuple[str, ...]]] = []
    for start, _ in spans:
        index = max(bisect.bisect_right(starts, start) - 1, 0)
        text = tidy(_window(blanked, bounds[index][0], bounds[index][1], start))
        # A citation set after the full stop ("... shown. [3]") belongs to the sentence
        # before it, when its own holds nothing but citations.
        if not text.strip(" .,;:") and index > 0:
            text = tidy(_window(blanked, bounds[index - 1][0], bounds[index][1], start))
        found.append((text, quotes_in(text)))
    return found


def _window(text: str, begin: int, end: int, at: int) -> str:
    """``text[begin:end]``, or the :data:`MAX_SENTENCE_CHARS` of it around ``at`` when
    it is longer."""
    if end - begin > MAX_SENTENCE_CHARS:
        begin = max(begin, min(at - MAX_SENTENCE_CHARS // 2, end - MAX_SENTENCE_CHARS))
        end = begin + MAX_SENTENCE_CHARS
    return text[begin:end]


def _held(blanked: str, spans: Sequence[tuple[int, int]]) -> str:
    """``blanked`` with a capital where a citation opens a sentence (it is followed by a
    word in lower case: "... thick. Lee (2019) disagrees"), so the sentence still ends
    before it; a citation followed by a capital is left blank and joins the sentence
    before it ("... thick. [3] Next")."""
    held = list(blanked)
    for start, end in spans:
        following = blanked[end : end + 40].lstrip()
        if start < end and following[:1].islower():
            held[start] = "C"
    return "".join(held)


def quotes_in(sentence: str) -> tuple[str, ...]:
    """The quotations of ``sentence``, in order, each without its marks."""
    return tuple(
        quoted.strip()
        for match in _QUOTES.finditer(sentence)
        if (quoted := next(group for group in match.groups() if group is not None)).strip()
    )
