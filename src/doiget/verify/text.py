"""Text as comparison sees it: LaTeX decoded, accents folded, case and punctuation gone,
British spellings read as American ones (one data file, applied to both sides)."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from importlib import resources
from typing import Any, Final

_NON_WORD: Final = re.compile(r"[^0-9a-z]+")
_LATEX_HINT: Final = re.compile(r"[\\{}$]")
# Letters that Unicode decomposition does not reduce to ASCII.
_LETTERS: Final = str.maketrans(
    {"ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ł": "l",
     "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "þ": "th", "\u0131": "i", "\u2019": "'", "\u2018": "'"}
)  # fmt: skip


def data_file(name: str) -> Any:
    """The parsed JSON of ``data/<name>``, one of verification's data files."""
    return json.loads(resources.files("doiget.verify").joinpath(f"data/{name}").read_text("utf-8"))


@functools.cache
def _spelling() -> dict[str, str]:
    pairs: dict[str, str] = data_file("spelling.json")["british_to_american"]
    return pairs


def delatex(value: str) -> str:
    """``value`` with LaTeX accents, commands and grouping braces turned into text."""
    if not _LATEX_HINT.search(value):
        return value
    from pylatexenc.latex2text import LatexNodes2Text

    try:
        decoded: str = LatexNodes2Text(math_mode="verbatim").latex_to_text(value)
    except Exception:  # pylatexenc gives up on some broken input; keep the letters
        decoded = value
    return decoded.replace("{", "").replace("}", "").replace("\\", " ")


def fold(value: str) -> str:
    """Lower-case ASCII letters and digits of ``value`` (accents and LaTeX folded)."""
    text = unicodedata.normalize("NFKD", delatex(value).translate(_LETTERS))
    return "".join(ch for ch in text if not unicodedata.combining(ch)).lower()


def words(value: str) -> list[str]:
    """The words of ``value`` after :func:`fold`, each in its American spelling."""
    spelling = _spelling()
    return [spelling.get(word, word) for word in _NON_WORD.split(fold(value)) if word]


def key(value: str) -> str:
    """The comparison form of a title or venue: its :func:`words` joined by spaces."""
    return " ".join(words(value))
