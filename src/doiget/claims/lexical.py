"""Shared words between a claim and a source's sentences, weighed by how rare they are
in that source (BM25 over its sentences, and the share of the claim's weight a sentence
holds)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Final

_WORD: Final = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_STOP: Final = frozenset(
    """a an and are as at be by for from has have in is it its of on or that the this to
    was were which with than then there these those their been being into onto can also""".split()  # noqa: SIM905
)
K1: Final = 1.2
B: Final = 0.75


def _stem(word: str) -> str:
    """A light suffix strip, so "increases", "increased" and "increase" meet."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """The content words of ``text``, lower-cased and lightly stemmed."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in _STOP]


class Lexicon:
    """Term statistics of a source's sentences."""

    def __init__(self, sentences: Sequence[Sequence[str]]) -> None:
        self.count = max(1, len(sentences))
        self.average = max(1.0, sum(len(s) for s in sentences) / self.count)
        frequency: Counter[str] = Counter()
        for sentence in sentences:
            frequency.update(set(sentence))
        self._frequency = frequency

    def idf(self, term: str) -> float:
        df = self._frequency.get(term, 0)
        return math.log(1.0 + (self.count - df + 0.5) / (df + 0.5))

    def bm25(self, query: Sequence[str], sentence: Sequence[str]) -> float:
        """BM25 of ``sentence`` (terms) for ``query`` (terms)."""
        counts = Counter(sentence)
        norm = K1 * (1 - B + B * len(sentence) / self.average)
        return sum(
            self.idf(term) * counts[term] * (K1 + 1) / (counts[term] + norm)
            for term in set(query)
            if counts[term]
        )

    def overlap(self, query: Sequence[str], sentence: Sequence[str]) -> float:
        """The share of the query's term weight (IDF) the sentence holds, 0 to 1."""
        wanted = set(query)
        total = sum(self.idf(term) for term in wanted)
        if not total:
            return 0.0
        present = set(sentence)
        return sum(self.idf(term) for term in wanted if term in present) / total

    def rarest(self, query: Sequence[str], sentence: Sequence[str]) -> float:
        """The IDF of the rarest query term the sentence holds over that of the rarest
        query term (a shared name or drug weighs more than shared common words)."""
        wanted = set(query)
        top = max((self.idf(term) for term in wanted), default=0.0)
        if not top:
            return 0.0
        present = set(sentence)
        return max((self.idf(term) for term in wanted if term in present), default=0.0) / top
