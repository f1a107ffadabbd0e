"""What the claim engine measures about each candidate passage of a source.

A candidate is one sentence or two adjacent ones (a claim may rest on both). Each gets
a few cheap numbers: meaning (cosine with the claim, and how it stands against the
source's other sentences), shared rare words (BM25, the share of the claim's weight it
holds), where it stands, and whether it reads as a finding. Whether the source
addresses the claim at all is judged from its best passage. The weights that combine them
are fitted (``benchmarks/fit_claim_support.py``) and kept in ``data/claim_weights.json``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from doiget.claims.lexical import Lexicon, terms
from doiget.claims.units import Unit

CANDIDATE_FEATURES: Final = (
    "cosine",
    "cosine_z",
    "cosine_gap",
    "cosine_rank",
    "bm25_share",
    "bm25_log",
    "overlap",
    "rarest",
    "position",
    "first",
    "last",
    "finding",
    "number",
    "window",
    "window_cosine_gain",
    "window_overlap_gain",
    "length_log",
)
SOURCE_FEATURES: Final = ("best", "best_cosine", "best_overlap")

_FINDING: Final = re.compile(
    r"\b(?:we (?:found|show|observed|demonstrate|report|identified)|found|showed?|shown|"
    r"demonstrat\w*|reveal\w*|associated|significant\w*|increas\w*|decreas\w*|reduc\w*|"
    r"higher|lower|compared|odds ratio|hazard ratio|risk|confidence interval|95\s*%|"
    r"results?|indicat\w*|conclu\w*)\b|\bp\s*[<=>]|%",
    re.IGNORECASE,
)
_NUMBER: Final = re.compile(r"\d")
BLOCK: Final = 32  # sentences: abstracts have 9 on average, 99 % of them at most 19


@dataclass(frozen=True, slots=True)
class Candidate:
    """One sentence (``first == last``) or two adjacent ones, and its feature row."""

    first: int
    last: int
    features: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class _Scores:
    """A claim's scores against one passage."""

    cosine: float
    bm25: float
    overlap: float
    rarest: float
    text: str


class _Source:
    """A source's sentences weighed against one claim."""

    def __init__(
        self,
        claim: str,
        texts: Sequence[str],
        rows: NDArray[np.float32],
        query: NDArray[np.float32],
    ) -> None:
        self.claim_terms = terms(claim)
        self.unit_terms = [terms(text) for text in texts]
        self.lexicon = Lexicon(self.unit_terms)
        self.texts = texts
        self.rows = rows
        self.query = query
        self.singles = [self.scores(i, i) for i in range(len(texts))]
        cosines = sorted((s.cosine for s in self.singles), reverse=True)
        self.mean = float(np.mean(cosines))
        self.spread = float(np.std(cosines)) or 1.0
        self.ranks = {value: rank for rank, value in reversed(list(enumerate(cosines)))}
        self.best_cosine = cosines[0]
        self.best_bm25 = max(s.bm25 for s in self.singles)

    def scores(self, first: int, last: int) -> _Scores:
        # Two adjacent sentences read as one: the direction of their summed vectors.
        vector = self.rows[first : last + 1].sum(axis=0)
        size = float(np.linalg.norm(vector)) or 1.0
        words = [word for i in range(first, last + 1) for word in self.unit_terms[i]]
        return _Scores(
            float(vector @ self.query) / size,
            self.lexicon.bm25(self.claim_terms, words),
            self.lexicon.overlap(self.claim_terms, words),
            self.lexicon.rarest(self.claim_terms, words),
            " ".join(self.texts[first : last + 1]),
        )

    def row(self, first: int, last: int) -> tuple[float, ...]:
        """The feature row of sentences ``first`` to ``last`` (see CANDIDATE_FEATURES)."""
        own = self.singles[first] if first == last else self.scores(first, last)
        parts = self.singles[first : last + 1]
        count = len(self.singles)
        return (
            own.cosine,
            (own.cosine - self.mean) / self.spread,
            own.cosine - self.best_cosine,
            1.0 / (1 + min(self.ranks[p.cosine] for p in parts)),
            own.bm25 / self.best_bm25 if self.best_bm25 > 0 else 0.0,
            math.log1p(own.bm25),
            own.overlap,
            own.rarest,
            first / max(1, count - 1),
            1.0 if first == 0 else 0.0,
            1.0 if last == count - 1 else 0.0,
            1.0 if _FINDING.search(own.text) else 0.0,
            1.0 if _NUMBER.search(own.text) else 0.0,
            1.0 if first != last else 0.0,
            own.cosine - max(p.cosine for p in parts),
            own.overlap - max(p.overlap for p in parts),
            math.log1p(len(own.text.split())),
        )


def blocks(units: Sequence[Unit]) -> list[range]:
    """``units`` cut into runs read as an abstract is: within one section, at most
    :data:`BLOCK` sentences (a long section in equal parts). The relative features
    (rank, z-score, position, word rarity) are fitted on abstracts, so a paper is
    weighed block by block on the same scale."""
    out: list[range] = []
    start = 0
    for end in range(1, len(units) + 1):
        if end == len(units) or units[end].section != units[start].section:
            parts = -(-(end - start) // BLOCK)
            edges = [start + (end - start) * k // parts for k in range(parts + 1)]
            out += [range(a, b) for a, b in itertools.pairwise(edges)]
            start = end
    return out


def measure(
    claim: str, units: Sequence[Unit], vectors: NDArray[np.float32], query: NDArray[np.float32]
) -> list[Candidate]:
    """The candidates of ``units`` (at least one) for ``claim``, given the units'
    vectors and the claim's: each sentence, and each two adjacent ones in a block."""
    out: list[Candidate] = []
    for block in blocks(units):
        texts = [units[i].text for i in block]
        source = _Source(claim, texts, vectors[block.start : block.stop], query)
        count = len(block)
        spans = [(i, i) for i in range(count)] + [(i, i + 1) for i in range(count - 1)]
        out += [
            Candidate(block.start + first, block.start + last, source.row(first, last))
            for first, last in spans
        ]
    return out


_COSINE: Final = CANDIDATE_FEATURES.index("cosine")
_OVERLAP: Final = CANDIDATE_FEATURES.index("overlap")


def source_row(candidates: Sequence[Candidate], logits: Sequence[float]) -> tuple[float, ...]:
    """The source's feature row (see SOURCE_FEATURES): its best candidate's fitted
    logit, and its best sentence's cosine and word overlap with the claim. Only the
    best passage counts, so a long paper is judged as an abstract is."""
    singles = [c for c in candidates if c.first == c.last]
    return (
        max(logits),
        max(c.features[_COSINE] for c in singles),
        max(c.features[_OVERLAP] for c in singles),
    )
