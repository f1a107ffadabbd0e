"""Helpers for tests that drive the real network layer against the replay upstream."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpcore
import pytest

from doiget.config import load_settings
from doiget.errors import DoigetError
from doiget.net.client import RetryPolicy
from doiget.net.network import Network

# Real backoff shape, shorter base: keeps retry tests quick without changing logic.
FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.05, max_wait=60.0)


class CountingBackend(httpcore.AnyIOBackend):
    """The real socket backend, counting the connections it is asked to open."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []

    async def connect_tcp(self, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        self.attempts.append((host, port))
        return await super().connect_tcp(host, port, *args, **kwargs)


def make_network(
    env: dict[str, str],
    *,
    backend: httpcore.AsyncNetworkBackend | None = None,
    retry: RetryPolicy = FAST_RETRY,
) -> Network:
    """A Network built from ``env`` exactly as the program builds it."""
    return Network(load_settings(env), retry=retry, inner_backend=backend)


def breaches_of_window(times: Iterable[float], limit: int, window: float) -> int:
    """How many times more than ``limit`` requests started within ``window`` seconds."""
    ordered = sorted(times)
    return sum(1 for i in range(len(ordered) - limit) if ordered[i + limit] - ordered[i] < window)


def min_gap(times: Iterable[float]) -> float:
    """The smallest gap between two consecutive times (inf for fewer than two)."""
    ordered = sorted(times)
    gaps = [b - a for a, b in itertools.pairwise(ordered)]
    return min(gaps, default=float("inf"))


async def raised(network: Network, request: Callable[[Network], Awaitable[object]]) -> DoigetError:
    """The error ``request`` raises on ``network`` (which is closed afterwards)."""
    try:
        with pytest.raises(DoigetError) as caught:
            await request(network)
    finally:
        await network.aclose()
    return caught.value
