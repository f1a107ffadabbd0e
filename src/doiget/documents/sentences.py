"""Sentences of a document's body lines, each with its section path and pages.

Lines become paragraphs (a short line that ends a sentence closes a paragraph, and a
paragraph never crosses a section change), and paragraphs become sentences. Every
reader of documents splits text the same way: chunking for the index, reading,
quoting and weighing a claim against its source.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from doiget.documents.sections import SectionedLine

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


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence, its section path, pages and whether it opens a paragraph."""

    text: str
    path: tuple[str, ...]
    first_page: int
    last_page: int
    opens_paragraph: bool


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
