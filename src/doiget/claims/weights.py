"""The fitted numbers of the claim engine, read from ``data/claim_weights.json``.

Two logistic models: one (on its features and their pairwise products) scores a
candidate passage as the claim's rationale; the other says, from the best passage, how
likely the source addresses the claim at all (its probability is calibrated: of sources given 0.8,
about 80 % address the claim). How they were fitted is recorded in the file.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any


def expanded(z: Sequence[float], quadratic: bool) -> list[float]:
    """``z`` and, for a quadratic model, every product ``z[i] * z[j]`` with ``i <= j``."""
    out = list(z)
    if quadratic:
        out += [z[i] * z[j] for i in range(len(z)) for j in range(i, len(z))]
    return out


@dataclass(frozen=True, slots=True)
class Logistic:
    """A logistic model on standardised features ``z = (x - mean) / scale``: the logit
    is ``bias + w . expanded(z)`` (the features, and their pairwise products when
    ``quadratic``)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    quadratic: bool

    @classmethod
    def of(cls, data: dict[str, Any]) -> Logistic:
        return cls(
            tuple(data["features"]),
            tuple(data["mean"]),
            tuple(data["scale"]),
            tuple(data["weights"]),
            float(data["bias"]),
            bool(data["quadratic"]),
        )

    def standardised(self, row: Sequence[float]) -> list[float]:
        return [(x - m) / s for x, m, s in zip(row, self.mean, self.scale, strict=True)]

    def logit(self, row: Sequence[float]) -> float:
        terms = expanded(self.standardised(row), self.quadratic)
        return self.bias + sum(w * t for w, t in zip(self.weights, terms, strict=True))


def probability(logit: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, logit))))


@dataclass(frozen=True, slots=True)
class Weights:
    """The engine's fitted numbers and thresholds."""

    candidate: Logistic
    source: Logistic
    rationale: float  # a candidate at or above this probability is a rationale
    addressed: float  # a source at or above this probability is addressed, else partly
    join: float  # two adjacent sentences at or above this probability are one item


@functools.cache
def weights() -> Weights:
    text = resources.files("doiget.claims").joinpath("data/claim_weights.json").read_text("utf-8")
    data = json.loads(text)
    return Weights(
        Logistic.of(data["candidate"]),
        Logistic.of(data["source"]),
        float(data["thresholds"]["rationale"]),
        float(data["thresholds"]["addressed"]),
        float(data["thresholds"]["join"]),
    )
