"""Tidying, sizing and cutting extracted text.

Size bands of :func:`size_category` (estimated tokens, see :func:`estimated_tokens`):

=============  ==========================
``small``      fewer than 2,000
``medium``     2,000 to 9,999
``large``      10,000 to 49,999
``very_large`` 50,000 and more
=============  ==========================
"""

from __future__ import annotations

import re
from typing import Final

# Zero-width and bidi-control characters (invisible, and a way to hide text from a
# reader), the soft hyphen, and C0/C1 control characters other than tab and newline.
_INVISIBLE: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
_TRAILING_SPACE: Final = re.compile(r"[ \t]+$", re.MULTILINE)
_BLANK_RUN: Final = re.compile(r"\n{3,}")
# A sentence ends at . ! ? or an ellipsis followed by white space (after any closing
# quote or bracket), or at a full-width CJK stop, which needs no space after it.
_SENTENCE_END: Final = re.compile(
    r"[.!?\u2026][\"'\u201d\u2019)\]]*(?=\s)|[\u3002\uff01\uff1f][\u300d\u300f\uff09]*"
)

_BANDS: Final = ((2_000, "small"), (10_000, "medium"), (50_000, "large"))
# A cut looks for a boundary only this far back from the budget (fraction of it).
_BOUNDARY_WINDOW: Final = 0.1


def clean_text(text: str) -> str:
    """``text`` with Unix line ends, no invisible or control characters, no trailing
    blanks on a line and at most one empty line in a row, stripped at both ends."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _INVISIBLE.sub("", text)
    text = _TRAILING_SPACE.sub("", text)
    return _BLANK_RUN.sub("\n\n", text).strip()


def estimated_tokens(text: str) -> int:
    """A rough token count: one token per four characters, rounded up."""
    return (len(text) + 3) // 4


def size_category(tokens: int) -> str:
    """``small`` | ``medium`` | ``large`` | ``very_large`` (bands in the module doc)."""
    for limit, name in _BANDS:
        if tokens < limit:
            return name
    return "very_large"


def _boundary(text: str, floor: int) -> int | None:
    """Where to end ``text``: after the last paragraph, else sentence, else word that
    ends at or past ``floor``; None when there is no such boundary."""
    paragraph = text.rfind("\n\n", floor)
    if paragraph >= floor:
        return paragraph
    last_sentence = None
    for match in _SENTENCE_END.finditer(text, floor):
        last_sentence = match.end()
    if last_sentence is not None:
        return last_sentence
    word = max(text.rfind(space, floor) for space in (" ", "\n", "\t", "\u3000"))
    return word if word >= floor else None


def truncate_utf8(text: str, max_bytes: int) -> tuple[str, bool]:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, and whether it was cut.

    The cut ends at a paragraph break, else a sentence end, else a word boundary
    found within the last 10% of the budget, else exactly at the budget; it never
    splits a character.
    """
    encoded = text.encode("utf-8")
    if len(encoded) <= max_bytes:
        return text, False
    if max_bytes <= 0:
        return "", True
    # Only a character cut at its end can be incomplete: drop those bytes.
    head = encoded[:max_bytes].decode("utf-8", errors="ignore")
    end = _boundary(head, int(len(head) * (1 - _BOUNDARY_WINDOW)))
    if end:
        head = head[:end]
    return head.rstrip(), True
