"""Section headings found in a PDF's lines, and the section path of every line.

A line is a heading when it is short, does not read as a sentence, and either
carries a section number ("2", "2.1", "IV."), is one of the names papers use for
their parts ("Abstract", "Related Work", "References", ...), or — in a document
without numbered headings — stands out by layout: set larger than the body text, or
bold at body size. Numbered headings nest by their number's depth; the others sit at
the top level. Consecutive heading lines in the same style are one wrapped heading.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from doiget.documents.pdftext import Line

MAX_HEADING_WORDS: Final = 12
# The deepest a section nests, so a section's path stays short whatever the layout.
MAX_LEVEL: Final = 6
LARGER: Final = 1.15  # a font this much larger than the body counts as a layout cue
NUMBERED_LARGER: Final = 1.05  # a numbered heading needs less to stand out
SMALLER: Final = 0.9  # headings are never set smaller than this fraction of the body
_NUMBERED: Final = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(\S.*)$")
_ROMAN: Final = re.compile(r"^([IVX]{1,5})\.\s+(\S.*)$")
_APPENDIX: Final = re.compile(r"^(?:Appendix\s+)?([A-H](?:\.\d{1,2}){0,2})\.?\s+([A-Z].*)$")
_CAPTION: Final = re.compile(r"^(?:fig\.?|figure|table|algorithm|listing)\s*\d", re.IGNORECASE)
_NAMES: Final = frozenset(
    (
        "abstract",
        "introduction",
        "background",
        "related work",
        "related works",
        "preliminaries",
        "method",
        "methods",
        "methodology",
        "approach",
        "materials and methods",
        "experiments",
        "experimental setup",
        "experimental results",
        "evaluation",
        "results",
        "discussion",
        "results and discussion",
        "analysis",
        "conclusion",
        "conclusions",
        "conclusions and future work",
        "future work",
        "limitations",
        "ethics statement",
        "acknowledgments",
        "acknowledgements",
        "references",
        "bibliography",
        "appendix",
        "supplementary material",
        "summary",
    )
)


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading line: its text and nesting level (1 = top)."""

    text: str
    level: int


@dataclass(frozen=True, slots=True)
class SectionedLine:
    """A body line with the section path it falls under (empty before any heading)."""

    line: Line
    path: tuple[str, ...]


def body_size(lines: Sequence[Line]) -> float:
    """The font size most of the text is set in."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def _reads_as_title(text: str) -> bool:
    words = text.split()
    return (
        0 < len(words) <= MAX_HEADING_WORDS
        and text[0].isupper()
        and not text.endswith((".", ",", ";", "?"))
        and sum(ch.isalpha() for ch in text) >= max(3, len(text) // 2)
    )


def _number_depth(text: str) -> int | None:
    for pattern in (_NUMBERED, _ROMAN, _APPENDIX):
        match = pattern.match(text)
        if match and _reads_as_title(match.group(2)):
            return 1 if pattern is _ROMAN else match.group(0).split()[0].count(".") + 1
    return None


def _is_name(text: str) -> bool:
    return text.rstrip(":").strip().lower() in _NAMES


@dataclass(frozen=True, slots=True)
class _Style:
    """The body text's look, against which headings stand out."""

    size: float
    bold: bool

    def stands_out(self, line: Line) -> bool:
        return line.size >= self.size * LARGER or (
            line.bold and not self.bold and line.size >= self.size * SMALLER
        )


def _kind(line: Line, style: _Style, numbered_document: bool) -> str | None:
    """'numbered', 'named', 'layout' or None (body text)."""
    text = line.text
    if line.size < style.size * SMALLER or _CAPTION.match(text):
        return None
    if _number_depth(text) is not None and (line.bold or line.size >= style.size * NUMBERED_LARGER):
        return "numbered"
    if _is_name(text):
        return "named"
    words = text.split()
    if (
        not numbered_document
        and style.stands_out(line)
        and _reads_as_title(text)
        and len(words) >= 2
        and sum(ch.isalpha() for ch in words[0]) >= 2
    ):
        return "layout"
    return None


def _front_matter_end(lines: Sequence[Line]) -> int:
    """Index of the first named heading on page 1 (0 when there is none): the title,
    authors and affiliations above it are never headings."""
    for index, line in enumerate(lines):
        if line.page > 1:
            break
        if _is_name(line.text):
            return index
    return 0


def sectioned(lines: Sequence[Line]) -> list[SectionedLine]:
    """Body lines with their section paths; heading lines themselves are left out."""
    return [SectionedLine(line, path) for line, path, role in walk(lines) if role == "body"]


# What a line is to :func:`walk`: text under a heading, a heading, or a heading's
# wrapped continuation.
Role = Literal["body", "heading", "wrap"]


def walk(lines: Sequence[Line]) -> Iterator[tuple[Line, tuple[str, ...], Role]]:
    """Every line in order with its role and section path; a heading line carries the
    path of the section it opens (its wrapped rest included in the name)."""
    weights: Counter[bool] = Counter()
    for line in lines:
        weights[line.bold] += len(line.text)
    style = _Style(body_size(lines), weights[True] > weights[False])
    start = _front_matter_end(lines)
    numbered_document = (
        sum(
            1
            for line in lines[start:]
            if _number_depth(line.text) is not None and style.stands_out(line)
        )
        >= 2
    )
    kinds = [
        _kind(line, style, numbered_document) if index >= start else None
        for index, line in enumerate(lines)
    ]
    # Unnumbered headings nest by size: the largest style is level 1.
    sizes = sorted(
        {line.size for line, kind in zip(lines, kinds, strict=True) if kind in ("named", "layout")},
        reverse=True,
    )
    # A size's level, looked up once per heading; a document setting headings in
    # more sizes than that nests the smallest at the deepest level.
    levels = {size: min(rank, MAX_LEVEL) for rank, size in enumerate(sizes, start=1)}
    stack: list[Heading] = []
    # A heading's lines wait until its name is whole (a wrapped line may follow).
    pending: list[tuple[Line, Role]] = []
    last_heading: Line | None = None
    for line, kind in zip(lines, kinds, strict=True):
        if last_heading is not None and kind is None and _wraps(last_heading, line, style):
            stack[-1] = Heading(f"{stack[-1].text} {line.text}", stack[-1].level)
            pending.append((line, "wrap"))
            last_heading = line
            continue
        path = tuple(h.text for h in stack)
        yield from ((held, path, role) for held, role in pending)
        pending = []
        if kind is None:
            last_heading = None
            yield line, path, "body"
            continue
        depth = _number_depth(line.text)
        if kind == "numbered" and depth is not None:
            level = depth
        elif numbered_document:
            level = 1
        else:
            level = levels[line.size]
        heading = Heading(line.text.rstrip(":") if kind == "named" else line.text, level)
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        pending.append((line, "heading"))
        last_heading = line
    path = tuple(h.text for h in stack)
    yield from ((held, path, role) for held, role in pending)


def _wraps(heading: Line, line: Line, style: _Style) -> bool:
    """Whether ``line`` is the wrapped rest of the heading line just above it."""
    return (
        heading.page == line.page
        and heading.size == line.size
        and heading.bold == line.bold
        and style.stands_out(line)
        and len(line.text.split()) <= MAX_HEADING_WORDS
        and not line.text.endswith(".")
    )
