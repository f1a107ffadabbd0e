"""A short-lived answer cache, so an agent repeating a call spends no upstream budget.

Keys hold the operation and every parameter that shapes its answer; only answers
are kept, never failures, so a retry after an error always reaches the upstream.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Final, TypeVar

from cachetools import TTLCache

from doiget import metrics

T = TypeVar("T")

MAX_ENTRIES: Final = 512


class AnswerCache:
    """Answers kept for ``ttl`` seconds (0: nothing is kept), at most ``max_entries``."""

    def __init__(
        self,
        ttl: float,
        *,
        max_entries: int = MAX_ENTRIES,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: TTLCache[tuple[Hashable, ...], Any] | None = (
            TTLCache(maxsize=max_entries, ttl=ttl, timer=timer) if ttl > 0 else None
        )

    async def get_or_fetch(self, key: tuple[Hashable, ...], fetch: Callable[[], Awaitable[T]]) -> T:
        """The kept answer for ``key``, else ``await fetch()`` (kept when it succeeds)."""
        if self._entries is None:
            return await fetch()
        if key in self._entries:
            metrics.count("cache_lookups", cache="scholar", result="hit")
            kept: T = self._entries[key]
            return kept
        metrics.count("cache_lookups", cache="scholar", result="miss")
        answer = await fetch()
        self._entries[key] = answer
        return answer

    def __len__(self) -> int:
        return len(self._entries) if self._entries is not None else 0
