"""Control characters in text from outside (a PDF's text layer, its file name, an
upstream's metadata): shown for what they are on a terminal, folded out of a value
that must stay on one line of an export.

A terminal obeys escape sequences in what it prints: ESC (and its one-byte C1 forms,
such as CSI U+009B) can clear the screen, write the clipboard (OSC 52) or plant links
(OSC 8); a carriage return or backspace overwrites what was printed; a bidirectional
override makes text read in another order than it is stored.
"""

from __future__ import annotations

import re
from typing import Final

# C0 but tab and line feed, DEL, C1, the bidirectional embeddings, overrides and isolates.
_SHOWN: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Every C0 and C1 character and DEL: none belongs inside a one-line value.
_FOLDED: Final = re.compile("[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with each control character written as its escape (``\\x1b``,
    ``\\u202e``); tabs and line ends are kept."""
    return _SHOWN.sub(_escape, text)


def one_line(text: str) -> str:
    """``text`` on one line: control characters and every kind of line or paragraph
    break (U+2028, U+2029, NEL) become spaces, and runs of white space one space."""
    return " ".join(_FOLDED.sub(" ", text).split())
