"""The web toolset's answer cache: in memory, encrypted on disk, or in Redis.

Every backend stores opaque bytes under a string key for a time to live and never
returns an expired entry. The cache is an optimisation only: a backend that cannot
read or write (a corrupt file, a full disk, Redis down) behaves as a miss or a
no-op, so a cache problem never fails a tool call. The disk and Redis backends keep
their entries sealed in :mod:`doiget.web.storage`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

import anyio.to_thread

from doiget.web.storage import (
    CacheEntry,
    Clock,
    SealedFiles,
    SealedRedis,
    Sealer,
    redis_errors,
    storage_secret,
)

if TYPE_CHECKING:
    from doiget.config import Settings

logger = logging.getLogger("doiget.web.cache")

DISK_DIR_NAME: Final = "web-cache"


class Cache(Protocol):
    """What the web tools need from a cache; every backend satisfies it."""

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key``, else None (missing, expired or unreadable)."""
        ...

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds (best effort)."""
        ...

    async def aclose(self) -> None:
        """Release connections or handles."""
        ...


class MemoryCache:
    """A process-local LRU bounded by entry count and total value bytes."""

    def __init__(
        self,
        max_entries: int = 512,
        max_bytes: int = 64 * 1024 * 1024,
        clock: Clock = time.time,
    ) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._clock = clock
        self._entries: OrderedDict[str, CacheEntry] = OrderedDict()
        self._bytes = 0

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key`` (now the most recently used), else None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expired(self._clock()):
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Keep ``value`` for ``ttl`` seconds, evicting the least recently used."""
        self.put(key, CacheEntry(value, self._clock(), ttl))

    def put(self, key: str, entry: CacheEntry) -> None:
        """Keep an existing ``entry`` as is, so its age and expiry stay true.

        A value larger than the whole byte budget, or one already expired, is not
        kept (it would only push every other entry out).
        """
        self._drop(key)
        if entry.expired(self._clock()) or len(entry.value) > self._max_bytes:
            return
        self._entries[key] = entry
        self._bytes += len(entry.value)
        while len(self._entries) > self._max_entries or self._bytes > self._max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)

    async def aclose(self) -> None:
        """Forget every entry."""
        self._entries.clear()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry.value)


class EncryptedDiskCache:
    """One sealed file per key under ``directory`` (see :class:`SealedFiles`).

    A file that does not open (corrupt, tampered, written under another key or
    another cache secret) or has expired reads as a miss and is removed.

    Size is bounded by pruning, which runs on :meth:`set` when ``prune_interval``
    seconds have passed since the last prune or when the writes since then could
    have taken the directory over ``max_files``: expired files go first, then, if
    more than ``max_files`` files or ``max_bytes`` bytes remain, those expiring
    soonest.
    """

    def __init__(
        self,
        directory: Path,
        key: bytes,
        clock: Clock = time.time,
        *,
        max_files: int = 4096,
        max_bytes: int = 256 * 1024 * 1024,
        prune_interval: float = 300.0,
    ) -> None:
        self._files = SealedFiles(directory, Sealer(key), clock)
        self._clock = clock
        self._max_files = max_files
        self._max_bytes = max_bytes
        self._prune_interval = prune_interval
        self._last_prune: float | None = None
        self._writes_since_prune = 0
        self._files_at_prune = 0

    def path_for(self, key: str) -> Path:
        """The file that holds ``key``'s entry."""
        return self._files.path_for(key)

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key``, else None."""
        return await anyio.to_thread.run_sync(self._get_blocking, key)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Write ``key``'s file (best effort: an OS error is logged, not raised)."""
        if ttl <= 0:
            return
        entry = CacheEntry(value, self._clock(), ttl)
        await anyio.to_thread.run_sync(self._set_blocking, key, entry)

    async def aclose(self) -> None:
        """Nothing to release: files are opened per call."""

    def prune(self) -> None:
        """Remove expired files, then the soonest-expiring beyond the size bounds.

        Blocking; :meth:`set` calls it from a worker thread when it is due.
        """
        swept = self._files.sweep(max_files=self._max_files, max_bytes=self._max_bytes)
        self._last_prune = self._clock()
        self._writes_since_prune = 0
        self._files_at_prune = swept.live

    def _get_blocking(self, key: str) -> CacheEntry | None:
        return self._files.read(key, tidy=True)

    def _set_blocking(self, key: str, entry: CacheEntry) -> None:
        try:
            self._files.write(key, entry)
            self._writes_since_prune += 1
            if self._prune_due():
                self.prune()
        except OSError as exc:
            logger.warning("web cache: cannot write to %s: %s", self._files.directory, exc)

    def _prune_due(self) -> bool:
        if self._last_prune is None:
            return True
        if self._clock() - self._last_prune >= self._prune_interval:
            return True
        return self._files_at_prune + self._writes_since_prune > self._max_files


