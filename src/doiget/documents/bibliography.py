"""A paper's reference list, found among its lines and split into one entry each.

The list starts after its heading ("References", "Bibliography", "Literature Cited",
numbered or not) and ends at the next heading set larger or in bold (an appendix),
or at the end of the document. Footnotes and running footers, set smaller than the
entries, are left out.

Where one entry ends and the next begins is read from the layout, in this order:
a numbered list (``[12]``, ``12.``, ``(12)``) counts up one at a time; a hanging
indent starts each entry at its column's margin and indents the rest; entries set
apart by a wider gap than the lines inside them; and, with none of those, a line
that opens with an author's name after a line that closed an entry holding a year.
"""

from __future__ import annotations

import bisect
import re
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby, pairwise
from typing import Final

from doiget.documents.pdftext import Line
from doiget.namewords import PARTICLES

_HEADING: Final = re.compile(
    r"(?:(?:\d+(?:\.\d+)*|[IVXLC]+|[A-Z])\.?\s+)?"
    r"(?:references(?:\s+and\s+notes)?|bibliography|literature\s+cited|works\s+cited|"
    r"cited\s+literature|reference\s+list|literature)\s*:?",
    re.IGNORECASE,
)
# ``[12]``, ``12.``, ``(12)`` or ``12`` then a space, at the start of an entry.
_NUMBER: Final = re.compile(r"(?:\[(\d{1,4})\]|\((\d{1,4})\)|(\d{1,4})\.?(?=\s))\s*")
_YEAR: Final = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)[a-z]?\b|\bn\.\s?d\.|\bin press\b", re.I)
# An author's name as an entry opens with it: "Vaswani, A.", "Vaswani A", "Ashish
# Vaswani,", "van der Maaten, L.", "LeCun Y" ... (a capital after any particles).
_AUTHOR_START: Final = re.compile(
    rf"(?:(?:{'|'.join(sorted(PARTICLES))})\s+)*"
    r"[A-Z\u00c0-\u024f][\w\u00c0-\u024f'\u2019-]+"
    r"(?:,\s*[A-Z\u00c0-\u024f]|\s+[A-Z]\.|\s+[A-Z]{1,3}[,.\s]|\s+[A-Z][\w\u00c0-\u024f-]+[,\s])"
)
# How much of an entry's end is kept to tell a link broken at a line's end.
_LINK_TAIL: Final = 2048
# Differences in points that tell layout apart, whatever the font size.
_SAME_X: Final = 2.5
_INDENT_MIN: Final = 4.0
_INDENT_MAX: Final = 48.0
_COLUMN_GAP: Final = 80.0
_SIZE_TOLERANCE: Final = 1.0
_ENTRY_GAP_RATIO: Final = 1.3
_LONGEST_HEADING: Final = 90


@dataclass(frozen=True, slots=True)
class ReferenceEntry:
    """One entry of a reference list: its text without the list's number, the page it
    starts on, and that number as printed (``[12]``, ``12.``) in a numbered list."""

    text: str
    page: int
    label: str | None = None


def reference_entries(lines: Sequence[Line]) -> list[ReferenceEntry]:
    """The entries of the reference list in ``lines`` (empty when it has none)."""
    body = _reference_lines(lines)
    if not body:
        return []
    numbered = _numbered(body)
    starts = _numbered_starts(body) if numbered else _layout_starts(body)
    return [_entry(group, numbered) for group in _split(body, starts) if group]


def _reference_lines(lines: Sequence[Line]) -> list[Line]:
    """The lines of the last reference list in ``lines``, without its heading, the
    footnotes and footers inside it, and whatever follows it."""
    heading = reference_heading(lines)
    if heading is None:
        return []
    following = lines[heading + 1 :]
    if not following:
        return []
    size = statistics.mode(line.size for line in following[:40])
    taken: list[Line] = []
    for line in following:
        if _ends_list(line, size, lines[heading]):
            break
        if abs(line.size - size) <= _SIZE_TOLERANCE:
            taken.append(line)
    return taken


def reference_heading(lines: Sequence[Line]) -> int | None:
    """The index of the last reference list's heading in ``lines`` (None without one):
    the text above it is the body that cites."""
    for index in range(len(lines) - 1, -1, -1):
        text = lines[index].text.strip()
        if len(text) <= _LONGEST_HEADING and _HEADING.fullmatch(text):
            return index
    return None


def _ends_list(line: Line, size: float, heading: Line) -> bool:
    """A heading after the list: set larger than its entries, or bold as its own
    heading is, on a short line."""
    if len(line.text) > _LONGEST_HEADING:
        return False
    if line.size >= size + 1.5 and line.size >= heading.size - _SIZE_TOLERANCE:
        return True
    return line.bold and heading.bold and abs(line.size - heading.size) <= _SIZE_TOLERANCE


def _numbered(body: Sequence[Line]) -> bool:
    """A numbered list: it opens with entry 1 and entry 2 follows."""
    first = _number_of(body[0].text)
    return first == 1 and any(_number_of(line.text) == 2 for line in body[1:])


def _number_of(text: str) -> int | None:
    found = _NUMBER.match(text)
    if found is None:
        return None
    return int(next(group for group in found.groups() if group is not None))


