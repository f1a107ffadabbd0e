"""Claim support on SciFact: evidence, ``addressed`` and cues, through the public engine.

    python benchmarks/claim_support.py --scifact PATH

PATH is the folder of SciFact's ``claims_train.jsonl`` and ``corpus_sentences.jsonl``
(CC BY-NC 2.0: read from there, never copied). Each (claim, cited abstract) pair is
checked by :func:`doiget.claims.evidence.assess` with the abstract's given sentences as
units (so SciFact's rationale indexes are unit positions), and measured on two parts:
``fit`` (the 80 % of claims the shipped weights were fitted on) and ``held_out`` (the
20 % the fit never saw; the honest row). Sentence vectors are cached in a temp file.

- recall@3: per pair with a rationale, the gold sentences among the first three
  distinct sentences of the evidence (a two-sentence item counts as two), over
  min(3, gold sentences); averaged.
- top-1: the first evidence item holds a gold sentence.
- selection P / R / F1 (SciFact's selection-only measure with oracle abstracts): the
  sentences of ``rationale`` items of an ``addressed`` or ``partly`` answer; a
  selected sentence is right when its whole gold rationale is selected.
- AUC, accuracy: pairs with a rationale against pairs without, ranked by the
  probability of ``addressed`` (the confidence, or 1 - confidence of
  ``not_addressed``); accuracy of ``addressed``/``partly`` vs ``not_addressed``.
- ECE: expected calibration error of ``confidence`` (10 equal-width bins).
- cue precision: of labelled pairs (SUPPORT or CONTRADICT) where a cue fires, the
  share labelled CONTRADICT (base rate printed beside it); cue rate on SUPPORT: the
  share of SUPPORT pairs where one fires.
- baselines on the same pairs: recall@3 of BM25 alone and MiniLM cosine alone.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import rankdata
from smoke import FIXTURES, parse_args

sys.path.insert(0, str(Path(__file__).parent))

import scifact_pairs

from doiget.claims.encoder import SentenceEncoder
from doiget.claims.evidence import Assessment, assess
from doiget.claims.features import CANDIDATE_FEATURES

BINS = 10


@dataclass(frozen=True, slots=True)
class Checked:
    pair: scifact_pairs.Pair
    assessment: Assessment
    items: list[list[int]]  # the sentence indexes of each evidence item, in order


def _items(pair: scifact_pairs.Pair, assessment: Assessment) -> list[list[int]]:
    units = scifact_pairs.units(pair)
    return [
        [
            i
            for i, unit in enumerate(units)
            if item.start is not None
            and item.end is not None
            and unit.start is not None
            and item.start <= unit.start
            and unit.end is not None
            and unit.end <= item.end
        ]
        for item in assessment.evidence
    ]


def _recall(ranked: Sequence[int], gold: frozenset[int]) -> float:
    top: list[int] = []
    for index in ranked:
        if index not in top:
            top.append(index)
        if len(top) == 3:
            break
    return len(gold & set(top)) / min(3, len(gold))


def _auc(truth: np.ndarray, score: np.ndarray) -> float:
    """The chance a random positive outranks a random negative (ties count half)."""
    ranks = rankdata(score)
    positives = int(truth.sum())
    negatives = len(truth) - positives
    return float((ranks[truth].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def _ece(confidence: np.ndarray, right: np.ndarray) -> float:
    total = 0.0
    for low in np.linspace(0, 1, BINS, endpoint=False):
        inside = (confidence >= low) & (confidence < low + 1 / BINS + (1e-9 if low >= 0.9 else 0))
        if inside.any():
            total += inside.mean() * abs(confidence[inside].mean() - right[inside].mean())
    return float(total)


def _row(name: str, checked: Sequence[Checked]) -> dict[str, str]:
    with_gold = [c for c in checked if c.pair.rationales]
    recall = np.mean(
        [_recall([i for item in c.items for i in item], c.pair.gold) for c in with_gold]
    )
    top1 = np.mean([bool(c.items and set(c.items[0]) & c.pair.gold) for c in with_gold])
    hits = selected = gold = 0
    for c in checked:
        gold += len(c.pair.gold)
        if c.assessment.addressed == "not_addressed":
            continue
        picked = {
            i
            for item, evidence in zip(c.items, c.assessment.evidence, strict=True)
            if evidence.role == "rationale"
            for i in item
        }
        selected += len(picked)
        hits += sum(len(r) for r in c.pair.rationales if r <= picked)
    precision, recall_sel = hits / max(1, selected), hits / max(1, gold)
    f1 = 2 * precision * recall_sel / (precision + recall_sel) if precision + recall_sel else 0.0
    truth = np.array([bool(c.pair.rationales) for c in checked])
    said = np.array([c.assessment.addressed != "not_addressed" for c in checked])
    confidence = np.array([c.assessment.confidence for c in checked])
    chance = np.where(said, confidence, 1 - confidence)
    labelled = [c for c in checked if c.pair.label]
    cued = [c for c in labelled if c.assessment.cues]
    support = [c for c in labelled if c.pair.label == "SUPPORT"]
    contradict_rate = np.mean([c.pair.label == "CONTRADICT" for c in labelled])
    return {
        "part": name,
        "pairs": str(len(checked)),
        "recall@3": f"{recall:.3f}",
        "top-1": f"{top1:.3f}",
        "sel P": f"{precision:.3f}",
        "sel R": f"{recall_sel:.3f}",
        "sel F1": f"{f1:.3f}",
        "AUC": f"{_auc(truth, chance):.3f}",
        "accuracy": f"{np.mean(said == truth):.3f}",
        "ECE": f"{_ece(confidence, said == truth):.3f}",
        "cue precision": (
            f"{np.mean([c.pair.label == 'CONTRADICT' for c in cued]):.3f} "
            f"(base {contradict_rate:.3f})"
            if cued
            else "-"
        ),
        "cue rate SUPPORT": f"{np.mean([bool(c.assessment.cues) for c in support]):.3f}",
    }


def _baselines(name: str, pairs: Sequence[scifact_pairs.Pair], encoder: SentenceEncoder) -> str:
    cosine, bm25 = CANDIDATE_FEATURES.index("cosine"), CANDIDATE_FEATURES.index("bm25_log")
    scores: dict[str, list[float]] = {"BM25": [], "MiniLM cosine": []}
    for pair in pairs:
        if not pair.rationales:
            continue
        singles = [c for c in scifact_pairs.measured(pair, encoder) if c.first == c.last]
        for label, column in (("BM25", bm25), ("MiniLM cosine", cosine)):
            ranked = sorted(singles, key=lambda c, k=column: -c.features[k])
            scores[label].append(_recall([c.first for c in ranked], pair.gold))
    return f"{name}: " + ", ".join(
        f"{label} recall@3 {np.mean(v):.3f}" for label, v in scores.items()
    )


def _cue_kinds(checked: Sequence[Checked]) -> str:
    fired: Counter[str] = Counter()
    contradict: Counter[str] = Counter()
    for c in checked:
        if not c.pair.label:
            continue
        for kind in {cue.kind for cue in c.assessment.cues}:
            fired[kind] += 1
            contradict[kind] += c.pair.label == "CONTRADICT"
    return ", ".join(f"{kind} {contradict[kind]}/{fired[kind]}" for kind in sorted(fired))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scifact", type=Path)
    parser.add_argument("--misses", type=int, default=0, help="show this many held-out misses")
    args = parse_args(parser, ("scifact",), scifact=FIXTURES / "scifact_tiny")
    every = scifact_pairs.pairs(args.scifact)
    encoder = scifact_pairs.warmed_encoder(every)
    checked = [
        Checked(pair, result, _items(pair, result))
        for pair in every
        for result in [assess(pair.claim, scifact_pairs.units(pair), encoder)]
    ]
    rows = [_row(part, [c for c in checked if c.pair.part == part]) for part in ("fit", "held_out")]
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(row[c] for c in columns) + " |")
    print()
    for part in ("fit", "held_out"):
        print(_baselines(part, [p for p in every if p.part == part], encoder))
    held = [c for c in checked if c.pair.part == "held_out"]
    print(f"held_out cues (CONTRADICT/fired, labelled pairs): {_cue_kinds(held)}")
    for line in _misses(held, args.misses):
        print(line)


def _misses(checked: Sequence[Checked], count: int) -> list[str]:
    """The first ``count`` held-out pairs whose top evidence holds no gold sentence, and
    the first ``count`` whose ``addressed`` is wrong."""
    ranked = [c for c in checked if c.pair.rationales and not (set(c.items[0]) & c.pair.gold)]
    answered = [
        c for c in checked if (c.assessment.addressed != "not_addressed") != bool(c.pair.rationales)
    ]
    lines: list[str] = []
    for c in ranked[:count]:
        gold = " / ".join(c.pair.sentences[i] for i in sorted(c.pair.gold))
        lines += [f"\nMISSED  claim: {c.pair.claim}", f"  gold: {gold}"]
        lines.append(f"  first: {c.assessment.evidence[0].text}")
    for c in answered[:count]:
        lines.append(
            f"\nWRONG {c.assessment.addressed} ({c.assessment.confidence}, gold "
            f"{c.pair.label or 'not addressed'})  claim: {c.pair.claim}"
        )
        lines.append(f"  first: {c.assessment.evidence[0].text}")
    return lines


if __name__ == "__main__":
    main()