class TieredCache:
    """Memory in front of a slower shared cache: read memory first, write both."""

    def __init__(self, memory: MemoryCache, disk: Cache) -> None:
        self.memory = memory
        self.disk = disk

    async def get(self, key: str) -> CacheEntry | None:
        """Memory's entry, else the disk's (then kept in memory until it expires)."""
        entry = await self.memory.get(key)
        if entry is not None:
            return entry
        entry = await self.disk.get(key)
        if entry is not None:
            # The entry keeps its stored_at and ttl, so in memory it lives exactly
            # the ttl it has left and still reports its true age.
            self.memory.put(key, entry)
        return entry

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Write to memory and disk."""
        await self.memory.set(key, value, ttl)
        await self.disk.set(key, value, ttl)

    async def aclose(self) -> None:
        """Close both tiers."""
        await self.memory.aclose()
        await self.disk.aclose()


class RedisCache:
    """Sealed entries in Redis under ``prefix + name``, expiring with ``SET ... EX``.

    Shared by every doiget process that uses the same Redis and the same cache
    secret (set ``DOIGET_CACHE_KEY`` on each host to share entries across hosts).
    Redis being unreachable reads as a miss and writes as a no-op; a warning is
    logged once per outage (again after Redis has answered in between).
    """

    def __init__(
        self,
        url: str,
        key: bytes,
        prefix: str = "doiget:web:",
        clock: Clock = time.time,
    ) -> None:
        # The cache must not hold a tool call up: short timeouts, one quick retry.
        self._redis = SealedRedis(
            url,
            Sealer(key),
            clock,
            prefix=prefix,
            connect_timeout=1.0,
            read_timeout=2.0,
            retry_once=True,
        )
        self._clock = clock
        self._warned = False

    def redis_key(self, key: str) -> str:
        """The Redis key that holds ``key``'s entry."""
        return self._redis.redis_key(key)

    async def get(self, key: str) -> CacheEntry | None:
        """The live entry for ``key``, else None (also when Redis is unreachable)."""
        try:
            entry = await self._redis.get(key)
        except redis_errors() as exc:
            self._warn(exc)
            return None
        self._warned = False
        return entry

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        """Store ``value`` for ``ttl`` seconds (a no-op when Redis is unreachable)."""
        if ttl <= 0:
            return
        try:
            await self._redis.set(key, CacheEntry(value, self._clock(), ttl))
        except redis_errors() as exc:
            self._warn(exc)
            return
        self._warned = False

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._redis.aclose()

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            logger.warning("web cache: redis unavailable, continuing without it: %s", exc)


def open_cache(settings: Settings, clock: Callable[[], float] = time.time) -> Cache | None:
    """The cache these settings ask for: none, Redis, or memory in front of disk."""
    if not settings.web_cache:
        return None
    secret = storage_secret(settings)
    if settings.redis_url:
        return RedisCache(settings.redis_url, secret, clock=clock)
    return TieredCache(
        MemoryCache(clock=clock),
        EncryptedDiskCache(settings.data_dir / DISK_DIR_NAME, secret, clock=clock),
    )