def _numbered_starts(body: Sequence[Line]) -> set[int]:
    """Lines that open the next number in turn (a page range's "12." is not one)."""
    starts: set[int] = set()
    expected = 1
    for index, line in enumerate(body):
        if _number_of(line.text) == expected:
            starts.add(index)
            expected += 1
    return starts


def _blocks(body: Sequence[Line]) -> Iterator[list[int]]:
    """Indexes of ``body`` in runs that share a page and a column."""
    for _, on_page in groupby(range(len(body)), key=lambda i: body[i].page):
        indexes = list(on_page)
        edges = sorted({body[i].x for i in indexes})
        columns = [edges[0]]
        for left, right in pairwise(edges):
            if right - left > _COLUMN_GAP:
                columns.append(right)

        def column(i: int, columns: list[float] = columns) -> int:
            # The last column whose edge the line starts at or right of.
            return bisect.bisect_right(columns, body[i].x + _SAME_X) - 1

        for _, in_column in groupby(indexes, key=column):
            yield list(in_column)


def _layout_starts(body: Sequence[Line]) -> set[int]:
    """Entry starts read from each block's layout; a line the layout leaves open (no
    indent or gap to go by, or the first line of a block, which may go on from the
    last column) opens an entry when it reads as the start of one."""
    decided: dict[int, bool] = {}
    for block in _blocks(body):
        decided |= _block_starts(body, block)
    starts: set[int] = set()
    dated = False  # whether the entry so far holds a year
    for index, line in enumerate(body):
        opens = decided.get(index)
        if opens is None:
            opens = index == 0 or _opens_entry(body[index - 1], line, dated)
        if opens:
            starts.add(index)
            dated = False
        # A year read across the line break ("n." then "d.") is found in the two lines
        # joined; each line is searched twice at most, never the whole entry again.
        joined = line.text if opens else f"{body[index - 1].text} {line.text}"
        dated = dated or _YEAR.search(joined) is not None
    return starts


def _block_starts(body: Sequence[Line], block: list[int]) -> dict[int, bool]:
    """What the layout of one block says of its lines: a hanging indent decides every
    line; a wider gap decides every line after the block's first."""
    margin = min(body[i].x for i in block)
    if any(_INDENT_MIN <= body[i].x - margin <= _INDENT_MAX for i in block):
        return {i: body[i].x - margin < _SAME_X for i in block}
    pairs = list(pairwise(block))
    gaps = [body[a].top - body[b].top for a, b in pairs]
    usual = min((gap for gap in gaps if gap > 0), default=0.0)
    if usual > 0 and any(gap > usual * _ENTRY_GAP_RATIO for gap in gaps):
        return {b: gap > usual * _ENTRY_GAP_RATIO for (_, b), gap in zip(pairs, gaps, strict=True)}
    return {}


def _opens_entry(previous: Line, line: Line, dated: bool) -> bool:
    """Without layout to go by: ``line`` opens with an author's name, and the entry so
    far holds a year (``dated``) and was closed by ``previous`` (a full stop, a closing
    bracket, a number, a link)."""
    return bool(dated and _closed(previous.text.rstrip()) and _AUTHOR_START.match(line.text))


def _last_word(text: str) -> str:
    """What follows the last white space of ``text``, read from its end only."""
    words = text.rsplit(maxsplit=1)
    return words[-1] if words else ""


def _closed(text: str) -> bool:
    """Whether ``text`` ends as an entry does: a full stop, a closing bracket, a digit,
    or a link (``https://...``, ``doi:...``) in its last word."""
    if text.endswith((".", ")", "]")) or text[-1:].isdecimal():
        return True
    body = _last_word(text)[:-1]
    return "http://" in body or "https://" in body or "doi:" in body


def _broken_link(text: str) -> bool:
    """Whether ``text`` ends in a URL or DOI broken at the line's end: ``https:``, or a
    last word holding a link that ends in ``/ . _ -``."""
    word = _last_word(text).lower()
    if word.endswith(("http:", "https:")):
        return True
    body = word[:-1]
    return word.endswith(("/", ".", "_", "-")) and (
        "http://" in body or "https://" in body or "doi" in body
    )


def _split(body: Sequence[Line], starts: set[int]) -> Iterator[list[Line]]:
    group: list[Line] = []
    for index, line in enumerate(body):
        if index in starts and group:
            yield group
            group = []
        group.append(line)
    yield group


def _entry(group: list[Line], numbered: bool) -> ReferenceEntry:
    parts: list[str] = []
    tail = ""  # the entry's last characters, where a broken link shows
    for line in group:
        piece = line.text.strip()
        # A URL or DOI broken at the line's end goes on without a space.
        if parts and not _broken_link(tail):
            piece = f" {piece}"
        parts.append(piece)
        tail = (tail + piece)[-_LINK_TAIL:]
    text = re.sub(r"\s+", " ", "".join(parts))
    label = None
    if numbered and (found := _NUMBER.match(text)):
        label, text = found.group().strip(), text[found.end() :]
    return ReferenceEntry(text=text, page=group[0].page, label=label)
