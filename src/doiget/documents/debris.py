"""Figure and table debris: lines of a PDF's text layer that are not prose.

A plot's tick labels ("0.2 0.0 0.2 0.4 0.6"), a table's rows of figures
("BM25 (1995) 0.38 0.46 0.56") and the short axis or column labels around them
("rouge-1_f1", "Density") come out of the text layer as lines like any other; left
in, they fill passages with tokens no question matches and push the prose out of
the embedding. A line is a number run when at least half its tokens are numbers and
it holds few words; a short label line is dropped when it stands next to a number
run. Captions ("Table 2: ...", "Figure 3. ...") always stay: they say what the
figure or table shows, in words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from doiget.documents.sections import SectionedLine

# A number as tables and axes print it: signs (also U+2212 minus, U+00B1 plus-minus),
# brackets, decimals, thousands separators, percentages, ranges (hyphen or U+2013).
_SIGNS: Final = "-+\u2212\u2013\u00b1"
# The digits part is read in one way only (up to its first digit, then the rest), so a
# long token that is not a number fails without trying every split of its digits.
NUMBER: Final = re.compile(
    rf"[(\[]?[{_SIGNS}]?[.,]*\d[\d.,]*(?:%|[-\u2013]\d[\d.,]*)?[)\]]?[,;*\u2020\u2021]?"
)
_WORD: Final = re.compile(r"[^\W\d_]{2,}")
_CAPTION: Final = re.compile(r"^\s*(?:fig(?:ure)?|tab(?:le)?|chart|plate)\.?\s*[A-Z]?\d", re.I)
# At most this many words on a number-run line (a row label such as "SummaC-NLI").
RUN_WORDS: Final = 4
# A label next to a number run: this many tokens at most, no sentence end.
LABEL_TOKENS: Final = 3


def _tokens(text: str) -> list[str]:
    return text.split()


def is_number_run(text: str) -> bool:
    """Whether ``text`` is a line of figures: half or more of its tokens numbers, at
    least two numbers or nothing but numbers, and few words."""
    tokens = _tokens(text)
    if not tokens or is_caption(text):
        return False
    numbers = sum(1 for token in tokens if NUMBER.fullmatch(token))
    words = sum(1 for token in tokens if _WORD.search(token) and not NUMBER.fullmatch(token))
    if numbers == len(tokens):
        return True
    return numbers >= 2 and numbers * 2 >= len(tokens) and words <= RUN_WORDS


def is_caption(text: str) -> bool:
    """Whether ``text`` opens a figure or table caption."""
    return bool(_CAPTION.match(text))


def _is_label(text: str) -> bool:
    tokens = _tokens(text)
    return (
        0 < len(tokens) <= LABEL_TOKENS
        and not text.rstrip().endswith((".", "!", "?", ":"))
        and not is_caption(text)
    )


def without_debris(lines: Sequence[SectionedLine]) -> list[SectionedLine]:
    """``lines`` without number runs and the short labels standing next to them."""
    runs = [is_number_run(item.line.text) for item in lines]
    kept: list[SectionedLine] = []
    for index, item in enumerate(lines):
        if runs[index]:
            continue
        beside_run = (index > 0 and runs[index - 1]) or (index + 1 < len(lines) and runs[index + 1])
        if beside_run and _is_label(item.line.text):
            continue
        kept.append(item)
    return kept
