"""The claim engine: what a source's sentences say about a claim.

:func:`assess` ranks every sentence of the source, and every two adjacent ones, by the
fitted candidate model (:mod:`doiget.claims.features`), keeps the best five that do not
overlap (a sentence joined with its neighbour when the two are likely one
rationale), marks as ``rationale`` those the model puts at or above its fitted threshold
(the rest are ``context`` shown for reading), says from the source model's calibrated
probability whether the source addresses the claim, and lists the cues where the best
evidence and the claim differ. CPU work: run it in the work pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from doiget.claims.contracts import MAX_EVIDENCE, Addressed, Cue, Evidence
from doiget.claims.cues import cues_between
from doiget.claims.encoder import SentenceEncoder, default_encoder, encoded
from doiget.claims.features import Candidate, measure, source_row
from doiget.claims.units import Unit
from doiget.claims.weights import probability, weights


@dataclass(frozen=True, slots=True)
class Assessment:
    """Whether a source addresses a claim, how sure that is, its evidence and cues."""

    addressed: Addressed
    confidence: float
    evidence: list[Evidence] = field(default_factory=list)
    cues: list[Cue] = field(default_factory=list)


def best_candidates(
    candidates: Sequence[Candidate], logits: Sequence[float], join_at: float
) -> list[tuple[Candidate, float]]:
    """The best sentences, best first, each with its logit. A sentence is shown with a
    free neighbour as one item when the two together are a rationale with probability
    ``join_at`` or more (a claim resting on both); no sentence is in two items."""
    windows: dict[int, tuple[Candidate, float]] = {}  # by the first of its two sentences
    singles: list[tuple[Candidate, float]] = []
    for candidate, logit in zip(candidates, logits, strict=True):
        if candidate.first == candidate.last:
            singles.append((candidate, logit))
        else:
            windows[candidate.first] = (candidate, logit)
    taken: set[int] = set()
    out: list[tuple[Candidate, float]] = []
    for single, logit in sorted(singles, key=lambda pair: -pair[1]):
        index = single.first
        if index in taken:
            continue
        joins = [
            (window, score)
            for window, score in filter(None, (windows.get(index - 1), windows.get(index)))
            if probability(score) >= join_at and {window.first, window.last}.isdisjoint(taken)
        ]
        shown = max(joins, key=lambda pair: pair[1])[0] if joins else single
        taken.update((shown.first, shown.last))
        out.append((shown, logit))
        if len(out) == MAX_EVIDENCE:
            break
    return out


def _evidence(
    units: Sequence[Unit], candidate: Candidate, score: float, rationale: bool
) -> Evidence:
    first, last = units[candidate.first], units[candidate.last]
    return Evidence(
        text=" ".join(unit.text for unit in units[candidate.first : candidate.last + 1]),
        score=round(score, 3),
        role="rationale" if rationale else "context",
        page=first.page,
        section=first.section,
        start=first.start,
        end=last.end,
    )


def assess(claim: str, units: Sequence[Unit], encoder: SentenceEncoder | None = None) -> Assessment:
    """What ``units`` (a source's sentences, in order) say about ``claim``; the packaged
    encoder weighs meaning when ``encoder`` is None."""
    if not units:
        return Assessment("not_addressed", 1.0)
    fitted = weights()
    query, vectors = encoded(claim, [unit.text for unit in units], encoder or default_encoder())
    candidates = measure(claim, units, vectors, query)
    logits = [fitted.candidate.logit(candidate.features) for candidate in candidates]
    chance = probability(fitted.source.logit(source_row(candidates, logits)))
    addressed: Addressed
    if chance < 0.5:
        addressed, confidence = "not_addressed", 1.0 - chance
    else:
        addressed = "addressed" if chance >= fitted.addressed else "partly"
        confidence = chance
    evidence = [
        _evidence(
            units,
            candidate,
            probability(logit),
            probability(logit) >= fitted.rationale or (rank == 0 and addressed != "not_addressed"),
        )
        for rank, (candidate, logit) in enumerate(best_candidates(candidates, logits, fitted.join))
    ]
    cues = (
        cues_between(claim, [item.text for item in evidence])
        if addressed != "not_addressed"
        else []
    )
    return Assessment(addressed, round(confidence, 3), evidence, cues)
