"""One fetch of a ref at a time, across processes and replicas (single flight).

Two agents asking for the same paper at once would download it twice and race to
store it. A fetch holds the ref's flight first: in Redis when ``REDIS_URL`` is set
(replicas on several machines), else a lock file in the data directory (processes on
one machine). A fetch that had to wait finds the paper stored by the one it waited
for, and answers from the store instead of downloading again.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final, Protocol

import anyio

from doiget.errors import DoigetError, ErrorCode

logger = logging.getLogger("doiget.papers")

# Longer than any fetch may take (its own deadline is PDF + 2 x API timeouts); a
# holder that died lets go after this many seconds.
HOLD_SECONDS: Final = 900.0


class Flights(Protocol):
    """Where flights are held."""

    def hold(self, key: str) -> contextlib.AbstractAsyncContextManager[bool]:
        """Hold ``key``'s flight; yields whether another holder had to be waited for."""
        ...

    async def aclose(self) -> None:
        """Let go of connections."""
        ...


def _waited_too_long(key: str) -> DoigetError:
    return DoigetError(
        ErrorCode.LOCK_TIMEOUT,
        f"another doiget is still fetching {key} after {HOLD_SECONDS:g} s; try again later.",
    )


class FileFlights:
    """Flights as lock files under ``directory`` (``flock``: one machine, or a file
    system where flock works across machines)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[bool]:
        from filelock import FileLock, Timeout

        self.directory.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self.directory / f"{key}.lock"), thread_local=False)
        waited = False
        try:
            lock.acquire(timeout=0)
        except Timeout:
            waited = True
            try:
                await anyio.to_thread.run_sync(lambda: lock.acquire(timeout=HOLD_SECONDS))
            except Timeout:
                raise _waited_too_long(key) from None
        try:
            yield waited
        finally:
            lock.release()

    async def aclose(self) -> None:
        return None


class RedisFlights:
    """Flights as Redis locks (expiring, so a crashed holder cannot block forever).
    If Redis cannot be reached, this process holds its flights in lock files instead
    (one warning) rather than failing fetches, as the shared rate budget does."""

    def __init__(self, url: str, fallback: FileFlights) -> None:
        import redis.asyncio

        self._client: Any = redis.asyncio.from_url(url, socket_connect_timeout=2, socket_timeout=5)
        self._fallback = fallback
        self._unreachable = False

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[bool]:
        from redis.exceptions import LockError, RedisError

        lock = self._client.lock(f"doiget:flight:{key}", timeout=HOLD_SECONDS)
        try:
            waited = self._unreachable or not await lock.acquire(blocking=False)
        except (RedisError, OSError) as exc:
            logger.warning(
                "Redis is unreachable for fetch locks (%s); this process uses lock files",
                type(exc).__name__,
            )
            self._unreachable = waited = True
        if self._unreachable:
            async with self._fallback.hold(key) as waited_here:
                yield waited_here
            return
        if waited and not await lock.acquire(blocking=True, blocking_timeout=HOLD_SECONDS):
            raise _waited_too_long(key)
        try:
            yield waited
        finally:
            with contextlib.suppress(LockError, RedisError, OSError):
                await lock.release()  # expired while held, or Redis gone: nothing to free

    async def aclose(self) -> None:
        await self._client.aclose()


def flights_for(redis_url: str | None, data_dir: Path) -> Flights:
    """The flights every doiget with these settings shares."""
    files = FileFlights(data_dir / "flights")
    return RedisFlights(redis_url, files) if redis_url else files
