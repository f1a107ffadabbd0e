"""BibTeX text read entry by entry, in one pass that never goes back over the text.

Every ``@type{...}`` or ``@type(...)`` block is one entry, except ``@string`` (a macro,
expanded where an entry names it, joined by ``#``), ``@preamble`` and ``@comment``.
An entry whose braces do not close ends where the next line that starts an entry
begins: it is kept, with the line it starts on and what is wrong with it, and the
entries after it are read as usual. Nothing is dropped without a word.

What reading produces is bounded, not only what it is given: an entry whose fields
expand (through macros) to more than :data:`MAX_ENTRY_CHARS` is kept unread with
that said, the macros of a text expand to at most :data:`MAX_EXPANDED_CHARS` between
them (past that the text is refused), and a text with more entries than its caller
takes is refused as soon as the entry past the limit is seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from doiget.contract import invalid
from doiget.verify.contracts import MAX_REFERENCE_CHARS, MAX_REFERENCES

# The most characters an entry's fields hold once macros are expanded, as a reference.
MAX_ENTRY_CHARS: Final = MAX_REFERENCE_CHARS
# The most characters the macros of one text expand to between them: what the entries
# of a call can hold.
MAX_EXPANDED_CHARS: Final = MAX_REFERENCES * MAX_REFERENCE_CHARS
_HEAD: Final = re.compile(r"@[ \t]*([A-Za-z][\w:.+-]*)[ \t\r\n]*([{(])")
_LINE_HEAD: Final = re.compile(r"[ \t]*@[ \t]*[A-Za-z][\w:.+-]*[ \t]*[{(]")
_NOT_ENTRIES: Final = frozenset({"string", "preamble", "comment"})
_SPACE: Final = re.compile(r"\s*")
_NAME: Final = re.compile(r"[^\s=,{}()\"#]+")
_BRACES: Final = re.compile(r"[{}]")
_QUOTED: Final = re.compile(r"[{}\"]")
_KEY_END: Final = re.compile(r"[{},]")
_MARKS: Final = re.compile(r"[{}()\"\n]")


class _Unreadable(Exception):
    """Why an entry cannot be read whole, and where."""

    def __init__(self, reason: str, offset: int, too_long: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset
        self.too_long = too_long


@dataclass(frozen=True, slots=True)
class BibEntry:
    """One entry as written: its type, key (None when it has none), fields (names in
    lower case, values with their braces and quotes taken off and macros expanded), the
    line it starts on, and ``problem``: why it could not be read whole (its fields are
    then those read before it)."""

    kind: str
    key: str | None
    fields: dict[str, str]
    line: int
    problem: str | None = None


@dataclass
class _Lines:
    """Line numbers of offsets asked in increasing order, counted once."""

    text: str
    offset: int = 0
    line: int = 1

    def at(self, offset: int) -> int:
        if offset < self.offset:
            return self.text.count("\n", 0, offset) + 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


@dataclass
class _Reader:
    text: str
    limit: int
    what: str
    macros: dict[str, str | None] = field(default_factory=dict)
    expanded: int = 0

    def __post_init__(self) -> None:
        self.lines = _Lines(self.text)

    def entries(self) -> list[BibEntry]:
        text = self.text
        found: list[BibEntry] = []
        position = 0
        while (head := _HEAD.search(text, position)) is not None:
            at = head.start()
            kind = head.group(1).lower()
            close, cut = self._block_end(head.end(), head.group(2))
            if kind in _NOT_ENTRIES:
                if kind == "string" and not cut:
                    self._define(head.end(), close)
                position = close if cut else close + 1
                continue
            if len(found) == self.limit:
                raise invalid(
                    f"{self.what} holds more than {self.limit} references (the entry at line "
                    f"{self.lines.at(at)} is one too many); at most {self.limit} are checked a "
                    f"call: split it into parts of {self.limit} or fewer."
                )
            found.append(self._entry(kind, at, head.end(), close, cut))
            position = close if cut else close + 1
        return found

    def _skip(self, position: int, close: int) -> int:
        """The first offset from ``position`` that is not white space."""
        spaces = _SPACE.match(self.text, position, close)
        return spaces.end() if spaces else position

    def _block_end(self, start: int, opener: str) -> tuple[int, bool]:
        """Where the block whose body starts at ``start`` closes, and whether it is cut
        short instead: the offset of the line that starts the next entry (or the end)."""
        text, depth, quoted = self.text, 0, False
        closer = ")" if opener == "(" else "}"
        for mark in _MARKS.finditer(text, start):
            char, offset = mark.group(), mark.start()
            if char == "\n":
                if _LINE_HEAD.match(text, offset + 1):
                    return offset + 1, True
            elif char == "{":
                depth += 1
            elif char == "}":
                if depth == 0 and closer == "}":
                    return offset, False
                depth = max(depth - 1, 0)
            elif char == '"' and depth == 0:
                quoted = not quoted
            elif char == ")" and closer == ")" and depth == 0 and not quoted:
                return offset, False
        return len(text), True

    def _entry(self, kind: str, at: int, start: int, close: int, cut: bool) -> BibEntry:
        line = self.lines.at(at)
        key, fields_at = self._key(start, close)
        fields: dict[str, str] = {}
        try:
            self._fields(fields_at, close, fields, MAX_ENTRY_CHARS)
        except _Unreadable as unreadable:
            problem = f"{unreadable.reason} (line {self.lines.at(max(unreadable.offset, at))})"
            salvaged = self._by_lines(fields_at, close)
            return BibEntry(kind, key, salvaged | fields, line, problem)
        if cut:
            where = (
                "at the end of the text"
                if close == len(self.text)
                else f"at line {self.lines.at(close)}, where another entry starts"
            )
            problem = f"its braces do not balance: it is still open {where}"
            # A brace left open swallows the fields after it: each line is read alone.
            return BibEntry(kind, key, self._by_lines(fields_at, close), line, problem)
        return BibEntry(kind, key, fields, line)

    def _by_lines(self, start: int, close: int) -> dict[str, str]:
        """The ``name = value`` lines of an entry that cannot be read whole, each read
        alone (one field a line, as exports write them), within an entry's size."""
        fields: dict[str, str] = {}
        for line in self.text[start : min(close, start + MAX_ENTRY_CHARS)].splitlines():
            name, equals, value = line.partition("=")
            name = name.strip()
            if equals and _NAME.fullmatch(name):
                value = value.strip().rstrip(",").rstrip()
                value = value[1:] if value[:1] in '{"' else value
                value = value[:-1] if value[-1:] in '}"' else value
                fields.setdefault(name.lower(), value)
        return fields

    def _key(self, start: int, close: int) -> tuple[str | None, int]:
        """The entry's key and where its fields start; no key when the entry starts with a
        field (``@article{title = ...``) or with its comma."""
        depth = 0
        for mark in _KEY_END.finditer(self.text, start, close):
            char = mark.group()
            depth += {"{": 1, "}": -1}.get(char, 0)
            if char == "," and depth <= 0:
                written = self.text[start : mark.start()].strip()
                if "=" in written:
                    return None, start
                return written or None, mark.end()
        written = self.text[start:close].strip()
        return (None, start) if "=" in written else (written or None, close)

    def _define(self, start: int, close: int) -> None:
        """Read the macros of an ``@string`` block; one whose value would take more than
        an entry may hold is kept as too long, so an entry naming it is not read."""
        values: dict[str, str] = {}
        try:
            self._fields(start, close, values, MAX_ENTRY_CHARS)
        except _Unreadable as unreadable:
            named = _NAME.match(self.text, self._skip(start, close), close)
            if unreadable.too_long and named is not None:
                self.macros[named.group().lower()] = None
            return
        self.macros.update(values)

    def _fields(self, start: int, close: int, into: dict[str, str], cap: int) -> None:
        """``name = value`` pairs between ``start`` and ``close`` into ``into``; a name
        given twice keeps its first value, as BibTeX does."""
        text, held, position = self.text, 0, start
        while True:
            position = self._skip(position, close)
            while position < close and text[position] == ",":
                position = self._skip(position + 1, close)
            if position >= close:
                return
            name = _NAME.match(text, position, close)
            if name is None:
                raise _Unreadable(f"a field name was expected, not {text[position]!r}", position)
            position = self._skip(name.end(), close)
            if position >= close or text[position] != "=":
                raise _Unreadable(f"the field {name.group()!r} has no '='", position)
            value, position = self._value(position + 1, close, cap - held)
            held += len(value)
            into.setdefault(name.group().lower(), value)
            position = self._skip(position, close)
            if position < close and text[position] != ",":
                raise _Unreadable(
                    f"a comma was expected after the field {name.group()!r}", position
                )

    def _value(self, position: int, close: int, room: int) -> tuple[str, int]:
        """A value: braced or quoted text, a number or a macro name, joined by ``#``;
        _Unreadable past ``room`` characters."""
        text, parts, length = self.text, [], 0
        while True:
            position = self._skip(position, close)
            if position >= close:
                raise _Unreadable("a field has no value", position)
            char = text[position]
            if char in '{"':
                end = self._enclosed(position, close)
                part = text[position + 1 : end]
                position = end + 1
            else:
                word = _NAME.match(text, position, close)
                if word is None:
                    raise _Unreadable(f"a value was expected, not {char!r}", position)
                part, position = self._macro(word.group(), position), word.end()
            length += len(part)
            if length > room:
                raise _Unreadable(
                    f"its fields expand to more than {MAX_ENTRY_CHARS:,} characters",
                    position,
                    too_long=True,
                )
            parts.append(part)
            position = self._skip(position, close)
            if position >= close or text[position] != "#":
                return "".join(parts), position
            position += 1

    def _enclosed(self, start: int, close: int) -> int:
        """Where the braced or quoted text opened at ``start`` ends."""
        text, depth = self.text, 0
        quoted = text[start] == '"'
        for mark in (_QUOTED if quoted else _BRACES).finditer(text, start + 1, close):
            char = mark.group()
            if char == "{":
                depth += 1
            elif char == "}":
                if depth == 0 and not quoted:
                    return mark.start()
                depth -= 1
            elif depth == 0:  # the closing quote
                return mark.start()
        opened = "quote" if quoted else "brace"
        raise _Unreadable(f"a {opened} opened here is never closed", start)

    def _macro(self, name: str, position: int) -> str:
        """A number as written, a macro's value, or an undefined name as written (BibTeX
        warns and goes on)."""
        if name.isdigit() or name.lower() not in self.macros:
            return name
        value = self.macros[name.lower()]
        if value is None:
            raise _Unreadable(
                f"the macro {name!r} expands to more than {MAX_ENTRY_CHARS:,} characters",
                position,
                too_long=True,
            )
        self.expanded += len(value)
        if self.expanded > MAX_EXPANDED_CHARS:
            raise invalid(
                f"{self.what}'s @string macros expand to more than {MAX_EXPANDED_CHARS:,} "
                "characters, more than its entries may hold; export the bibliography without "
                "@string macros."
            )
        return value


def bib_entries(text: str, limit: int = MAX_REFERENCES, what: str = "the text") -> list[BibEntry]:
    """Every entry of ``text``, in order; INVALID_REF as soon as there are more than
    ``limit``, or when its macros expand past :data:`MAX_EXPANDED_CHARS`."""
    return _Reader(text, limit, what).entries()
