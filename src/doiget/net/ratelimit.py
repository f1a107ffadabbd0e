"""The request gate: at most 5 requests in flight to one host, 5 per second in
total, 200 ms between two requests to one source, and the stricter ceilings
upstreams declare.

The limits are constants (:data:`~doiget.upstreams.limits.HARD_CODED` and each
upstream's declared ceiling); nothing a caller passes can loosen them.
A request waits for its turn; it is never dropped. The turn is taken at the moment
the request's headers go on the wire (see :mod:`doiget.net.transport`), not when a
connection starts to open, so the spacing an upstream sees is the spacing enforced
here even when one request had to wait for a TLS handshake and another did not.

In-flight places are counted per host, so a slow or hung host only ever delays
requests to itself; the per-second and per-source limits count request starts and
live in a :mod:`~doiget.net.budget` that every doiget process sharing a data
directory (or a Redis server) shares.

Every wait here is inside :func:`~doiget.net.deadline.at_gate`: time queued behind
doiget's own limits is charged neither to the request's time limit nor to its
call's deadline.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio

from doiget import metrics
from doiget.net.budget import Budget, LocalBudget
from doiget.net.deadline import at_gate
from doiget.upstreams import find
from doiget.upstreams.limits import HARD_CODED

# Added to every window and gap, so that scheduling jitter between the moment a
# request is released here and the moment the upstream stamps its arrival never
# shows the upstream a breach.
CLOCK_MARGIN_S: Final = 0.025

_HEADERS_DONE: Final = frozenset(
    {"http11.send_request_headers.complete", "http11.send_request_headers.failed"}
)


def min_gap_seconds(source: str, *, keyed: bool = False) -> float:
    """Minimum seconds between two requests to ``source``: the per-source gap, or the
    stricter ceiling its upstream declares (the keyed one when a key is configured)."""
    upstream = find(source)
    ceiling = upstream.gap_seconds(keyed=keyed) if upstream is not None else 0.0
    return max(HARD_CODED.per_source_backoff_ms / 1000, ceiling)


class RateLimiter:
    """One per process: every source client shares it.

    A request passes in three steps (see :meth:`turn`): it queues behind the earlier
    requests of its own source until that source's gap has passed, takes one of its
    host's five in-flight places, and, as its headers are about to be sent, waits
    for the shared budget to allow a start. Queuing per source first means a slow
    source (arXiv's 3 s) never holds places that other sources could use.
    """

    def __init__(
        self, keyed_sources: frozenset[str] = frozenset(), budget: Budget | None = None
    ) -> None:
        self._keyed = keyed_sources
        self._budget: Budget = budget or LocalBudget()
        self._in_flight: dict[str, anyio.Semaphore] = {}
        self._source_locks: dict[str, anyio.Lock] = {}
        self._last_start: dict[str, float] = {}
        # Until when (monotonic) an upstream asked not to be sent requests (Backoff).
        self._held_until: dict[str, float] = {}

    def hold(self, source: str, seconds: float) -> None:
        """Start no request to ``source`` for ``seconds`` (the upstream said Backoff)."""
        until = time.monotonic() + seconds
        self._held_until[source] = max(self._held_until.get(source, 0.0), until)

    def held_for(self, source: str) -> float:
        """Seconds left before ``source`` may be sent a request again (0 when not held)."""
        return max(0.0, self._held_until.get(source, 0.0) - time.monotonic())

    @asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold one of ``host``'s in-flight places for the life of a request and its
        body (a slow body holds a place of its own host only)."""
        places = self._in_flight.setdefault(
            host.lower(), anyio.Semaphore(HARD_CODED.max_concurrent_fetches)
        )
        with at_gate():
            await places.acquire()
        try:
            yield
        finally:
            places.release()

    @asynccontextmanager
    async def turn(self, source: str) -> AsyncIterator[Turn]:
        """Queue behind ``source``'s earlier requests; yield the turn to start on send."""
        lock = self._source_locks.setdefault(source, anyio.Lock())
        with at_gate():
            await lock.acquire()
        turn = Turn(self, source, lock)
        try:
            last = self._last_start.get(source)
            ready = self._held_until.get(source, 0.0)
            if last is not None:
                ready = max(ready, last + self._gap(source))
            with at_gate():
                await _sleep_until(ready)
            yield turn
        finally:
            turn.release()

    def _gap(self, source: str) -> float:
        return min_gap_seconds(source, keyed=source in self._keyed) + CLOCK_MARGIN_S

    async def _start(self, source: str) -> None:
        began = time.monotonic()
        with at_gate():
            await self._wait_for_budget(source)
        metrics.observe("rate_limit_wait_seconds", time.monotonic() - began, source=source)

    async def _wait_for_budget(self, source: str) -> None:
        # No lock across sources: a request waiting out its source's gap (another
        # process started one to it) must not hold back a request to another source
        # that the budget would let start now. Each try is atomic in its budget.
        window = 1.0 + CLOCK_MARGIN_S
        limit = int(HARD_CODED.max_fetches_per_second)
        gap = self._gap(source)
        while (wait := await self._budget.try_start(source, gap, limit, window)) > 0:
            await anyio.sleep(wait)
        self._last_start[source] = time.monotonic()

    async def _sent(self, source: str) -> None:
        await self._budget.sent(source)


class Turn:
    """One request's passage through the gate; :meth:`trace` is its httpcore hook."""

    def __init__(self, limiter: RateLimiter, source: str, lock: anyio.Lock) -> None:
        self._limiter = limiter
        self._source = source
        self._lock: anyio.Lock | None = lock
        self._started = False

    async def trace(self, event: str, info: dict[str, object]) -> None:
        """httpcore ``trace`` extension: take the turn just before headers are sent,
        and say when they were (see :mod:`doiget.net.budget`). Headers that failed
        part way may have reached the upstream, so they count as sent then too."""
        if event == "http11.send_request_headers.started" and self._lock is not None:
            await self._limiter._start(self._source)
            self._started = True
            self.release()
        elif event in _HEADERS_DONE and self._started:
            self._started = False
            await self._limiter._sent(self._source)

    def release(self) -> None:
        """Let the source's next request queue up (idempotent)."""
        if self._lock is not None:
            self._lock.release()
            self._lock = None


async def _sleep_until(deadline: float) -> None:
    delay = deadline - time.monotonic()
    if delay > 0:
        await anyio.sleep(delay)
