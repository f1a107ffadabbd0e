"""Where the request budget is kept: in this process, in a file every doiget process
on this machine shares, or in Redis for several machines.

A budget answers one question atomically: may a request to ``key`` start now, given
at most ``limit`` starts in any ``window`` seconds and ``gap`` seconds since the
last start to that key? If so the start is recorded; if not, it says how long to
wait. Times are wall-clock seconds, so that separate processes agree on them.

A start is granted a moment before the request's headers go out; a busy process
may send them a little later. So once they are sent, :meth:`Budget.sent` moves the
key's last start, and that request's own start in the window, to that moment: another
process's next start then counts its gap and its window from when the upstream
really saw the request. The start moved is the one this budget granted, never
merely the newest: another process may have started a request meanwhile, and moving
that one instead would leave this request counted from its grant.
"""

from __future__ import annotations

import bisect
import contextlib
import fcntl
import json
import logging
import os
import time
from collections import deque
from pathlib import Path
from typing import Any, Final, Generic, Protocol, TypeVar

logger = logging.getLogger("doiget.net")

T = TypeVar("T")

# Starts older than this are forgotten (longer than any window or gap in use).
_MEMORY_SECONDS: Final = 120.0


class Budget(Protocol):
    """A request budget (see the module)."""

    async def try_start(self, key: str, gap: float, limit: int, window: float) -> float:
        """Record a start and return 0, or return the seconds to wait first."""

    async def sent(self, key: str) -> None:
        """The request that started last to ``key`` has now sent its headers."""


def _wait(
    starts: list[float] | deque[float],
    last: float | None,
    now: float,
    gap: float,
    limit: int,
    window: float,
) -> float:
    """Seconds before a start is allowed (0 when it is allowed now)."""
    recent = [start for start in starts if start > now - window]
    wait = 0.0
    if last is not None:
        wait = max(wait, last + gap - now)
    if len(recent) >= limit:
        wait = max(wait, recent[-limit] + window - now)
    return wait


class _Pending(Generic[T]):
    """What names each start this process was granted whose headers are not yet
    sent, per key, oldest first (requests to one key send their headers in the order
    they start)."""

    def __init__(self) -> None:
        self._pending: dict[str, deque[T]] = {}

    def add(self, key: str, start: T) -> None:
        self._pending.setdefault(key, deque()).append(start)

    def pop(self, key: str) -> T | None:
        pending = self._pending.get(key)
        if not pending:
            return None
        start = pending.popleft()
        if not pending:
            del self._pending[key]
        return start


def _note_sent(key: str, now: float) -> None:
    """Log the moment the budget now holds for a request's start (the record that
    shows, beside an upstream's own stamps, that the limits were kept)."""
    logger.debug("request to %s sent at %.6f", key, now)


def _moved(starts: list[float], granted: float | None, now: float) -> list[float]:
    """``starts`` with the start ``granted`` moved to ``now`` if that is later (unchanged
    when it has already been forgotten), in order."""
    if granted is None or granted >= now or granted not in starts:
        return starts
    moved = list(starts)
    moved.remove(granted)
    bisect.insort(moved, now)
    return moved


class LocalBudget:
    """The budget of this process alone."""

    def __init__(self) -> None:
        self._starts: list[float] = []
        self._last: dict[str, float] = {}
        self._granted: _Pending[float] = _Pending()

    async def try_start(self, key: str, gap: float, limit: int, window: float) -> float:
        now = time.time()
        self._starts = [start for start in self._starts if start > now - window]
        wait = _wait(self._starts, self._last.get(key), now, gap, limit, window)
        if wait <= 0:
            self._starts.append(now)
            self._last[key] = now
            self._granted.add(key, now)
        return wait

    async def sent(self, key: str) -> None:
        now = time.time()
        self._last[key] = max(self._last.get(key, 0.0), now)
        self._starts = _moved(self._starts, self._granted.pop(key), now)
        _note_sent(key, now)


