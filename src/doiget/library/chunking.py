"""Chunks of a document: whole sentences, within one section, sized in model tokens.

Lines become paragraphs (a short line that ends a sentence closes a paragraph),
paragraphs become sentences, and sentences are packed into chunks of at most
``max_tokens`` model tokens. A chunk closes early at a paragraph end once it is
three-quarters full, never crosses a section heading, and starts with up to
``overlap`` tokens of the previous chunk's last sentences so a passage cut at a
boundary can still be found whole. Each chunk knows the pages its text is on.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from doiget.library.sections import SectionedLine

FULL_ENOUGH: Final = 0.75
SHORT_LINE: Final = 0.8  # a line shorter than this fraction of the typical line ends a paragraph
# A sentence ends at . ! ? (optionally closed by quotes/brackets) before a capital,
# digit or opening bracket — but not after common abbreviations or initials.
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_ABBREVIATION: Final = re.compile(
    r"(?:\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Figs|Eq|Eqs|Sec|Ref|Refs|No|Dr|Mr|Ms|Prof|al)"
    r"|\b[A-Z])\.$"
)

# Characters an abbreviation the pattern above knows may span ("et al.").
_ABBREVIATION_SPAN: Final = 8

TokenCounter = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence, its section path, pages and whether it opens a paragraph."""

    text: str
    path: tuple[str, ...]
    first_page: int
    last_page: int
    opens_paragraph: bool


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


def _paragraphs(lines: Sequence[SectionedLine]) -> Iterator[list[SectionedLine]]:
    """Runs of lines that form one paragraph (never across a section change)."""
    lengths = sorted(len(item.line.text) for item in lines)
    typical = lengths[len(lengths) * 3 // 4] if lengths else 0
    current: list[SectionedLine] = []
    for item in lines:
        if current and current[-1].path != item.path:
            yield current
            current = []
        current.append(item)
        text = item.line.text
        if text.endswith((".", "!", "?", ":")) and len(text) < typical * SHORT_LINE:
            yield current
            current = []
    if current:
        yield current


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text``."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        # Only the words just before the stop can make it an abbreviation's: looking at
        # those alone keeps a run of initials from being read again at every stop.
        if _ABBREVIATION.search(
            text, max(start, match.start() - _ABBREVIATION_SPAN), match.start()
        ):
            continue
        spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def sentences(lines: Sequence[SectionedLine]) -> list[Sentence]:
    """The sentences of the body lines, each with its pages and section path."""
    out: list[Sentence] = []
    for paragraph in _paragraphs(lines):
        text = ""
        starts: list[tuple[int, int]] = []  # (offset where a line starts, its page)
        for item in paragraph:
            if text:
                text += " "
            starts.append((len(text), item.line.page))
            text += item.line.text

        begins = [begin for begin, _ in starts]

        def page_at(
            offset: int, starts: list[tuple[int, int]] = starts, begins: list[int] = begins
        ) -> int:
            # The page of the last line starting at or before ``offset``.
            return starts[max(0, bisect.bisect_right(begins, offset) - 1)][1]

        for index, (begin, end) in enumerate(split_sentences(text)):
            out.append(
                Sentence(
                    text[begin:end].strip(),
                    paragraph[0].path,
                    page_at(begin),
                    page_at(max(begin, end - 1)),
                    index == 0,
                )
            )
    return out


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
