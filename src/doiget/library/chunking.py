"""Chunks of a document: whole sentences, within one section, sized in model tokens.

Sentences (:mod:`doiget.documents.sentences`) are packed into chunks of at most
``max_tokens`` model tokens. A chunk closes early at a paragraph end once it is
three-quarters full, never crosses a section heading, and starts with up to
``overlap`` tokens of the previous chunk's last sentences so a passage cut at a
boundary can still be found whole. Each chunk knows the pages its text is on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from doiget.documents.sentences import Sentence

FULL_ENOUGH: Final = 0.75
TokenCounter = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A chunk's text, section path and 1-based inclusive page span."""

    text: str
    section_path: tuple[str, ...]
    page_span: tuple[int, int]

    @property
    def section(self) -> str | None:
        """The innermost heading, or None before the first heading."""
        return self.section_path[-1] if self.section_path else None


def _word_windows(sentence: Sentence, max_tokens: int, count: TokenCounter) -> list[Sentence]:
    """A sentence longer than a chunk, cut into pieces of whole words that fit."""
    pieces: list[Sentence] = []
    words: list[str] = []
    for word in sentence.text.split():
        if words and count(" ".join([*words, word])) > max_tokens:
            pieces.append(_piece(sentence, words, not pieces))
            words = []
        words.append(word)
    if words:
        pieces.append(_piece(sentence, words, not pieces))
    return pieces


def _piece(sentence: Sentence, words: list[str], first: bool) -> Sentence:
    return Sentence(
        " ".join(words),
        sentence.path,
        sentence.first_page,
        sentence.last_page,
        sentence.opens_paragraph and first,
    )


def _render(parts: Sequence[Sentence]) -> Chunk:
    text = ""
    for part in parts:
        if text:
            text += "\n" if part.opens_paragraph else " "
        text += part.text
    return Chunk(
        text,
        parts[0].path,
        (min(p.first_page for p in parts), max(p.last_page for p in parts)),
    )


def chunk_sentences(
    items: Sequence[Sentence], max_tokens: int, overlap: int, count: TokenCounter
) -> list[Chunk]:
    """Pack sentences into chunks (see the module docstring)."""
    chunks: list[Chunk] = []
    current: list[tuple[Sentence, int]] = []
    fresh = 0  # sentences in ``current`` that no earlier chunk holds

    def flush() -> None:
        nonlocal current, fresh
        if fresh:
            chunks.append(_render([s for s, _ in current]))
        tail: list[tuple[Sentence, int]] = []
        used = 0
        for sentence, tokens in reversed(current):
            if used + tokens > overlap:
                break
            tail.insert(0, (sentence, tokens))
            used += tokens
        current, fresh = tail, 0

    for whole in items:
        tokens = count(whole.text)
        pieces = [whole] if tokens <= max_tokens else _word_windows(whole, max_tokens, count)
        for sentence in pieces:
            size = tokens if sentence is whole else count(sentence.text)
            used = sum(t for _, t in current)
            if current and current[0][0].path != sentence.path:
                flush()
                current = []
            elif fresh and (
                used + size > max_tokens
                or (sentence.opens_paragraph and used >= max_tokens * FULL_ENOUGH)
            ):
                flush()
            while current and sum(t for _, t in current) + size > max_tokens:
                current.pop(0)
            current.append((sentence, size))
            fresh += 1
    flush()
    return chunks
