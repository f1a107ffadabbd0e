"""A circuit breaker per search provider.

Closed: calls go through; three failures in a row open it. A 429 opens it at once.
Open: calls are refused for about 30 s (jittered so several processes do not probe
in step). Half-open: one probe call goes through; success closes the breaker, failure
opens it again.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from enum import StrEnum
from typing import Final

FAILURES_TO_OPEN: Final = 3
OPEN_SECONDS: Final = 30.0
JITTER: Final = 0.2  # up to +20 % on the open period


class State(StrEnum):
    """Where a breaker stands."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """One provider's breaker. ``clock`` and ``jitter`` are injectable for tests."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._clock = clock
        self._jitter = jitter
        self._failures = 0
        self._open_until: float | None = None
        self._probing = False

    @property
    def state(self) -> State:
        """Closed, open, or half-open (open period over, probe not yet settled)."""
        if self._open_until is None:
            return State.CLOSED
        if self._clock() < self._open_until:
            return State.OPEN
        return State.HALF_OPEN

    def retry_in(self) -> float:
        """Seconds until an open breaker lets a probe through (0 when not open)."""
        if self._open_until is None:
            return 0.0
        return max(0.0, self._open_until - self._clock())

    def allow(self) -> bool:
        """Whether a call may go now; in half-open state only one probe at a time."""
        state = self.state
        if state is State.CLOSED:
            return True
        if state is State.OPEN or self._probing:
            return False
        self._probing = True
        return True

    def healthy(self) -> bool:
        """Whether the provider would be tried now (closed, or ready for a probe)."""
        return self.state is State.CLOSED or (self.state is State.HALF_OPEN and not self._probing)

    def succeeded(self) -> None:
        """A call went well: close."""
        self._failures = 0
        self._open_until = None
        self._probing = False

    def failed(self, *, rate_limited: bool = False) -> None:
        """A call failed; the third failure in a row, a 429 or a failed probe opens."""
        self._failures += 1
        if rate_limited or self._probing or self._failures >= FAILURES_TO_OPEN:
            self._open_until = self._clock() + OPEN_SECONDS * (1 + JITTER * self._jitter())
            self._probing = False


# The breakers of the providers routed in this process, by provider name: what
# ``doiget_capability_profile`` reports as a provider's health.
_ROUTED: dict[str, CircuitBreaker] = {}


def watch(name: str, breaker: CircuitBreaker) -> CircuitBreaker:
    """Record ``breaker`` as provider ``name``'s, for :func:`provider_healthy`."""
    _ROUTED[name] = breaker
    return breaker


def provider_healthy(name: str) -> bool:
    """Whether provider ``name`` would be tried now (true until a breaker says not)."""
    breaker = _ROUTED.get(name)
    return breaker is None or breaker.healthy()