class FileBudget:
    """A budget in a small JSON file that every process sharing a data directory
    reads and writes under an exclusive ``flock``. A file that cannot be read is an
    empty budget; one that cannot be written turns this process to its own budget,
    with one warning."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fallback: LocalBudget | None = None
        self._granted: _Pending[float] = _Pending()

    async def try_start(self, key: str, gap: float, limit: int, window: float) -> float:
        if self._fallback is None:
            try:
                return self._try_start(key, gap, limit, window)
            except OSError as exc:
                self._fall_back(exc)
        assert self._fallback is not None
        return await self._fallback.try_start(key, gap, limit, window)

    def _fall_back(self, exc: OSError) -> None:
        logger.warning(
            "the shared request budget at %s is unusable (%s); this process keeps its own limits",
            self.path,
            exc.strerror or exc,
        )
        self._fallback = LocalBudget()

    async def sent(self, key: str) -> None:
        if self._fallback is None:
            try:
                self._sent(key)
                return
            except OSError as exc:  # a full disk, say: the budget goes on in memory
                self._fall_back(exc)
        assert self._fallback is not None
        await self._fallback.sent(key)

    def _sent(self, key: str) -> None:
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            state = _read_state(descriptor)
            now = time.time()
            last, starts = state.setdefault("last", {}), state.get("starts")
            if isinstance(last, dict):
                last[key] = max(float(last.get(key, 0.0)), now)
            if isinstance(starts, list):
                state["starts"] = _moved(starts, self._granted.pop(key), now)
            _write_state(descriptor, state)
            _note_sent(key, now)
        finally:
            os.close(descriptor)

    def _try_start(self, key: str, gap: float, limit: int, window: float) -> float:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            state = _read_state(descriptor)
            now = time.time()
            starts = [t for t in state.get("starts", []) if t > now - _MEMORY_SECONDS]
            last: dict[str, float] = {
                k: v for k, v in state.get("last", {}).items() if v > now - _MEMORY_SECONDS
            }
            wait = _wait(starts, last.get(key), now, gap, limit, window)
            if wait <= 0:
                starts.append(now)
                last[key] = now
                _write_state(descriptor, {"starts": starts[-4 * limit :], "last": last})
                self._granted.add(key, now)
            return wait
        finally:
            os.close(descriptor)  # closing releases the lock


def _read_state(descriptor: int) -> dict[str, Any]:
    os.lseek(descriptor, 0, os.SEEK_SET)
    raw = b""
    while chunk := os.read(descriptor, 65536):
        raw += chunk
    try:
        state = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def _write_state(descriptor: int, state: dict[str, Any]) -> None:
    data = json.dumps(state, separators=(",", ":")).encode()
    os.lseek(descriptor, 0, os.SEEK_SET)
    os.write(descriptor, data)
    os.ftruncate(descriptor, len(data))


# KEYS: starts (sorted set), last starts (hash). ARGV: key, gap, limit, window.
# Returns "0 <member>" after recording a start (the member names it for the send),
# else the seconds to wait. Redis's own clock is used, so machines with skewed clocks
# still share one budget.
_REDIS_SCRIPT: Final = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
local gap, limit, window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local wait = 0
local last = redis.call('HGET', KEYS[2], ARGV[1])
if last then wait = math.max(wait, tonumber(last) + gap - now) end
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  wait = math.max(wait, tonumber(oldest[2]) + window - now)
end
if wait > 0 then return tostring(wait) end
local member = tostring(now) .. ':' .. redis.call('INCR', KEYS[1] .. ':n')
redis.call('ZADD', KEYS[1], now, member)
redis.call('HSET', KEYS[2], ARGV[1], tostring(now))
redis.call('EXPIRE', KEYS[1], 120)
redis.call('EXPIRE', KEYS[2], 120)
redis.call('EXPIRE', KEYS[1] .. ':n', 120)
return '0 ' .. member
"""
_REDIS_KEYS: Final = ("doiget:rate:starts", "doiget:rate:last")
# KEYS: starts, last starts. ARGV: key, member. The key's last start and the start
# named by member become now, if that is later. Returns now.
_REDIS_SENT: Final = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) + tonumber(now_parts[2]) / 1000000
local last = redis.call('HGET', KEYS[2], ARGV[1])
if (not last) or tonumber(last) < now then redis.call('HSET', KEYS[2], ARGV[1], tostring(now)) end
local start = redis.call('ZSCORE', KEYS[1], ARGV[2])
if start and tonumber(start) < now then redis.call('ZADD', KEYS[1], now, ARGV[2]) end
return tostring(now)
"""


class RedisBudget:
    """A budget in Redis, shared by every doiget process on every machine that uses
    the same server. If Redis cannot be reached, this process keeps its own limits
    (one warning) rather than failing requests."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._client: Any = None
        self._script: Any = None
        self._sent_script: Any = None
        self._fallback: LocalBudget | None = None
        self._granted: _Pending[str] = _Pending()

    async def try_start(self, key: str, gap: float, limit: int, window: float) -> float:
        if self._fallback is None:
            from redis.exceptions import RedisError

            try:
                return await self._try_start(key, gap, limit, window)
            except (RedisError, OSError) as exc:
                logger.warning(
                    "the shared request budget in Redis is unreachable (%s); this process "
                    "keeps its own limits",
                    type(exc).__name__,
                )
                self._fallback = LocalBudget()
        return await self._fallback.try_start(key, gap, limit, window)

    async def _try_start(self, key: str, gap: float, limit: int, window: float) -> float:
        if self._script is None:
            from redis.asyncio import from_url

            self._client = from_url(self._url, socket_connect_timeout=2, socket_timeout=2)
            self._script = self._client.register_script(_REDIS_SCRIPT)
            self._sent_script = self._client.register_script(_REDIS_SENT)
        answer = await self._script(keys=list(_REDIS_KEYS), args=[key, gap, limit, window])
        wait, _, member = (answer.decode() if isinstance(answer, bytes) else str(answer)).partition(
            " "
        )
        if member:
            self._granted.add(key, member)
        return float(wait)

    async def sent(self, key: str) -> None:
        if self._fallback is not None or self._script is None:
            if self._fallback is not None:
                await self._fallback.sent(key)
            return
        from redis.exceptions import RedisError

        member = self._granted.pop(key)
        with contextlib.suppress(RedisError, OSError):  # try_start reports Redis trouble
            now = await self._sent_script(keys=list(_REDIS_KEYS), args=[key, member or ""])
            _note_sent(key, float(now))

    async def aclose(self) -> None:
        """Close the connection pool, if one was opened."""
        if self._client is not None:
            await self._client.aclose()
