"""A PDF as a reader sees it: every line once, in reading order, in a tree of sections.

The lines are :func:`doiget.documents.pdftext.read_pdf`'s (page-number lines dropped,
soft hyphens joined); the sections are :func:`doiget.documents.sections.walk`'s headings.
Each heading opens a section that runs to the next heading at its own level or above,
so a section is one unbroken run of lines, its subsections inside it. Lines before the
first heading form a section of their own, numbered 0 ("Front matter"). Sections are
numbered by their place in the outline ("1", "2", "2.1" ...), which need not be the
number the paper prints.

The text of a line is its characters plus a line end; the text of a run of lines is
theirs joined, so the top-level sections (or all the pages) together give back the
whole text exactly.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from doiget.documents.pdftext import Line, read_pdf

FRONT_MATTER: Final = "Front matter"
CAPTION_CHARS: Final = 200
CACHED_DOCUMENTS: Final = 8
# A caption opens with its label and a colon, full stop or bar ("Table 2: ...",
# "Fig. 3. ..."); "Table 4, we find" and "Figure 1 top left)" are prose.
_CAPTION: Final = re.compile(
    r"^(?P<kind>fig(?:ure)?|tab(?:le)?)\.?\s*(?P<number>[A-Z]?\d{1,3}[a-z]?)\s*[:.|]\s*\S",
    re.IGNORECASE,
)


@dataclass(slots=True)
class Section:
    """A section: its outline number, heading, depth and the lines it spans."""

    number: str
    title: str
    level: int
    start: int  # index of its first line (its heading)
    end: int = 0  # one past its last line, subsections included
    children: list[Section] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Caption:
    """A figure's or table's caption line."""

    kind: str  # "figure" or "table"
    label: str  # "Figure 3"
    text: str
    page: int
    line: int


@dataclass(frozen=True, slots=True)
class Document:
    """A PDF's lines, the innermost section of each, its outline, captions and references."""

    sha256: str
    pages: int
    lines: tuple[Line, ...]
    owners: tuple[int, ...]  # per line: index into ``sections`` of its innermost section
    sections: tuple[Section, ...]  # every section in document order
    captions: tuple[Caption, ...]
    references: int

    @property
    def top(self) -> list[Section]:
        """The top-level sections, in order (they cover every line once)."""
        return [section for section in self.sections if section.level == 1]

    def text(self, start: int, end: int) -> str:
        """The text of lines ``start`` to ``end`` (exclusive)."""
        return "".join(line.text + "\n" for line in self.lines[start:end])

    def whole_text(self) -> str:
        """Every line of the document."""
        return self.text(0, len(self.lines))


def build(lines: list[Line], pages: int, sha256: str) -> Document:
    """The document of ``lines`` (see the module docstring)."""
    from doiget.documents.bibliography import reference_entries
    from doiget.documents.sections import walk

    sections: list[Section] = []
    owners: list[int] = []
    roots: list[Section] = []
    open_sections: list[Section] = []  # the innermost section and its ancestors
    for index, (_, path, role) in enumerate(walk(lines)):
        if index == 0 and role != "heading":
            front = Section("0", FRONT_MATTER, 1, 0)
            roots.append(front)
            sections.append(front)
            open_sections.append(front)
        if role == "heading":
            depth = len(path)
            del open_sections[depth - 1 :]
            parent = open_sections[-1] if open_sections else None
            siblings = parent.children if parent else roots
            ordinal = sum(1 for sibling in siblings if sibling.number != "0") + 1
            number = f"{parent.number}.{ordinal}" if parent else str(ordinal)
            section = Section(number, path[-1], depth, index)
            siblings.append(section)
            open_sections.append(section)
            sections.append(section)
        # The innermost open section is always the one opened last.
        owners.append(len(sections) - 1)
    _close(roots, len(lines))
    return Document(
        sha256=sha256,
        pages=pages,
        lines=tuple(lines),
        owners=tuple(owners),
        sections=tuple(sections),
        captions=tuple(_captions(lines)),
        references=len(reference_entries(lines)),
    )


def _close(siblings: list[Section], end: int) -> None:
    """Set where each section ends: where the next one at its level starts, or ``end``."""
    for position, section in enumerate(siblings):
        section.end = siblings[position + 1].start if position + 1 < len(siblings) else end
        _close(section.children, section.end)


def _captions(lines: list[Line]) -> list[Caption]:
    """The first caption of each figure and table label."""
    found: dict[str, Caption] = {}
    for index, line in enumerate(lines):
        match = _CAPTION.match(line.text)
        if match is None:
            continue
        kind = "figure" if match["kind"].lower().startswith("fig") else "table"
        label = f"{kind.capitalize()} {match['number']}"
        if label not in found:
            text = line.text if len(line.text) <= CAPTION_CHARS else line.text[:CAPTION_CHARS]
            found[label] = Caption(kind, label, text, line.page, index)
    return sorted(found.values(), key=lambda caption: caption.line)


class DocumentCache:
    """Parsed documents by content hash, the most recently used few kept.

    Reading a 20-page paper's text layer takes a quarter of a second; a reader asking
    for its pieces one by one would pay it on every call.
    """

    def __init__(self, size: int = CACHED_DOCUMENTS) -> None:
        self._size = size
        self._documents: OrderedDict[str, Document] = OrderedDict()
        self._lock = threading.Lock()

    def load(self, path: Path) -> Document:
        """The document of the PDF at ``path`` (raises ``UnusableDocument``)."""
        import hashlib

        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digest = ""
        with self._lock:
            cached = self._documents.get(digest)
            if cached is not None:
                self._documents.move_to_end(digest)
                return cached
        text = read_pdf(path)
        document = build(text.lines, text.pages, text.sha256)
        with self._lock:
            self._documents[document.sha256] = document
            while len(self._documents) > self._size:
                self._documents.popitem(last=False)
        return document
