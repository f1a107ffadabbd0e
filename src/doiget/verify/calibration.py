"""A verdict's confidence: the share of verdicts right among those resting on the same
kind of evidence, read from ``data/calibration.json``.

The kind of evidence is read off the row itself (:func:`evidence`), so whoever holds
rows with known truth can refit the table (``benchmarks/reference_check.py`` does, on
one half of a labelled split, and measures the other half with it).
"""

from __future__ import annotations

import functools
from typing import Final

from doiget.verify.contracts import Row
from doiget.verify.text import data_file

# Problems that may come from an honest slip (an off-by-one year, a venue's other name,
# a list in another order) rather than from a made-up reference.
SOFT: Final = frozenset({"year_differs", "venue_differs", "venue_unknown", "authors_reordered"})


def evidence(row: Row) -> str:
    """The kind of evidence behind ``row``'s verdict, one of the table's keys."""
    if row.verdict == "verified":
        agreeing = len(row.match.sources) if row.match is not None else 0
        return "verified/agreed" if agreeing > 1 else "verified/one-source"
    if row.verdict == "miscited":
        kinds = {problem.kind for problem in row.problems}
        if kinds <= SOFT:
            return "miscited/soft"
        if kinds - SOFT == {"title_differs"}:
            return "miscited/title"
        return "miscited/hard"
    if row.verdict == "not_found":
        return "not_found/identifier" if row.problems else "not_found/searched"
    return "uncertain"


@functools.cache
def _table() -> dict[str, float]:
    table: dict[str, float] = data_file("calibration.json")["confidence"]
    return table


def calibrated(row: Row) -> Row:
    """``row`` with the confidence its kind of evidence earned."""
    return row.model_copy(update={"confidence": _table().get(evidence(row), 0.5)})
