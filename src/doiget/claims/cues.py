"""Where a claim and the best evidence for it differ: a number, a direction, a negation,
a hedge or the population studied.

Cues are information for the reader, never a verdict: a source may state 14 % and
40 % of different things. Each names the span of the claim and the span of the source
it compares.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from doiget.claims.contracts import Cue, CueKind

# Up to four words after a negation or hedge: enough to see what it bears on.
_FOLLOWING: Final = re.compile(r"(?:[^\S\n]+[^\s,;:.()]+){0,4}")
_NUMBER: Final = re.compile(
    r"(?<![\w.\-/])(?P<value>\d{1,3}(?:[ ,\u00a0\u202f]\d{3})+(?!\d)|\d+(?:\.\d+)?)"
    r"(?:\s*(?P<unit>%|percent\b|per cent\b|-?fold\b|times\b|million\b|billion\b|thousand\b"
    r"|mg\b|kg\b|g\b|ng\b|µg\b|ml\b|mmhg\b|mmol\b|mm\b|cm\b|km\b|m\b|years?\b|months?\b|weeks?\b|days?\b|hours?\b"
    r"|h\b|min\b))?(?![\w\-])",
    re.IGNORECASE,
)
_SCALE: Final = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_KIND: Final = {
    "%": "%",
    "percent": "%",
    "per cent": "%",
    "fold": "fold",
    "-fold": "fold",
    "times": "fold",
}

# Two axes of direction: an amount (more / less of something) and a quality (better / worse).
_DIRECTIONS: Final = {
    ("amount", "up"): r"increas\w*|higher|greater|more|elevat\w*|ris(?:e|es|ing)|rose|rais\w*"
    r"|up-?regulat\w*|enhanc\w*|promot\w*|induc\w*|activat\w*|accelerat\w*|augment\w*"
    r"|boost\w*|stimulat\w*|larger|longer|exceed\w*",
    ("amount", "down"): r"decreas\w*|lower\w*|less|fewer|reduc\w*|down-?regulat\w*|inhibit\w*"
    r"|suppress\w*|declin\w*|drop\w*|diminish\w*|attenuat\w*|slow\w*|smaller|shorter"
    r"|block\w*|los(?:s|e|es|t)|prevent\w*",
    ("quality", "up"): r"improv\w*|better|benefi\w*|protect\w*",
    ("quality", "down"): r"worse\w*|worsen\w*|impair\w*|deteriorat\w*|harm\w*|exacerbat\w*",
}
_NEGATION: Final = re.compile(
    r"\b(?:(?:did|does|do|was|were|is|are|has|have|had)\s+not|not|no|never|neither|nor|none|cannot|can't|didn't|doesn't|don't|isn't|aren't"
    r"|wasn't|weren't|fail(?:s|ed)? to|lack(?:s|ed)?|unable|non-?significant\w*"
    r"|insignificant\w*)\b",
    re.IGNORECASE,
)
# "may" only in lower case: "May 2-6" is a date.
_HEDGE: Final = re.compile(
    r"\b(?:may|(?i:might|could|suggest\w*|possibl\w*|potential(?:ly)?|likely|unlikely|perhaps"
    r"|appears? to|seems? to|hypothes\w*|putative\w*|presumabl\w*|speculat\w*))\b"
)
_HUMANS: Final = re.compile(
    r"\b(?:humans?|patients?|people|persons?|adults?|child(?:ren)?|infants?|women|men"
    r"|individuals|participants|volunteers|subjects)\b",
    re.IGNORECASE,
)
_MODELS: Final = re.compile(
    r"\b(?:mice|mouse|murine|rats?|rodents?|animals?|in vitro|cell lines?|cell cultures?"
    r"|cultured|zebrafish|drosophila|yeast|worms|c\. elegans|pigs?|porcine|dogs?|canine"
    r"|primates?|monkeys?|macaques?|rabbits?|bovine|xenografts?|organoids?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Number:
    value: float
    kind: str  # "%", "fold", a unit, or "" for a bare number
    span: str


def _numbers(text: str) -> Iterator[_Number]:
    for match in _NUMBER.finditer(text):
        digits = re.sub(r"[ ,\u00a0\u202f]", "", match["value"])
        unit = (match["unit"] or "").lower()
        value = float(digits) * _SCALE.get(unit, 1.0)
        kind = "" if unit in _SCALE else _KIND.get(unit, unit.rstrip("s"))
        yield _Number(value, kind, match.group(0).strip())


def _phrase(text: str, match: re.Match[str]) -> str:
    """The matched words and up to a few words after them, within the clause."""
    rest = _FOLLOWING.match(text, match.end())
    return (match.group(0) + (rest.group(0) if rest else "")).strip()


def _number_cues(claim: str, source: str) -> Iterator[tuple[str, str]]:
    found = list(_numbers(source))
    for stated in _numbers(claim):
        same_kind = [number for number in found if number.kind == stated.kind]
        if same_kind and all(
            abs(n.value - stated.value) > 1e-9 * max(1.0, abs(stated.value)) for n in same_kind
        ):
            yield stated.span, same_kind[0].span


def _directions(text: str) -> dict[tuple[str, str], re.Match[str]]:
    out: dict[tuple[str, str], re.Match[str]] = {}
    for key, words in _DIRECTIONS.items():
        match = re.search(rf"\b(?:{words})\b", text, re.IGNORECASE)
        if match:
            out[key] = match
    return out


def _direction_cues(claim: str, source: str) -> Iterator[tuple[str, str]]:
    stated, found = _directions(claim), _directions(source)
    for (axis, way), match in stated.items():
        other = "down" if way == "up" else "up"
        if (axis, other) in found and (axis, way) not in found and (axis, other) not in stated:
            yield match.group(0), found[axis, other].group(0)


def _one_sided(claim: str, source: str, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """The spans when ``pattern`` is in the source and not in the claim."""
    match = pattern.search(source)
    if match is None or pattern.search(claim):
        return None
    return claim.strip(), _phrase(source, match)


def _negation_cue(claim: str, source: str) -> tuple[str, str] | None:
    """A negation on one side only (the source denies, or the claim denies)."""
    spans = _one_sided(claim, source, _NEGATION)
    if spans is not None:
        return spans
    reverse = _one_sided(source, claim, _NEGATION)
    return (reverse[1], reverse[0]) if reverse else None


def _population_cue(claim: str, sources: Sequence[str]) -> tuple[int, tuple[str, str]] | None:
    """Who the claim is about against who was studied, read from the first evidence
    item that names anyone (the best evidence often states a result, the population
    stands in the sentence describing the study)."""
    for index, source in enumerate(sources):
        if not (_HUMANS.search(source) or _MODELS.search(source)):
            continue
        for stated, studied in ((_HUMANS, _MODELS), (_MODELS, _HUMANS)):
            said, found = stated.search(claim), studied.search(source)
            if said and found and not stated.search(source):
                return index, (said.group(0), found.group(0))
        return None
    return None


def cues_between(claim: str, evidence: Sequence[str]) -> list[Cue]:
    """Every cue where the evidence (best first) differs from ``claim``: the best item
    for numbers, direction, negation and hedges, the first naming anyone for the
    population."""
    if not evidence:
        return []
    best = evidence[0]
    spans: list[tuple[CueKind, tuple[str, str] | None]] = [
        *(("number", pair) for pair in _number_cues(claim, best)),
        *(("direction", pair) for pair in _direction_cues(claim, best)),
        ("negation", _negation_cue(claim, best)),
        ("certainty", _one_sided(claim, best, _HEDGE)),
    ]
    cues = [
        Cue(kind=kind, claim_span=pair[0], source_span=pair[1], evidence=0)
        for kind, pair in spans
        if pair is not None
    ]
    population = _population_cue(claim, evidence)
    if population is not None:
        index, (said, found) = population
        cues.append(Cue(kind="population", claim_span=said, source_span=found, evidence=index))
    return cues
