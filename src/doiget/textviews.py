"""A text read through its escapes, with the way back to the text's own positions.

A credential can reach a message percent-encoded (all of it or any of its characters,
in either hex case, once or again inside an encoded URL) or JSON-escaped. The
redactor looks for it in each :func:`views` of a text and blanks the stretch of the
original that a match in a view came from. Only escapes of characters that can be
part of what is looked for are undone (:func:`escapes_of`): a text whose escapes are
all of other characters (spaces, quotes, ``&``) is read once, as it is.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

# Un-escaping rounds after the text itself: an escape inside an escaped URL, and one more.
MAX_ROUNDS: Final = 3
# Always undone, so that an escape of an escape (%252B, \\u002b) is undone in turn.
_ESCAPE_CHARACTERS: Final = "%\\"
_JSON_SHORT: Final = frozenset('/\\"')
_SURROGATE_ESCAPES: Final = range(0xDC80, 0xDD00)


@dataclass(frozen=True)
class Escapes:
    """Two patterns, each starting with its one literal character, which the regex
    engine finds far faster than a pattern that starts with a choice of them."""

    percent: re.Pattern[str]
    backslash: re.Pattern[str]

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Every escape in ``text``, in order."""
        found = (self.percent.finditer(text), self.backslash.finditer(text))
        return heapq.merge(*found, key=lambda match: match.start())


def escapes_of(characters: Iterable[str]) -> Escapes:
    """The escapes of any of ``characters``: a run of percent escapes of their UTF-8
    bytes (either hex case; a character's bytes may be split over several), a JSON
    ``\\uXXXX`` escape, or a JSON backslash escape of ``/ \\ "``."""
    wanted = set(characters) | set(_ESCAPE_CHARACTERS)
    octets = {f"{octet:02x}" for char in wanted for octet in char.encode("utf-8", "surrogatepass")}
    units = {f"{ord(char):04x}" for char in wanted if ord(char) <= 0xFFFF}
    backslashed = [f"u(?:{_any_case(units)})"]
    if short := "".join(sorted(wanted & _JSON_SHORT)):
        backslashed.append(f"[{re.escape(short)}]")
    return Escapes(
        re.compile(f"(?:%(?:{_any_case(octets)}))+"),
        re.compile(f"\\\\(?:{'|'.join(backslashed)})"),
    )


def _any_case(hexes: Iterable[str]) -> str:
    """An alternation of hex numbers in either case (IGNORECASE would slow the scan)."""
    return "|".join(
        "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in digits)
        for digits in sorted(hexes)
    )


@dataclass(frozen=True)
class View:
    """``text`` read with one more round of escapes undone than ``parent``.

    ``anchors`` are the positions in ``text`` where the distance to the parent's
    positions changes, ``origins`` where each anchor came from in the parent.
    """

    text: str
    anchors: tuple[int, ...] = (0,)
    origins: tuple[int, ...] = (0,)
    parent: View | None = None

    def near_escapes(self, reach: int) -> Iterator[tuple[int, int]]:
        """The stretches of ``text`` within ``reach`` of a character an escape became
        (all of it for the original text): only there can this view show what its
        parent does not."""
        if self.parent is None:
            yield 0, len(self.text)
            return
        start = end = -1
        for anchor in self.anchors[1:]:
            if anchor - reach > end:
                if end >= 0:
                    yield start, end
                start = max(0, anchor - reach)
            end = min(len(self.text), anchor + reach)
        if end >= 0:
            yield start, end

    def origin(self, position: int) -> int:
        """Where ``position`` of this view (or the end of a stretch ending there)
        comes from in the original text."""
        index = bisect_right(self.anchors, position) - 1
        found = self.origins[index] + position - self.anchors[index]
        return found if self.parent is None else self.parent.origin(found)


def views(text: str, escapes: Escapes) -> Iterator[View]:
    """``text`` itself, then ``text`` with its ``escapes`` undone, again while any remain."""
    view = View(text)
    yield view
    for _ in range(MAX_ROUNDS):
        undone = _unescaped(view, escapes)
        if undone is None:
            return
        view = undone
        yield view


def _unescaped(view: View, escapes: Escapes) -> View | None:
    text = view.text
    pieces: list[str] = []
    anchors, origins = [0], [0]
    length = last = 0
    for match in escapes.finditer(text):
        pieces.append(text[last : match.start()])
        length += match.start() - last
        position = match.start()
        for char, width in _characters(match.group()):
            anchors.append(length)
            origins.append(position)
            pieces.append(char)
            length += 1
            position += width
        anchors.append(length)
        origins.append(match.end())
        last = match.end()
    if len(anchors) == 1:
        return None
    pieces.append(text[last:])
    return View("".join(pieces), tuple(anchors), tuple(origins), view)


def _characters(escape: str) -> list[tuple[str, int]]:
    """The characters one escape stands for, each with the width it takes in the text."""
    if escape.startswith("%"):
        data = bytes.fromhex(escape.replace("%", ""))
        decoded = data.decode("utf-8", "surrogateescape")
        return [
            (char, 3 * (1 if ord(char) in _SURROGATE_ESCAPES else len(char.encode("utf-8"))))
            for char in decoded
        ]
    if escape.startswith("\\u"):
        return [(chr(int(escape[2:], 16)), len(escape))]
    return [(escape[1], len(escape))]
