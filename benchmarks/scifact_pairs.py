"""SciFact's (claim, cited abstract) pairs for the claim support benchmark and its fit.

The data (CC BY-NC 2.0) is read from the folder it is given and never copied here. A
pair's part is fixed by its claim's id: ``fit`` for the 80 % whose hash falls below
0.8, ``held_out`` for the rest, so the fit never sees a held-out claim.

Sentence vectors are cached in a temp file (keyed by the texts), since encoding the
cited abstracts takes minutes on a small machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from doiget.claims.encoder import SentenceEncoder, default_encoder, encoded
from doiget.claims.features import Candidate, measure
from doiget.claims.units import Unit

Part = Literal["fit", "held_out"]
FIT_SHARE = 0.8
CACHE = Path(tempfile.gettempdir()) / "doiget-scifact-vectors.npz"


@dataclass(frozen=True, slots=True)
class Pair:
    """A claim and one abstract it cites, with SciFact's answer for it."""

    claim_id: int
    claim: str
    sentences: tuple[str, ...]
    label: str | None  # SUPPORT, CONTRADICT, or None: the abstract does not address it
    rationales: tuple[frozenset[int], ...]  # each gold rationale's sentence indexes
    part: Part

    @property
    def gold(self) -> frozenset[int]:
        return frozenset().union(*self.rationales)


def part_of(claim_id: int) -> Part:
    digest = hashlib.sha256(f"scifact-claim-{claim_id}".encode()).digest()
    return "fit" if int.from_bytes(digest[:8], "big") / 2**64 < FIT_SHARE else "held_out"


def pairs(folder: Path) -> list[Pair]:
    """Every (claim, cited abstract) pair of the training claims, in file order."""
    corpus: dict[int, tuple[str, ...]] = {}
    with (folder / "corpus_sentences.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            corpus[int(record["doc_id"])] = tuple(s.strip() for s in record["sentences"])
    out: list[Pair] = []
    with (folder / "claims_train.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            for doc_id in record["cited_doc_ids"]:
                if int(doc_id) not in corpus:
                    continue
                sets = record["evidence"].get(str(doc_id), [])
                out.append(
                    Pair(
                        claim_id=int(record["id"]),
                        claim=record["claim"],
                        sentences=corpus[int(doc_id)],
                        label=sets[0]["label"] if sets else None,
                        rationales=tuple(frozenset(s["sentences"]) for s in sets),
                        part=part_of(int(record["id"])),
                    )
                )
    return out


def units(pair: Pair) -> list[Unit]:
    """The abstract's given sentences as units with offsets into their join by spaces
    (SciFact's sentence indexes are the units' positions)."""
    out: list[Unit] = []
    offset = 0
    for sentence in pair.sentences:
        out.append(Unit(sentence, start=offset, end=offset + len(sentence)))
        offset += len(sentence) + 1
    return out


class CachedEncoder:
    """The packaged encoder, remembering every vector in :data:`CACHE`."""

    def __init__(self) -> None:
        self._inner = default_encoder()
        self._vectors: dict[str, NDArray[np.float32]] = {}
        if CACHE.exists():
            with np.load(CACHE, allow_pickle=False) as stored:
                self._vectors = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))

    def warm(self, texts: Sequence[str]) -> None:
        missing = sorted({text for text in texts if text not in self._vectors})
        if missing:
            for text, vector in zip(missing, self._inner.encode(missing), strict=True):
                self._vectors[text] = vector
            self._save()

    def _save(self) -> None:
        texts = list(self._vectors)
        fd, name = tempfile.mkstemp(dir=CACHE.parent, suffix=".npz")
        with os.fdopen(fd, "wb") as handle:
            np.savez(
                handle, texts=np.array(texts), vectors=np.stack([self._vectors[t] for t in texts])
            )
        Path(name).replace(CACHE)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.warm(texts)
        return np.stack([self._vectors[text] for text in texts])


def warmed_encoder(all_pairs: Sequence[Pair]) -> SentenceEncoder:
    """An encoder that already holds every claim's and sentence's vector."""
    encoder = CachedEncoder()
    encoder.warm([p.claim for p in all_pairs] + [s for p in all_pairs for s in p.sentences])
    return encoder


def measured(pair: Pair, encoder: SentenceEncoder) -> list[Candidate]:
    """The engine's candidates of ``pair``'s abstract for its claim."""
    sentences = units(pair)
    query, vectors = encoded(pair.claim, [unit.text for unit in sentences], encoder)
    return measure(pair.claim, sentences, vectors, query)
