"""The hard-coded request limits every toolset that fetches keeps.

They live in the bottom layer so the capability profile can report them without
loading the rate gate that enforces them (:mod:`doiget.net.ratelimit`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class RateLimits:
    """The papers-toolset limits. Take :data:`HARD_CODED`; nothing may loosen them."""

    max_concurrent_fetches: int
    max_fetches_per_second: float
    per_source_backoff_ms: int


HARD_CODED: Final = RateLimits(
    max_concurrent_fetches=5, max_fetches_per_second=5.0, per_source_backoff_ms=200
)
