"""claimSignal: the snippet sentence that bears most on a claim.

Evidence for triage, never a verdict: the sentence sharing the most content words
with the claim (ties go to the earlier sentence), or "" when none shares any.
"""

from __future__ import annotations

import re
from typing import Final

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_WORD = re.compile("[^\\W_]+(?:['\u2019-][^\\W_]+)*")
_STOP: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "may",
        "might",
        "more",
        "most",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "shall",
        "should",
        "so",
        "such",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` without stop words, plural -s folded."""
    words = set()
    for word in _WORD.findall(text.lower()):
        if word in _STOP or len(word) < 2:
            continue
        words.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return words


def split_sentences(text: str) -> list[str]:
    """Sentences of a snippet (a simple split on terminal punctuation)."""
    return [part.strip() for part in _SENTENCE.split(" ".join(text.split())) if part.strip()]


def claim_signal(claim: str, snippet: str) -> str:
    """The snippet sentence most related to ``claim``, or "" when none shares a word."""
    wanted = content_words(claim)
    best, best_score = "", 0
    for sentence in split_sentences(snippet):
        score = len(wanted & content_words(sentence))
        if score > best_score:
            best, best_score = sentence, score
    return best
