"""A run of a document's lines handed out in pieces of bounded size, with a cursor.

A piece ends at a line end when one fits; a single line longer than a piece is cut at
its last space within the bound (or, with no space, at the bound). The pieces of a run
joined give back its text exactly. The cursor names the document, the run it was given
for and where the next piece starts, so it cannot be carried to another paper or
section by mistake.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

from doiget.contract import invalid
from doiget.documents.document import Document

_CURSOR: Final = re.compile(r"^([0-9a-f]{12}):(\d{1,7}):(\d{1,7})$")


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece's text, the lines it draws on, and the cursor of the next (None at the end)."""

    text: str
    first_line: int
    last_line: int
    cursor: str | None


def _scope_token(document: Document, scope: str) -> str:
    return hashlib.sha256(f"{document.sha256}|{scope}".encode()).hexdigest()[:12]


def _start(
    document: Document, scope: str, start: int, end: int, cursor: str | None
) -> tuple[int, int]:
    """(line, character) where the piece starts: the run's start, or the cursor's place."""
    if cursor is None:
        return start, 0
    match = _CURSOR.match(cursor)
    if match is None or match[1] != _scope_token(document, scope):
        raise invalid(
            "cursor does not belong to this reading (another paper, section or page range, "
            "or a PDF changed since); read again without cursor."
        )
    line, offset = int(match[2]), int(match[3])
    if not start <= line < end or offset > len(document.lines[line].text):
        raise invalid("cursor is outside this reading; read again without cursor.")
    return line, offset


def piece(
    document: Document, scope: str, start: int, end: int, max_chars: int, cursor: str | None
) -> Piece:
    """The piece of lines ``start``..``end`` (exclusive) that ``cursor`` points at."""
    line, offset = _start(document, scope, start, end, cursor)
    first = line
    parts: list[str] = []
    room = max_chars
    while line < end:
        rest = document.lines[line].text[offset:] + "\n"
        if len(rest) <= room:
            parts.append(rest)
            room -= len(rest)
            line, offset = line + 1, 0
            continue
        if parts:  # the next line does not fit whole: it opens the next piece
            break
        cut = rest.rfind(" ", 0, room) + 1 or room
        parts.append(rest[:cut])
        offset += cut
        break
    last = line if offset else line - 1
    following = None if line >= end else f"{_scope_token(document, scope)}:{line}:{offset}"
    return Piece("".join(parts), first, max(first, last), following)
