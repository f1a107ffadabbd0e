"""The sparse side's text analysis, shared by both index backends and by queries.

Text becomes lower-case word tokens, English stop words and the Latin abbreviations
of scientific prose ("e.g.", "i.e.", "cf.") are dropped and the rest are reduced to
their Snowball (Porter2) stems, so "measuring", "measured" and "measurement" meet on
one term. Both backends index these terms rather than the raw text, which is what
keeps their BM25 rankings the same.

A query keeps how often it repeats a term, saturated as in Okapi BM25's query-term
factor ``(k3 + 1) qtf / (k3 + qtf)`` with k3 = 8 (the usual Okapi setting) and
rounded to a whole number, because the index weighs a term by listing it again. A
long question that names its subject three times is about that subject, not about
every other word in it; a short query rarely repeats a term and is unchanged.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import Stemmer

_WORD: Final = re.compile(r"[^\W_]+", re.UNICODE)
# Without this, "e.g." would leave the terms "e" and "g": rare enough to weigh like
# topic words, and matched by every passage that gives an example.
_LATIN_ABBREVIATIONS: Final = re.compile(r"\b(?:e\.\s?g|i\.\s?e|cf|viz)\b\.?")
MAX_TERM_CHARS: Final = 40
QUERY_TF_SATURATION: Final = 8.0  # Okapi's k3

# Function words that carry no topic; a compact list in the spirit of the classic
# SMART/Lucene English lists, kept short so that terms such as "use" or "method"
# (which do discriminate in scientific text) survive.
STOP_WORDS: Final = frozenset(
    """a about above after again against all am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just me more most my myself no nor not now of off on
    once only or other our ours ourselves out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves also et al via within without upon""".split()  # noqa: SIM905
)


@cache
def _stemmer() -> Stemmer.Stemmer:
    import Stemmer

    return Stemmer.Stemmer("english")


def terms(text: str) -> list[str]:
    """The stemmed, stop-word-free terms of ``text``, in order (repeats kept)."""
    prose = _LATIN_ABBREVIATIONS.sub(" ", text.lower())
    words = [
        word
        for word in _WORD.findall(prose)
        if word not in STOP_WORDS and len(word) <= MAX_TERM_CHARS
    ]
    return _stemmer().stemWords(words) if words else []


def query_terms(text: str) -> list[str]:
    """A query's terms in first-seen order, each listed as often as it weighs: once,
    or more for a term the query repeats (see the module docstring)."""
    weighted: list[str] = []
    for term, count in Counter(terms(text)).items():
        weighted += [term] * query_term_weight(count)
    return weighted


def query_term_weight(count: int, saturation: float = QUERY_TF_SATURATION) -> int:
    """How many times a term a query says ``count`` times is listed: Okapi's
    ``(k3 + 1) qtf / (k3 + qtf)`` with k3 = ``saturation``, rounded, at least 1."""
    return max(1, round((saturation + 1.0) * count / (saturation + count)))


def term_id(term: str) -> int:
    """A stable 32-bit id for ``term`` (the sparse-vector index in Qdrant)."""
    return zlib.crc32(term.encode("utf-8"))


def term_counts(text: str) -> Counter[str]:
    """How often each term occurs in ``text``."""
    return Counter(terms(text))
